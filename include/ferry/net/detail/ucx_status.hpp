#pragma once
// UCX's status codes as ferry Statuses, ferry/net's log lines (through ferry::log), and owners for the
// UCX objects a Node creates (docs/multi-node.md).

#include <ferry/core/status.hpp>
#include <ferry/runtime/log.hpp>
#include <string>
#include <ucp/api/ucp.h>
#include <utility>

namespace ferry::net::detail {

// A connection that broke, was reset, timed out or was closed is a lost peer to the caller;
// everything else is a failure of UCX itself.
[[nodiscard]] inline Status to_status(ucs_status_t s) noexcept {
    switch (s) {
    case UCS_OK:
        return Status::ok;
    case UCS_ERR_CANCELED:
        return Status::timed_out;
    case UCS_ERR_TIMED_OUT:
        return Status::timed_out;
    case UCS_ERR_INVALID_PARAM:
        return Status::invalid_param;
    case UCS_ERR_NO_MEMORY:
        return Status::bad_alloc;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_ENDPOINT_TIMEOUT:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_REJECTED:
    case UCS_ERR_NOT_CONNECTED:
    case UCS_ERR_IO_ERROR:
        return Status::peer_lost;
    default:
        return Status::failure;
    }
}

// Every diagnostic of ferry/net goes through ferry::log (stderr unless a sink is set), one line
// with this prefix; failures and lost peers at error, refusals of a peer's input at warning.
// While an ErrorCapture lives on a thread, the first failure that thread logs is also kept in
// it: what Node::start and Node::connect put in their Error's message, so that the reason
// reaches the caller whatever the log level.
class ErrorCapture {
public:
    ErrorCapture() noexcept : outer_(std::exchange(current(), this)) {}
    ErrorCapture(const ErrorCapture&) = delete;
    ErrorCapture& operator=(const ErrorCapture&) = delete;
    ~ErrorCapture() { current() = outer_; }

    // The captured line, or `fallback` when nothing failed in a logged way.
    [[nodiscard]] std::string text_or(std::string fallback) const {
        return text_.empty() ? std::move(fallback) : text_;
    }
    static void keep(const std::string& line) {
        if (ErrorCapture* c = current(); c != nullptr && c->text_.empty()) {
            c->text_ = line;
        }
    }

private:
    static ErrorCapture*& current() noexcept {
        static thread_local ErrorCapture* capture = nullptr;
        return capture;
    }
    ErrorCapture* outer_;
    std::string text_;
};

inline void log_line(const std::string& text, LogLevel level = LogLevel::error) {
    std::string line = "ferry/net: " + text;
    if (level >= LogLevel::warning) {
        ErrorCapture::keep(line);
    }
    log(level, line);
}

inline void log_ucx(const char* what, ucs_status_t s) {
    log_line(std::string(what) + ": " + ucs_status_string(s));
}

// Owners of UCX's top-level objects, released in reverse order of creation by Node::Impl.
struct ContextOwner {
    ucp_context_h h = nullptr;
    ContextOwner() = default;
    ContextOwner(const ContextOwner&) = delete;
    ContextOwner& operator=(const ContextOwner&) = delete;
    ~ContextOwner() {
        if (h != nullptr) {
            ucp_cleanup(h);
        }
    }
};

struct WorkerOwner {
    ucp_worker_h h = nullptr;
    WorkerOwner() = default;
    WorkerOwner(const WorkerOwner&) = delete;
    WorkerOwner& operator=(const WorkerOwner&) = delete;
    ~WorkerOwner() {
        if (h != nullptr) {
            ucp_worker_destroy(h);
        }
    }
};

struct ConfigOwner {
    ucp_config_t* h = nullptr;
    ConfigOwner() = default;
    ConfigOwner(const ConfigOwner&) = delete;
    ConfigOwner& operator=(const ConfigOwner&) = delete;
    ~ConfigOwner() {
        if (h != nullptr) {
            ucp_config_release(h);
        }
    }
};

// Waits for a request UCX may have returned: NULL (done at once), an error pointer, or a request
// that this owner frees (also when the wait is abandoned: ucp_request_free then releases it when
// it completes).
[[nodiscard]] inline ucs_status_t request_state(void* request) noexcept {
    if (request == nullptr) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return UCS_PTR_STATUS(request);
    }
    return ucp_request_check_status(request);
}

} // namespace ferry::net::detail
