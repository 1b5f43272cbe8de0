#pragma once
// ferry::detail::cpu_relax — the spin-wait hint used between two unsuccessful polls (channel
// waits, the AFD wait policies): it lets a sibling hyper-thread run and saves power while spinning.

namespace ferry::detail {
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}
} // namespace ferry::detail
