// ferry::ipc::detail's wake pair (shared_ring_fence.hpp) as a store-buffering litmus test: per
// round, a notifier thread stores the round into a counter and loads the flag, a waiter thread
// stores the round into the flag, fences and loads the counter, both released at the same
// instant. A round in which both loads are stale is a lost wake (the waiter would sleep, the
// notifier would not wake it). Threads, so the 'concurrency' suite (TSan) runs it too.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/ipc/detail/shared_ring_fence.hpp>
#include <thread>
#include <vector>

using ferry::ipc::detail::RingFence;

namespace {

struct alignas(64) Line {
    std::uint64_t counter = 0;
};
struct alignas(64) FlagLine {
    std::uint32_t flag = 0;
};

// Both threads announce round r, then spin until the other has announced it too.
void meet(std::atomic<std::uint64_t>& mine, const std::atomic<std::uint64_t>& theirs,
          std::uint64_t round) {
    mine.store(round, std::memory_order_release);
    for (unsigned spins = 1; theirs.load(std::memory_order_acquire) < round; ++spins) {
        if (spins % 64 == 0) {
            std::this_thread::yield(); // the other thread may be waiting for this core
        } else {
            ferry::detail::cpu_relax();
        }
    }
}

// Rounds in which the notifier saw an old flag and the waiter an old counter.
std::uint64_t lost_rounds(RingFence notifier, RingFence waiter, std::uint32_t rounds) {
    Line counter;
    FlagLine parked;
    alignas(64) std::atomic<std::uint64_t> notifier_at{0};
    alignas(64) std::atomic<std::uint64_t> waiter_at{0};
    std::vector<std::uint8_t> notifier_stale(rounds + 1);
    std::vector<std::uint8_t> waiter_stale(rounds + 1);
    std::thread notifying([&] {
        for (std::uint32_t r = 1; r <= rounds; ++r) {
            meet(notifier_at, waiter_at, r);
            notifier_stale[r] = ferry::ipc::detail::store_then_load_flag(notifier, counter.counter,
                                                                         r, parked.flag) < r;
        }
    });
    for (std::uint32_t r = 1; r <= rounds; ++r) {
        meet(waiter_at, notifier_at, r);
        ferry::ipc::detail::raise_flag_then_fence(waiter, parked.flag, r);
        waiter_stale[r] =
            std::atomic_ref<std::uint64_t>(counter.counter).load(std::memory_order_seq_cst) < r;
    }
    notifying.join();
    std::uint64_t lost = 0;
    for (std::uint32_t r = 1; r <= rounds; ++r) {
        lost += notifier_stale[r] != 0 && waiter_stale[r] != 0 ? 1 : 0;
    }
    return lost;
}

} // namespace

TEST_CASE("ipc ring fence: membarrier on the waiter's side leaves no round in which both the "
          "notifier and the waiter read the old value",
          "[ipc]") {
    const RingFence here = ferry::ipc::detail::ring_fence();
    if (here != RingFence::asymmetric) {
        WARN("membarrier is not available here: only the seq_cst pair is checked");
    }
    CHECK(lost_rounds(here, here, 5000) == 0);
}

TEST_CASE("ipc ring fence: the seq_cst pair leaves no such round either", "[ipc]") {
    CHECK(lost_rounds(RingFence::symmetric, RingFence::symmetric, 5000) == 0);
}

TEST_CASE("ipc ring fence: a waiter without membarrier says so, so that its park re-checks",
          "[ipc]") {
    std::uint32_t flag = 0;
    CHECK_FALSE(ferry::ipc::detail::raise_flag_then_fence(RingFence::unavailable, flag, 7));
    CHECK(flag == 7);
    CHECK(ferry::ipc::detail::raise_flag_then_fence(RingFence::symmetric, flag, 8));
    CHECK(flag == 8);
}
