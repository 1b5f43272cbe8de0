#pragma once
// Where the hostile peer of hostile_peer.cpp writes: the fields of a ferry/ipc segment, as offsets
// into the segment file, and how a participant slot encodes a registration. Everything else in
// the fuzzer reaches the library through its public API; this file is the one place that knows
// the shared layout (docs/processes.md, Header; docs/reliability.md, A hostile peer).

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/afd/doorbell.hpp>
#include <ferry/ipc/detail/message_cell.hpp>
#include <ferry/ipc/detail/segment_header.hpp>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <ferry/ipc/detail/shared_ring_spsc.hpp>
#include <ferry/ipc/window.hpp>
#include <optional>

namespace ipc_fuzz {

namespace detail = ferry::ipc::detail;

// One shared word: its offset in the segment file and its width in bytes.
struct Field {
    std::size_t offset;
    std::size_t width;
};

// The payload (a ring, or a window header) starts one page into the file.
inline constexpr std::size_t k_payload_at = detail::k_payload_offset;

#define IPC_FUZZ_FIELD(type, member, base)                                                         \
    Field {                                                                                        \
        (base) + offsetof(type, member), sizeof(type::member)                                      \
    }

// The segment header: magic, format, sizes, ready, layout tag, boot id, creator.
inline constexpr std::array k_segment_fields = {
    IPC_FUZZ_FIELD(detail::SegmentHeader, magic, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, header_format, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, header_bytes, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, payload_offset, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, payload_bytes, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, total_bytes, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, ready, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, layout_version, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, layout_hash, 0),
    Field{offsetof(detail::SegmentHeader, layout_name), 8},
    Field{offsetof(detail::SegmentHeader, boot_id), 8},
    IPC_FUZZ_FIELD(detail::SegmentHeader, creator_pid, 0),
    IPC_FUZZ_FIELD(detail::SegmentHeader, creator_start_time, 0),
};

// A ring's geometry line (RingGeometry) at `base`: magic, format, policy, capacity, cell bytes,
// stride, ready. Both rings start with it (RingControl mirrors it word for word, asserted below).
constexpr std::array<Field, 7> geometry_fields(std::size_t base) {
    return {IPC_FUZZ_FIELD(detail::RingGeometry, magic, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, format, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, policy, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, capacity, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, cell_bytes, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, stride, base),
            IPC_FUZZ_FIELD(detail::RingGeometry, ready, base)};
}
static_assert(offsetof(detail::RingControl, magic) == offsetof(detail::RingGeometry, magic) &&
              offsetof(detail::RingControl, format) == offsetof(detail::RingGeometry, format) &&
              offsetof(detail::RingControl, policy) == offsetof(detail::RingGeometry, policy) &&
              offsetof(detail::RingControl, capacity) == offsetof(detail::RingGeometry, capacity) &&
              offsetof(detail::RingControl, cell_bytes) ==
                  offsetof(detail::RingGeometry, cell_bytes) &&
              offsetof(detail::RingControl, stride) == offsetof(detail::RingGeometry, stride) &&
              offsetof(detail::RingControl, ready) == offsetof(detail::RingGeometry, ready));

// A ring's geometry fields followed by the rest of its control block's.
template <std::size_t N>
constexpr std::array<Field, 7 + N> ring_fields(std::size_t geometry_at,
                                               const std::array<Field, N>& rest) {
    std::array<Field, 7 + N> all{};
    const auto geometry = geometry_fields(geometry_at);
    std::copy(geometry.begin(), geometry.end(), all.begin());
    std::copy(rest.begin(), rest.end(), all.begin() + 7);
    return all;
}

// An mpmc ring's control block (RingControl): geometry, counters, flags, futex words, the blocked
// count, the watch timestamp.
inline constexpr std::array k_ring_fields =
    ring_fields(k_payload_at, std::array{
                                  IPC_FUZZ_FIELD(detail::RingControl, tail, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, head, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, stopped, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, lost, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, items_word, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, slots_word, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, blocked, k_payload_at),
                                  IPC_FUZZ_FIELD(detail::RingControl, next_watch_ns, k_payload_at),
                              });
inline constexpr std::size_t k_cells_at = k_payload_at + sizeof(detail::RingControl);
inline constexpr std::size_t k_next_watch_at = k_ring_fields[14].offset;
static_assert(k_next_watch_at == k_payload_at + offsetof(detail::RingControl, next_watch_ns));

// An spsc channel's ring control block (SpscControl): its geometry line, the sender's and the
// receiver's counters, the sticky state word, each event's parked flag and futex word, the
// blocked count and the watch timestamp.
inline constexpr std::array k_spsc_fields =
    ring_fields(k_payload_at + offsetof(detail::SpscControl, geometry),
                std::array{
                    IPC_FUZZ_FIELD(detail::SpscControl, tail, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, head, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, state, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, receiver_parked, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, items_word, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, sender_parked, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, slots_word, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, blocked, k_payload_at),
                    IPC_FUZZ_FIELD(detail::SpscControl, next_watch_ns, k_payload_at),
                });
// Seven lines, every word of which is listed above: a word added to SpscControl (a new line, or
// a line grown past the geometry) trips this, and belongs in k_spsc_fields.
static_assert(sizeof(detail::SpscControl) == 7 * detail::k_ring_line &&
                  sizeof(detail::RingGeometry) <= detail::k_ring_line,
              "SpscControl changed: list its new words in k_spsc_fields");
inline constexpr std::size_t k_spsc_next_watch_at = k_spsc_fields[15].offset;
static_assert(k_spsc_next_watch_at == k_payload_at + offsetof(detail::SpscControl, next_watch_ns));
// Its cells follow the control block, each its turn word and then the item (stride: the two
// together, a power of two up to a line, else rounded up to 8 bytes).
inline constexpr std::size_t k_spsc_cells_at = k_payload_at + sizeof(detail::SpscControl);
inline constexpr std::size_t spsc_cell_stride(std::size_t cell_bytes) {
    const std::size_t bytes = sizeof(std::uint64_t) + cell_bytes;
    return bytes <= detail::k_ring_line ? std::bit_ceil(bytes) : (bytes + 7) / 8 * 8;
}

// A SharedWindow's header: the owner's base, the size, the doorbell's two words, published.
inline constexpr std::size_t k_doorbell_at =
    k_payload_at + offsetof(ferry::ipc::WindowHeader, doorbell);
inline constexpr std::array k_window_fields = {
    IPC_FUZZ_FIELD(ferry::ipc::WindowHeader, owner_base, k_payload_at),
    IPC_FUZZ_FIELD(ferry::ipc::WindowHeader, data_bytes, k_payload_at),
    IPC_FUZZ_FIELD(ferry::afd::DoorbellWord, rings, k_doorbell_at),
    IPC_FUZZ_FIELD(ferry::afd::DoorbellWord, sleepers, k_doorbell_at),
    IPC_FUZZ_FIELD(ferry::ipc::WindowHeader, published, k_payload_at),
};
inline constexpr std::size_t k_window_data_at = k_payload_at + sizeof(ferry::ipc::WindowHeader);

#undef IPC_FUZZ_FIELD

// A message channel's cell: its turn word on its own line, then the cell header's length and
// kind. `stride` is the distance between cells for the channel under attack: a cell of at most
// 56 bytes (a typed mpmc channel's item) shares its line with its turn, in a cell of 16, 32 or
// 64 bytes.
inline constexpr std::size_t k_turn_bytes = detail::k_ring_line;
inline constexpr std::array k_cell_fields = {
    Field{0, 8},
    Field{k_turn_bytes + offsetof(detail::MessageCellHeader, length), 8},
    Field{k_turn_bytes + offsetof(detail::MessageCellHeader, kind), 4},
};
inline std::size_t cell_stride(std::size_t cell_bytes) {
    if (cell_bytes + sizeof(std::uint64_t) <= detail::k_ring_line) {
        return std::bit_ceil(cell_bytes + sizeof(std::uint64_t));
    }
    return k_turn_bytes +
           (cell_bytes + detail::k_ring_line - 1) / detail::k_ring_line * detail::k_ring_line;
}
// Where a message's bytes start in cell `index`.
inline std::size_t message_at(std::size_t index, std::size_t cell_bytes) {
    return k_cells_at + index * cell_stride(cell_bytes) + k_turn_bytes +
           detail::k_cell_header_bytes;
}

// ---- participants ---------------------------------------------------------------------------

inline constexpr std::size_t k_participants = detail::k_max_participants;
inline constexpr std::size_t k_participants_at = offsetof(detail::SegmentHeader, participants);
inline constexpr std::size_t k_slot_bytes = sizeof(detail::ParticipantSlot);

// What a slot says: a pid (0: free) and the start time it was registered with, as far as the
// slot keeps it (its low 32 bits); nullopt when the slot holds a pid without a usable start time.
struct Registration {
    std::int32_t pid = 0;
    std::optional<std::uint32_t> start = std::nullopt;
};

// Writes a registration into a slot as a peer would (one word: start << 32 | pid). A start of
// 0 is a registration without a start time.
inline void store_registration(std::byte* slot, std::int32_t pid, std::uint32_t start) {
    const std::uint64_t word = std::uint64_t{start} << 32 | static_cast<std::uint32_t>(pid);
    std::memcpy(slot, &word, sizeof word);
}
inline Registration decode_slot(const std::byte* slot) {
    std::uint64_t word = 0;
    std::memcpy(&word, slot, sizeof word);
    return Registration{static_cast<std::int32_t>(word & 0xffffffffU),
                        static_cast<std::uint32_t>(word >> 32)};
}

} // namespace ipc_fuzz
