#pragma once
// Preconditions as contract checks (range-v3 style): checked, with a message and an abort, in
// builds without NDEBUG; assumed in release builds. They guard programming errors only — expected
// outcomes (bad user input at an API boundary, full, empty, stopped…) are Status values instead.
//
// The violation message is written straight to stderr, not through ferry::log (runtime/log.hpp):
// the process aborts right after it, and the log's sink is user code that may itself be what
// broke the precondition (or may be the caller, holding the log's lock). docs/core.md.

#include <cstdio>
#include <cstdlib>

namespace ferry::detail {
[[noreturn]] inline void contract_violation(const char* expr, const char* file, int line) noexcept {
    std::fprintf(stderr, "ferry: precondition failed: %s (%s:%d)\n", expr, file, line);
    std::abort();
}
} // namespace ferry::detail

#ifndef NDEBUG
#define FERRY_EXPECTS(cond)                                                                        \
    ((cond) ? static_cast<void>(0) : ::ferry::detail::contract_violation(#cond, __FILE__, __LINE__))
#else
#define FERRY_EXPECTS(cond) ((cond) ? static_cast<void>(0) : __builtin_unreachable())
#endif
