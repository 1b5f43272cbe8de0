#pragma once
// ferry::Profiler — task timestamps exported as a Chrome trace (chrome://tracing, Perfetto).
//
// docs/cann-contract/runtime.md#profiling-and-callbacks: start/stop, rejecting a double start
// (CANN RT_ERROR_PROF_STATUS) and a stop without start; while on, every task — memcpy, kernel,
// host task, event record, and other modules' own events such as channel send/receive — is
// recorded with its timestamps, stream and device. Other modules call ferry::profiler().record()
// or use ProfileScope; neither boots the runtime, and both cost one atomic load when off.
// The data plane's trace points (TraceSpan, trace_instant: channel send / receive / park, net
// connect and peer loss, window publish and ring; docs/runtime.md, Data-plane events) cost one
// relaxed load of detail::profilers_recording when no profiler records.
//
// ferry maps the double start to Status::repeat_initialize and the stop without start to
// Status::uninitialized (CANN's internal RT_ERROR_PROF_STATUS has no public aclError value).
//
// A start may take a ProfilerConfig (CANN's ProfilerStart(profConfig, numsDev, deviceList, ...)):
// which devices and which kinds of work to record; everything else is dropped at record().

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ferry/core/status.hpp>
#include <fstream>
#include <functional>
#include <mutex>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace ferry {

// The device id of events that belong to no device (host-side work such as a channel send).
inline constexpr std::int32_t k_host_trace_device = -1;

// The kinds of work a trace records, by TraceEvent::category (docs/runtime.md, Opening a trace).
enum class TraceKind : std::uint32_t {
    memcpy = 1U << 0,    // "memcpy": copies and memsets
    kernel = 1U << 1,    // "kernel": kernel launches
    host_task = 1U << 2, // "host_task": host functions, callbacks
    event = 1U << 3,     // "event": event and notify records, waits and resets
    other = 1U << 4,     // any other category (kernel-args uploads, other modules' events)
};
inline constexpr std::uint32_t k_every_trace_kind = (1U << 5) - 1;

[[nodiscard]] constexpr std::uint32_t bit(TraceKind kind) noexcept {
    return static_cast<std::uint32_t>(kind);
}

[[nodiscard]] inline TraceKind trace_kind_of(std::string_view category) noexcept {
    if (category == "memcpy") {
        return TraceKind::memcpy;
    }
    if (category == "kernel") {
        return TraceKind::kernel;
    }
    if (category == "host_task") {
        return TraceKind::host_task;
    }
    return category == "event" ? TraceKind::event : TraceKind::other;
}

// What a profiling session records. `devices` empty: every device and host-side work;
// otherwise only work on the listed devices (k_host_trace_device selects host-side work).
struct ProfilerConfig {
    std::vector<std::int32_t> devices;
    std::uint32_t kinds = k_every_trace_kind; // TraceKind bits

    [[nodiscard]] bool wants(std::int32_t device, std::string_view category) const {
        if ((kinds & bit(trace_kind_of(category))) == 0) {
            return false;
        }
        return devices.empty() ||
               std::find(devices.begin(), devices.end(), device) != devices.end();
    }
    bool operator==(const ProfilerConfig&) const = default;
};

struct TraceEvent {
    std::string name;     // "memcpy", the kernel's name, "send", ...
    std::string category; // "memcpy", "kernel", "host_task", "event", "channel", ...
    std::int32_t device = k_host_trace_device;
    std::uint64_t stream = 0;   // the stream's id (0: not on a stream)
    std::uint64_t begin_ns = 0; // steady-clock nanoseconds (Profiler::now_ns)
    std::uint64_t end_ns = 0;
};

namespace detail {
// How many profilers are recording now: the data plane's trace points look at nothing else
// while it is 0.
inline std::atomic<int> profilers_recording{0};

inline void write_json_string(std::ostream& out, std::string_view text) {
    out << '"';
    for (const char c : text) {
        switch (c) {
        case '"':
            out << "\\\"";
            break;
        case '\\':
            out << "\\\\";
            break;
        case '\n':
            out << "\\n";
            break;
        case '\t':
            out << "\\t";
            break;
        case '\r':
            out << "\\r";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buffer[8];
                std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
                out << buffer;
            } else {
                out << c;
            }
        }
    }
    out << '"';
}

// Chrome trace timestamps are microseconds; keep nanosecond resolution as three decimals.
inline void write_microseconds(std::ostream& out, std::uint64_t ns) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                  static_cast<unsigned long long>(ns % 1000));
    out << buffer;
}
} // namespace detail

class Profiler {
public:
    Profiler() = default;
    Profiler(const Profiler&) = delete;
    Profiler& operator=(const Profiler&) = delete;
    ~Profiler() {
        if (enabled_.load(std::memory_order_relaxed)) { // destroyed while recording
            detail::profilers_recording.fetch_sub(1, std::memory_order_relaxed);
        }
    }

    [[nodiscard]] static std::uint64_t now_ns() noexcept {
        return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::steady_clock::now().time_since_epoch())
                                              .count());
    }

    // Starts recording what `config` selects, discarding the events of an earlier session.
    // invalid_param for kind bits outside k_every_trace_kind or a device id below
    // k_host_trace_device.
    [[nodiscard]] Status start(ProfilerConfig config = {}) {
        if ((config.kinds & ~k_every_trace_kind) != 0 ||
            std::any_of(config.devices.begin(), config.devices.end(),
                        [](std::int32_t d) { return d < k_host_trace_device; })) {
            return Status::invalid_param;
        }
        std::lock_guard lock(mutex_);
        if (enabled_.load(std::memory_order_relaxed)) {
            return Status::repeat_initialize;
        }
        config_ = std::move(config);
        events_.clear();
        origin_ns_ = now_ns();
        enabled_.store(true, std::memory_order_release);
        detail::profilers_recording.fetch_add(1, std::memory_order_relaxed);
        return Status::ok;
    }

    // Stops recording; the events stay available for export until the next start.
    [[nodiscard]] Status stop() {
        std::lock_guard lock(mutex_);
        if (!enabled_.load(std::memory_order_relaxed)) {
            return Status::uninitialized;
        }
        enabled_.store(false, std::memory_order_release);
        detail::profilers_recording.fetch_sub(1, std::memory_order_relaxed);
        return Status::ok;
    }

    [[nodiscard]] bool enabled() const noexcept { return enabled_.load(std::memory_order_acquire); }

    // Records one finished piece of work; ignored while the profiler is off and when the
    // session's configuration does not select its device and kind.
    void record(TraceEvent event) {
        if (!enabled()) {
            return;
        }
        std::lock_guard lock(mutex_);
        if (enabled_.load(std::memory_order_relaxed) &&
            config_.wants(event.device, event.category)) {
            events_.push_back(std::move(event));
        }
    }

    // The configuration of the current (or last) session.
    [[nodiscard]] ProfilerConfig config() const {
        std::lock_guard lock(mutex_);
        return config_;
    }

    [[nodiscard]] std::vector<TraceEvent> events() const {
        std::lock_guard lock(mutex_);
        return events_;
    }

    // Writes {"traceEvents":[...]} with one complete ("X") event per recorded task: pid = device
    // (named by metadata events), tid = stream id, times relative to start().
    void write_chrome_trace(std::ostream& out) const {
        std::lock_guard lock(mutex_);
        out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
        bool first = true;
        std::set<std::int32_t> devices;
        for (const TraceEvent& e : events_) {
            out << (first ? "\n" : ",\n") << "{\"ph\":\"X\",\"name\":";
            first = false;
            detail::write_json_string(out, e.name);
            out << ",\"cat\":";
            detail::write_json_string(out, e.category.empty() ? "task" : e.category);
            out << ",\"pid\":" << e.device << ",\"tid\":" << e.stream << ",\"ts\":";
            detail::write_microseconds(out, e.begin_ns > origin_ns_ ? e.begin_ns - origin_ns_ : 0);
            out << ",\"dur\":";
            detail::write_microseconds(out, e.end_ns > e.begin_ns ? e.end_ns - e.begin_ns : 0);
            out << '}';
            devices.insert(e.device);
        }
        for (const std::int32_t device : devices) {
            out << (first ? "\n" : ",\n")
                << "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << device
                << ",\"tid\":0,\"args\":{\"name\":";
            first = false;
            detail::write_json_string(out, device == k_host_trace_device
                                               ? std::string("host")
                                               : "device " + std::to_string(device));
            out << "}}";
        }
        out << "\n]}\n";
    }

    // Writes the trace to a file; invalid_file when it cannot be written.
    [[nodiscard]] Status write_chrome_trace(const std::string& path) const {
        std::ofstream file(path, std::ios::binary | std::ios::trunc);
        if (!file) {
            return Status::invalid_file;
        }
        write_chrome_trace(file);
        file.flush();
        return file ? Status::ok : Status::invalid_file;
    }

private:
    mutable std::mutex mutex_;
    std::atomic<bool> enabled_{false};
    std::uint64_t origin_ns_ = 0;
    ProfilerConfig config_;
    std::vector<TraceEvent> events_;
};

// The process-wide profiler (leaked: usable from runtime threads during process exit).
[[nodiscard]] inline Profiler& profiler() {
    static Profiler* const instance = new Profiler;
    return *instance;
}

// Records [construction, destruction) as one event when the profiler was on at construction.
class ProfileScope {
public:
    ProfileScope(std::string name, std::string category, std::int32_t device = k_host_trace_device,
                 std::uint64_t stream = 0)
        : active_(profiler().enabled()) {
        if (active_) {
            event_ = {std::move(name), std::move(category), device, stream, Profiler::now_ns(), 0};
        }
    }
    ProfileScope(const ProfileScope&) = delete;
    ProfileScope& operator=(const ProfileScope&) = delete;
    ~ProfileScope() {
        if (active_) {
            event_.end_ns = Profiler::now_ns();
            profiler().record(std::move(event_));
        }
    }

private:
    bool active_;
    TraceEvent event_;
};

// ---- data-plane trace points ------------------------------------------------------------------
// Host-side events of the channels, the net node and the windows (category "channel", "net" or
// "window"; docs/runtime.md, Data-plane events), recorded by the process-wide profiler. Names
// and categories are string literals, so nothing is built, locked or allocated unless some
// profiler records; a failure to record (out of memory) drops the event.

// True while some profiler records: one relaxed load.
[[nodiscard]] inline bool tracing() noexcept {
    return detail::profilers_recording.load(std::memory_order_relaxed) != 0;
}

namespace detail {
inline void record_host_event(const char* name, const char* category, std::uint64_t begin_ns,
                              std::uint64_t end_ns) noexcept {
    try {
        profiler().record({name, category, k_host_trace_device, 0, begin_ns, end_ns});
    } catch (...) { // out of memory: the event is lost, the data plane goes on
    }
}
} // namespace detail

// One event at this instant.
inline void trace_instant(const char* name, const char* category) noexcept {
    if (tracing()) {
        const std::uint64_t now = Profiler::now_ns();
        detail::record_host_event(name, category, now, now);
    }
}

// [construction, destruction) as one event, when tracing at construction.
class TraceSpan {
public:
    TraceSpan(const char* name, const char* category) noexcept
        : name_(name), category_(category), begin_ns_(tracing() ? Profiler::now_ns() : 0) {}
    TraceSpan(const TraceSpan&) = delete;
    TraceSpan& operator=(const TraceSpan&) = delete;
    ~TraceSpan() {
        if (begin_ns_ != 0) {
            detail::record_host_event(name_, category_, begin_ns_, Profiler::now_ns());
        }
    }

private:
    const char* name_;
    const char* category_;
    std::uint64_t begin_ns_;
};

} // namespace ferry
