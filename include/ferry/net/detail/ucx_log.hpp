#pragma once
// UCX's own diagnostics through ferry::log (docs/multi-node.md, Logging): one handler pushed
// onto UCX's log-handler stack before the first Node reads UCX's configuration. It writes each
// message UCX produces as one ferry::log line ("ferry/net: ucx <component> <file>:<line>: ...")
// at the matching level and stops UCX's own handler, which would print to stdout or stderr
// around ferry's sink. UCX_LOG_LEVEL still chooses what UCX produces (warnings and errors by
// default); FERRY_LOG_LEVEL and set_log_sink choose whether and where it is written.

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <ferry/runtime/log.hpp>
#include <string>
#include <string_view>
#include <ucs/config/types.h>
#include <ucs/debug/log_def.h>

namespace ferry::net::detail {

// UCX's levels on ferry's: fatal and error -> error, warn -> warning, diag and info -> info,
// the debug and trace levels (and ucs_print's temporary output) -> debug.
[[nodiscard]] constexpr LogLevel ucx_log_level(ucs_log_level_t level) noexcept {
    switch (level) {
    case UCS_LOG_LEVEL_FATAL:
    case UCS_LOG_LEVEL_ERROR:
        return LogLevel::error;
    case UCS_LOG_LEVEL_WARN:
        return LogLevel::warning;
    case UCS_LOG_LEVEL_DIAG:
    case UCS_LOG_LEVEL_INFO:
        return LogLevel::info;
    default:
        return LogLevel::debug;
    }
}

// The handler UCX calls (from any thread, its progress thread included). Formats at most
// k_ucx_line_max bytes of the message; never lets an exception (a sink's, an allocation's)
// reach UCX's C code; always answers STOP so no later handler, UCX's printing one included,
// writes the line again.
inline constexpr std::size_t k_ucx_line_max = 1024;

inline ucs_log_func_rc_t write_ucx_line(const char* file, unsigned line, const char* /*function*/,
                                        ucs_log_level_t level,
                                        const ucs_log_component_config_t* component,
                                        const char* format, va_list ap) noexcept {
    const LogLevel ours = ucx_log_level(level);
    if (!log_enabled(ours) || format == nullptr) {
        return UCS_LOG_FUNC_RC_STOP;
    }
    char text[k_ucx_line_max];
    va_list copy;
    va_copy(copy, ap);
    const int length = std::vsnprintf(text, sizeof text, format, copy);
    va_end(copy);
    if (length < 0) {
        return UCS_LOG_FUNC_RC_STOP;
    }
    try {
        std::string message = "ferry/net: ucx";
        if (component != nullptr && component->name[0] != '\0') {
            message.append(" ").append(component->name,
                                       strnlen(component->name, sizeof component->name));
        }
        if (file != nullptr) {
            const std::string_view path(file);
            message.append(" ").append(path.substr(path.find_last_of('/') + 1));
            message.append(":").append(std::to_string(line));
        }
        message.append(": ").append(text);
        if (static_cast<std::size_t>(length) >= sizeof text) {
            message.append(" [truncated]");
        }
        log(ours, message);
    } catch (...) { // NOLINT(bugprone-empty-catch): a diagnostic that cannot be written is dropped
    }
    return UCS_LOG_FUNC_RC_STOP;
}

// Pushes write_ucx_line once per process (thread-safe); later calls do nothing. The handler
// stays for the life of the process: UCX may log from its own threads after the last Node.
inline void route_ucx_log() noexcept {
    static const bool pushed = [] {
        ucs_log_push_handler(&write_ucx_line);
        return true;
    }();
    (void)pushed;
}

} // namespace ferry::net::detail
