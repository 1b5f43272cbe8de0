#pragma once
// The C boundary of the acltdt* functions (docs/cann-contract/README.md#the-c-boundary): no C++
// exception ever crosses it (std::bad_alloc → ACL_ERROR_BAD_ALLOC, anything else →
// ACL_ERROR_FAILURE, or NULL / 0 for functions that return no code), and rejections are logged at
// warning level to stderr — never to stdout, and not at all by default (the runtime's default level
// is error).

#include "../rt/error_message.hpp"
#include "acl/acl_base.h"

#include <exception>
#include <ferry/core/status.hpp>
#include <ferry/runtime/log.hpp>
#include <new>
#include <string>

namespace ferry::acl {

[[nodiscard]] inline aclError code(Status s) noexcept {
    return static_cast<aclError>(to_code(s));
}

// Logs why `function` refused its arguments and returns `s` as an aclError.
inline aclError reject(const char* function, const char* why,
                       Status s = Status::invalid_param) noexcept {
    note_recent_error(function, why); // aclGetRecentErrMsg's text, logged or not
    if (log_enabled(LogLevel::warning)) {
        try {
            log(LogLevel::warning, std::string(function) + ": " + why);
        } catch (...) { // NOLINT: a log line that cannot be built is dropped
        }
    }
    return code(s);
}

// Runs `body` (returning aclError) with every exception turned into a code.
template <typename Body>
aclError guarded(const char* function, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return reject(function, "out of memory", Status::bad_alloc);
    } catch (const std::exception& e) {
        return reject(function, e.what(), Status::failure);
    } catch (...) {
        return reject(function, "unknown exception", Status::failure);
    }
}

// Runs `body` (returning a value) with every exception turned into `fallback`.
template <typename T, typename Body>
T guarded_value(const char* function, T fallback, Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        reject(function, "out of memory", Status::bad_alloc);
    } catch (const std::exception& e) {
        reject(function, e.what(), Status::failure);
    } catch (...) {
        reject(function, "unknown exception", Status::failure);
    }
    return fallback;
}

} // namespace ferry::acl
