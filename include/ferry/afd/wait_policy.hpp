#pragma once
// Wait policies: what a scheduler does between two polls of flags nobody signals.
//
// The protocol has no notification: producers (AttentionToFFN on another device) only store
// flags, so every waiter polls (docs/cann-contract/afd.md#all-sync-mode, #grouped-mode). CANN's
// all-sync loop is a pure busy-spin and its grouped loop calls sched_yield; both burn a core for as
// long as the wait lasts. ferry makes the pause a policy
// (docs/cann-contract/afd.md#policies-ferry-adds):
//   Spin          — CANN's all-sync behaviour: a CPU pause hint and poll again.
//   SpinThenYield — spin a while, then sched_yield between polls (CANN's grouped mode yields at once).
//   SpinThenPark  — spin, yield, then sleep between polls with a capped exponential backoff, so a
//                   long wait costs a few percent of a core instead of all of it.
// The default of ferry's schedulers and simulators is AutoWait (auto_wait.hpp): SpinThenPark<>
// unless the waited-on memory is a window whose writers ring (then it parks on the doorbell).
// A policy object is a prototype: each wait copies it, so it carries per-wait state (its count).

#include <ferry/core/cpu_relax.hpp>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <thread>

namespace ferry::afd {

template <typename W>
concept WaitPolicy = std::copyable<W> && requires(W w) {
    { w.pause() } noexcept; // called between two unsuccessful polls
};

struct Spin {
    void pause() noexcept { ferry::detail::cpu_relax(); }
};

template <std::uint32_t SpinCount = 64>
struct SpinThenYield {
    std::uint32_t polls = 0;
    void pause() noexcept {
        if (polls < SpinCount) {
            ++polls;
            ferry::detail::cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }
};

// After SpinCount pauses and YieldCount yields, sleeps MinSleepUs, doubling up to MaxSleepUs.
// The wake-up latency is bounded by MaxSleepUs plus the kernel's timer slack (about 50 µs on
// Linux by default); bench/afd measures it against a bare polling loop. Each sleep is a timer
// wake-up costing tens of µs of CPU on a virtual machine, so the cap, not the polling, sets what
// a long wait costs: 1024 µs keeps it under the 5 % of a core target (docs/afd.md, Wait).
template <std::uint32_t SpinCount = 64, std::uint32_t YieldCount = 16, std::uint32_t MinSleepUs = 4,
          std::uint32_t MaxSleepUs = 1024>
    requires(MinSleepUs > 0 && MinSleepUs <= MaxSleepUs)
struct SpinThenPark {
    std::uint32_t polls = 0;
    std::uint32_t sleep_us = MinSleepUs;
    void pause() noexcept {
        if (polls < SpinCount) {
            ++polls;
            ferry::detail::cpu_relax();
        } else if (polls < SpinCount + YieldCount) {
            ++polls;
            std::this_thread::yield();
        } else {
            std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
            sleep_us = sleep_us >= MaxSleepUs / 2 ? MaxSleepUs : sleep_us * 2;
        }
    }
};

static_assert(WaitPolicy<Spin> && WaitPolicy<SpinThenYield<>> && WaitPolicy<SpinThenPark<>>);

} // namespace ferry::afd
