#pragma once
// ferry::Stream — an in-order asynchronous task queue executed by its own runtime thread.
//
// docs/cann-contract/runtime.md#streams-and-events: tasks (host callables, memcpy-async, kernel
// launches, event records) run one after another in submission order. A task that throws or returns
// a failing Status puts the stream into an error state: the failure is reported to the runtime's
// exception and task-abort callbacks at once, later tasks are aborted (skipped) until the next
// synchronize, and that synchronize returns the failure and clears the state (CANN reports a task
// exception on the next aclrtSynchronizeStream; ferry then lets the stream be used again).
// Event records and event waits run even in the error state, so nobody waits forever on them.
//
// Lifetime: a Stream may be released by one of its own tasks (destroying its own stream,
// resetting its device). Its thread cannot join itself then, so the queue state lives in a
// StreamCore owned jointly by the Stream and the thread; the runtime joins such a thread later
// (detail/stream_reaper.hpp).

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/profiler.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <unistd.h>
#include <utility>

namespace ferry {

// A task's failure, as handed to the exception and task-abort callbacks.
struct TaskFailure {
    Status status = Status::ok;
    std::int32_t device = 0;
    std::uint64_t stream = 0;    // the stream's id
    std::string task;            // the task's name ("memcpy", a kernel's name, ...)
    std::string message;         // what() of the exception, or the Status's name
    bool aborted = false;        // true: skipped because an earlier task of the stream failed
    std::uint64_t task_id = 0;   // the task's number on its stream: 1 for the first queued
    std::uint32_t thread_id = 0; // the OS thread id (gettid) of the thread that queued it
};

// The Status a throwing task reports. CANN's ACL_ERROR_RT_AICORE_EXCEPTION (507015) is not in
// ferry::Status yet; a host kernel is the emulated device's AI CPU code, so its closest code is
// ACL_ERROR_RT_AICPU_INTERNAL_ERROR.
inline constexpr Status k_task_exception_status = Status::rt_aicpu_internal_error;

namespace detail {

// The calling thread's OS id, asked once per thread (TaskFailure::thread_id).
inline std::uint32_t this_thread_os_id() noexcept {
    thread_local const auto id = static_cast<std::uint32_t>(::gettid());
    return id;
}

// Everything a stream's thread touches. The Stream and its thread own it together: a stream
// released while its own thread runs a task (a task that destroys its own stream or resets its
// device) stays valid until that thread has left it.
class StreamCore {
public:
    using Task = std::function<Status()>;
    using FailureHandler = std::function<void(const TaskFailure&)>;

    StreamCore(std::uint64_t id, std::int32_t device, FailureHandler on_failure)
        : id_(id), device_(device), on_failure_(std::move(on_failure)) {}
    StreamCore(const StreamCore&) = delete;
    StreamCore& operator=(const StreamCore&) = delete;

    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    [[nodiscard]] std::int32_t device() const noexcept { return device_; }
    [[nodiscard]] std::stop_token stop_token() const noexcept { return stop_.get_token(); }

    [[nodiscard]] Status enqueue(std::string name, std::string category, Task task,
                                 bool always_run) {
        {
            std::lock_guard lock(mutex_);
            if (stopping_) {
                return Status::rt_stream_context;
            }
            ++submitted_;
            queue_.push_back({std::move(name), std::move(category), std::move(task), always_run,
                              submitted_, this_thread_os_id()});
        }
        wake_.notify_one();
        return Status::ok;
    }

    [[nodiscard]] Status synchronize(Timeout timeout) {
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

    [[nodiscard]] bool idle() const {
        std::lock_guard lock(mutex_);
        return completed_ == submitted_;
    }

    [[nodiscard]] Status error() const {
        std::lock_guard lock(mutex_);
        return error_;
    }

    // Refuses new tasks. Without `drain` the queue is dropped and the stop token is requested,
    // which interrupts a running event wait: nothing would ever complete it once the other
    // streams' queues are dropped too (process exit).
    void stop(bool drain) {
        {
            std::lock_guard lock(mutex_);
            if (!drain) {
                completed_ += queue_.size();
                queue_.clear();
            }
            stopping_ = true;
        }
        if (!drain) {
            stop_.request_stop();
        }
        wake_.notify_all();
        idle_.notify_all();
    }

    [[nodiscard]] bool exited() const {
        std::lock_guard lock(mutex_);
        return exited_;
    }

    // True once the thread has left work() (waits until `deadline` for it).
    [[nodiscard]] bool wait_exited(Timeout::clock::time_point deadline) {
        std::unique_lock lock(mutex_);
        return idle_.wait_until(lock, deadline, [&] { return exited_; });
    }

    // The stream thread's loop: runs tasks until stopped and drained.
    void work() {
        for (;;) {
            Entry entry;
            bool in_error = false;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (queue_.empty()) {
                    exited_ = true; // stopping and drained
                    idle_.notify_all();
                    return;
                }
                entry = std::move(queue_.front());
                queue_.pop_front();
                in_error = failed(error_);
            }
            run(entry, in_error);
        }
    }

private:
    struct Entry {
        std::string name;
        std::string category;
        Task task;
        bool always_run = false;
        std::uint64_t task_id = 0;   // submitted_ when it was queued
        std::uint32_t submitter = 0; // gettid() of the queueing thread
    };

    void run(Entry& entry, bool in_error) {
        TaskFailure failure;
        if (in_error && !entry.always_run) {
            failure = {error_snapshot(), device_, id_,           entry.name,
                       "aborted",        true,    entry.task_id, entry.submitter};
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

    // Runs one task, turning an exception or a failing Status into a TaskFailure.
    TaskFailure execute(Entry& entry) {
        TaskFailure failure{Status::ok, device_, id_,           entry.name,
                            {},         false,   entry.task_id, entry.submitter};
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

    Status error_snapshot() {
        std::lock_guard lock(mutex_);
        return error_;
    }

    const std::uint64_t id_;
    const std::int32_t device_;
    const FailureHandler on_failure_;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable idle_; // task completions, stop and the thread's exit
    std::deque<Entry> queue_;
    std::uint64_t submitted_ = 0; // guarded by mutex_
    std::uint64_t completed_ = 0; // guarded by mutex_
    Status error_ = Status::ok;   // guarded by mutex_; the first failure since the last sync
    bool stopping_ = false;       // guarded by mutex_
    bool exited_ = false;         // guarded by mutex_
    std::stop_source stop_;
};

} // namespace detail

class Stream {
public:
    using Task = detail::StreamCore::Task; // may throw: the stream catches and reports it
    using FailureHandler = detail::StreamCore::FailureHandler;
    using time_point = Timeout::clock::time_point;

    Stream(std::uint64_t id, std::int32_t device, FailureHandler on_failure)
        : core_(std::make_shared<detail::StreamCore>(id, device, std::move(on_failure))),
          thread_([core = core_] { core->work(); }) {}
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    // Drains and joins. Destroyed from its own thread (nobody called shutdown from elsewhere),
    // the thread is detached instead: it holds the core and finishes the queue on its own.
    ~Stream() {
        if (!shutdown(true)) {
            thread_.detach();
        }
    }

    [[nodiscard]] std::uint64_t id() const noexcept { return core_->id(); }
    [[nodiscard]] std::int32_t device() const noexcept { return core_->device(); }

    // Queues a task; `category` names it in the profiler trace. `always_run` tasks (event
    // record/wait) also run while the stream is in the error state. rt_stream_context once the
    // stream is stopped.
    [[nodiscard]] Status enqueue(std::string name, std::string category, Task task,
                                 bool always_run = false) {
        return core_->enqueue(std::move(name), std::move(category), std::move(task), always_run);
    }

    // Waits until every task queued before the call has finished; returns the first failure since
    // the previous synchronize (clearing it) or rt_stream_sync_timeout when `timeout` expires
    // first (the error state is then kept).
    [[nodiscard]] Status synchronize(Timeout timeout = forever) {
        return core_->synchronize(timeout);
    }

    // True when every queued task has finished (aclrtStreamQuery's "complete").
    [[nodiscard]] bool idle() const { return core_->idle(); }

    // The failure waiting for the next synchronize, if any (not cleared).
    [[nodiscard]] Status error() const { return core_->error(); }

    // Requested when the stream is stopped without draining: a task that waits for another
    // stream (an event wait) waits on it too, so that stop can end the wait.
    [[nodiscard]] std::stop_token stop_token() const noexcept { return core_->stop_token(); }

    // Stops taking tasks, without waiting. With `drain`, queued tasks still run; without, they
    // are dropped and a running event wait ends (process exit). Callable from any thread, again
    // and again (a later stop without drain drops what an earlier drained stop left queued).
    void stop(bool drain) { core_->stop(drain); }

    // After stop(): joins the thread once it has left its queue. From the stream's own thread it
    // cannot: returns false and leaves the thread running; join again from another thread. A
    // thread still inside a task at `deadline` is detached (it keeps the core alive and ends with
    // the process): only process exit passes a deadline.
    [[nodiscard]] bool join(time_point deadline = time_point::max()) {
        if (!thread_.joinable()) {
            return true;
        }
        if (thread_.get_id() == std::this_thread::get_id()) {
            return false;
        }
        if (deadline == time_point::max() || core_->wait_exited(deadline)) {
            thread_.join();
        } else {
            log(LogLevel::warning,
                "stream " + std::to_string(id()) + ": a task still running at exit is abandoned");
            thread_.detach();
        }
        return true;
    }

    // stop(drain) then join(deadline).
    [[nodiscard]] bool shutdown(bool drain, time_point deadline = time_point::max()) {
        stop(drain);
        return join(deadline);
    }

    // True when the thread has left its loop, so join() returns at once.
    [[nodiscard]] bool finished() const { return core_->exited(); }

private:
    std::shared_ptr<detail::StreamCore> core_;
    std::thread thread_; // after core_: started once the core exists
};

} // namespace ferry
