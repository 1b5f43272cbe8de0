#pragma once
// ferry::Tensor<T> — a TENSOR item whose dtype is fixed at compile time
// (docs/cann-contract/tdt.md#data-model): it can only be built from T values and only read back
// as T, so reading a Tensor<float> as int is a compile error. A DataItem of unknown dtype becomes a
// Tensor<T> through a checked conversion. A Tensor<T> owns its values (copy = deep copy, move =
// O(1)).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ferry/core/dtype.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dims.hpp>
#include <span>
#include <utility>

namespace ferry {

template <Element T>
class Tensor {
public:
    using value_type = T;
    static constexpr DType dtype = dtype_of<T>;

    // From values in row-major order; the element count of `dims` must be values.size().
    template <ElementRange R>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, T>
    [[nodiscard]] static Result<Tensor> from(const R& values, DimsRef dims) noexcept {
        Result<DataItem> item = DataItem::from(values, dims);
        if (!item) {
            return item.status();
        }
        return Tensor(std::move(*item));
    }
    // One-dimensional: dims = {values.size()}.
    template <ElementRange R>
    requires std::same_as<std::remove_cv_t<std::ranges::range_value_t<R>>, T>
    [[nodiscard]] static Result<Tensor> from(const R& values) noexcept {
        Result<DataItem> item = DataItem::from(values);
        if (!item) {
            return item.status();
        }
        return Tensor(std::move(*item));
    }
    // Value-initialised (zero) elements of the given shape.
    [[nodiscard]] static Result<Tensor> zeros(DimsRef dims) noexcept {
        const auto count = element_count(dims.span());
        if (!count || dims.size() > k_max_dims || *count > SIZE_MAX / sizeof(T)) {
            return Status::invalid_param;
        }
        const std::size_t bytes = static_cast<std::size_t>(*count) * sizeof(T);
        Result<DataItem> item = DataItem::copy_of(TensorKind::tensor, dims, dtype, {});
        if (!item) {
            return item.status();
        }
        if (const Status s = detail::ItemAccess::assign_zeros(*item, bytes); failed(s)) {
            return s;
        }
        return Tensor(std::move(*item));
    }
    // Checked conversion of a dynamically typed item (e.g. one just received): the item must be
    // a tensor-carrying kind whose dtype is T's and whose bytes are whole, aligned T values that
    // agree with its dims; a borrowed payload becomes an owned copy.
    [[nodiscard]] static Result<Tensor> from_item(const DataItem& item) noexcept {
        if (!carries_tensor(item.kind())) {
            return Status::invalid_param;
        }
        if (const auto v = item.values<T>(); !v) {
            return v.status();
        }
        Result<DataItem> owned = item.to_owning();
        if (!owned) {
            return owned.status();
        }
        return Tensor(std::move(*owned));
    }

    // No run-time check: every way to make a Tensor<T> checked the payload once.
    [[nodiscard]] std::span<const T> values() const noexcept {
        return {static_cast<const T*>(item_.data()), size()};
    }
    [[nodiscard]] std::span<T> values() noexcept { return {static_cast<T*>(item_.data()), size()}; }
    [[nodiscard]] std::span<const std::int64_t> dims() const noexcept { return item_.dims(); }
    [[nodiscard]] std::size_t size() const noexcept { return item_.size() / sizeof(T); }

    [[nodiscard]] const DataItem& item() const& noexcept { return item_; }
    // The item, for a Dataset (O(1): the payload changes hands).
    [[nodiscard]] DataItem into_item() && noexcept { return std::move(item_); }

    friend bool operator==(const Tensor& a, const Tensor& b) noexcept { return a.item_ == b.item_; }

private:
    explicit Tensor(DataItem&& item) noexcept : item_(std::move(item)) {}

    DataItem item_;
};

} // namespace ferry
