#pragma once
// Segment names: what a caller may pass, and where it lives in the shm namespace.
//
// A caller's name is 1..k_max_segment_name characters of [A-Za-z0-9._-]; it becomes
// "/ferry.<name>" for shm_open (the file /dev/shm/ferry.<name> on Linux). No '/', so a name cannot
// leave /dev/shm or land in a subdirectory; "." and ".." are refused as well, being directory
// entries rather than names.
//
// Name domains (docs/processes.md, Name domains): when FERRY_NAMESPACE is set and not empty, it
// is 1..k_max_namespace characters of [A-Za-z0-9_-] (no '.', so the file name splits back into
// domain and name at the first '.') and every name becomes "/ferry@<domain>.<name>": two jobs
// of one user with different domains never meet. Unset or empty: the default domain, the plain
// "/ferry.<name>". The variable is read at every create, open and unlink.

#include <cstddef>
#include <cstdlib>
#include <ferry/core/status.hpp>
#include <ferry/ipc/error.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::ipc {
// NAME_MAX is 255; "ferry." takes 6 of it, and the rest leaves room for later suffixes.
inline constexpr std::size_t k_max_segment_name = 200;
// FERRY_NAMESPACE: "ferry@" + domain + "." + name stays within NAME_MAX.
inline constexpr std::size_t k_max_namespace = 32;
} // namespace ferry::ipc

namespace ferry::ipc::detail {

inline constexpr std::string_view k_shm_prefix = "/ferry.";
inline constexpr std::string_view k_shm_domain_prefix = "/ferry@";
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

// FERRY_NAMESPACE as this process sees it now; empty for the default domain.
inline std::string_view name_domain() noexcept {
    const char* text = std::getenv("FERRY_NAMESPACE");
    return text != nullptr ? std::string_view(text) : std::string_view();
}

// nullopt when `domain` is usable (empty included); otherwise the reason.
inline std::optional<std::string> domain_problem(std::string_view domain) {
    if (domain.size() > k_max_namespace) {
        return "is longer than " + std::to_string(k_max_namespace) + " characters";
    }
    for (const char c : domain) {
        if (!is_name_char(c) || c == '.') {
            return "contains a character outside [A-Za-z0-9_-]";
        }
    }
    return std::nullopt;
}

inline std::optional<Error> check_name(std::string_view name) {
    if (auto problem = name_problem(name)) {
        // The name is not echoed verbatim: it may hold control characters.
        return Error{Status::invalid_param, "ipc: segment name " + *problem, 0};
    }
    if (auto problem = domain_problem(name_domain())) {
        return Error{Status::invalid_param, "ipc: FERRY_NAMESPACE " + *problem, 0};
    }
    return std::nullopt;
}

// The shm name of `name` in `domain` (empty: the default domain).
inline std::string shm_name_in(std::string_view domain, std::string_view name) {
    if (domain.empty()) {
        return std::string(k_shm_prefix) + std::string(name);
    }
    return std::string(k_shm_domain_prefix) + std::string(domain) + "." + std::string(name);
}

// The name for shm_open / shm_unlink, in this process's domain. Only for names check_name
// accepted.
inline std::string shm_name(std::string_view name) {
    return shm_name_in(name_domain(), name);
}

} // namespace ferry::ipc::detail
