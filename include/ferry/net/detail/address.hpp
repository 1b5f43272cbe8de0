#pragma once
// "host:port" for ferry/net: IPv4 ("127.0.0.1:5000") or bracketed IPv6 ("[::1]:5000"), numeric
// only (no name lookup, so parsing never blocks); port 0 lets a listener pick one.

#include <arpa/inet.h>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <string_view>
#include <sys/socket.h>

namespace ferry::net::detail {

struct SockAddr {
    sockaddr_storage storage{};
    socklen_t length = 0;
    [[nodiscard]] const sockaddr* get() const noexcept {
        return reinterpret_cast<const sockaddr*>(&storage);
    }
};

struct ParsedAddress {
    std::optional<SockAddr> address;
    std::string error; // why not, when address is empty
};

[[nodiscard]] inline std::optional<std::uint16_t> parse_port(std::string_view text) {
    unsigned value = 0;
    const auto* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end || value > 65535) {
        return std::nullopt;
    }
    return static_cast<std::uint16_t>(value);
}

[[nodiscard]] inline ParsedAddress parse_address(std::string_view text) {
    std::string_view host;
    std::string_view port;
    const bool v6 = !text.empty() && text.front() == '[';
    if (v6) {
        const auto close = text.find(']');
        if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
            return {std::nullopt, "\"" + std::string(text) + "\" is not [IPv6]:port"};
        }
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string_view::npos || text.find(':') != colon) {
            return {std::nullopt, "\"" + std::string(text) + "\" is not host:port ([IPv6]:port)"};
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    const auto number = parse_port(port);
    if (!number) {
        return {std::nullopt, "\"" + std::string(port) + "\" is not a port (0-65535)"};
    }
    SockAddr out;
    const std::string host_z(host);
    if (v6) {
        auto* a = reinterpret_cast<sockaddr_in6*>(&out.storage);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(*number);
        if (::inet_pton(AF_INET6, host_z.c_str(), &a->sin6_addr) != 1) {
            return {std::nullopt, "\"" + host_z + "\" is not a numeric IPv6 address"};
        }
        out.length = sizeof(sockaddr_in6);
    } else {
        auto* a = reinterpret_cast<sockaddr_in*>(&out.storage);
        a->sin_family = AF_INET;
        a->sin_port = htons(*number);
        if (::inet_pton(AF_INET, host_z.c_str(), &a->sin_addr) != 1) {
            return {std::nullopt, "\"" + host_z + "\" is not a numeric IPv4 address"};
        }
        out.length = sizeof(sockaddr_in);
    }
    return {out, {}};
}

// The inverse of parse_address; "?" for a family it does not know.
[[nodiscard]] inline std::string format_address(const sockaddr_storage& storage) {
    char host[INET6_ADDRSTRLEN] = {};
    if (storage.ss_family == AF_INET) {
        const auto* a = reinterpret_cast<const sockaddr_in*>(&storage);
        ::inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        return std::string(host) + ":" + std::to_string(ntohs(a->sin_port));
    }
    if (storage.ss_family == AF_INET6) {
        const auto* a = reinterpret_cast<const sockaddr_in6*>(&storage);
        ::inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        return "[" + std::string(host) + "]:" + std::to_string(ntohs(a->sin6_port));
    }
    return "?";
}

} // namespace ferry::net::detail
