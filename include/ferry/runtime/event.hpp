#pragma once
// ferry::Event — a marker recorded into a stream: record, query, synchronize, elapsed time.
//
// docs/cann-contract/runtime.md#streams-and-events. Recording queues a task on the stream; when the
// stream reaches it the event completes and takes a steady-clock timestamp, so two events recorded
// in order on one stream have a non-negative, monotone elapsed time. Re-recording starts a new
// generation: query/synchronize look at the latest record. An event never recorded counts as
// complete for synchronize (nothing to wait for) but has no timestamp. A reset (aclrtResetEvent,
// run in stream order) returns the event to that never-recorded state.

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/runtime/profiler.hpp>
#include <mutex>
#include <optional>
#include <stop_token>
#include <utility>

namespace ferry {

enum class EventStatus : unsigned char {
    not_recorded, // never recorded
    pending,      // recorded, the stream has not reached it yet
    complete,     // the stream passed the latest record
};

class Event {
public:
    Event(std::uint64_t id, std::int32_t device) : id_(id), device_(device) {}
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;

    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    [[nodiscard]] std::int32_t device() const noexcept { return device_; }

    // Starts a new record: `enqueue(generation)` queues the stream task that will call
    // complete(generation) and returns its Status. The generation is published only when the
    // enqueue succeeds, so a record refused by its stream (one being destroyed) leaves the event
    // as it was instead of pending on a record that no stream will reach. The lock is held across
    // the enqueue: the task cannot complete a generation before it is published, and a concurrent
    // record takes the next one. (Streams never call into an event while holding their own lock.)
    template <typename Enqueue>
    [[nodiscard]] Status record(Enqueue&& enqueue) {
        std::lock_guard lock(mutex_);
        const std::uint64_t generation = issued_ + 1;
        const Status s = std::forward<Enqueue>(enqueue)(generation);
        if (succeeded(s)) {
            issued_ = generation;
        }
        return s;
    }

    // Called by the stream when it reaches the record of `generation`.
    void complete(std::uint64_t generation) {
        const std::uint64_t now = Profiler::now_ns();
        {
            std::lock_guard lock(mutex_);
            if (generation > completed_) {
                completed_ = generation;
                if (generation == issued_) {
                    timestamp_ns_ = now;
                }
            }
        }
        done_.notify_all();
    }

    // Called by the stream when it reaches a reset issued while `generation` was the latest
    // record: forgets the records up to it that have completed. A record still pending then (on
    // another stream) completes normally later, and a record issued after the reset is kept, so a
    // reset never makes anyone wait forever and never hides a newer record.
    void reset(std::uint64_t generation) {
        std::lock_guard lock(mutex_);
        forgotten_ = std::max(forgotten_, std::min(generation, completed_));
    }

    [[nodiscard]] EventStatus status() const {
        std::lock_guard lock(mutex_);
        if (issued_ == forgotten_) {
            return EventStatus::not_recorded;
        }
        return completed_ >= issued_ ? EventStatus::complete : EventStatus::pending;
    }

    // Waits for the latest record (or for `generation`, when given) to complete.
    [[nodiscard]] Status synchronize(Timeout timeout = forever,
                                     std::optional<std::uint64_t> generation = {}) {
        std::unique_lock lock(mutex_);
        const std::uint64_t target = generation.value_or(issued_);
        const auto done = [&] { return completed_ >= target; };
        if (timeout.is_forever()) {
            done_.wait(lock, done);
        } else if (!done_.wait_until(lock, timeout.deadline_from(Timeout::clock::now()), done)) {
            return Status::rt_wait_timeout;
        }
        return Status::ok;
    }

    // A stream's wait for `generation` (stream_wait_event): true when the record completed,
    // false when `stop` was requested first (the waiting stream is being stopped without
    // draining, at process exit, when the record may never run).
    [[nodiscard]] bool wait(std::uint64_t generation, std::stop_token stop) {
        std::unique_lock lock(mutex_);
        return done_.wait(lock, stop, [&] { return completed_ >= generation; });
    }

    [[nodiscard]] std::uint64_t generation() const {
        std::lock_guard lock(mutex_);
        return issued_;
    }

    // The completion time of the latest record, when it is complete.
    [[nodiscard]] std::optional<std::uint64_t> timestamp_ns() const {
        std::lock_guard lock(mutex_);
        if (issued_ == forgotten_ || completed_ < issued_) {
            return std::nullopt;
        }
        return timestamp_ns_;
    }

private:
    const std::uint64_t id_;
    const std::int32_t device_;
    mutable std::mutex mutex_;
    std::condition_variable_any done_; // _any: waits that a stop token can end
    std::uint64_t issued_ = 0;         // generations recorded
    std::uint64_t completed_ = 0;      // generations the stream passed
    std::uint64_t forgotten_ = 0;      // generations a reset dropped (<= completed_)
    std::uint64_t timestamp_ns_ = 0;
};

// aclrtEventElapsedTime: milliseconds from `start` to `end`; both must be complete, otherwise
// rt_param_invalid (CANN's "event not complete" code is not in ferry::Status).
[[nodiscard]] inline Result<float> elapsed_time(const Event& start, const Event& end) {
    const auto a = start.timestamp_ns();
    const auto b = end.timestamp_ns();
    if (!a || !b) {
        return Status::rt_param_invalid;
    }
    const double ns = static_cast<double>(*b) - static_cast<double>(*a);
    return static_cast<float>(ns / 1e6);
}

} // namespace ferry
