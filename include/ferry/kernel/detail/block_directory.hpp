#pragma once
// The process-wide directory of loaded blocks: device address -> padded extent.
//
// docs/cann-contract/kernel-args.md#upload-and-alignment: a kernel that reads past its block's
// padded end is caught by a bounds-checked accessor. A host kernel only sees slot values, so the
// accessor asks this directory, which every LoadedPlan fills at load and empties when it is
// released. Kernel blocks run on the runtime's pool threads concurrently, so lookups take a shared
// lock.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>

namespace ferry::detail {

class BlockDirectory {
public:
    // A fresh owner id for one load: entries are removed only by the load that added them, so a
    // plan released after a runtime shutdown cannot remove a newer plan's entry at a reused
    // address.
    [[nodiscard]] std::uint64_t new_owner() noexcept {
        return next_owner_.fetch_add(1, std::memory_order_relaxed);
    }
    // Records the padded extent [base, base + padded_size) of one uploaded block.
    void add(const std::byte* base, std::size_t padded_size, std::uint64_t owner) {
        std::unique_lock lock(mutex_);
        extents_.insert_or_assign(address(base), Extent{padded_size, owner});
    }
    void remove(const std::byte* base, std::uint64_t owner) {
        std::unique_lock lock(mutex_);
        const auto it = extents_.find(address(base));
        if (it != extents_.end() && it->second.owner == owner) {
            extents_.erase(it);
        }
    }
    // The bytes from `p` to the padded end of the block that contains `p`, if any.
    [[nodiscard]] std::optional<std::span<const std::byte>> find(const void* p) const {
        const std::uintptr_t a = address(p);
        std::shared_lock lock(mutex_);
        auto it = extents_.upper_bound(a);
        if (it == extents_.begin()) {
            return std::nullopt;
        }
        --it;
        if (a - it->first >= it->second.size) {
            return std::nullopt;
        }
        return std::span<const std::byte>(static_cast<const std::byte*>(p),
                                          it->second.size - (a - it->first));
    }
    [[nodiscard]] std::size_t size() const {
        std::shared_lock lock(mutex_);
        return extents_.size();
    }

private:
    static std::uintptr_t address(const void* p) noexcept {
        return reinterpret_cast<std::uintptr_t>(p);
    }
    struct Extent {
        std::size_t size = 0;
        std::uint64_t owner = 0;
    };
    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, Extent> extents_;
    std::atomic<std::uint64_t> next_owner_{1};
};

[[nodiscard]] inline BlockDirectory& block_directory() {
    static BlockDirectory directory; // function-local: no static initialisation order issue
    return directory;
}

} // namespace ferry::detail
