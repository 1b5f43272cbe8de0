#pragma once
// ferry runtime logging: levels, stderr by default, a pluggable sink.
//
// docs/cann-contract/runtime.md#logging: quiet by default for library users — the default level is
// `error`, so only failures a caller cannot see in a return value (a failed boot, a task that threw
// on a stream) are printed. FERRY_LOG_LEVEL sets it (read on the first message or level query of
// the process, so it holds for every module, whether or not the runtime ever boots; `off`
// silences everything); set_log_level overrides it; set_log_sink redirects it. This is ferry's
// one diagnostic path: the only direct write to stderr is a failed contract check
// (core/contract.hpp), which aborts at once and must not depend on a sink that may be broken.
//
// The state lives in trivially destructible globals (an atomic level and a leaked sink), so a
// runtime thread that logs while the process exits never touches a destroyed object.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace ferry {

enum class LogLevel : int { debug = 0, info = 1, warning = 2, error = 3, off = 4 };

[[nodiscard]] constexpr std::string_view name_of(LogLevel level) noexcept {
    switch (level) {
    case LogLevel::debug:
        return "debug";
    case LogLevel::info:
        return "info";
    case LogLevel::warning:
        return "warning";
    case LogLevel::error:
        return "error";
    case LogLevel::off:
        return "off";
    }
    return "unknown";
}

// Parses "debug", "info", "warning", "error", "off" or the digits 0..4.
[[nodiscard]] inline std::optional<LogLevel> parse_log_level(std::string_view text) noexcept {
    for (int i = 0; i <= static_cast<int>(LogLevel::off); ++i) {
        const auto level = static_cast<LogLevel>(i);
        if (text == name_of(level) || (text.size() == 1 && text[0] == static_cast<char>('0' + i))) {
            return level;
        }
    }
    return std::nullopt;
}

using LogSink = std::function<void(LogLevel, std::string_view)>;

namespace detail {
inline constexpr int k_log_level_unset = -1;
inline std::atomic<int> log_threshold{k_log_level_unset};

// FERRY_LOG_LEVEL when it names a level, else the default, error. A value that names no level
// is reported by the runtime's configuration when it boots (docs/runtime.md).
inline int log_threshold_from_environment() noexcept {
    const char* text = std::getenv("FERRY_LOG_LEVEL");
    const auto level = text != nullptr ? parse_log_level(text) : std::nullopt;
    return static_cast<int>(level.value_or(LogLevel::error));
}

struct LogState {
    std::mutex mutex;
    LogSink sink; // empty: stderr
};
// Leaked on purpose: logging must keep working during static destruction at process exit.
inline LogState& log_state() {
    static LogState* const state = new LogState;
    return *state;
}
} // namespace detail

inline void set_log_level(LogLevel level) noexcept {
    detail::log_threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}
[[nodiscard]] inline LogLevel log_level() noexcept {
    int level = detail::log_threshold.load(std::memory_order_relaxed);
    if (level == detail::k_log_level_unset) { // first use: the environment, unless set meanwhile
        const int from_environment = detail::log_threshold_from_environment();
        if (detail::log_threshold.compare_exchange_strong(level, from_environment,
                                                          std::memory_order_relaxed)) {
            level = from_environment;
        }
    }
    return static_cast<LogLevel>(level);
}
[[nodiscard]] inline bool log_enabled(LogLevel level) noexcept {
    return level != LogLevel::off && static_cast<int>(level) >= static_cast<int>(log_level());
}

// Installs a sink (an empty one restores stderr); returns the previous sink.
inline LogSink set_log_sink(LogSink sink) {
    auto& state = detail::log_state();
    std::lock_guard lock(state.mutex);
    return std::exchange(state.sink, std::move(sink));
}

// Writes one message if `level` passes the threshold. Sinks are called under a lock, one message
// at a time, so a sink need not be thread-safe; a sink must not log itself.
inline void log(LogLevel level, std::string_view message) {
    if (!log_enabled(level)) {
        return;
    }
    auto& state = detail::log_state();
    std::lock_guard lock(state.mutex);
    if (state.sink) {
        state.sink(level, message);
        return;
    }
    const std::string line =
        "ferry[" + std::string(name_of(level)) + "]: " + std::string(message) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace ferry
