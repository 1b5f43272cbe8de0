#pragma once
// ferry::AllocationRegistry — "which live allocation contains this address?" in O(log n).
//
// docs/cann-contract/runtime.md#allocation-registry: the registry powers pointer attributes, the
// TDT dataset memory-kind rule (docs/cann-contract/tdt.md#datasets) and the bounds checks of
// ferry/kernel, ferry/afd and the ScheduleContext `registry` resolver. CANN trusts every pointer it
// is given; ferry records every allocation the runtime hands out so that a foreign, freed or
// out-of-bounds pointer is caught with an error code.
//
// Allocations are disjoint half-open byte ranges [base, base + size). An address equal to
// base + size (one past the end) is NOT inside the allocation. A reader-writer lock keeps lookups
// concurrent with each other; inserts and erases are exclusive.

#include <cstddef>
#include <cstdint>
#include <ferry/core/status.hpp>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <vector>

namespace ferry {

// Where an allocation lives. `device` = aclrtMalloc memory of an emulated device; `host` =
// aclrtMallocHost ("pinned") memory, which CANN's pointer attributes report as host.
enum class AllocationKind : unsigned char { device, host };

// The device id recorded for host allocations that belong to no device.
inline constexpr std::int32_t k_no_device = -1;

struct Allocation {
    std::uintptr_t base = 0;
    std::size_t size = 0;     // bytes the caller asked for; lookups use this (strict bounds)
    std::size_t reserved = 0; // bytes actually reserved after CANN's rounding (>= size)
    std::int32_t device = k_no_device;
    AllocationKind kind = AllocationKind::device;

    [[nodiscard]] void* data() const noexcept { return reinterpret_cast<void*>(base); }
    [[nodiscard]] std::uintptr_t end() const noexcept { return base + size; }
    // True when [address, address + bytes) lies entirely inside this allocation. bytes == 0 asks
    // only whether `address` itself is inside (a zero-length range still needs a live address).
    [[nodiscard]] bool contains(const void* address, std::size_t bytes = 0) const noexcept {
        const auto a = reinterpret_cast<std::uintptr_t>(address);
        if (a < base || a >= end()) {
            return false;
        }
        return bytes <= end() - a;
    }
    [[nodiscard]] std::size_t offset_of(const void* address) const noexcept {
        return reinterpret_cast<std::uintptr_t>(address) - base;
    }
    friend bool operator==(const Allocation&, const Allocation&) noexcept = default;
};

class AllocationRegistry {
public:
    AllocationRegistry() = default;
    AllocationRegistry(const AllocationRegistry&) = delete;
    AllocationRegistry& operator=(const AllocationRegistry&) = delete;

    // Records a new allocation. size 0 or a range that overlaps a live allocation (or wraps the
    // address space) is rt_param_invalid and changes nothing.
    [[nodiscard]] Status insert(const Allocation& allocation) {
        if (allocation.size == 0 || allocation.base == 0 ||
            allocation.base + allocation.size < allocation.base ||
            allocation.reserved < allocation.size) {
            return Status::rt_param_invalid;
        }
        std::unique_lock lock(mutex_);
        auto next = by_base_.lower_bound(allocation.base);
        if (next != by_base_.end() && next->first < allocation.end()) {
            return Status::rt_param_invalid;
        }
        if (next != by_base_.begin() && std::prev(next)->second.end() > allocation.base) {
            return Status::rt_param_invalid;
        }
        by_base_.emplace_hint(next, allocation.base, allocation);
        return Status::ok;
    }

    // Removes the allocation whose base is exactly `base` and returns it. An interior address, a
    // foreign pointer, or an address already erased (double free) returns nothing and changes
    // nothing (the runtime reports rt_memory_free); `expected_kind`, when given, must match
    // (aclrtFree of aclrtMallocHost memory fails).
    [[nodiscard]] std::optional<Allocation>
    erase(const void* base, std::optional<AllocationKind> expected_kind = {}) {
        std::unique_lock lock(mutex_);
        const auto it = by_base_.find(reinterpret_cast<std::uintptr_t>(base));
        if (it == by_base_.end() || (expected_kind && it->second.kind != *expected_kind)) {
            return std::nullopt;
        }
        Allocation removed = it->second;
        by_base_.erase(it);
        return removed;
    }

    // Removes every allocation for which `select` is true and returns them (device reset).
    template <std::predicate<const Allocation&> Select>
    std::vector<Allocation> erase_if(Select select) {
        std::vector<Allocation> removed;
        std::unique_lock lock(mutex_);
        for (auto it = by_base_.begin(); it != by_base_.end();) {
            if (std::invoke(select, it->second)) {
                removed.push_back(it->second);
                it = by_base_.erase(it);
            } else {
                ++it;
            }
        }
        return removed;
    }

    // The live allocation containing `address`, if any: O(log n).
    [[nodiscard]] std::optional<Allocation> find(const void* address) const {
        return find(address, 0);
    }

    // The live allocation containing the whole range [address, address + bytes), if any.
    [[nodiscard]] std::optional<Allocation> find(const void* address, std::size_t bytes) const {
        const auto a = reinterpret_cast<std::uintptr_t>(address);
        std::shared_lock lock(mutex_);
        auto it = by_base_.upper_bound(a); // first allocation starting after `a`
        if (it == by_base_.begin()) {
            return std::nullopt;
        }
        --it;
        if (!it->second.contains(address, bytes)) {
            return std::nullopt;
        }
        return it->second;
    }

    [[nodiscard]] std::size_t size() const {
        std::shared_lock lock(mutex_);
        return by_base_.size();
    }

    // Sum of reserved bytes of live allocations on `device` with the given kind.
    [[nodiscard]] std::size_t reserved_bytes(std::int32_t device, AllocationKind kind) const {
        std::shared_lock lock(mutex_);
        std::size_t total = 0;
        for (const auto& [base, a] : by_base_) {
            if (a.device == device && a.kind == kind) {
                total += a.reserved;
            }
        }
        return total;
    }

    // A consistent copy of every live allocation, ordered by base address.
    [[nodiscard]] std::vector<Allocation> snapshot() const {
        std::shared_lock lock(mutex_);
        std::vector<Allocation> all;
        all.reserve(by_base_.size());
        for (const auto& entry : by_base_) {
            all.push_back(entry.second);
        }
        return all;
    }

private:
    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, Allocation> by_base_; // key: base; ranges are disjoint
};

} // namespace ferry
