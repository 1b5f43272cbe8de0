#pragma once
// ferry::Stream — an in-order asynchronous task queue executed by its own runtime thread.
//
// spec/runtime.md (Streams and events): tasks (host callables, memcpy-async, kernel launches,
// event records) run one after another in submission order. A task that throws or returns a
// failing Status puts the stream into an error state: the failure is reported to the runtime's
// exception and task-abort callbacks at once, later tasks are aborted (skipped) until the next
// synchronize, and that synchronize returns the failure and clears the state (CANN reports a task
// exception on the next aclrtSynchronizeStream; ferry then lets the stream be used again).
// Event records and event waits run even in the error state, so nobody waits forever on them.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/profiler.hpp>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace ferry {

// A task's failure, as handed to the exception and task-abort callbacks.
struct TaskFailure {
    Status status = Status::ok;
    std::int32_t device = 0;
    std::uint64_t stream = 0; // the stream's id
    std::string task;         // the task's name ("memcpy", a kernel's name, ...)
    std::string message;      // what() of the exception, or the Status's name
    bool aborted = false;     // true: skipped because an earlier task of the stream failed
};

// The Status a throwing task reports. CANN's ACL_ERROR_RT_AICORE_EXCEPTION (507015) is not in
// ferry::Status yet; a host kernel is the emulated device's AI CPU code, so its closest code is
// ACL_ERROR_RT_AICPU_INTERNAL_ERROR.
inline constexpr Status k_task_exception_status = Status::rt_aicpu_internal_error;

class Stream {
public:
    using Task = std::function<Status()>; // may throw: the stream catches and reports it
    using FailureHandler = std::function<void(const TaskFailure&)>;

    Stream(std::uint64_t id, std::int32_t device, FailureHandler on_failure)
        : id_(id), device_(device), on_failure_(std::move(on_failure)),
          thread_([this] { work(); }) {}
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream() { shutdown(true); }

    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    [[nodiscard]] std::int32_t device() const noexcept { return device_; }

    // Queues a task; `category` names it in the profiler trace. `always_run` tasks (event
    // record/wait) also run while the stream is in the error state. rt_stream_context after
    // shutdown.
    [[nodiscard]] Status enqueue(std::string name, std::string category, Task task,
                                 bool always_run = false) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) {
                return Status::rt_stream_context;
            }
            queue_.push_back({std::move(name), std::move(category), std::move(task), always_run});
            ++submitted_;
        }
        wake_.notify_one();
        return Status::ok;
    }

    // Waits until every task queued before the call has finished; returns the first failure since
    // the previous synchronize (clearing it) or rt_stream_sync_timeout when `timeout` expires
    // first (the error state is then kept).
    [[nodiscard]] Status synchronize(Timeout timeout = forever) {
        std::unique_lock lock(mutex_);
        const std::uint64_t target = submitted_;
        const auto done = [&] { return completed_ >= target; };
        if (timeout.is_forever()) {
            idle_.wait(lock, done);
        } else if (!idle_.wait_until(lock, timeout.deadline_from(Timeout::clock::now()), done)) {
            return Status::rt_stream_sync_timeout;
        }
        return std::exchange(error_, Status::ok);
    }

    // True when every queued task has finished (aclrtStreamQuery's "complete").
    [[nodiscard]] bool idle() const {
        std::lock_guard lock(mutex_);
        return completed_ == submitted_;
    }

    // The failure waiting for the next synchronize, if any (not cleared).
    [[nodiscard]] Status error() const {
        std::lock_guard lock(mutex_);
        return error_;
    }

    // Stops the thread and joins it. With `drain`, queued tasks run first; without, they are
    // dropped (process exit). Idempotent; must not be called from the stream's own thread.
    void shutdown(bool drain) {
        {
            std::lock_guard lock(mutex_);
            if (!drain) {
                completed_ += queue_.size();
                queue_.clear();
            }
            stopping_ = true;
        }
        wake_.notify_all();
        if (thread_.joinable()) {
            if (thread_.get_id() == std::this_thread::get_id()) {
                thread_.detach(); // destroyed by its own task (e.g. a device reset inside a task)
            } else {
                thread_.join();
            }
        }
        idle_.notify_all();
    }

private:
    struct Entry {
        std::string name;
        std::string category;
        Task task;
        bool always_run = false;
    };

    // Runs one task, turning an exception or a failing Status into a TaskFailure.
    TaskFailure execute(Entry& entry) {
        TaskFailure failure{Status::ok, device_, id_, entry.name, {}, false};
        ProfileScope scope(entry.name, entry.category, device_, id_);
        try {
            failure.status = entry.task();
            if (failed(failure.status)) {
                failure.message = name_of(failure.status);
            }
        } catch (const std::exception& e) {
            failure.status = k_task_exception_status;
            failure.message = e.what();
        } catch (...) {
            failure.status = k_task_exception_status;
            failure.message = "unknown exception";
        }
        return failure;
    }

    void report(const TaskFailure& failure) {
        log(LogLevel::error, "stream " + std::to_string(id_) + " on device " +
                                 std::to_string(device_) + ": task '" + failure.task + "' " +
                                 (failure.aborted ? "aborted after an earlier failure"
                                                  : "failed: " + failure.message));
        if (on_failure_) {
            on_failure_(failure);
        }
    }

    void work() {
        for (;;) {
            Entry entry;
            bool in_error = false;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) {
                    return; // stopping and drained
                }
                entry = std::move(queue_.front());
                queue_.pop_front();
                in_error = failed(error_);
            }
            TaskFailure failure;
            if (in_error && !entry.always_run) {
                failure = {error_snapshot(), device_, id_, entry.name, "aborted", true};
            } else {
                failure = execute(entry);
            }
            entry = {}; // release the task's captures before reporting completion
            if (failed(failure.status)) {
                report(failure);
            }
            std::lock_guard lock(mutex_);
            if (failed(failure.status) && !failure.aborted && succeeded(error_)) {
                error_ = failure.status;
            }
            ++completed_;
            idle_.notify_all(); // synchronize waits for its own target, not for an empty queue
        }
    }

    Status error_snapshot() {
        std::lock_guard lock(mutex_);
        return error_;
    }

    const std::uint64_t id_;
    const std::int32_t device_;
    const FailureHandler on_failure_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable idle_;
    std::deque<Entry> queue_;
    std::uint64_t submitted_ = 0; // guarded by mutex_
    std::uint64_t completed_ = 0; // guarded by mutex_
    Status error_ = Status::ok;   // guarded by mutex_; the first failure since the last sync
    bool stopping_ = false;
    std::thread thread_; // last member: started after everything it touches is constructed
};

} // namespace ferry
