#pragma once
// The asymmetric fence of the spsc ring's wake protocol (docs/processes.md, "Waking a parked
// call"). A notifier (publish / release) stores its counter and then reads the other side's
// `parked` flag; a waiter sets its flag and then reads the counter. One of the two must see the
// other's store, or a wake is lost. The symmetric way makes both pairs seq_cst: the notifier pays
// a full barrier (a locked instruction on x86) on every item. The asymmetric way moves the whole
// cost to the waiter, which is about to sleep anyway:
//
//   notifier: counter.store(release); compiler barrier; parked.load(relaxed)
//   waiter:   parked.store(seq_cst); membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED); counter.load
//
// membarrier makes every running thread of every process registered with
// MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED execute a full barrier before it returns (a thread
// not running passes one when it is switched out). So at the notifier either its flag load comes
// after that barrier, and then after the waiter's flag store (the waiter's membarrier also fences
// the caller): it sees the flag and wakes; or its counter store came before that barrier, and
// then the waiter's counter load, after the call, sees it and the waiter does not sleep. The
// compiler barrier keeps the compiler from moving the flag load above the counter store.
//
// The mode is per process, decided once: `asymmetric` when this kernel supports the command and
// the registration succeeded (the process is then a target of every waiter's barrier);
// `unavailable` otherwise (ENOSYS, or EPERM under a seccomp filter). A process in `unavailable`
// notifies with the symmetric seq_cst pair, which is correct against a waiter of any mode; but
// when it waits it cannot force a barrier on a peer process that notifies asymmetrically, so its
// parks re-check the ring every k_unfenced_slice (a bounded delay, never a lost item). Tests force
// the symmetric pair in every process sharing a ring (force_ring_fence) to exercise it.
//
// The registration belongs to the address space: a forked child keeps it, as it keeps the
// decided mode; exec clears both (the kernel's registration and this process's statics).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <ferry/ipc/detail/shared_ring_common.hpp>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ferry::ipc::detail {

enum class RingFence : int {
    undecided = 0,
    asymmetric = 1,  // registered: notify with release + relaxed, wait with membarrier
    symmetric = 2,   // forced (tests): every process sharing the ring notifies and waits seq_cst
    unavailable = 3, // no membarrier here: notify seq_cst, wait seq_cst in short slices
};

// How often a park that could not force the barrier re-checks its ring.
inline constexpr std::chrono::milliseconds k_unfenced_slice{1};

inline std::atomic<RingFence>& ring_fence_mode() noexcept {
    static std::atomic<RingFence> mode{RingFence::undecided};
    return mode;
}

inline RingFence register_ring_fence() noexcept {
    const long supported = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    const long needed = MEMBARRIER_CMD_GLOBAL_EXPEDITED | MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED;
    if (supported < 0 || (supported & needed) != needed ||
        ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) != 0) {
        return RingFence::unavailable;
    }
    return RingFence::asymmetric;
}

// This process's mode; the first call registers (once: later calls are one relaxed load).
inline RingFence ring_fence() noexcept {
    auto& mode = ring_fence_mode();
    RingFence seen = mode.load(std::memory_order_acquire);
    if (seen == RingFence::undecided) {
        RingFence decided = register_ring_fence();
        // Another thread may have decided (or a test forced symmetric) meanwhile: theirs stands.
        if (!mode.compare_exchange_strong(seen, decided, std::memory_order_acq_rel)) {
            decided = seen;
        }
        seen = decided;
    }
    return seen;
}

// Tests only: `mode` for every ring handle this process makes after the call; returns the mode
// before. Forcing `symmetric` is sound only when every process sharing the ring forces it before
// it opens the ring; `unavailable` is sound anywhere (it is what a process without membarrier
// does).
inline RingFence force_ring_fence(RingFence mode) noexcept {
    return ring_fence_mode().exchange(mode, std::memory_order_acq_rel);
}

// The notifier's half without membarrier: both seq_cst (out of line: the fast path stays small).
[[gnu::noinline]] inline std::uint32_t
store_then_load_flag_seq_cst(std::uint64_t& counter, std::uint64_t value,
                             std::uint32_t& parked) noexcept {
    ring_ref(counter).store(value, std::memory_order_seq_cst);
    return ring_ref(parked).load(std::memory_order_seq_cst);
}

// The notifier's half: stores `value` into `counter`, then loads the waiter's flag and returns
// it. Asymmetric: release store, compiler barrier, plain load; otherwise both seq_cst.
[[gnu::always_inline]] inline std::uint32_t store_then_load_flag(RingFence mode,
                                                                 std::uint64_t& counter,
                                                                 std::uint64_t value,
                                                                 std::uint32_t& parked) noexcept {
    if (mode == RingFence::asymmetric) [[likely]] {
        ring_ref(counter).store(value, std::memory_order_release);
        std::atomic_signal_fence(std::memory_order_seq_cst);
        return ring_ref(parked).load(std::memory_order_relaxed);
    }
    return store_then_load_flag_seq_cst(counter, value, parked);
}

// The waiter's half, before it re-reads the counter: stores `flag` into `parked`, then the
// barrier. False when this park could not force the barrier on the notifiers and must therefore
// re-check in short slices.
inline bool raise_flag_then_fence(RingFence mode, std::uint32_t& parked,
                                  std::uint32_t flag) noexcept {
    ring_ref(parked).store(flag, std::memory_order_seq_cst);
    switch (mode) {
    case RingFence::asymmetric:
        return ::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL_EXPEDITED, 0, 0) == 0;
    case RingFence::symmetric:
        return true;
    default:
        return false;
    }
}

} // namespace ferry::ipc::detail
