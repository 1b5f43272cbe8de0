#pragma once
// ferry::Channel<T, Capacity, Policy> — a bounded, typed, blocking channel
// (docs/cann-contract/tdt.md#typed-channels).
//
//     ferry::Channel<std::unique_ptr<Job>, 64> jobs;           // spsc, holds exactly 64
//     jobs.send(std::move(job));                               // blocks while full
//     if (jobs.try_send(std::move(job)) != ferry::Status::ok)  // never blocks; on failure `job`
//         retry_later(std::move(job));                         // still owns its value
//     auto next = jobs.receive_for(5ms);                       // Result<T>: value or status
//     jobs.stop();                                             // wakes every blocked thread
//
// Semantics, each from the contract (full guide: docs/channel.md):
// - send: moves the item in; on any failure (full, timed_out, stopped) the argument is left
//   untouched — nothing is lost (docs/cann-contract/tdt.md#typed-channels,
//   crossbeam's SendTimeoutError(T)).
// - Timeouts: forever, no_wait or any duration; deadlines on the steady clock; a timed call never
//   returns before its deadline. no_wait (or a deadline already past) answers full / empty; a
//   wait that expires answers timed_out.
// - stop(): sticky and idempotent; wakes every blocked sender and receiver at once. Afterwards
//   send answers stopped; receive drains what is queued without blocking, then answers stopped.
// - mpmc: a receive (or clear) that finds the next position claimed by a send that has not yet
//   published waits for that send rather than answering empty / stopped; every send that
//   answered ok is received or cleared (docs/channel.md, "A send in flight").
// - clear(): destroys the queued items and wakes blocked senders.
// - size(): exact when no operation is in flight (and always within [0, capacity]).
// - spsc: at most one thread sends and one thread receives (or clears) at a time; mpmc: any.
// - stats(): counts of messages, bytes, waits, time parked, high-water mark, drops and refusals
//   (ferry/channel/stats.hpp; docs/channel.md, Counters); a policy with counters = false has none.

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/cache_line.hpp>
#include <ferry/channel/detail/channel_counters.hpp>
#include <ferry/channel/detail/event_count.hpp>
#include <ferry/channel/detail/mpmc_ring.hpp>
#include <ferry/channel/detail/spsc_index_ring.hpp>
#include <ferry/channel/detail/spsc_ring.hpp>
#include <ferry/channel/policy.hpp>
#include <ferry/channel/stats.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <utility>

namespace ferry {

// What a channel can carry: an object type whose moves and destruction cannot throw (items are
// moved inside lock-free sections, where an exception could not be undone).
template <typename T>
concept Sendable = std::is_object_v<T> && !std::is_const_v<T> && !std::is_array_v<T> &&
                   std::is_nothrow_move_constructible_v<T> && std::is_nothrow_destructible_v<T>;

namespace detail {
// spsc: the flag ring, or the index ring for a large fixed capacity (spsc_index_ring.hpp says why).
template <typename T, std::size_t Capacity>
using spsc_ring_for =
    std::conditional_t<Capacity != dynamic_capacity && Capacity >= k_index_ring_min_capacity,
                       SpscIndexRing<T, Capacity>, SpscRing<T, Capacity>>;
template <typename T, std::size_t Capacity, typename Policy>
using ring_for =
    std::conditional_t<Policy::multi_producer, MpmcRing<T, Capacity>, spsc_ring_for<T, Capacity>>;
} // namespace detail

template <Sendable T, std::size_t Capacity, ChannelPolicy Policy = spsc>
requires ChannelCapacity<Capacity>
class Channel {
public:
    using value_type = T;
    using policy_type = Policy;
    using clock = Timeout::clock;
    static constexpr bool is_dynamic = Capacity == dynamic_capacity;

    Channel() requires(!is_dynamic) : ring_(Capacity) {}

    // Throws std::invalid_argument for a capacity outside [2, 8192] (create() reports it as a
    // Status instead) and std::bad_alloc when the slots cannot be allocated.
    explicit Channel(std::size_t capacity) requires is_dynamic : ring_(checked(capacity)) {}

    // The non-throwing way to make a dynamic-capacity channel (the C API's path):
    // invalid_param for a capacity outside [2, 8192], bad_alloc when memory runs out.
    [[nodiscard]] static Result<std::unique_ptr<Channel>>
    create(std::size_t capacity) noexcept requires is_dynamic {
        if (!is_valid_channel_capacity(capacity)) {
            return Status::invalid_param;
        }
        try {
            return std::make_unique<Channel>(capacity);
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    Channel(const Channel&) = delete;
    Channel& operator=(const Channel&) = delete;
    ~Channel() = default; // destroys the items still queued

    // ---- send -------------------------------------------------------------------------------
    Status send(T&& value, Timeout timeout = forever) noexcept {
        return send_with(value, !timeout.is_no_wait(), [timeout] { return deadline_of(timeout); });
    }
    Status send(const T& value, Timeout timeout = forever) requires std::copy_constructible<T> {
        T copy(value);
        return send(std::move(copy), timeout);
    }
    Status try_send(T&& value) noexcept {
        return send_with(value, false, [] { return clock::time_point::max(); });
    }
    Status try_send(const T& value) requires std::copy_constructible<T> {
        return send(value, no_wait);
    }

    template <typename Rep, typename Period>
    Status send_for(T&& value, std::chrono::duration<Rep, Period> timeout) noexcept {
        return send(std::move(value), Timeout(timeout));
    }
    template <typename Duration>
    Status send_until(T&& value, std::chrono::time_point<clock, Duration> deadline) noexcept {
        return send_with(value, true, [deadline] { return until(deadline); });
    }

    // ---- receive ----------------------------------------------------------------------------
    Result<T> receive(Timeout timeout = forever) noexcept {
        return receive_value(!timeout.is_no_wait(), [timeout] { return deadline_of(timeout); });
    }
    Result<T> try_receive() noexcept { return receive(no_wait); }
    template <typename Rep, typename Period>
    Result<T> receive_for(std::chrono::duration<Rep, Period> timeout) noexcept {
        return receive(Timeout(timeout));
    }
    template <typename Duration>
    Result<T> receive_until(std::chrono::time_point<clock, Duration> deadline) noexcept {
        return receive_value(true, [deadline] { return until(deadline); });
    }

    // Receives into an existing object (move-assigned on success, untouched otherwise): lets a
    // receive loop reuse one T, e.g. a Dataset's buffers.
    Status
    receive(T& out,
            Timeout timeout = forever) noexcept requires std::is_nothrow_move_assignable_v<T> {
        auto consume = [&out](T& item) noexcept { out = std::move(item); };
        return receive_with(consume, !timeout.is_no_wait(),
                            [timeout] { return deadline_of(timeout); });
    }

    // ---- stop / clear / size ----------------------------------------------------------------
    // Sticky and idempotent. Every thread blocked in send or receive wakes at once.
    void stop() noexcept {
        flags_.stopped.store(true, std::memory_order_seq_cst);
        items_.notify();
        slots_.notify();
    }
    [[nodiscard]] bool stopped() const noexcept {
        return flags_.stopped.load(std::memory_order_acquire);
    }

    // Destroys the queued items and wakes blocked senders; returns how many were dropped.
    // spsc: call it from the receiving side (it is a receive of everything).
    std::size_t clear() noexcept {
        std::size_t dropped = 0;
        if constexpr (Policy::multi_consumer) {
            PendingWait wait(blocked_.count, false); // a send in flight at the head is waited for
            dropped = ring_.clear(wait);
        } else {
            dropped = ring_.clear();
        }
        counters_.dropped(dropped);
        slots_.notify();
        return dropped;
    }

    [[nodiscard]] std::size_t size() const noexcept { return ring_.size(); }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] std::size_t capacity() const noexcept { return ring_.capacity(); }

    // Threads currently parked (or about to park) in a blocking send or receive, after their
    // spin phase. After stop() it falls to zero without anyone else's help; a handle layer that
    // must free a channel while callers may be blocked (docs/cann-contract/tdt.md#destroy) stops
    // it, waits for blocked() == 0 and for its own count of calls in flight (calls that have not
    // parked are not counted here) before deleting it.
    [[nodiscard]] std::size_t blocked() const noexcept {
        return blocked_.count.load(std::memory_order_acquire);
    }

    // What the channel counted since it was made (ferry/channel/stats.hpp). Any thread; each
    // count is exact once the calls it counts have returned.
    [[nodiscard]] ChannelStats stats() const noexcept requires detail::counters_enabled<Policy> {
        return counters_.snapshot_with(ring_, sizeof(T));
    }

private:
    // Most CPU pauses between two tries of a spinning wait. spsc: one, like a hand-written spin
    // loop. A pause lasts tens to hundreds of cycles, depending on the core, and each pause
    // between the other side's hand-off and the next try is added to that hand-off's latency
    // (a ping-pong pays it twice per round trip); polling costs the other side nothing extra: it
    // writes the line we poll once per item, however often we read it. mpmc backs off to 8: its
    // waiters compete for the same positions.
    static constexpr unsigned k_max_backoff = Policy::multi_consumer ? 8 : 1;

    static std::size_t checked(std::size_t capacity) {
        if (!is_valid_channel_capacity(capacity)) {
            throw std::invalid_argument("ferry::Channel: capacity must be in [2, 8192]");
        }
        return capacity;
    }

    // A caller's deadline, looked at once its first attempt failed: one already past is
    // k_past_deadline, which wait() answers like no_wait (full / empty). A duration's deadline is
    // never that, so a timed wait whose deadline passes before wait() looks answers timed_out
    // (a slow or preempted caller can take longer than a short timeout to get there).
    template <typename Duration>
    static clock::time_point until(std::chrono::time_point<clock, Duration> deadline) noexcept {
        const auto d = std::chrono::ceil<clock::duration>(deadline);
        return d <= clock::now() ? k_past_deadline : d;
    }
    static constexpr clock::time_point k_past_deadline = clock::time_point::min();

    // The deadline of a timeout that may wait (no_wait never gets here: its callers pass
    // may_wait = false). forever maps to time_point::max().
    static clock::time_point deadline_of(Timeout timeout) noexcept {
        return timeout.is_forever() ? clock::time_point::max()
                                    : timeout.deadline_from(clock::now());
    }

    // Every send and receive: one inlined attempt; only a call that may wait and has to (full /
    // empty) computes its deadline and leaves the fast path.
    template <typename Deadline>
    Status send_with(T& value, bool may_wait, Deadline deadline) noexcept {
        const Status first = attempt_send(value);
        if (first == Status::ok) [[likely]] {
            return first;
        }
        if (first == Status::full) {
            counters_.found_full(capacity());
        }
        const Status s =
            first != Status::full || !may_wait ? first : send_blocking(value, deadline());
        if (s != Status::ok) {
            counters_.refused();
        }
        return s;
    }

    template <typename Consume, typename Deadline>
    Status receive_with(Consume& consume, bool may_wait, Deadline deadline) noexcept {
        const Status first = attempt_receive(consume);
        if (first == Status::empty) {
            counters_.found_empty();
        }
        if (first != Status::empty || !may_wait) {
            return first;
        }
        return receive_blocking(consume, deadline());
    }

    template <typename Deadline>
    Result<T> receive_value(bool may_wait, Deadline deadline) noexcept {
        std::optional<T> out;
        auto consume = [&out](T& item) noexcept { out.emplace(std::move(item)); };
        const Status status = receive_with(consume, may_wait, deadline);
        return status == Status::ok ? Result<T>(std::move(*out)) : Result<T>(status);
    }

    // One attempt each; `full` / `empty` mean "would have to wait".
    [[gnu::always_inline]] Status attempt_send(T& value) noexcept {
        if (flags_.stopped.load(std::memory_order_acquire)) {
            return Status::stopped;
        }
        // The ring counts the message; the counters only sample the depth now and then.
        const bool pushed = ring_.template try_push<detail::k_high_water_sample>(
            value, [this](auto depth) noexcept { counters_.observed_depth(depth()); });
        if (!pushed) {
            return Status::full;
        }
        items_.notify();
        return Status::ok;
    }

    // `counted`: the caller is already counted in blocked() (see PendingWait).
    template <typename Consume>
    [[gnu::always_inline]] Status attempt_receive(Consume& consume, bool counted = false) noexcept {
        if (pop(consume, counted)) {
            return Status::ok;
        }
        if (!flags_.stopped.load(std::memory_order_acquire)) {
            return Status::empty;
        }
        // Stopped: drain. Try once more, so an item whose send completed before stop() is still
        // delivered even if it landed between the first attempt and the flag load.
        return pop(consume, counted) ? Status::ok : Status::stopped;
    }

    template <typename Consume>
    bool pop(Consume& consume, bool counted) noexcept {
        if (!take(consume, counted)) {
            return false;
        }
        slots_.notify(); // the ring counted the message
        return true;
    }

    // One item from the ring. mpmc: a head position that a sender has claimed but not yet
    // published is waited for, not reported empty (docs/channel.md, "A send in flight"): sends
    // behind it may have answered ok already, and stop / destroy would otherwise lose them.
    template <typename Consume>
    bool take(Consume& consume, bool counted) noexcept {
        if constexpr (Policy::multi_consumer) {
            const detail::PopResult r = ring_.try_pop(consume);
            if (r == detail::PopResult::pending) [[unlikely]] {
                return take_when_published(consume, counted);
            }
            return r == detail::PopResult::popped;
        } else {
            return ring_.try_pop(consume);
        }
    }

    template <typename Consume>
    [[gnu::noinline]] bool take_when_published(Consume& consume, bool counted) noexcept {
        PendingWait wait(blocked_.count, counted);
        for (;;) {
            wait();
            if (const detail::PopResult r = ring_.try_pop(consume);
                r != detail::PopResult::pending) {
                return r == detail::PopResult::popped;
            }
        }
    }

    // The waiting parts, out of line: a call reaches them only after its first attempt failed.
    [[gnu::noinline]] Status send_blocking(T& value, clock::time_point deadline) noexcept {
        return wait(slots_, deadline, Status::full, detail::ChannelSide::send,
                    [this, &value](bool) noexcept { return attempt_send(value); });
    }

    template <typename Consume>
    [[gnu::noinline]] Status receive_blocking(Consume& consume,
                                              clock::time_point deadline) noexcept {
        return wait(
            items_, deadline, Status::empty, detail::ChannelSide::receive,
            [this, &consume](bool counted) noexcept { return attempt_receive(consume, counted); });
    }

    // Waits on `event` (spin, then park) until `attempt` answers something other than `busy` or
    // the deadline passes. k_past_deadline (a caller's deadline already past, see until())
    // behaves as no_wait: one more attempt. Any other deadline that has passed gives one more
    // attempt too, then timed_out. The attempt runs after every wake-up before the deadline is
    // looked at, so a notification is never dropped by a waiter that is about to time out.
    // attempt(counted): `counted` says whether this thread is already counted in blocked().
    template <typename Attempt>
    Status wait(detail::EventCount& event, clock::time_point deadline, Status busy,
                detail::ChannelSide side, Attempt attempt) noexcept {
        if (deadline == k_past_deadline) {
            return attempt(false);
        }
        const bool bounded = deadline != clock::time_point::max();
        if (bounded && deadline <= clock::now()) {
            const Status s = attempt(false);
            return s == busy ? Status::timed_out : s;
        }
        // Spin: k_max_backoff above (spsc tries after every pause; mpmc backs off 1, 2, 4, 8).
        unsigned pause = 1;
        for (unsigned spent = 0; spent < Policy::spin_limit; spent += pause) {
            for (unsigned i = 0; i < pause; ++i) {
                detail::cpu_relax();
            }
            if (const Status s = attempt(false); s != busy) {
                return s;
            }
            pause = pause < k_max_backoff ? 2 * pause : pause;
        }
        // Counted from here on only: a hand-off that the spin phase catches touches no shared
        // counter (both sides of a channel wait on the same one).
        const BlockedScope scope(blocked_.count);
        const typename Counters::ParkedTime parked(counters_, side);
        for (;;) {
            const auto key = event.prepare_wait();
            if (const Status s = attempt(true); s != busy) {
                return s;
            }
            if (bounded && clock::now() >= deadline) {
                return Status::timed_out;
            }
            event.wait_until(key, deadline);
            if (const Status s = attempt(true); s != busy) {
                return s;
            }
        }
    }

    // Counts a thread in the waiting part; the decrement is its last access to the channel.
    class BlockedScope {
    public:
        explicit BlockedScope(std::atomic<std::size_t>& count) noexcept : count_(count) {
            count_.fetch_add(1, std::memory_order_relaxed);
        }
        ~BlockedScope() { count_.fetch_sub(1, std::memory_order_release); }
        BlockedScope(const BlockedScope&) = delete;
        BlockedScope& operator=(const BlockedScope&) = delete;

    private:
        std::atomic<std::size_t>& count_;
    };

    // Waits out a send in flight at the head of an mpmc ring, one step per call: pauses first
    // (the publication is a move and a store away when the sender is running), then yields, so a
    // preempted sender gets the CPU back. Counted in blocked() from the first yield on: a thread
    // held up by someone else's send is waiting too, and tests can see it.
    class PendingWait {
    public:
        // counted: the thread is already counted (it is in the parking part of a wait).
        PendingWait(std::atomic<std::size_t>& count, bool counted) noexcept
            : count_(count), counted_(counted) {}
        ~PendingWait() {
            if (owns_count_) {
                count_.fetch_sub(1, std::memory_order_release); // as BlockedScope's
            }
        }
        PendingWait(const PendingWait&) = delete;
        PendingWait& operator=(const PendingWait&) = delete;

        void operator()() noexcept {
            if (pauses_ < k_pending_pauses) {
                ++pauses_;
                detail::cpu_relax();
                return;
            }
            if (!counted_) {
                count_.fetch_add(1, std::memory_order_relaxed);
                counted_ = owns_count_ = true;
            }
            std::this_thread::yield();
        }

    private:
        static constexpr unsigned k_pending_pauses = 64;
        std::atomic<std::size_t>& count_;
        bool counted_;
        bool owns_count_ = false;
        unsigned pauses_ = 0;
    };

    struct alignas(detail::k_false_sharing_range) Flags {
        std::atomic<bool> stopped{false};
    };
    struct alignas(detail::k_false_sharing_range) BlockedCount {
        std::atomic<std::size_t> count{0};
    };
    struct alignas(detail::k_false_sharing_range) PaddedEvent : detail::EventCount {
        PaddedEvent() noexcept : detail::EventCount(Policy::asymmetric_barrier) {}
    };

    detail::ring_for<T, Capacity, Policy> ring_;
    Flags flags_;
    PaddedEvent items_; // receivers wait here for an item
    PaddedEvent slots_; // senders wait here for a free slot
    BlockedCount blocked_;
    using Counters =
        detail::ChannelCounters<detail::counters_enabled<Policy>, Policy::multi_producer>;
    Counters counters_;
};

} // namespace ferry
