#pragma once
// Emulated device memory: allocation policies, CANN's size rounding, memcpy kinds, and the checks
// that tie every copy to where its pointers really live.
//
// aclrtMalloc, aclrtMallocHost, aclrtMemcpy: docs/cann-contract/runtime.md#memory. Device memory is
// host memory that the AllocationRegistry records as `device`; the per-device limit
// (FERRY_DEVICE_MEMORY) is checked against the rounded sizes, so out-of-memory is reproducible.
// Each check here is a pure function of the registry, used by both the synchronous copy and the
// stream task of an asynchronous one (which re-checks when it runs, so memory freed in between is
// reported instead of written).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ferry/core/memory_kind.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

namespace ferry {

// aclrtMemMallocPolicy: the low byte is the page policy; the rest are type/access flags.
enum class MallocPolicy : std::uint32_t {
    huge_first = 0,
    huge_only = 1,
    normal_only = 2,
    huge_first_p2p = 3,
    huge_only_p2p = 4,
    normal_only_p2p = 5,
    huge1g_only = 6,
    huge1g_only_p2p = 7,
};
inline constexpr std::uint32_t k_malloc_low_band_width = 0x0100;
inline constexpr std::uint32_t k_malloc_high_band_width = 0x1000;
inline constexpr std::uint32_t k_malloc_user_readonly = 0x100000;

// aclrtMemcpyKind (docs/cann-contract/runtime.md#copy-kinds).
enum class MemcpyKind : std::int32_t {
    host_to_host = 0,
    host_to_device = 1,
    device_to_host = 2,
    device_to_device = 3,
    automatic = 4, // ACL_MEMCPY_DEFAULT: inferred from the pointers
    host_to_buf_to_device = 5,
    inner_device_to_device = 6, // rejected by aclrtMemcpy
    inter_device_to_device = 7, // rejected by aclrtMemcpy
};

// Device allocations are aligned to 512 bytes (the alignment ferry/kernel promises for uploaded
// blocks; real devices give at least that).
inline constexpr std::size_t k_device_alignment = 512;
inline constexpr std::size_t k_host_alignment = 64;

// aclrtMalloc's rounding: (size + 32 + padding - 1) / 32 * 32 with padding 32, no padding for the
// HUGE1G policies; nullopt for an unknown page policy or an overflow
// (docs/cann-contract/runtime.md#memory).
[[nodiscard]] constexpr std::optional<std::size_t> device_allocation_size(std::size_t size,
                                                                          std::uint32_t policy) {
    const std::uint32_t page = policy & 0xFFu;
    const std::uint32_t flags = policy & ~0xFFu;
    constexpr std::uint32_t known_flags =
        k_malloc_low_band_width | k_malloc_high_band_width | k_malloc_user_readonly;
    if (page > static_cast<std::uint32_t>(MallocPolicy::huge1g_only_p2p) ||
        (flags & ~known_flags) != 0) {
        return std::nullopt;
    }
    const bool huge1g = page == static_cast<std::uint32_t>(MallocPolicy::huge1g_only) ||
                        page == static_cast<std::uint32_t>(MallocPolicy::huge1g_only_p2p);
    const std::size_t padding = huge1g ? 0 : 32;
    const std::size_t extra = 32 + padding - 1;
    if (size > SIZE_MAX - extra) {
        return std::nullopt;
    }
    return (size + extra) / 32 * 32;
}

// Where a pointer lives, from the registry (CANN: pointer attributes; unregistered → host).
struct PointerAttributes {
    MemoryKind kind = MemoryKind::host;
    std::int32_t device = k_no_device;    // the owning device for device memory
    std::optional<Allocation> allocation; // the live allocation that contains it, if any
};

[[nodiscard]] inline PointerAttributes pointer_attributes(const AllocationRegistry& registry,
                                                          const void* p) {
    PointerAttributes attributes;
    attributes.allocation = registry.find(p);
    if (attributes.allocation && attributes.allocation->kind == AllocationKind::device) {
        attributes.kind = MemoryKind::device;
        attributes.device = attributes.allocation->device;
    }
    return attributes;
}

namespace detail {
// Resolves ACL_MEMCPY_DEFAULT and HOST_TO_BUF_TO_DEVICE to one of the four basic kinds.
inline MemcpyKind resolve_kind(const AllocationRegistry& registry, void* dst, const void* src,
                               MemcpyKind kind) {
    if (kind == MemcpyKind::host_to_buf_to_device) {
        return MemcpyKind::host_to_device;
    }
    if (kind != MemcpyKind::automatic) {
        return kind;
    }
    const bool d = pointer_attributes(registry, dst).kind == MemoryKind::device;
    const bool s = pointer_attributes(registry, src).kind == MemoryKind::device;
    return s ? (d ? MemcpyKind::device_to_device : MemcpyKind::device_to_host)
             : (d ? MemcpyKind::host_to_device : MemcpyKind::host_to_host);
}

// A device side must lie entirely inside one live device allocation; a host side must not start
// in device memory (host memory ferry did not allocate is legal, as in CANN).
inline bool side_matches(const AllocationRegistry& registry, const void* p, std::size_t count,
                         bool device) {
    if (device) {
        const auto a = registry.find(p, count);
        return a && a->kind == AllocationKind::device;
    }
    return pointer_attributes(registry, p).kind != MemoryKind::device;
}
} // namespace detail

// Validates an aclrtMemcpy request without copying. count == 0 is ok (nothing to do); null
// pointers, kinds 6/7 or out of range → invalid_param; count > dest_max, or a side whose
// memory contradicts the kind (e.g. HOST_TO_DEVICE into host memory, a device range that leaves
// its allocation) → rt_param_invalid.
[[nodiscard]] inline Status check_memcpy(const AllocationRegistry& registry, void* dst,
                                         std::size_t dest_max, const void* src, std::size_t count,
                                         MemcpyKind kind) {
    if (count == 0) {
        return Status::ok;
    }
    const auto raw = static_cast<std::int32_t>(kind);
    if (dst == nullptr || src == nullptr || raw < 0 ||
        raw > static_cast<std::int32_t>(MemcpyKind::host_to_buf_to_device)) {
        return Status::invalid_param;
    }
    if (count > dest_max) {
        return Status::rt_param_invalid;
    }
    const MemcpyKind basic = detail::resolve_kind(registry, dst, src, kind);
    const bool dst_device =
        basic == MemcpyKind::host_to_device || basic == MemcpyKind::device_to_device;
    const bool src_device =
        basic == MemcpyKind::device_to_host || basic == MemcpyKind::device_to_device;
    if (!detail::side_matches(registry, dst, count, dst_device) ||
        !detail::side_matches(registry, src, count, src_device)) {
        return Status::rt_param_invalid;
    }
    return Status::ok;
}

// Validates an aclrtMemset request: null → invalid_param; count > max_count → rt_param_invalid;
// memory the runtime allocated must contain the whole range.
[[nodiscard]] inline Status check_memset(const AllocationRegistry& registry, const void* dst,
                                         std::size_t max_count, std::size_t count) {
    if (dst == nullptr) {
        return Status::invalid_param;
    }
    if (count > max_count) {
        return Status::rt_param_invalid;
    }
    if (count == 0) {
        return Status::ok;
    }
    const auto owner = registry.find(dst);
    if (owner && !owner->contains(dst, count)) {
        return Status::rt_param_invalid;
    }
    return Status::ok;
}

namespace detail {
// Host memory standing in for a device or pinned allocation. nullptr when the system is out of
// memory (reported as rt_memory_allocation, never as a throw).
inline void* allocate_bytes(std::size_t size, std::size_t alignment) noexcept {
    if (size > SIZE_MAX - (alignment - 1)) {
        return nullptr; // rounding up would wrap to a tiny size
    }
    const std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    return std::aligned_alloc(alignment, rounded);
}
inline void release_bytes(void* p) noexcept {
    std::free(p);
}
} // namespace detail

// The runtime's memory: allocations with CANN's rounding and per-device limits, all recorded in
// one AllocationRegistry.
class MemoryManager {
public:
    MemoryManager(std::uint32_t device_count, std::uint64_t device_limit)
        : used_(device_count, 0), limit_(device_limit) {}
    MemoryManager(const MemoryManager&) = delete;
    MemoryManager& operator=(const MemoryManager&) = delete;
    ~MemoryManager() { release_all(); }

    [[nodiscard]] const AllocationRegistry& registry() const noexcept { return registry_; }
    [[nodiscard]] std::uint64_t limit() const noexcept { return limit_; }
    [[nodiscard]] std::uint64_t used(std::int32_t device) const {
        std::lock_guard lock(mutex_);
        return used_.at(static_cast<std::size_t>(device));
    }

    // aclrtMalloc on `device` (a valid id). size 0 or an unknown policy → invalid_param; the
    // rounded size beyond the device's remaining limit, or the host out of memory →
    // rt_memory_allocation, with nothing recorded.
    [[nodiscard]] Result<void*> allocate_device(std::int32_t device, std::size_t size,
                                                std::uint32_t policy) {
        const auto reserved = size == 0 ? std::nullopt : device_allocation_size(size, policy);
        if (!reserved) {
            return Status::invalid_param;
        }
        std::lock_guard lock(mutex_);
        std::uint64_t& used = used_.at(static_cast<std::size_t>(device));
        if (*reserved > limit_ - used) {
            return Status::rt_memory_allocation;
        }
        void* p = detail::allocate_bytes(*reserved, k_device_alignment);
        if (p == nullptr) {
            return Status::rt_memory_allocation;
        }
        const Allocation a{reinterpret_cast<std::uintptr_t>(p), size, *reserved, device,
                           AllocationKind::device};
        if (const Status s = record(p, a); failed(s)) {
            return s;
        }
        used += *reserved;
        return p;
    }

    // aclrtMallocHost: no padding, no device limit. size 0 → invalid_param.
    [[nodiscard]] Result<void*> allocate_host(std::size_t size) {
        if (size == 0) {
            return Status::invalid_param;
        }
        void* p = detail::allocate_bytes(size, k_host_alignment);
        if (p == nullptr) {
            return Status::rt_memory_allocation;
        }
        const Allocation a{reinterpret_cast<std::uintptr_t>(p), size, size, k_no_device,
                           AllocationKind::host};
        if (const Status s = record(p, a); failed(s)) {
            return s;
        }
        return p;
    }

    // aclrtFree / aclrtFreeHost: null → invalid_param; anything but the base of a live allocation
    // of that kind (interior, foreign, already freed, the other kind) → rt_memory_free.
    [[nodiscard]] Status free(void* p, AllocationKind kind) {
        if (p == nullptr) {
            return Status::invalid_param;
        }
        std::lock_guard lock(mutex_);
        const auto removed = registry_.erase(p, kind);
        if (!removed) {
            return Status::rt_memory_free;
        }
        if (removed->kind == AllocationKind::device) {
            used_.at(static_cast<std::size_t>(removed->device)) -= removed->reserved;
        }
        detail::release_bytes(p);
        return Status::ok;
    }

    // Records foreign memory on `device` (docs/runtime.md, External memory): never freed here,
    // not counted against the device's limit; the handle removes the record.
    [[nodiscard]] Result<ExternalRecord> register_external(const void* base, std::size_t bytes,
                                                           std::int32_t device) {
        const auto at = reinterpret_cast<std::uintptr_t>(base);
        return registry_.insert_external({at, bytes, bytes, device, AllocationKind::device});
    }

    // Frees every device allocation of `device` (its last context went away).
    void release_device(std::int32_t device) {
        std::lock_guard lock(mutex_);
        const auto removed = registry_.erase_if([&](const Allocation& a) {
            return a.kind == AllocationKind::device && a.device == device;
        });
        for (const Allocation& a : removed) {
            detail::release_bytes(a.data());
        }
        used_.at(static_cast<std::size_t>(device)) = 0;
    }

    void release_all() {
        std::lock_guard lock(mutex_);
        for (const Allocation& a : registry_.erase_if([](const Allocation&) { return true; })) {
            detail::release_bytes(a.data());
        }
        std::fill(used_.begin(), used_.end(), 0);
    }

    // The synchronous copy: checked, then performed (memmove: overlapping ranges are allowed).
    [[nodiscard]] Status copy(void* dst, std::size_t dest_max, const void* src, std::size_t count,
                              MemcpyKind kind) const {
        if (const Status s = check_memcpy(registry_, dst, dest_max, src, count, kind); failed(s)) {
            return s;
        }
        if (count != 0) {
            std::memmove(dst, src, count);
        }
        return Status::ok;
    }

    [[nodiscard]] Status set(void* dst, std::size_t max_count, int value, std::size_t count) const {
        if (const Status s = check_memset(registry_, dst, max_count, count); failed(s)) {
            return s;
        }
        if (count != 0) {
            std::memset(dst, value, count);
        }
        return Status::ok;
    }

private:
    // Records the fresh bytes `p` as `a`; frees them when that fails, by status or by bad_alloc
    // (the registry's node), so a failed allocation leaks nothing.
    [[nodiscard]] Status record(void* p, const Allocation& a) {
        try {
            if (failed(registry_.insert(a))) {
                detail::release_bytes(p);
                return Status::rt_internal_error; // impossible: the system gave us fresh memory
            }
        } catch (...) {
            detail::release_bytes(p);
            throw;
        }
        return Status::ok;
    }

    mutable std::mutex mutex_; // allocation accounting; the registry has its own lock
    AllocationRegistry registry_;
    std::vector<std::uint64_t> used_; // reserved bytes per device
    const std::uint64_t limit_;
};

} // namespace ferry
