#pragma once
// aclGetRecentErrMsg's store: the text of the calling thread's most recent failure, written by
// both C boundaries (rt/boundary.hpp note_failure, tdt/boundary.hpp reject) whether or not logging
// is on, so a CANN sample's "print aclGetRecentErrMsg() on failure" shows why ferry refused.
//
// Per thread, fixed-size buffers: recording allocates nothing and cannot throw, so it is safe on
// every failure path (including out of memory). Text longer than the buffer is cut.

namespace ferry::acl {

// "<api> returned <code> (<why>)": the rt boundary's log line.
void note_recent_error(const char* api, int code, const char* why) noexcept;
// "<function>: <why>": the tdt boundary's log line.
void note_recent_error(const char* function, const char* why) noexcept;

} // namespace ferry::acl
