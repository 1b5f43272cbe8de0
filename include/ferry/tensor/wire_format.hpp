#pragma once
// The message wire format (CANN's queue-path format, docs/cann-contract/tdt.md#wire-format): one
// message per send. Per item: a 64-byte header, dim_num int64 dims, zero padding up to a 64-byte
// boundary of the message, then the payload. A non-empty dataset name travels first, as a version-1
// item whose payload is the name.
//
// Writer: serialized_size + serialize_into write into a caller's buffer (one payload copy, no
//   allocation); serialize allocates the buffer. Kinds other than TENSOR, END_OF_SEQUENCE and
//   ABNORMAL are invalid_param before anything is written (docs/cann-contract/tdt.md#send).
// Reader: total — any truncated, oversized, inconsistent or hostile buffer is an error Status
//   (failure; unsupported_data_type for an unknown kind, as CANN), never an out-of-bounds read,
//   never an allocation larger than the buffer implies. Four forms:
//   parse (owning copy), parse_view (items borrow the caller's buffer), parse_into(ds, bytes)
//   (owning copy into an existing dataset, reusing its item storage) and
//   parse_into_adopting(ds, message) (the dataset takes the message buffer and its items borrow
//   from it: zero copies, and the dataset's previous buffer is handed back for reuse).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/detail/wire_layout.hpp>
#include <ferry/tensor/detail/wire_reader.hpp>
#include <new>
#include <span>
#include <utility>
#include <vector>

namespace ferry {

using MessageBuffer = std::vector<std::byte>;

namespace detail {
// Adds `n` to `total` unless that overflows.
[[nodiscard]] constexpr bool add_checked(std::size_t& total, std::size_t n) noexcept {
    if (n > SIZE_MAX - total) {
        return false;
    }
    total += n;
    return true;
}

// The message size for one more item of `dim_num` dims and `len` payload bytes at `offset`.
[[nodiscard]] constexpr bool add_item_size(std::size_t& offset, std::size_t dim_num,
                                           std::size_t len) noexcept {
    constexpr std::size_t max_block = k_wire_header_size + k_max_dims * 8 + k_wire_alignment;
    if (offset > SIZE_MAX - max_block) {
        return false;
    }
    offset = payload_offset(offset, dim_num);
    return add_checked(offset, len);
}

// Writes one item (header, dims, zeroed padding, payload) at `offset`; the caller sized `out`.
inline std::size_t write_item(std::span<std::byte> out, std::size_t offset, WireItemHeader h,
                              std::span<const std::int64_t> dims,
                              std::span<const std::byte> payload) noexcept {
    const std::size_t data_at = payload_offset(offset, dims.size());
    h.dim_num = static_cast<std::uint32_t>(dims.size());
    h.dynamic_bit_size = static_cast<std::uint32_t>(data_at - offset - k_wire_header_size);
    h.data_len = payload.size();
    std::byte* p = out.data() + offset;
    std::memcpy(p, &h, sizeof h);
    if (!dims.empty()) {
        std::memcpy(p + k_wire_header_size, dims.data(), dims.size_bytes());
    }
    const std::size_t pad_at = offset + k_wire_header_size + dims.size_bytes();
    std::memset(out.data() + pad_at, 0, data_at - pad_at); // CANN leaves this uninitialised
    if (!payload.empty()) {
        std::memcpy(out.data() + data_at, payload.data(), payload.size());
    }
    return data_at + payload.size();
}
} // namespace detail

// The exact size of `ds`'s message. invalid_param when an item cannot be sent (a kind other than
// TENSOR/END_OF_SEQUENCE/ABNORMAL, or a size without data); rt_param_invalid when the message
// would hold no item at all (CANN's driver rejects an empty send with 107000,
// docs/cann-contract/tdt.md#send).
[[nodiscard]] inline Result<std::size_t> serialized_size(const Dataset& ds) noexcept {
    std::size_t total = 0;
    std::size_t count = 0;
    if (!ds.name().empty()) {
        ++count;
        if (!detail::add_item_size(total, 0, ds.name().size())) {
            return Status::invalid_param;
        }
    }
    for (const DataItem& item : ds) {
        if (!is_sendable(item.kind()) || (item.size() != 0 && !item.has_data())) {
            return Status::invalid_param;
        }
        ++count;
        if (!detail::add_item_size(total, item.dim_num(), item.size())) {
            return Status::invalid_param;
        }
    }
    if (count == 0) {
        return Status::rt_param_invalid;
    }
    if (count > UINT32_MAX) {
        return Status::invalid_param; // cnt is a uint32 on the wire
    }
    return total;
}

// Writes `ds`'s message to the front of `out` and returns its size; invalid_param when `out` is
// too small. Nothing is written unless the whole dataset can be sent.
[[nodiscard]] inline Result<std::size_t> serialize_into(const Dataset& ds,
                                                        std::span<std::byte> out) noexcept {
    const Result<std::size_t> size = serialized_size(ds);
    if (!size) {
        return size.status();
    }
    if (out.size() < *size) {
        return Status::invalid_param;
    }
    const auto cnt = static_cast<std::uint32_t>(ds.size() + (ds.name().empty() ? 0 : 1));
    detail::WireItemHeader h{};
    h.cnt = cnt;
    std::size_t offset = 0;
    if (!ds.name().empty()) {
        h.version = detail::k_wire_version_name;
        h.kind = static_cast<std::int32_t>(TensorKind::tensor);
        h.dtype = static_cast<std::int32_t>(DType::string);
        offset = detail::write_item(out, offset, h, {}, std::as_bytes(std::span(ds.name())));
        ++h.cur_cnt;
    }
    h.version = detail::k_wire_version_item;
    for (const DataItem& item : ds) {
        h.kind = static_cast<std::int32_t>(item.kind());
        h.dtype = static_cast<std::int32_t>(item.dtype());
        h.slice_num = item.slice().num;
        h.slice_id = item.slice().id;
        offset = detail::write_item(out, offset, h, item.dims(), item.bytes());
        ++h.cur_cnt;
    }
    return offset;
}

// The message as a new buffer.
[[nodiscard]] inline Result<MessageBuffer> serialize(const Dataset& ds) noexcept {
    const Result<std::size_t> size = serialized_size(ds);
    if (!size) {
        return size.status();
    }
    MessageBuffer out;
    try {
        out.resize(*size);
    } catch (const std::bad_alloc&) {
        return Status::bad_alloc;
    }
    const Result<std::size_t> written = serialize_into(ds, out);
    if (!written) {
        return written.status();
    }
    return out;
}

namespace detail {
enum class PayloadMode { copy, borrow };

// Refills `ds` from a message that summarize_message has accepted. The bytes may have changed
// since (a message read in place in shared memory, docs/processes.md, Reading shared memory): the
// second pass revalidates every header and fills at most summary.items items, so a message that
// now holds more or fewer items is `failure` (with `ds` left empty), never a write past the items
// sized by the first pass. Otherwise only allocation can fail.
[[nodiscard]] inline Status fill_dataset(Dataset& ds, std::span<const std::byte> msg,
                                         const WireSummary& summary, PayloadMode mode) noexcept {
    std::vector<DataItem>& items = DatasetAccess::items(ds);
    std::string& name = DatasetAccess::name(ds);
    try {
        items.resize(summary.items); // existing items (and their buffers) are reused in place
    } catch (const std::bad_alloc&) {
        return Status::bad_alloc;
    }
    name.clear(); // the name describes this message (ferry differs: CANN keeps a stale one)
    std::size_t next = 0;
    const Status s = walk_message(msg, [&](const WireItem& w) noexcept {
        if (w.is_name) {
            try {
                name.assign(reinterpret_cast<const char*>(w.payload.data()), w.payload.size());
            } catch (const std::bad_alloc&) {
                return Status::bad_alloc;
            }
            return Status::ok;
        }
        if (next == items.size()) {
            return Status::failure; // more items than the first pass counted
        }
        DataItem& item = items[next++];
        return mode == PayloadMode::copy
                   ? ItemAccess::assign_copy(item, w.fields, w.payload)
                   : ItemAccess::assign_view(item, w.fields, w.payload.data(), w.payload.size());
    });
    if (failed(s) || next != items.size()) {
        ds.clear(); // bad_alloc, or bytes changed under the parser: leave a valid, empty dataset
        return failed(s) ? s : Status::failure;
    }
    DatasetAccess::mark_received(ds, summary.has_data ? MemoryKind::host : MemoryKind::unknown);
    return Status::ok;
}

[[nodiscard]] inline Result<Dataset> parse_new(std::span<const std::byte> msg,
                                               PayloadMode mode) noexcept {
    WireSummary summary;
    if (const Status s = summarize_message(msg, summary); failed(s)) {
        return s;
    }
    Dataset ds;
    if (const Status s = fill_dataset(ds, msg, summary, mode); failed(s)) {
        return s;
    }
    return ds;
}
} // namespace detail

// A dataset that owns copies of the message's payloads.
[[nodiscard]] inline Result<Dataset> parse(std::span<const std::byte> msg) noexcept {
    return detail::parse_new(msg, detail::PayloadMode::copy);
}

// A dataset whose items borrow their payloads from `msg`, which must outlive it (and its copies).
[[nodiscard]] inline Result<Dataset> parse_view(std::span<const std::byte> msg) noexcept {
    return detail::parse_new(msg, detail::PayloadMode::borrow);
}

// Refills `ds` with owning copies, reusing its items and their payload buffers. invalid_param
// when `ds` holds items the user added (CANN's receive rule, docs/cann-contract/tdt.md#receive). On
// any error in the message nothing changes — except for a message another process rewrites while
// it is parsed (shared memory): then `ds` is left empty and the answer is failure.
[[nodiscard]] inline Status parse_into(Dataset& ds, std::span<const std::byte> msg) noexcept {
    if (!ds.accepts_receive()) {
        return Status::invalid_param;
    }
    detail::WireSummary summary;
    if (const Status s = detail::summarize_message(msg, summary); failed(s)) {
        return s;
    }
    const Status s = detail::fill_dataset(ds, msg, summary, detail::PayloadMode::copy);
    detail::DatasetAccess::message(ds).clear(); // no item borrows from an earlier message now
    return s;
}

// Zero-copy refill: `ds` takes `message` and its items borrow from it; on return `message` holds
// the dataset's previous buffer (empty or not), for the caller to reuse — a receive loop that
// hands buffers back and forth this way allocates nothing. Named apart from parse_into so that
// passing a vector never gives it away by accident. On an error in the message nothing changes,
// `message` included; on bad_alloc `message` is untouched and `ds` is either unchanged or empty
// (never items pointing into a buffer it no longer holds).
[[nodiscard]] inline Status parse_into_adopting(Dataset& ds, MessageBuffer& message) noexcept {
    if (!ds.accepts_receive()) {
        return Status::invalid_param;
    }
    detail::WireSummary summary;
    if (const Status s = detail::summarize_message(message, summary); failed(s)) {
        return s;
    }
    // The items are pointed into `message` first and the buffers change hands only once that
    // worked: a swap moves the heap storage, so the pointers stay valid.
    if (const Status s = detail::fill_dataset(ds, message, summary, detail::PayloadMode::borrow);
        failed(s)) {
        return s;
    }
    detail::DatasetAccess::message(ds).swap(message); // no byte is copied
    return Status::ok;
}

} // namespace ferry
