#pragma once
// Raw storage for the items a channel holds, owned by the channel.
//
// Boost 1.74's lock-free queues copy on push and cannot hold move-only types
// (/usr/include/boost/lockfree/spsc_queue.hpp: push(T const&)), so the channel keeps the items
// here, in cells it constructs and destroys itself. One allocation at construction; no
// allocation per message.
//
// The cells start on a false-sharing boundary and have one false-sharing range of padding on
// each side (rigtorp::SPSCQueue pads its slots the same way): without it the first and last
// cells share lines with whatever the allocator put next to them, and a thread that writes such a
// neighbour would steal a line the channel's two threads are handing over.

#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/cache_line.hpp>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferry::detail {

// Bytes for `count` cells of `cell_size` bytes rounded up to whole false-sharing ranges, plus
// one range before and one after (the layout above; the spsc ring's flagged cells use it too).
// Throws std::bad_alloc when that does not fit a size_t.
inline std::size_t padded_cells_bytes(std::size_t count, std::size_t cell_size) {
    constexpr std::size_t range = k_false_sharing_range;
    if (count > (SIZE_MAX - 3 * range) / cell_size) {
        throw std::bad_alloc();
    }
    return (count * cell_size + range - 1) / range * range + 2 * range;
}

template <typename T>
class SlotStorage {
    static_assert(alignof(T) <= k_false_sharing_range, "over-aligned items are not supported");

public:
    // Throws std::bad_alloc when the cells cannot be allocated.
    explicit SlotStorage(std::size_t count)
        : raw_(static_cast<std::byte*>(::operator new(bytes_for(count), k_alignment))),
          cells_(raw_ + k_false_sharing_range) {}

    SlotStorage(const SlotStorage&) = delete;
    SlotStorage& operator=(const SlotStorage&) = delete;
    ~SlotStorage() { ::operator delete(raw_, k_alignment); }

    // Moves `value` into the empty slot `index`.
    void construct(std::size_t index, T&& value) noexcept {
        static_assert(std::is_nothrow_move_constructible_v<T>);
        ::new (static_cast<void*>(cells_ + index * sizeof(T))) T(std::move(value));
    }

    // The live item in slot `index`.
    [[nodiscard]] T& operator[](std::size_t index) noexcept {
        return *std::launder(reinterpret_cast<T*>(cells_ + index * sizeof(T)));
    }

    void destroy(std::size_t index) noexcept { std::destroy_at(&(*this)[index]); }

private:
    static constexpr std::align_val_t k_alignment{k_false_sharing_range};

    static std::size_t bytes_for(std::size_t count) { return padded_cells_bytes(count, sizeof(T)); }

    std::byte* raw_;
    std::byte* cells_;
};

} // namespace ferry::detail
