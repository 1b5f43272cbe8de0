#pragma once
// The process-wide directory of loaded blocks: device address -> padded extent.
//
// spec/kernel-args.md (Launch): a kernel that reads past its block's padded end is caught by a
// bounds-checked accessor. A host kernel only sees slot values, so the accessor asks this
// directory, which every LoadedPlan fills at load and empties when it is released. Kernel blocks
// run on the runtime's pool threads concurrently, so lookups take a shared lock.

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
    // Records the padded extent [base, base + padded_size) of one uploaded block.
    void add(const std::byte* base, std::size_t padded_size) {
        std::unique_lock lock(mutex_);
        extents_.insert_or_assign(address(base), padded_size);
    }
    void remove(const std::byte* base) {
        std::unique_lock lock(mutex_);
        extents_.erase(address(base));
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
        if (a - it->first >= it->second) {
            return std::nullopt;
        }
        return std::span<const std::byte>(static_cast<const std::byte*>(p),
                                          it->second - (a - it->first));
    }
    [[nodiscard]] std::size_t size() const {
        std::shared_lock lock(mutex_);
        return extents_.size();
    }

private:
    static std::uintptr_t address(const void* p) noexcept {
        return reinterpret_cast<std::uintptr_t>(p);
    }
    mutable std::shared_mutex mutex_;
    std::map<std::uintptr_t, std::size_t> extents_;
};

[[nodiscard]] inline BlockDirectory& block_directory() {
    static BlockDirectory directory; // function-local: no static initialisation order issue
    return directory;
}

} // namespace ferry::detail
