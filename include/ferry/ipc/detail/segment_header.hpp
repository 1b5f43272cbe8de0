#pragma once
// THE RULE for every reader of shared memory in ferry/ipc (docs/processes.md, Reading shared
// memory). A segment is an interface to another program, and any word of it can change at any
// instant:
//   - a value another process can write is loaded ONCE (atomically where it is a control word)
//     into a local, validated there, and never read again for the same decision;
//   - payload bytes may be copied or parsed in place, but every length, offset, count and index
//     is validated against private, checked limits (this process's own geometry, fixed at create
//     or open) before it is used — and a parser over shared bytes must stay in bounds even when
//     the bytes change between its passes;
//   - a peer can corrupt its messages, stop the channel or make it lost; it can never cause an
//     out-of-bounds access, a crash, or a wait beyond the caller's timeout.
// Headers under ferry/ipc/detail that read shared memory refer to this comment.
//
// The header at offset 0 of every segment (docs/processes.md, Header).
//
// A plain, trivially copyable struct: the creator writes it with one pwrite before reserving
// the rest of the file, so from the moment the header is readable it names its creator. Words
// other processes change concurrently (ready, the participant slots) are only ever accessed
// through std::atomic_ref.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/ipc/detail/process_identity.hpp>
#include <ferry/ipc/layout_tag.hpp>
#include <optional>
#include <type_traits>

namespace ferry::ipc::detail {

inline constexpr std::uint64_t k_segment_magic = 0x4745535952524546ULL; // "FERRYSEG"
// Bumped whenever SegmentHeader or the counter area changes: a segment of another format is
// refused, not misread. 3: the counter area between the header and the payload.
inline constexpr std::uint32_t k_header_format = 3;
inline constexpr std::size_t k_max_participants = 64;
inline constexpr std::size_t k_payload_alignment = 4096; // the payload starts on a page
// The counter area (docs/processes.md, Counters): one block of k_counter_block_bytes per
// participant slot, written only by the process registered in that slot
// (ipc/detail/channel_counters.hpp), on the page after the header.
inline constexpr std::size_t k_counter_block_bytes = 128;
inline constexpr std::size_t k_counters_offset = k_payload_alignment;
inline constexpr std::size_t k_counters_bytes = k_max_participants * k_counter_block_bytes;
// Where every segment's payload starts: after the header page and the counter area, on a page.
inline constexpr std::size_t k_payload_offset =
    (k_counters_offset + k_counters_bytes + k_payload_alignment - 1) / k_payload_alignment *
    k_payload_alignment;

enum ReadyState : std::uint32_t { k_initialising = 0, k_ready = 1, k_abandoned = 2 };

// One registered process, in one word so that a reader sees a registration whole or not at all
// (docs/processes.md, Liveness): word = start_fingerprint(start time) << 32 | pid; 0 when free.
// Pids fit: the kernel's pid limit is 2^22.
struct ParticipantSlot {
    std::uint64_t word;
};

struct SegmentHeader {
    std::uint64_t magic;
    std::uint32_t header_format;
    std::uint32_t header_bytes; // sizeof(SegmentHeader) in the creating build
    std::uint64_t payload_offset;
    std::uint64_t payload_bytes;
    std::uint64_t total_bytes;
    std::uint32_t ready; // ReadyState; futex word, set to k_ready last, with release
    std::uint32_t layout_version;
    std::uint64_t layout_hash;
    char layout_name[k_max_layout_name + 1];
    char boot_id[k_boot_id_size + 4];
    std::int32_t creator_pid;
    std::uint32_t reserved;
    std::uint64_t creator_start_time;
    ParticipantSlot participants[k_max_participants];
};

static_assert(std::is_trivially_copyable_v<SegmentHeader> &&
              std::is_standard_layout_v<SegmentHeader>);
static_assert(sizeof(SegmentHeader) <= k_counters_offset);
static_assert(std::atomic_ref<std::uint64_t>::is_always_lock_free &&
              std::atomic_ref<std::uint64_t>::required_alignment == alignof(std::uint64_t));

inline std::uint64_t slot_word(const ProcessIdentity& p) noexcept {
    return (std::uint64_t{start_fingerprint(p.start_time)} << 32) |
           static_cast<std::uint32_t>(p.pid);
}
inline ProcessIdentity slot_identity(std::uint64_t word) noexcept {
    return ProcessIdentity{static_cast<std::int32_t>(word & 0xffffffffU), word >> 32};
}

// The header a creator writes first: everything but the reservation, not yet ready, with the
// creator registered in slot 0 so that a crash at any later point leaves it judgeable.
inline SegmentHeader make_header(const LayoutTag& tag, std::uint64_t payload_bytes,
                                 const ProcessIdentity& creator, const BootId& boot) noexcept {
    SegmentHeader h;
    std::memset(&h, 0, sizeof h);
    h.magic = k_segment_magic;
    h.header_format = k_header_format;
    h.header_bytes = sizeof(SegmentHeader);
    h.payload_offset = k_payload_offset;
    h.payload_bytes = payload_bytes;
    h.total_bytes = k_payload_offset + payload_bytes;
    h.ready = k_initialising;
    h.layout_version = tag.version;
    h.layout_hash = tag.hash;
    std::memcpy(h.layout_name, tag.name.data(), tag.name.size()); // size checked by the caller
    std::memcpy(h.boot_id, boot.data(), boot.size());
    h.creator_pid = creator.pid;
    h.creator_start_time = creator.start_time;
    h.participants[0] = ParticipantSlot{slot_word(creator)};
    return h;
}

inline bool same_boot(const SegmentHeader& h, const BootId& boot) noexcept {
    return std::memcmp(h.boot_id, boot.data(), boot.size()) == 0;
}

// One slot's registration: pid 0 when free; start_time holds the start_fingerprint only.
inline ProcessIdentity read_slot(ParticipantSlot& slot) noexcept {
    return slot_identity(std::atomic_ref<std::uint64_t>(slot.word).load());
}

// The pid of a live participant, if any. Participants of another boot are all dead.
inline std::optional<std::int32_t> live_participant(SegmentHeader& h, const BootId& boot) noexcept {
    if (!same_boot(h, boot)) {
        return std::nullopt;
    }
    for (auto& slot : h.participants) {
        const ProcessIdentity p = read_slot(slot);
        if (p.pid != 0 && is_alive(p.pid, p.start_time)) {
            return p.pid;
        }
    }
    return std::nullopt;
}

// Claims the slot whose current word is `seen` for `self`; false when another process won it.
inline bool claim_slot(ParticipantSlot& slot, std::uint64_t seen,
                       const ProcessIdentity& self) noexcept {
    return std::atomic_ref<std::uint64_t>(slot.word).compare_exchange_strong(seen, slot_word(self));
}

// Registers `self`: a free slot first, else the slot of a dead participant. nullopt: table full.
inline std::optional<std::size_t> register_participant(SegmentHeader& h,
                                                       const ProcessIdentity& self) noexcept {
    for (int pass = 0; pass < 2; ++pass) {
        for (std::size_t i = 0; i < k_max_participants; ++i) {
            auto& slot = h.participants[i];
            const std::uint64_t seen = std::atomic_ref<std::uint64_t>(slot.word).load();
            const ProcessIdentity p = slot_identity(seen);
            const bool usable = pass == 0 ? p.pid == 0 : !is_alive(p.pid, p.start_time);
            if (usable && claim_slot(slot, seen, self)) {
                return i;
            }
        }
    }
    return std::nullopt;
}

// Frees slot `index` if it still holds `self` (a dead-slot takeover may have reused it).
inline void deregister_participant(SegmentHeader& h, std::size_t index,
                                   const ProcessIdentity& self) noexcept {
    std::uint64_t seen = slot_word(self);
    std::atomic_ref<std::uint64_t>(h.participants[index].word).compare_exchange_strong(seen, 0);
}

} // namespace ferry::ipc::detail
