// aclGetRecentErrMsg (docs/c-api.md, Error messages): the calling thread's most recent failure
// text, or NULL when nothing failed since the last read. Reading clears the message; the returned
// text is a copy that stays valid until the same thread calls aclGetRecentErrMsg again (or exits),
// so later failures on the thread never change a string the caller is still printing.

#include "error_message.hpp"

#include "acl/acl_base.h"

#include <cstddef>
#include <cstdio>
#include <cstring>

namespace {

constexpr std::size_t k_capacity = 1024; // longer text is cut (snprintf truncates, NUL-ended)

struct RecentError {
    char pending[k_capacity] = {};  // the latest failure, not read yet
    char returned[k_capacity] = {}; // what the last aclGetRecentErrMsg handed out
    bool has_pending = false;
};

thread_local RecentError recent;

const char* or_empty(const char* text) noexcept {
    return text != nullptr ? text : "";
}

} // namespace

namespace ferry::acl {

void note_recent_error(const char* api, int code, const char* why) noexcept {
    std::snprintf(recent.pending, k_capacity, "%s returned %d (%s)", or_empty(api), code,
                  or_empty(why));
    recent.has_pending = true;
}

void note_recent_error(const char* function, const char* why) noexcept {
    std::snprintf(recent.pending, k_capacity, "%s: %s", or_empty(function), or_empty(why));
    recent.has_pending = true;
}

} // namespace ferry::acl

extern "C" {

ACL_FUNC_VISIBILITY const char* aclGetRecentErrMsg(void) {
    if (!recent.has_pending) {
        return nullptr;
    }
    std::memcpy(recent.returned, recent.pending, k_capacity);
    recent.has_pending = false;
    return recent.returned;
}

} // extern "C"
