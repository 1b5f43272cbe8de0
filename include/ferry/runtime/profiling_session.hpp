#pragma once
// ferry::ProfilingSession — CANN's profiling life cycle (aclprofInit → aclprofStart → aclprofStop
// → aclprofFinalize) over ferry's Profiler, writing one Chrome trace per start/stop pair
// (docs/runtime.md, Profiling sessions).
//
//   init(directory)   the directory the traces go to: it must exist. repeat_initialize when
//                     already initialised.
//   start(config)     uninitialized before init; prof_already_run while a session (or anyone
//                     else's use of the Profiler) runs.
//   stop(config)      uninitialized before init; prof_not_run without a running session;
//                     invalid_param when `config` is not the one started (CANN: aclprofStop's
//                     config must match aclprofStart's). Writes
//                     <directory>/ferry-trace-<pid>-<n>.json, n = 1, 2, ... per init, and returns
//                     its path (invalid_file when it cannot be written; the session is stopped).
//   finalize()        uninitialized before init; stops a running session first (its trace is
//                     written), then forgets the directory.
//
// cann_trace_kinds maps aclprofCreateConfig's dataTypeConfig bits to ferry's TraceKind bits.

#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/runtime/profiler.hpp>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace ferry {

// aclprofCreateConfig's data types (acl_prof.h ACL_PROF_*), as ferry records them: the task-time
// levels record every stream task; AICPU records kernels (host kernels are the emulated AI CPU
// code); the API levels record the other host-side work. The remaining CANN types (AI Core
// metrics, L2 cache, HCCL, training trace, msproftx, GE API, task memory, op attributes, API
// statistics, AI Core shapes) are accepted and record nothing: ferry has no such data. Bits CANN
// does not define → std::nullopt.
[[nodiscard]] inline std::optional<std::uint32_t> cann_trace_kinds(std::uint64_t data_types) {
    constexpr std::uint64_t acl_api = 0x0001, task_time = 0x0002, aicore_metrics = 0x0004,
                            aicpu = 0x0008, l2cache = 0x0010, hccl_trace = 0x0020,
                            training_trace = 0x0040, msproftx = 0x0080, runtime_api = 0x0100,
                            ge_api_l0 = 0x0200, task_time_l0 = 0x0800, task_memory = 0x1000,
                            task_time_l2 = 0x2000, op_attr = 0x4000, task_time_l3 = 0x8000,
                            ge_api_l1 = 0x01000000, api_stats = 0x400000000,
                            aicore_shape = 0x800000000;
    constexpr std::uint64_t tasks = task_time | task_time_l0 | task_time_l2 | task_time_l3;
    constexpr std::uint64_t apis = acl_api | runtime_api;
    constexpr std::uint64_t silent = aicore_metrics | l2cache | hccl_trace | training_trace |
                                     msproftx | ge_api_l0 | ge_api_l1 | task_memory | op_attr |
                                     api_stats | aicore_shape;
    if ((data_types & ~(tasks | apis | aicpu | silent)) != 0) {
        return std::nullopt;
    }
    std::uint32_t kinds = 0;
    if ((data_types & tasks) != 0) {
        kinds |= bit(TraceKind::memcpy) | bit(TraceKind::kernel) | bit(TraceKind::host_task) |
                 bit(TraceKind::event);
    }
    if ((data_types & aicpu) != 0) {
        kinds |= bit(TraceKind::kernel);
    }
    if ((data_types & apis) != 0) {
        kinds |= bit(TraceKind::other);
    }
    return kinds;
}

class ProfilingSession {
public:
    explicit ProfilingSession(Profiler& recorder = profiler()) : profiler_(recorder) {}
    ProfilingSession(const ProfilingSession&) = delete;
    ProfilingSession& operator=(const ProfilingSession&) = delete;

    [[nodiscard]] Status init(const std::string& directory) {
        std::error_code error;
        if (directory.empty() || !std::filesystem::is_directory(directory, error)) {
            return Status::invalid_param;
        }
        std::lock_guard lock(mutex_);
        if (directory_) {
            return Status::repeat_initialize;
        }
        directory_ = directory;
        traces_ = 0;
        return Status::ok;
    }

    [[nodiscard]] Status start(const ProfilerConfig& config) {
        std::lock_guard lock(mutex_);
        if (!directory_) {
            return Status::uninitialized;
        }
        if (running_) {
            return Status::prof_already_run;
        }
        const Status s = profiler_.start(config);
        if (s == Status::repeat_initialize) {
            return Status::prof_already_run; // the C++ API is profiling
        }
        if (succeeded(s)) {
            running_ = config;
        }
        return s;
    }

    [[nodiscard]] Result<std::string> stop(const ProfilerConfig& config) {
        std::lock_guard lock(mutex_);
        if (!directory_) {
            return Status::uninitialized;
        }
        if (!running_) {
            return Status::prof_not_run;
        }
        if (!(*running_ == config)) {
            return Status::invalid_param;
        }
        return stop_and_write();
    }

    [[nodiscard]] Status finalize() {
        std::lock_guard lock(mutex_);
        if (!directory_) {
            return Status::uninitialized;
        }
        Status s = Status::ok;
        if (running_) {
            const auto written = stop_and_write();
            s = written ? Status::ok : written.status();
        }
        directory_.reset();
        return s;
    }

private:
    // Caller holds mutex_ with a session running.
    Result<std::string> stop_and_write() {
        (void)profiler_.stop();
        running_.reset();
        const std::string path =
            (std::filesystem::path(*directory_) / ("ferry-trace-" + std::to_string(::getpid()) +
                                                   "-" + std::to_string(++traces_) + ".json"))
                .string();
        const Status s = profiler_.write_chrome_trace(path);
        if (failed(s)) {
            return s;
        }
        return path;
    }

    Profiler& profiler_;
    std::mutex mutex_;
    std::optional<std::string> directory_;
    std::optional<ProfilerConfig> running_;
    std::uint64_t traces_ = 0;
};

} // namespace ferry
