#pragma once
// One cell of a MessageChannel's ring (docs/processes.md, Message channels): a 64-byte header
// saying what the cell holds, then room for one message of up to max_message_bytes.
//
//     [ MessageCellHeader: length, kind ... 64 bytes ][ message bytes ... max_message_bytes ]
//
// The payload starts 64 bytes into the cell, and cells are a multiple of 64 bytes, so a message
// is 64-byte aligned like a wire-format buffer: the items of a dataset parsed in place
// (wire_format parse_view) see their payloads at the alignment a sender's serialize_into gave
// them.
//
// The header is written by the process that claimed the cell, before it publishes; the ring's
// publish/acquire order those writes before the receiver's reads. The receiver copies the header
// once and never trusts a length beyond the max_message_bytes it opened the channel with: a
// scribbled header is an error, not an out-of-bounds read (the rule at the top of
// segment_header.hpp). The message bytes themselves may still change while they are read; the
// parser (wire_format) stays in bounds regardless.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/ipc/layout_tag.hpp>
#include <span>
#include <string>

namespace ferry::ipc::detail {

enum class CellKind : std::uint32_t {
    message = 1,   // `length` bytes of a published message
    cancelled = 2, // a loan dropped unpublished: receivers release it and go on to the next
};

struct alignas(64) MessageCellHeader {
    std::uint64_t length;
    std::uint32_t kind; // CellKind
    std::uint32_t reserved;
};
static_assert(sizeof(MessageCellHeader) == 64);

inline constexpr std::size_t k_cell_header_bytes = sizeof(MessageCellHeader);
inline constexpr std::size_t k_cell_alignment = 64;

// The cell size for messages of up to `max_message_bytes`; 0 when that does not fit a size_t.
[[nodiscard]] constexpr std::size_t cell_bytes_for(std::size_t max_message_bytes) noexcept {
    const std::size_t room = SIZE_MAX - k_cell_header_bytes - (k_cell_alignment - 1);
    if (max_message_bytes > room) {
        return 0;
    }
    const std::size_t raw = k_cell_header_bytes + max_message_bytes;
    return (raw + k_cell_alignment - 1) / k_cell_alignment * k_cell_alignment;
}

// The message area of a cell: max_message_bytes long.
[[nodiscard]] inline std::span<std::byte> cell_payload(std::byte* cell,
                                                       std::size_t max_message_bytes) noexcept {
    return {cell + k_cell_header_bytes, max_message_bytes};
}

inline void write_cell_header(std::byte* cell, CellKind kind, std::uint64_t length) noexcept {
    MessageCellHeader h{};
    h.length = length;
    h.kind = static_cast<std::uint32_t>(kind);
    std::memcpy(cell, &h, sizeof h);
}

struct CellContent {
    CellKind kind;
    std::span<const std::byte> bytes; // empty unless kind == message
    bool valid;                       // false: the header holds no kind/length this reader accepts
};

// What a published cell holds, checked against this reader's max_message_bytes.
[[nodiscard]] inline CellContent read_cell(const std::byte* cell,
                                           std::size_t max_message_bytes) noexcept {
    MessageCellHeader h{};
    std::memcpy(&h, cell, sizeof h);
    if (h.kind == static_cast<std::uint32_t>(CellKind::cancelled)) {
        return {CellKind::cancelled, {}, true};
    }
    if (h.kind != static_cast<std::uint32_t>(CellKind::message) || h.length > max_message_bytes) {
        return {CellKind::message, {}, false};
    }
    return {
        CellKind::message, {cell + k_cell_header_bytes, static_cast<std::size_t>(h.length)}, true};
}

// The layout name of a channel: policy and geometry are part of it, so that an open with another
// capacity or message size is refused with a message a person can read ("holds layout
// 'ferry.msg.spsc.c4.m1024' v1 ..., this build expects 'ferry.msg.spsc.c8.m1024' v1 ...").
// At most 9 + 5 + 6 + 21 characters: within k_max_layout_name.
[[nodiscard]] inline std::string message_layout_name(bool multi, std::size_t capacity,
                                                     std::size_t max_message_bytes) {
    return std::string("ferry.msg.") + (multi ? "mpmc" : "spsc") + ".c" + std::to_string(capacity) +
           ".m" + std::to_string(max_message_bytes);
}

// Bumped on every change to the cell layout or to how the channel places its ring.
inline constexpr std::uint32_t k_message_layout_version = 1;

// The tag: the name above, the version, and the cell header's size and alignment, mixed with the
// ring's format number so that a build whose ring is laid out differently is refused too.
[[nodiscard]] inline LayoutTag message_layout_tag(std::string_view name,
                                                  std::uint64_t ring_format) noexcept {
    LayoutTag tag = layout_tag_of<MessageCellHeader>(name, k_message_layout_version);
    tag.hash = fnv1a(tag.hash, ring_format);
    return tag;
}

} // namespace ferry::ipc::detail
