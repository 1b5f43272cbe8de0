#pragma once
// ferry::afd::ScheduleContextView — typed, constexpr access to a 1024-byte context image.
//
// docs/cann-contract/afd.md#shared-fields-and-memory-order: the view works on bytes received from
// elsewhere (a device buffer, a file, a fuzzer) without type-punning through a misaligned pointer:
// plain fields are assembled byte by byte (little-endian), which is constexpr and compiles to one
// load. The three fields other threads or processes write while a scheduler runs — run_flag and
// polling_index here, the descriptor flags in ffn_data_desc.hpp — are read and written through
// std::atomic_ref with acquire/release ordering instead, which needs the image 8-byte aligned.

#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include <ferry/afd/schedule_context.hpp>
#include <ferry/core/contract.hpp>

namespace ferry::afd {

// run_flag (@128, int32) and polling_index (@416, uint64) are naturally aligned iff the image is.
inline constexpr std::size_t k_context_alignment = 8;

namespace detail {
template <typename Byte>
concept ContextByte = std::same_as<std::remove_const_t<Byte>, std::byte>;

template <std::integral T, ContextByte Byte>
constexpr T load_le(const Byte* p) noexcept {
    using U = std::make_unsigned_t<T>;
    U v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        v = static_cast<U>(v | (static_cast<U>(std::to_integer<std::uint8_t>(p[i])) << (8 * i)));
    }
    return static_cast<T>(v);
}

template <std::integral T>
constexpr void store_le(std::byte* p, T value) noexcept {
    using U = std::make_unsigned_t<T>;
    const auto v = static_cast<U>(value);
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        p[i] = static_cast<std::byte>((v >> (8 * i)) & 0xFFu);
    }
}

inline bool is_aligned(const void* p, std::size_t alignment) noexcept {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// The atomic view of an aligned integer inside a byte image. std::atomic_ref has no const
// specialisation in C++20; loads through it never write, so the const_cast is harmless.
template <std::integral T>
std::atomic_ref<T> atomic_at(const std::byte* p) noexcept {
    FERRY_EXPECTS(is_aligned(p, std::atomic_ref<T>::required_alignment));
    return std::atomic_ref<T>(*reinterpret_cast<T*>(const_cast<std::byte*>(p)));
}
} // namespace detail

template <detail::ContextByte Byte>
class BasicScheduleContextView {
public:
    static constexpr bool is_mutable = !std::is_const_v<Byte>;

    constexpr explicit BasicScheduleContextView(std::span<Byte, k_context_size> bytes) noexcept
        : bytes_(bytes.data()) {}
    // A raw 1024-byte buffer (the C shim's tensor data). Precondition: non-null.
    constexpr explicit BasicScheduleContextView(Byte* context_1024) noexcept
        : bytes_(context_1024) {
        FERRY_EXPECTS(context_1024 != nullptr);
    }
    template <detail::ContextByte Other>
        requires(std::is_const_v<Byte> && !std::is_const_v<Other>)
    constexpr BasicScheduleContextView(BasicScheduleContextView<Other> other) noexcept // NOLINT
        : bytes_(other.data()) {}

    [[nodiscard]] constexpr Byte* data() const noexcept { return bytes_; }
    [[nodiscard]] constexpr std::span<Byte, k_context_size> bytes() const noexcept {
        return std::span<Byte, k_context_size>(bytes_, k_context_size);
    }

    template <std::integral T, std::size_t Offset>
    [[nodiscard]] constexpr T get(Field<T, Offset>) const noexcept {
        return detail::load_le<T>(bytes_ + Offset);
    }
    template <std::integral T, std::size_t Offset>
        requires is_mutable
    constexpr void set(Field<T, Offset>, std::type_identity_t<T> value) const noexcept {
        detail::store_le<T>(bytes_ + Offset, value);
    }

    // The whole image as the packed struct, and back (memcpy semantics).
    [[nodiscard]] constexpr ScheduleContext load() const noexcept {
        ContextBytes copy{};
        for (std::size_t i = 0; i < k_context_size; ++i) {
            copy[i] = bytes_[i];
        }
        return from_bytes(copy);
    }
    constexpr void store(const ScheduleContext& ctx) const noexcept
        requires is_mutable
    {
        const ContextBytes image = to_bytes(ctx);
        for (std::size_t i = 0; i < k_context_size; ++i) {
            bytes_[i] = image[i];
        }
    }

    // --- shared fields: atomic, need an 8-byte aligned image (see atomics_usable) ---
    [[nodiscard]] bool atomics_usable() const noexcept {
        return detail::is_aligned(bytes_, k_context_alignment);
    }
    [[nodiscard]] std::int32_t run_flag(std::memory_order order = std::memory_order_acquire) const noexcept {
        return detail::atomic_at<std::int32_t>(bytes_ + fields::control::run_flag.offset).load(order);
    }
    // torch_npu's StopSchedule(): the host writes 0 into run_flag alone (offset 128) to stop
    // schedulers.
    void set_run_flag(std::int32_t value, std::memory_order order = std::memory_order_release) const noexcept
        requires is_mutable
    {
        detail::atomic_at<std::int32_t>(bytes_ + fields::control::run_flag.offset).store(value, order);
    }
    [[nodiscard]] std::uint64_t polling_index(std::memory_order order = std::memory_order_acquire) const noexcept {
        return detail::atomic_at<std::uint64_t>(bytes_ + fields::ffn::polling_index.offset).load(order);
    }
    void set_polling_index(std::uint64_t value,
                           std::memory_order order = std::memory_order_release) const noexcept
        requires is_mutable
    {
        detail::atomic_at<std::uint64_t>(bytes_ + fields::ffn::polling_index.offset).store(value, order);
    }

private:
    Byte* bytes_;
};

using ScheduleContextView = BasicScheduleContextView<std::byte>;
using ConstScheduleContextView = BasicScheduleContextView<const std::byte>;

// A zero-initialised, suitably aligned context image for hosts that own the context.
struct alignas(64) ContextImage {
    ContextBytes bytes{};
    [[nodiscard]] ScheduleContextView view() noexcept { return ScheduleContextView(std::span(bytes)); }
    [[nodiscard]] ConstScheduleContextView view() const noexcept {
        return ConstScheduleContextView(std::span(bytes));
    }
};

} // namespace ferry::afd
