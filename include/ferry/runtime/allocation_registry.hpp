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
//
// External records (insert_external) describe memory the runtime did not allocate and never frees
// — a shared window mapped from another process's segment (docs/runtime.md, External memory).
// Lookups see them like any allocation; erase and erase_if (aclrtFree, device reset, shutdown)
// leave them alone; only the ExternalRecord handle that insert_external returned removes one.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <utility>
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

class AllocationRegistry;

// Owns one external record: destroying it (or reset()) erases the record. Move-only; the registry
// must outlive it.
class ExternalRecord {
public:
    ExternalRecord() = default;
    ExternalRecord(ExternalRecord&& other) noexcept
        : registry_(std::exchange(other.registry_, nullptr)), base_(other.base_),
          token_(other.token_) {}
    ExternalRecord& operator=(ExternalRecord&& other) noexcept {
        if (this != &other) {
            reset();
            registry_ = std::exchange(other.registry_, nullptr);
            base_ = other.base_;
            token_ = other.token_;
        }
        return *this;
    }
    ExternalRecord(const ExternalRecord&) = delete;
    ExternalRecord& operator=(const ExternalRecord&) = delete;
    ~ExternalRecord() { reset(); }

    [[nodiscard]] bool active() const noexcept { return registry_ != nullptr; }
    [[nodiscard]] const void* base() const noexcept { return reinterpret_cast<const void*>(base_); }
    // Erases the record (idempotent).
    void reset() noexcept;

private:
    friend class AllocationRegistry;
    ExternalRecord(AllocationRegistry* registry, std::uintptr_t base, std::uint64_t token) noexcept
        : registry_(registry), base_(base), token_(token) {}

    AllocationRegistry* registry_ = nullptr;
    std::uintptr_t base_ = 0;
    std::uint64_t token_ = 0;
};

class AllocationRegistry {
public:
    AllocationRegistry() = default;
    AllocationRegistry(const AllocationRegistry&) = delete;
    AllocationRegistry& operator=(const AllocationRegistry&) = delete;

    // Records a new allocation. size 0 or a range that overlaps a live allocation (or wraps the
    // address space) is rt_param_invalid and changes nothing.
    [[nodiscard]] Status insert(const Allocation& allocation) {
        return insert_entry(allocation, 0);
    }

    // Records memory the runtime does not own (same checks and errors as insert). The record
    // lives until the returned handle is destroyed or reset; erase and erase_if skip it.
    [[nodiscard]] Result<ExternalRecord> insert_external(const Allocation& allocation) {
        const std::uint64_t token = next_token_.fetch_add(1, std::memory_order_relaxed);
        if (const Status s = insert_entry(allocation, token); s != Status::ok) {
            return s;
        }
        return ExternalRecord(this, allocation.base, token);
    }

    // Removes the allocation whose base is exactly `base` and returns it. An interior address, a
    // foreign pointer, an external record, or an address already erased (double free) returns
    // nothing and changes
    // nothing (the runtime reports rt_memory_free); `expected_kind`, when given, must match
    // (aclrtFree of aclrtMallocHost memory fails).
    [[nodiscard]] std::optional<Allocation>
    erase(const void* base, std::optional<AllocationKind> expected_kind = {}) {
        std::unique_lock lock(mutex_);
        const auto it = by_base_.find(reinterpret_cast<std::uintptr_t>(base));
        if (it == by_base_.end() || it->second.token != 0 ||
            (expected_kind && it->second.allocation.kind != *expected_kind)) {
            return std::nullopt;
        }
        Allocation removed = it->second.allocation;
        by_base_.erase(it);
        return removed;
    }

    // Removes every allocation (not external record) for which `select` is true and returns them
    // (device reset, shutdown).
    template <std::predicate<const Allocation&> Select>
    std::vector<Allocation> erase_if(Select select) {
        std::vector<Allocation> removed;
        std::unique_lock lock(mutex_);
        for (auto it = by_base_.begin(); it != by_base_.end();) {
            if (it->second.token == 0 && std::invoke(select, it->second.allocation)) {
                removed.push_back(it->second.allocation);
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
        if (!it->second.allocation.contains(address, bytes)) {
            return std::nullopt;
        }
        return it->second.allocation;
    }

    [[nodiscard]] std::size_t size() const {
        std::shared_lock lock(mutex_);
        return by_base_.size();
    }

    // Sum of reserved bytes of live allocations (not external records) on `device` with the
    // given kind.
    [[nodiscard]] std::size_t reserved_bytes(std::int32_t device, AllocationKind kind) const {
        std::shared_lock lock(mutex_);
        std::size_t total = 0;
        for (const auto& [base, entry] : by_base_) {
            const Allocation& a = entry.allocation;
            if (entry.token == 0 && a.device == device && a.kind == kind) {
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
            all.push_back(entry.second.allocation);
        }
        return all;
    }

private:
    friend class ExternalRecord;
    struct Entry {
        Allocation allocation;
        std::uint64_t token = 0; // nonzero: an external record, removed only by its handle
    };

    [[nodiscard]] Status insert_entry(const Allocation& allocation, std::uint64_t token) {
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
        if (next != by_base_.begin() &&
            std::prev(next)->second.allocation.end() > allocation.base) {
            return Status::rt_param_invalid;
        }
        by_base_.emplace_hint(next, allocation.base, Entry{allocation, token});
        return Status::ok;
    }

    // The token tells this record from a later one at the same base.
    void erase_external(std::uintptr_t base, std::uint64_t token) noexcept {
        std::unique_lock lock(mutex_);
        const auto it = by_base_.find(base);
        if (it != by_base_.end() && it->second.token == token) {
            by_base_.erase(it);
        }
    }

    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, Entry> by_base_; // key: base; ranges are disjoint
    std::atomic<std::uint64_t> next_token_{1};
};

inline void ExternalRecord::reset() noexcept {
    if (registry_ != nullptr) {
        registry_->erase_external(base_, token_);
        registry_ = nullptr;
    }
}

} // namespace ferry
