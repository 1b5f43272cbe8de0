#pragma once
// ferry::DimsRef — how every C++ creation function takes dims: a non-owning view that binds to a
// braced list (`{2, 3}`), a std::vector, a std::array or a std::span of int64 alike. It exists
// because std::span cannot be built from a braced list in C++20, and a DataItem is usually made
// from a literal shape. Like any view it must not outlive what it refers to (a braced list lives
// until the end of the full expression, which covers a function call).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ranges>
#include <span>
#include <type_traits>

namespace ferry {

class DimsRef {
public:
    constexpr DimsRef() noexcept = default;
    constexpr DimsRef(std::initializer_list<std::int64_t> dims) noexcept // NOLINT: implicit
        : dims_(dims.begin(), dims.size()) {}
    template <std::ranges::contiguous_range R>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, std::int64_t> &&
        std::ranges::sized_range<R>
    constexpr DimsRef(const R& dims) noexcept // NOLINT: implicit by design
        : dims_(std::ranges::data(dims), std::ranges::size(dims)) {}

    [[nodiscard]] constexpr std::span<const std::int64_t> span() const noexcept { return dims_; }
    [[nodiscard]] constexpr std::size_t size() const noexcept { return dims_.size(); }
    [[nodiscard]] constexpr bool empty() const noexcept { return dims_.empty(); }

private:
    std::span<const std::int64_t> dims_;
};

// The number of elements a shape describes (1 for a scalar, i.e. no dims); std::nullopt when a
// dim is negative (CANN's "unknown" -1 and friends) or the product overflows 64 bits — the size
// checks of docs/cann-contract/tdt.md#data-model use 64-bit arithmetic, as every size product does
// in ferry (docs/cann-contract/README.md#precedence).
[[nodiscard]] constexpr std::optional<std::uint64_t>
element_count(std::span<const std::int64_t> dims) noexcept {
    bool has_zero = false;
    for (std::int64_t d : dims) {
        if (d < 0) {
            return std::nullopt;
        }
        has_zero = has_zero || d == 0;
    }
    if (has_zero) {
        return 0; // {2^40, 2^40, 0} holds no elements; it must not read as an overflow
    }
    std::uint64_t count = 1;
    for (std::int64_t d : dims) {
        const auto u = static_cast<std::uint64_t>(d);
        if (count > UINT64_MAX / u) {
            return std::nullopt;
        }
        count *= u;
    }
    return count;
}

} // namespace ferry
