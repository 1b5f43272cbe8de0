#pragma once
// Asymmetric memory barriers: a free one for the hot side, an expensive one for the cold side.
//
// A notifier (every send and receive) must not miss a waiter that announced itself just before
// the notifier looked (a Dekker pair: each side stores, then loads the other side's word). The
// symmetric way is a full barrier (an atomic RMW) on both sides — paid by *every* send and
// receive. membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) lets the rare side (a thread about to
// park) pay instead: it acts as a full barrier executed on every running thread of the process,
// so the hot side needs only a compiler barrier. This is folly's asymmetricLightBarrier /
// asymmetricHeavyBarrier, and what Linux's membarrier(2) was added for.
//
// Where the kernel or a seccomp profile refuses membarrier, available() is false and callers fall
// back to RMWs on both sides.

#include <atomic>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace ferry::detail {

class AsymmetricBarrier {
public:
    // True once the process is registered for expedited private membarriers.
    [[nodiscard]] static bool available() noexcept {
        static const bool registered = register_process();
        return registered;
    }

    // The hot side: orders nothing at run time, only keeps the compiler from moving the load
    // that follows above the store that precedes.
    static void light() noexcept { std::atomic_signal_fence(std::memory_order_seq_cst); }

    // The cold side: a full barrier on every running thread of this process.
    static void heavy() noexcept {
        ::syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0);
    }

private:
    static bool register_process() noexcept {
        const long commands = ::syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
        if (commands < 0 || (commands & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) {
            return false;
        }
        return ::syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
    }
};

} // namespace ferry::detail
