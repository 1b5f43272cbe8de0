#pragma once
// Segment names: what a caller may pass, and where it lives in the shm namespace.
//
// A caller's name is 1..k_max_segment_name characters of [A-Za-z0-9._-]; it becomes
// "/ferry.<name>" for shm_open (the file /dev/shm/ferry.<name> on Linux). No '/', so a name cannot
// leave /dev/shm or land in a subdirectory; "." and ".." are refused as well, being directory
// entries rather than names.

#include <cstddef>
#include <ferry/core/status.hpp>
#include <ferry/ipc/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::ipc {
// NAME_MAX is 255; "ferry." takes 6 of it, and the rest leaves room for later suffixes.
inline constexpr std::size_t k_max_segment_name = 200;
} // namespace ferry::ipc

namespace ferry::ipc::detail {

inline constexpr std::string_view k_shm_prefix = "/ferry.";
inline constexpr std::string_view k_shm_directory = "/dev/shm";

constexpr bool is_name_char(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

// nullopt when `name` is valid; otherwise the reason, for the error message.
inline std::optional<std::string> name_problem(std::string_view name) {
    if (name.empty()) {
        return "is empty";
    }
    if (name.size() > k_max_segment_name) {
        return "is longer than " + std::to_string(k_max_segment_name) + " characters";
    }
    if (name == "." || name == "..") {
        return "is a directory entry";
    }
    for (const char c : name) {
        if (!is_name_char(c)) {
            return "contains a character outside [A-Za-z0-9._-]";
        }
    }
    return std::nullopt;
}

inline std::optional<Error> check_name(std::string_view name) {
    if (auto problem = name_problem(name)) {
        // The name is not echoed verbatim: it may hold control characters.
        return Error{Status::invalid_param, "ipc: segment name " + *problem, 0};
    }
    return std::nullopt;
}

// The name for shm_open / shm_unlink. Only for names check_name accepted.
inline std::string shm_name(std::string_view name) {
    return std::string(k_shm_prefix) + std::string(name);
}

} // namespace ferry::ipc::detail
