#pragma once
// ferry::DataItem — one tensor (or marker) of a Dataset: kind, dtype, dims, payload bytes and
// slice info, as acltdtDataItem carries them (docs/cann-contract/tdt.md#data-model, #object-model).
//
// An item either OWNS its bytes (value semantics: copying copies the payload, moving steals it in
// O(1)) or BORROWS them (the caller keeps them alive; copying copies the reference). The C API's
// acltdtCreateDataItem borrows — the data buffer is neither copied nor owned
// (docs/cann-contract/tdt.md#item-creation) — so `borrow` is that function; C++ callers normally
// use the owning `from`/`copy_of`.

#include <algorithm>
#include <boost/container/small_vector.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/dtype.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/tensor/detail/payload_buffer.hpp>
#include <ferry/tensor/dims.hpp>
#include <ferry/tensor/tensor_kind.hpp>
#include <memory>
#include <new>
#include <ranges>
#include <span>
#include <utility>

namespace ferry {

// acltdtGetSliceInfoFromItem's two values; 0/0 on every item ferry creates
// (docs/cann-contract/tdt.md#item-accessors).
struct SliceInfo {
    std::uint16_t num = 0;
    std::uint16_t id = 0;
    friend constexpr bool operator==(SliceInfo, SliceInfo) noexcept = default;
};

// A contiguous range whose elements ferry can carry (a std::vector<float>, std::array, span…).
template <typename R>
concept ElementRange = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    Element<std::ranges::range_value_t<R>>;

class DataItem;

namespace detail {
struct ItemAccess; // the wire format's in-place (re)assignment, see wire_format.hpp

// docs/cann-contract/tdt.md#item-creation rules 1–4, in CANN's order. `has_dims` is "dims pointer
// non-null".
[[nodiscard]] constexpr Status check_creation(TensorKind kind, bool has_dims,
                                              std::size_t dim_num) noexcept {
    if (!has_dims && dim_num != 0) {
        return Status::invalid_param; // rule 1: dims NULL with dimNum != 0
    }
    if (has_dims && dim_num == 0) {
        return Status::invalid_param; // rule 2: dims non-NULL with dimNum == 0
    }
    if (dim_num > k_max_dims) {
        return Status::invalid_param; // rule 3: more than MAX_DIM_CNT (128) dims
    }
    if (kind != TensorKind::tensor && has_dims) {
        return Status::invalid_param; // rule 4: only a TENSOR may have dims
    }
    return Status::ok;
}
} // namespace detail

class DataItem {
public:
    using DimsVector = boost::container::small_vector<std::int64_t, 8>; // ≤ 8 dims: no heap

    // An UNDEFINED item with nothing in it (a placeholder; it cannot be sent).
    DataItem() noexcept = default;

    // acltdtCreateDataItem: CANN's rules in CANN's order
    // (docs/cann-contract/tdt.md#item-creation). The kind is not
    // range-checked (CANN rejects bad kinds only at send). A non-TENSOR item keeps no dims, no
    // dtype (undefined), no data and size 0 whatever was passed. A TENSOR item BORROWS `data`
    // (not copied, not owned); data == nullptr with size > 0 and any dtype are accepted, as in
    // CANN — serializing such an item fails instead.
    [[nodiscard]] static Result<DataItem> borrow(TensorKind kind, const std::int64_t* dims,
                                                 std::size_t dim_num, DType dtype, void* data,
                                                 std::size_t size) noexcept {
        if (const Status s = detail::check_creation(kind, dims != nullptr, dim_num); failed(s)) {
            return s;
        }
        DataItem item;
        item.kind_ = kind;
        if (kind != TensorKind::tensor) {
            return item;
        }
        if (const Status s = item.assign_dims({dims, dim_num}); failed(s)) {
            return s;
        }
        item.dtype_ = dtype;
        item.data_ = static_cast<std::byte*>(data);
        item.size_ = size;
        return item;
    }

    // The owning counterpart of `borrow`: the same rules, and the bytes are copied.
    [[nodiscard]] static Result<DataItem> copy_of(TensorKind kind, DimsRef dims, DType dtype,
                                                  std::span<const std::byte> bytes) noexcept {
        const Status s = detail::check_creation(kind, !dims.empty(), dims.size());
        if (failed(s)) {
            return s;
        }
        DataItem item;
        item.kind_ = kind;
        if (kind != TensorKind::tensor) {
            return item;
        }
        if (const Status a = item.assign_dims(dims.span()); failed(a)) {
            return a;
        }
        item.dtype_ = dtype;
        if (const Status c = item.assign_owned_copy(bytes); failed(c)) {
            return c;
        }
        return item;
    }

    // Typed, owning: dtype = dtype_of<T> at compile time; the element count of `dims` must equal
    // the number of values (docs/cann-contract/tdt.md#data-model), else invalid_param.
    template <ElementRange R>
    [[nodiscard]] static Result<DataItem> from(const R& values, DimsRef dims) noexcept {
        using T = std::ranges::range_value_t<R>;
        const std::span<const T> v(std::ranges::data(values), std::ranges::size(values));
        if (const Status s = check_typed_shape(dims, v.size()); failed(s)) {
            return s;
        }
        return copy_of(TensorKind::tensor, dims, dtype_of<T>, std::as_bytes(v));
    }
    // Typed, owning, one-dimensional: dims = {number of values}.
    template <ElementRange R>
    [[nodiscard]] static Result<DataItem> from(const R& values) noexcept {
        const auto n = static_cast<std::int64_t>(std::ranges::size(values));
        return from(values, DimsRef{n});
    }
    // Typed, borrowing: like `from`, but the item refers to `values`, which must outlive it.
    template <Element T, std::size_t Extent>
    [[nodiscard]] static Result<DataItem> view(std::span<T, Extent> values, DimsRef dims) noexcept {
        if (const Status s = check_typed_shape(dims, values.size()); failed(s)) {
            return s;
        }
        const std::int64_t* d = dims.empty() ? nullptr : dims.span().data();
        // const_cast: an item's payload is mutable through the C API (acltdtGetDataAddrFromItem
        // returns void*); ferry itself never writes through a borrowed payload.
        void* data = const_cast<std::remove_const_t<T>*>(values.data());
        return borrow(TensorKind::tensor, d, dims.size(), dtype_of<T>, data, values.size_bytes());
    }

    // Any contiguous range the caller keeps alive (an lvalue container or a span/view).
    template <ElementRange R>
    requires std::ranges::borrowed_range<R>
    [[nodiscard]] static Result<DataItem> view(R&& values, DimsRef dims) noexcept {
        return view(std::span(std::ranges::data(values), std::ranges::size(values)), dims);
    }

    // The two markers a producer sends (docs/cann-contract/tdt.md#send): they carry nothing.
    [[nodiscard]] static DataItem end_of_sequence() noexcept {
        return marker(TensorKind::end_of_sequence);
    }
    [[nodiscard]] static DataItem abnormal() noexcept { return marker(TensorKind::abnormal); }

    DataItem(const DataItem& other) { copy_from(other); }
    DataItem(DataItem&& other) noexcept { steal(other); }
    DataItem& operator=(const DataItem& other) {
        if (this != &other) {
            DataItem copy(other); // strong guarantee: a failed allocation leaves *this as it was
            *this = std::move(copy);
        }
        return *this;
    }
    DataItem& operator=(DataItem&& other) noexcept {
        if (this != &other) {
            steal(other);
        }
        return *this;
    }
    ~DataItem() = default;

    [[nodiscard]] TensorKind kind() const noexcept { return kind_; }
    [[nodiscard]] DType dtype() const noexcept { return dtype_; }
    [[nodiscard]] std::span<const std::int64_t> dims() const noexcept {
        return {dims_.data(), dims_.size()};
    }
    [[nodiscard]] std::size_t dim_num() const noexcept { return dims_.size(); }
    [[nodiscard]] const void* data() const noexcept { return data_; }
    [[nodiscard]] void* data() noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool has_data() const noexcept { return data_ != nullptr; }
    // The payload; empty when there is no data pointer (a size without data reads as nothing).
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
        return data_ != nullptr ? std::span<const std::byte>(data_, size_)
                                : std::span<const std::byte>{};
    }
    [[nodiscard]] SliceInfo slice() const noexcept { return slice_; }
    [[nodiscard]] bool is_owning() const noexcept { return owning_; }

    // Typed read-back, checked at run time because the dtype is a run-time value here:
    // unsupported_data_type when T is not this item's dtype; invalid_param when the bytes cannot
    // be T's (size not a multiple, no data, misaligned, dims that disagree with the size, or —
    // for bool — a byte other than 0 and 1).
    template <Element T>
    [[nodiscard]] Result<std::span<const T>> values() const noexcept {
        const Status s = check_typed_read<T>();
        if (failed(s)) {
            return s;
        }
        return std::span<const T>(reinterpret_cast<const T*>(data_), size_ / sizeof(T));
    }
    template <Element T>
    [[nodiscard]] Result<std::span<T>> values() noexcept {
        const Status s = check_typed_read<T>();
        if (failed(s)) {
            return s;
        }
        return std::span<T>(reinterpret_cast<T*>(data_), size_ / sizeof(T));
    }

    // An owning copy of this item (a deep copy of a borrowed payload).
    [[nodiscard]] Result<DataItem> to_owning() const noexcept {
        DataItem item;
        item.kind_ = kind_;
        item.dtype_ = dtype_;
        item.slice_ = slice_;
        if (const Status s = item.assign_dims(dims()); failed(s)) {
            return s;
        }
        if (data_ == nullptr) {
            item.size_ = size_; // nothing to copy: keep the (CANN-accepted) size without data
            return item;
        }
        if (const Status s = item.assign_owned_copy(bytes()); failed(s)) {
            return s;
        }
        return item;
    }

    // Equal content: kind, dtype, dims, slice info, size and payload bytes (not ownership).
    friend bool operator==(const DataItem& a, const DataItem& b) noexcept {
        if (a.kind_ != b.kind_ || a.dtype_ != b.dtype_ || a.slice_ != b.slice_ ||
            a.size_ != b.size_ || !std::ranges::equal(a.dims(), b.dims())) {
            return false;
        }
        if (a.data_ == nullptr || b.data_ == nullptr || a.size_ == 0) {
            return a.data_ == b.data_ || a.size_ == 0;
        }
        return std::memcmp(a.data_, b.data_, a.size_) == 0;
    }

private:
    friend struct detail::ItemAccess;

    static DataItem marker(TensorKind kind) noexcept {
        DataItem item;
        item.kind_ = kind;
        return item;
    }

    static Status check_typed_shape(const DimsRef& dims, std::size_t value_count) noexcept {
        if (dims.size() > k_max_dims) {
            return Status::invalid_param;
        }
        const auto count = element_count(dims.span());
        return count && *count == value_count ? Status::ok : Status::invalid_param;
    }

    template <Element T>
    Status check_typed_read() const noexcept {
        const Status s = check_typed_layout(dtype_of<T>, sizeof(T), alignof(T));
        if constexpr (std::is_same_v<std::remove_cv_t<T>, bool>) {
            // A bool object holds 0 or 1; any other byte (a received payload can hold anything)
            // read as bool is undefined behaviour, so it is an error here instead.
            if (succeeded(s) && size_ != 0 &&
                !std::ranges::all_of(bytes(), [](std::byte b) { return b <= std::byte{1}; })) {
                return Status::invalid_param;
            }
        }
        return s;
    }

    Status check_typed_layout(DType want, std::size_t size_of,
                              std::size_t align_of) const noexcept {
        if (dtype_ != want) {
            return Status::unsupported_data_type;
        }
        if (size_ == 0) {
            return Status::ok;
        }
        if (data_ == nullptr || size_ % size_of != 0 ||
            reinterpret_cast<std::uintptr_t>(data_) % align_of != 0) {
            return Status::invalid_param;
        }
        if (!dims_.empty()) { // only when dims are given
            const auto count = element_count(dims());
            if (!count || *count != size_ / size_of) {
                return Status::invalid_param;
            }
        }
        return Status::ok;
    }

    Status assign_dims(std::span<const std::int64_t> dims) noexcept {
        try {
            dims_.assign(dims.begin(), dims.end());
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
        return Status::ok;
    }

    // Makes this item own a copy of `bytes`, reusing its buffer when it is large enough, so a
    // receive loop that parses into the same items allocates nothing after warm-up.
    Status assign_owned_copy(std::span<const std::byte> bytes) noexcept {
        if (capacity_ < bytes.size()) { // a spare buffer kept from an earlier payload is reused too
            try {
                owned_ = detail::allocate_payload(bytes.size());
            } catch (const std::bad_alloc&) {
                return Status::bad_alloc;
            }
            capacity_ = bytes.size();
        }
        owning_ = true;
        data_ = bytes.empty() ? nullptr : owned_.get();
        size_ = bytes.size();
        if (!bytes.empty()) {
            std::memcpy(data_, bytes.data(), bytes.size());
        }
        return Status::ok;
    }

    void copy_from(const DataItem& other) {
        kind_ = other.kind_;
        dtype_ = other.dtype_;
        slice_ = other.slice_;
        dims_ = other.dims_;
        size_ = other.size_;
        owning_ = other.owning_;
        if (other.owning_ && other.data_ != nullptr) {
            owned_ = detail::allocate_payload(other.size_);
            capacity_ = other.size_;
            std::memcpy(owned_.get(), other.data_, other.size_);
            data_ = owned_.get();
        } else {
            data_ = other.data_; // a borrowed payload: the copy borrows the same bytes
        }
    }

    void steal(DataItem& other) noexcept {
        kind_ = std::exchange(other.kind_, TensorKind::undefined);
        dtype_ = std::exchange(other.dtype_, DType::undefined);
        slice_ = std::exchange(other.slice_, SliceInfo{});
        dims_ = std::move(other.dims_); // O(1) when on the heap; ≤ 8 inline values otherwise
        other.dims_.clear();
        data_ = std::exchange(other.data_, nullptr);
        size_ = std::exchange(other.size_, 0);
        owned_ = std::move(other.owned_);
        capacity_ = std::exchange(other.capacity_, 0);
        owning_ = std::exchange(other.owning_, false);
    }

    TensorKind kind_ = TensorKind::undefined;
    DType dtype_ = DType::undefined;
    SliceInfo slice_;
    DimsVector dims_;
    std::byte* data_ = nullptr; // owned_.get() when owning (and non-empty), else borrowed
    std::size_t size_ = 0;
    detail::PayloadBuffer owned_; // 64-byte aligned (payload_buffer.hpp)
    std::size_t capacity_ = 0;
    bool owning_ = false;
};

namespace detail {
// What the wire format needs to refill an item in place (wire_format.hpp): the parser has
// already validated the message, so these bypass the creation rules on purpose — a received
// SLICE_TENSOR keeps its dims, and a received marker keeps its (CANN-kept) dataLen.
struct ItemAccess {
    struct Fields {
        TensorKind kind;
        DType dtype;
        std::span<const std::int64_t> dims;
        SliceInfo slice;
    };
    static Status assign_view(DataItem& item, const Fields& f, const std::byte* data,
                              std::size_t size) noexcept {
        if (const Status s = assign_fields(item, f); failed(s)) {
            return s;
        }
        item.owning_ = false; // any owned buffer stays as spare capacity
        item.data_ = size == 0 ? nullptr : const_cast<std::byte*>(data);
        item.size_ = size;
        return Status::ok;
    }
    static Status assign_copy(DataItem& item, const Fields& f,
                              std::span<const std::byte> bytes) noexcept {
        if (const Status s = assign_fields(item, f); failed(s)) {
            return s;
        }
        return item.assign_owned_copy(bytes);
    }
    // Makes `item` own `bytes` zero bytes (Tensor<T>::zeros).
    static Status assign_zeros(DataItem& item, std::size_t bytes) noexcept {
        if (bytes == 0) {
            return Status::ok;
        }
        try {
            item.owned_ = allocate_payload(bytes);
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
        std::memset(item.owned_.get(), 0, bytes);
        item.capacity_ = bytes;
        item.owning_ = true;
        item.data_ = item.owned_.get();
        item.size_ = bytes;
        return Status::ok;
    }
    // Re-points a payload that lives inside a buffer which was copied elsewhere (Dataset copy).
    static void rebase(DataItem& item, const std::byte* old_base, std::size_t old_size,
                       std::byte* new_base) noexcept {
        const auto p = reinterpret_cast<std::uintptr_t>(item.data_);
        const auto b = reinterpret_cast<std::uintptr_t>(old_base);
        if (!item.owning_ && item.data_ != nullptr && p >= b && p < b + old_size) {
            item.data_ = new_base + (p - b);
        }
    }

private:
    static Status assign_fields(DataItem& item, const Fields& f) noexcept {
        item.kind_ = f.kind;
        item.dtype_ = f.dtype;
        item.slice_ = f.slice;
        return item.assign_dims(f.dims);
    }
};
} // namespace detail

} // namespace ferry
