#pragma once
// ferry::Notify — CANN's notify: a one-bit signal between streams (docs/runtime.md, Notifies).
//
// A record (aclrtRecordNotify) queues a task that sets the bit when its stream reaches it. A
// wait-and-reset (aclrtWaitAndResetNotify) queues a task that blocks its stream until the bit is
// set, then clears it: one record releases one wait, and records made while the bit is already set
// merge into it. Unlike an event wait, which waits for the record made before it, a notify wait
// waits for the bit at the time its stream reaches it, so the record may be queued after the wait.
//
// Destroying a notify (or resetting the device that owns it) wakes the streams waiting on it: their
// wait task fails with rt_param_invalid (the stream's next synchronize reports it), and a wait
// reached later fails the same way. A wait with a timeout fails with rt_wait_timeout when it
// expires. Stopping a stream without draining (process exit) ends its wait too.

#include <condition_variable>
#include <cstdint>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <mutex>
#include <stop_token>

namespace ferry {

class Notify {
public:
    Notify(std::uint32_t id, std::int32_t device) : id_(id), device_(device) {}
    Notify(const Notify&) = delete;
    Notify& operator=(const Notify&) = delete;

    // aclrtGetNotifyId: unique among the notifies the runtime made since it booted.
    [[nodiscard]] std::uint32_t id() const noexcept { return id_; }
    [[nodiscard]] std::int32_t device() const noexcept { return device_; }

    // The record task: sets the bit, releasing one waiter.
    void set() {
        {
            std::lock_guard lock(mutex_);
            set_ = true;
        }
        changed_.notify_all();
    }

    // The wait task: blocks until the bit is set, then clears it. rt_param_invalid once the
    // notify is destroyed, rt_wait_timeout when `timeout` expires first, stopped when `stop` is
    // requested (the stream is dropped at exit).
    [[nodiscard]] Status wait_and_reset(std::stop_token stop, Timeout timeout = forever) {
        std::unique_lock lock(mutex_);
        const auto ready = [&] { return set_ || destroyed_; };
        ++waiting_;
        bool woke = false;
        if (timeout.is_forever()) {
            woke = changed_.wait(lock, stop, ready);
        } else {
            woke = changed_.wait_until(lock, stop, timeout.deadline_from(Timeout::clock::now()),
                                       ready);
        }
        --waiting_;
        if (destroyed_) {
            return Status::rt_param_invalid;
        }
        if (!woke) {
            return stop.stop_requested() ? Status::stopped : Status::rt_wait_timeout;
        }
        set_ = false;
        return Status::ok;
    }

    // Destroy / device reset: every present and future wait fails.
    void destroy() {
        {
            std::lock_guard lock(mutex_);
            destroyed_ = true;
        }
        changed_.notify_all();
    }

    [[nodiscard]] bool is_set() const {
        std::lock_guard lock(mutex_);
        return set_;
    }

    // How many streams are inside a wait on it right now (observable state for tests).
    [[nodiscard]] std::uint32_t waiting() const {
        std::lock_guard lock(mutex_);
        return waiting_;
    }

private:
    const std::uint32_t id_;
    const std::int32_t device_;
    mutable std::mutex mutex_;
    std::condition_variable_any changed_; // _any: waits that a stop token can end
    bool set_ = false;
    bool destroyed_ = false;
    std::uint32_t waiting_ = 0;
};

} // namespace ferry
