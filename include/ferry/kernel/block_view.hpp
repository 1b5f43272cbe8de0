#pragma once
// ferry::BlockView — the kernel-side, bounds-checked view of a CustomDataBlock.
//
// docs/cann-contract/kernel-args.md#upload-and-alignment: the block's size is not passed to the
// kernel, and CANN's framework does not bounds-check the kernel's reads: reading past a block's end
// reads its zero padding, reading past the last block's padding is an illegal access. ferry's host
// kernels can do better: block_at(ctx, slot) finds the uploaded block whose padded extent contains
// the slot's address, and every read through the view is checked against that padded end. A failed
// check throws BlockAccessError from the kernel, which the stream reports as the task's failure (as
// a device reports an illegal access), so the next synchronize returns it.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/kernel/detail/block_directory.hpp>
#include <ferry/runtime/launch.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace ferry {

class BlockAccessError : public std::out_of_range {
public:
    using std::out_of_range::out_of_range;
};

template <typename T>
concept BlockReadable = std::is_trivially_copyable_v<T> && !std::is_pointer_v<T>;

class BlockView {
public:
    explicit BlockView(std::span<const std::byte> padded) noexcept : bytes_(padded) {}

    // From the slot address to the block's padded end (a multiple of 512 from the block's start).
    [[nodiscard]] std::size_t padded_size() const noexcept { return bytes_.size(); }
    [[nodiscard]] const std::byte* data() const noexcept { return bytes_.data(); }

    // A copy of the T at `offset`.
    template <BlockReadable T>
    [[nodiscard]] T read(std::size_t offset = 0) const {
        check(offset, sizeof(T));
        T value;
        std::memcpy(&value, bytes_.data() + offset, sizeof(T));
        return value;
    }

    // `count` Ts in place starting at `offset` (which must suit T's alignment; blocks start on
    // 512-byte boundaries, so a struct shared with the host lines up).
    template <BlockReadable T>
    [[nodiscard]] std::span<const T> array(std::size_t offset, std::size_t count) const {
        // count * sizeof(T) cannot overflow once count fits the block.
        check(offset, count <= bytes_.size() / sizeof(T) ? count * sizeof(T) : bytes_.size() + 1);
        if (reinterpret_cast<std::uintptr_t>(bytes_.data() + offset) % alignof(T) != 0) {
            throw BlockAccessError("ferry: misaligned block access at offset " +
                                   std::to_string(offset));
        }
        return {reinterpret_cast<const T*>(bytes_.data() + offset), count};
    }

    // The block read as one T in place (CANN's examples reinterpret_cast the slot address).
    template <BlockReadable T>
    [[nodiscard]] const T& as() const {
        return array<T>(0, 1).front();
    }

private:
    // Inline condition, out-of-line throw: the compiler then sees that the read after a failed
    // check is unreachable.
    void check(std::size_t offset, std::size_t size) const {
        if (offset > bytes_.size() || size > bytes_.size() - offset) [[unlikely]] {
            out_of_bounds(offset, size);
        }
    }
    [[noreturn]] void out_of_bounds(std::size_t offset, std::size_t size) const {
        throw BlockAccessError("ferry: block read of " + std::to_string(size) +
                               " bytes at offset " + std::to_string(offset) +
                               " passes the block's padded end (" + std::to_string(bytes_.size()) +
                               " bytes)");
    }

    std::span<const std::byte> bytes_;
};

// The block whose device address is in slot `slot` of the launch. Throws BlockAccessError when the
// slot does not exist or does not hold the address of an uploaded block.
[[nodiscard]] inline BlockView block_at(const KernelContext& ctx, std::size_t slot) {
    if (slot >= ctx.slots.size()) {
        throw BlockAccessError("ferry: kernel args have no slot " + std::to_string(slot));
    }
    const auto* address =
        reinterpret_cast<const void*>(static_cast<std::uintptr_t>(ctx.slots[slot]));
    const auto extent = detail::block_directory().find(address);
    if (!extent) {
        throw BlockAccessError("ferry: slot " + std::to_string(slot) +
                               " does not hold the address of a loaded CustomDataBlock");
    }
    return BlockView(*extent);
}

} // namespace ferry
