#pragma once
// Where a pointer lives: the hook between the value types (ferry/tensor) and the runtime.
//
// docs/cann-contract/tdt.md#datasets: a dataset's items must all live in the same memory kind; CANN
// asks the runtime's pointer attributes (HOST or UNREGISTERED → host, anything else → device).
// ferry's tensor layer asks locate(); the runtime installs its allocation registry as the locator
// when it boots. Without a runtime every non-null pointer is host memory.

#include <atomic>

#include <ferry/core/status.hpp>

namespace ferry {

enum class MemoryKind : unsigned char {
    unknown, // no data pointer: accepted anywhere, fixes nothing (CANN's MEM_UNKNOWN)
    host,
    device,
};

struct PointerLocation {
    Status status = Status::ok; // a failing attribute query is passed through
    MemoryKind kind = MemoryKind::unknown;
};

using PointerLocator = PointerLocation (*)(const void* address) noexcept;

namespace detail {
inline std::atomic<PointerLocator> pointer_locator{nullptr};
} // namespace detail

// Installs (or, with nullptr, removes) the process-wide locator. Returns the previous one.
inline PointerLocator set_pointer_locator(PointerLocator locator) noexcept {
    return detail::pointer_locator.exchange(locator, std::memory_order_acq_rel);
}

[[nodiscard]] inline PointerLocation locate(const void* address) noexcept {
    if (address == nullptr) {
        return {Status::ok, MemoryKind::unknown};
    }
    const PointerLocator locator = detail::pointer_locator.load(std::memory_order_acquire);
    return locator != nullptr ? locator(address) : PointerLocation{Status::ok, MemoryKind::host};
}

} // namespace ferry
