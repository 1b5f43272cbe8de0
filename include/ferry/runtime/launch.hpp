#pragma once
// Host kernels and what a launch hands them.
//
// docs/cann-contract/runtime.md#programs-and-kernels: kernels are host
// functions standing in for device code. A launch with block_dim = N runs the body N times with
// block index 0..N-1, in parallel, in stream order. Every block receives the launch's argument
// image: 8-byte slots holding values or device addresses, as built by ferry/kernel's KernelArgs.
// The image is copied at launch (as CANN copies kernel args into its own buffer), so the caller
// may reuse its buffer as soon as launch returns.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ferry {

class Stream;

// Everything one block of a host kernel sees.
struct KernelContext {
    std::uint32_t block_idx = 0; // 0 .. block_dim - 1
    std::uint32_t block_dim = 1;
    std::int32_t device = 0;              // the device of the launching stream
    Stream* stream = nullptr;             // the launching stream (never null inside a kernel)
    std::span<const std::uint64_t> slots; // the args image as 8-byte slots (last one zero padded)
    const void* args = nullptr;           // the same image as raw bytes
    std::size_t args_size = 0;            // its size in bytes as launched
    std::string_view name;                // the kernel's registered name, or the launch's label

    // Slot i as T (a value slot) — a convenience for `std::bit_cast`-free kernels.
    template <typename T>
    requires std::is_trivially_copyable_v<T> &&(sizeof(T) <= sizeof(std::uint64_t)) [[nodiscard]] T
        slot(std::size_t i) const noexcept {
        T value;
        std::memcpy(&value, &slots[i], sizeof(T));
        return value;
    }
    // Slot i as a pointer (an address slot).
    template <typename T>
    [[nodiscard]] T* pointer(std::size_t i) const noexcept {
        return reinterpret_cast<T*>(static_cast<std::uintptr_t>(slots[i]));
    }
};

// A host kernel body. It may throw: the stream reports the exception as a task failure.
using HostKernel = std::function<void(const KernelContext&)>;

template <typename F>
concept HostKernelBody = std::invocable<F&, const KernelContext&>;

// An args image owned by a launch: whole 8-byte slots, zero padded at the end.
class ArgsImage {
public:
    ArgsImage() = default;
    // From raw bytes (a KernelArgs image) or from whole slots; any contiguous range of std::byte
    // or std::uint64_t converts implicitly, so `launch(stub, 8, slots, stream)` just works.
    template <std::ranges::contiguous_range R>
    requires std::same_as<std::ranges::range_value_t<R>, std::byte> ||
        std::same_as<std::ranges::range_value_t<R>, std::uint64_t>
        ArgsImage(const R& range) // NOLINT: implicit by design
        : ArgsImage(std::span<const std::ranges::range_value_t<R>>(std::ranges::data(range),
                                                                   std::ranges::size(range))) {}
    explicit ArgsImage(std::span<const std::byte> bytes)
        : slots_((bytes.size() + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t), 0),
          size_(bytes.size()) {
        if (!bytes.empty()) {
            std::memcpy(slots_.data(), bytes.data(), bytes.size());
        }
    }
    explicit ArgsImage(std::span<const std::uint64_t> slots)
        : slots_(slots.begin(), slots.end()), size_(slots.size_bytes()) {}

    [[nodiscard]] std::span<const std::uint64_t> slots() const noexcept { return slots_; }
    [[nodiscard]] const void* data() const noexcept { return slots_.data(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

private:
    std::vector<std::uint64_t> slots_;
    std::size_t size_ = 0;
};

// The upper bound CANN puts on a launch's block_dim (a 32-bit field); 0 is invalid.
inline constexpr std::uint32_t k_max_block_dim = 65535;

} // namespace ferry
