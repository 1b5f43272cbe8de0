#pragma once
// The total message reader behind parse (docs/cann-contract/tdt.md#parser): it walks a message item
// by item and hands each validated item to a visitor. Every read is bounds-checked against the
// buffer before it happens, headers and dims are memcpy'd (they need not be aligned: a header
// follows the previous payload directly), and nothing is allocated here — so no input can make it
// read out of bounds, overflow, or allocate more than the buffer implies.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/dtype.hpp>
#include <ferry/core/status.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/detail/wire_layout.hpp>
#include <ferry/tensor/tensor_kind.hpp>
#include <span>

namespace ferry::detail {

struct WireItem {
    bool is_name = false; // a version-1 item: its payload is the dataset name, it adds no item
    ItemAccess::Fields fields{};
    std::span<const std::byte> payload;
};

struct WireSummary {
    std::size_t items = 0; // items the message adds (name items excluded)
    bool has_data = false; // some item has a payload
};

// Reads and checks the header of item `index` at `offset`; on success fills `out` (dims are
// copied into `dims_storage`) and advances `offset` past the item.
[[nodiscard]] inline Status read_wire_item(std::span<const std::byte> msg, std::size_t& offset,
                                           std::uint32_t index, std::uint32_t cnt,
                                           std::array<std::int64_t, k_max_dims>& dims_storage,
                                           WireItem& out) noexcept {
    if (msg.size() - offset < k_wire_header_size) {
        return Status::failure; // truncated header (CANN: ACL_ERROR_FAILURE)
    }
    WireItemHeader h;
    std::memcpy(&h, msg.data() + offset, sizeof h);
    if ((h.version != k_wire_version_item && h.version != k_wire_version_name) ||
        h.cur_cnt != index || h.cnt != cnt || h.dim_num > k_max_dims) {
        return Status::failure; // inconsistent header
    }
    const auto kind = static_cast<TensorKind>(h.kind);
    if (!is_receivable(kind)) {
        return Status::unsupported_data_type; // CANN's mapping of an unknown kind
    }
    const std::size_t dims_bytes = std::size_t{h.dim_num} * sizeof(std::int64_t);
    // ferry skips the padding the writer adds (CANN does not, docs/cann-contract/tdt.md#padding):
    // the block is dims + dynamic_bit_size − dims bytes of padding, and padding is less than one
    // unit. A producer that leaves dynamic_bit_size 0 gets CANN's reading: the payload follows the
    // dims.
    if (h.dynamic_bit_size == 0) {
        h.dynamic_bit_size = static_cast<std::uint32_t>(dims_bytes);
    }
    if (h.dynamic_bit_size < dims_bytes || h.dynamic_bit_size - dims_bytes >= k_wire_alignment) {
        return Status::failure;
    }
    const std::size_t dims_at = offset + k_wire_header_size;
    if (msg.size() - dims_at < h.dynamic_bit_size) {
        return Status::failure; // truncated dims or padding
    }
    const std::size_t payload_at = dims_at + h.dynamic_bit_size;
    if (h.data_len > msg.size() - payload_at) {
        return Status::failure; // truncated (or hostile) payload length
    }
    const bool tensor_like = carries_tensor(kind);
    if (tensor_like && h.dim_num != 0) {
        std::memcpy(dims_storage.data(), msg.data() + dims_at, dims_bytes);
    }
    const auto len = static_cast<std::size_t>(h.data_len);
    out.is_name = tensor_like && h.version == k_wire_version_name;
    // docs/cann-contract/tdt.md#receive: markers get no dims and an undefined dtype; their dataLen
    // is kept.
    out.fields = {kind,
                  tensor_like ? static_cast<DType>(h.dtype) : DType::undefined,
                  {dims_storage.data(), tensor_like ? h.dim_num : 0u},
                  {h.slice_num, h.slice_id}};
    out.payload = msg.subspan(payload_at, len);
    offset = payload_at + len;
    return Status::ok;
}

// Walks the whole message; `visit(const WireItem&)` returns a Status and is called once per item
// in order. The message must hold exactly `cnt` items and nothing after them.
template <typename Visit>
[[nodiscard]] Status walk_message(std::span<const std::byte> msg, Visit&& visit) noexcept {
    if (msg.size() < k_wire_header_size) {
        return Status::failure; // includes the empty message (CANN: peek length 0 → FAILURE)
    }
    WireItemHeader first;
    std::memcpy(&first, msg.data(), sizeof first);
    // Each item takes at least a 64-byte header: a count the buffer cannot hold is rejected
    // before anything is sized by it.
    if (first.cnt == 0 || first.cnt > msg.size() / k_wire_header_size) {
        return Status::failure;
    }
    std::array<std::int64_t, k_max_dims> dims_storage;
    std::size_t offset = 0;
    for (std::uint32_t i = 0; i < first.cnt; ++i) {
        WireItem item;
        if (const Status s = read_wire_item(msg, offset, i, first.cnt, dims_storage, item);
            failed(s)) {
            return s;
        }
        if (const Status s = visit(item); failed(s)) {
            return s;
        }
    }
    return offset == msg.size() ? Status::ok : Status::failure; // trailing bytes
}

// Validates a message without changing anything, and says what it holds.
[[nodiscard]] inline Status summarize_message(std::span<const std::byte> msg,
                                              WireSummary& summary) noexcept {
    WireSummary s;
    const Status status = walk_message(msg, [&s](const WireItem& item) noexcept {
        if (!item.is_name) {
            ++s.items;
            s.has_data = s.has_data || !item.payload.empty();
        }
        return Status::ok;
    });
    if (succeeded(status)) {
        summary = s;
    }
    return status;
}

} // namespace ferry::detail
