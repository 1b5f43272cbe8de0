#pragma once
// The C boundary of ferry-acl: every exported function runs its body through `guarded`, so no C++
// exception reaches a C caller (docs/cann-contract/README.md#the-c-boundary: bad_alloc →
// ACL_ERROR_BAD_ALLOC, anything else → ACL_ERROR_INTERNAL_ERROR), and every failure is logged on
// stderr at `info` level (quiet by default: docs/cann-contract/runtime.md#logging) — never on
// stdout.
//
// The shim holds no logic of its own: it checks the C arguments CANN checks, converts handles
// (aclrtStream, aclrtEvent, aclrtContext are tokens for the runtime's objects: runtime_handles.hpp)
// and returns the runtime's Status, whose values are CANN's aclError codes.

#include "acl/acl_base.h"
#include "error_message.hpp"

#include <exception>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/runtime.hpp>
#include <new>
#include <string>
#include <type_traits>

namespace ferry::acl {

// The booted runtime (booting it lazily, as CANN's aclrt* do without aclInit:
// docs/cann-contract/runtime.md#aclinit-and-aclfinalize).
[[nodiscard]] inline Result<Runtime*> runtime() {
    return Runtime::instance();
}

inline void note_failure(const char* api, int code, const char* why) noexcept {
    note_recent_error(api, code, why); // aclGetRecentErrMsg's text, logged or not
    try {
        if (log_enabled(LogLevel::info)) {
            log(LogLevel::info,
                std::string(api) + " returned " + std::to_string(code) + " (" + why + ")");
        }
    } catch (...) { // logging must not turn a failure into a crash
    }
}

// Runs `body` (returning a Status or an int code) and returns its code; exceptions become codes.
template <typename Body>
[[nodiscard]] int guarded(const char* api, Body&& body, int bad_alloc_code = ACL_ERROR_BAD_ALLOC,
                          int internal_code = ACL_ERROR_INTERNAL_ERROR) noexcept {
    try {
        const auto outcome = body();
        int code = 0;
        if constexpr (std::is_same_v<std::remove_cv_t<decltype(outcome)>, Status>) {
            code = to_code(outcome);
            if (code != 0) {
                note_failure(api, code, name_of(outcome));
            }
        } else {
            code = static_cast<int>(outcome);
            if (code != 0) {
                note_failure(api, code, "see docs/c-api.md");
            }
        }
        return code;
    } catch (const std::bad_alloc&) {
        note_failure(api, bad_alloc_code, "out of memory");
        return bad_alloc_code;
    } catch (const std::exception& e) {
        note_failure(api, internal_code, e.what());
        return internal_code;
    } catch (...) {
        note_failure(api, internal_code, "unknown exception");
        return internal_code;
    }
}

// Runs `use(Runtime&)` on the booted runtime, or returns the boot's failure.
template <typename Use>
[[nodiscard]] Status with_runtime(Use&& use) {
    const auto booted = runtime();
    if (!booted) {
        return booted.status();
    }
    return use(**booted);
}

} // namespace ferry::acl
