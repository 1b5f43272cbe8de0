#pragma once
// Raw storage for the items a channel holds, owned by the channel.
//
// Boost 1.74's lock-free queues copy on push and cannot hold move-only types (anchors.md §5.2,
// /usr/include/boost/lockfree/spsc_queue.hpp: push(T const&)), so the channel keeps the items
// here and moves only 32-bit slot indices through the lock-free ring. One allocation at
// construction; no allocation per message.

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace ferry::detail {

template <typename T>
class SlotStorage {
public:
    explicit SlotStorage(std::size_t count)
        : cells_(std::make_unique_for_overwrite<Cell[]>(count)) {}

    // Moves `value` into the empty slot `index`.
    void construct(std::size_t index, T&& value) noexcept {
        static_assert(std::is_nothrow_move_constructible_v<T>);
        ::new (static_cast<void*>(cells_[index].bytes)) T(std::move(value));
    }

    // The live item in slot `index`.
    [[nodiscard]] T& operator[](std::size_t index) noexcept {
        return *std::launder(reinterpret_cast<T*>(cells_[index].bytes));
    }

    void destroy(std::size_t index) noexcept { std::destroy_at(&(*this)[index]); }

private:
    struct Cell {
        alignas(T) std::byte bytes[sizeof(T)];
    };
    std::unique_ptr<Cell[]> cells_;
};

} // namespace ferry::detail
