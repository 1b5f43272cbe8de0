#pragma once
// ferry::afd::Doorbell and DoorbellPark — a writer that can announce its flags wakes the waiter
// instead of leaving it to poll.
//
// The device protocol has no notification: producers only store flags, so the polling policies
// of wait_policy.hpp stay for writers that cannot ring (CANN's operators, the C API). ferry's own
// writers (AttentionToFfn, FfnToAttention through a Window) ring the owner's doorbell after they
// publish; a waiter with DoorbellPark spins briefly, then parks on the doorbell's futex word.
//
// Protocol (symmetric: every step is a read-modify-write or a seq_cst access, because the writer
// may be another process, which an asymmetric membarrier fence would not order):
//   writer: publish the flags (release) -> rings += 1 (seq_cst RMW) -> if sleepers != 0, wake;
//   waiter: sleepers += 1 (seq_cst RMW) -> seen = rings -> check the flags -> park while
//           rings == seen -> ... -> sleepers -= 1 when the wait ends.
// Either the waiter's `seen` already includes the ring (then the ring's RMW orders the flags
// before its check), or the ring comes later in the single seq_cst order than the waiter's
// increment, so the writer sees a sleeper and wakes — and a wake that precedes the park is not
// lost, since the futex refuses to sleep once `rings` differs from `seen`. With no sleeper, a
// ring costs one atomic add and no system call.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/channel/detail/futex.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <thread>

namespace ferry::afd {

// The doorbell's memory. It lives next to the data it announces: in a shared segment for
// processes (ferry/ipc/window.hpp), in the LocalWindow for threads.
struct alignas(8) DoorbellWord {
    std::uint32_t rings = 0;    // bumped by every ring; the futex word
    std::uint32_t sleepers = 0; // waiters that may park
};

class Doorbell {
public:
    using clock = ferry::detail::futex_clock;

    // A silent doorbell: ring() does nothing and a DoorbellPark on it only spins and naps.
    Doorbell() = default;
    // `scope` must be FutexScope::shared when the word is in memory other processes map.
    Doorbell(DoorbellWord* word, ferry::detail::FutexScope scope) noexcept
        : word_(word), scope_(scope) {}

    [[nodiscard]] bool connected() const noexcept { return word_ != nullptr; }
    [[nodiscard]] ferry::detail::FutexScope scope() const noexcept { return scope_; }
    [[nodiscard]] DoorbellWord* word() const noexcept { return word_; }

    // After publishing: no system call unless someone may be parked.
    void ring() const noexcept {
        if (word_ == nullptr) {
            return;
        }
        rings().fetch_add(1, std::memory_order_seq_cst);
        if (sleepers().load(std::memory_order_seq_cst) != 0) {
            ferry::detail::futex_wake(&word_->rings, INT_MAX, scope_);
        }
    }

    // Waiter side, in this order: arm, then per poll snapshot -> check -> park(snapshot, ...);
    // disarm once when the wait ends.
    void arm() const noexcept { sleepers().fetch_add(1, std::memory_order_seq_cst); }
    void disarm() const noexcept { sleepers().fetch_sub(1, std::memory_order_seq_cst); }
    [[nodiscard]] std::uint32_t snapshot() const noexcept {
        return rings().load(std::memory_order_seq_cst);
    }
    void park(std::uint32_t seen, clock::time_point deadline) const noexcept {
        ferry::detail::futex_wait_until(&word_->rings, seen, deadline, scope_);
    }

private:
    [[nodiscard]] std::atomic_ref<std::uint32_t> rings() const noexcept {
        return std::atomic_ref(word_->rings);
    }
    [[nodiscard]] std::atomic_ref<std::uint32_t> sleepers() const noexcept {
        return std::atomic_ref(word_->sleepers);
    }

    DoorbellWord* word_ = nullptr;
    ferry::detail::FutexScope scope_ = ferry::detail::FutexScope::process;
};

// The wait policy for flags whose writer rings: `spin` polls with a pause hint, then parks on the
// doorbell for at most `max_park` at a time. The bound is what lets a waiter see changes nobody
// rings for — run_flag set to 0 by the host, a writer that cannot ring — within max_park. It is
// 20 ms, the peer probe's period (auto_wait.hpp), not shorter: every end of a park is a timer
// wake-up with its system calls, so a 1 ms bound cost an idle waiter a few percent of a core, and
// a park ending about when a ring arrives delayed that wake-up (docs/afd.md, Windows and the
// doorbell).
// detail::wait_until_ready drives the hooks: prepare() before each poll, pause_until() between
// polls, finish() when the wait ends. A disconnected doorbell degrades to napping max_park.
// Benchmarks: construct with the doorbell under test and the spin / park bounds to compare, e.g.
// DoorbellPark(window.doorbell(), 0, std::chrono::milliseconds(5)) parks at once.
class DoorbellPark {
public:
    static constexpr std::uint32_t k_default_spin = 64;
    static constexpr std::chrono::microseconds k_default_max_park{20'000};

    DoorbellPark() = default;
    explicit DoorbellPark(Doorbell bell, std::uint32_t spin = k_default_spin,
                          std::chrono::microseconds max_park = k_default_max_park) noexcept
        : bell_(bell), spin_(spin), max_park_(std::max(max_park, std::chrono::microseconds(1))) {}

    [[nodiscard]] const Doorbell& doorbell() const noexcept { return bell_; }
    [[nodiscard]] std::uint32_t polls() const noexcept { return polls_; }
    [[nodiscard]] std::uint32_t parks() const noexcept { return parks_; }

    void prepare() noexcept {
        if (polls_ < spin_ || !bell_.connected()) {
            return;
        }
        if (!armed_) {
            bell_.arm();
            armed_ = true;
        }
        seen_ = bell_.snapshot();
    }
    void pause_until(Doorbell::clock::time_point deadline) noexcept {
        if (polls_ < spin_) {
            ++polls_;
            ferry::detail::cpu_relax();
            return;
        }
        ++parks_;
        const auto now = Doorbell::clock::now();
        const auto bound = deadline - now > max_park_ ? now + max_park_ : deadline;
        if (armed_) {
            bell_.park(seen_, bound);
        } else {
            std::this_thread::sleep_until(bound);
        }
    }
    void pause() noexcept { pause_until(Doorbell::clock::time_point::max()); }
    void finish() noexcept {
        if (armed_) {
            bell_.disarm();
            armed_ = false;
        }
    }

private:
    Doorbell bell_;
    std::uint32_t spin_ = k_default_spin;
    std::chrono::microseconds max_park_ = k_default_max_park;
    std::uint32_t polls_ = 0;
    std::uint32_t parks_ = 0;
    std::uint32_t seen_ = 0;
    bool armed_ = false;
};

static_assert(WaitPolicy<DoorbellPark>);

} // namespace ferry::afd
