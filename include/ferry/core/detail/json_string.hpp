#pragma once
// A JSON string literal for any bytes: quotes and backslashes escaped, control and non-ASCII
// bytes as \u00XX, so that any text (a file name, a peer's address, a refusal reason) yields
// valid JSON. Used by ferry/net's state file and by ferry-inspect.

#include <cstdio>
#include <string>
#include <string_view>

namespace ferry::detail {

inline std::string json_string(std::string_view text) {
    std::string out = "\"";
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (byte < 0x20 || byte >= 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
            out += escaped;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

} // namespace ferry::detail
