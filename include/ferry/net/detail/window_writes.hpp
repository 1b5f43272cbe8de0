#pragma once
// The owner's side of a peer's window writes — put, ring and flush messages — without UCX
// (docs/multi-node.md, Windows; docs/security.md, Window writes): decoding a write's header,
// checking it against the exposed regions, bounding what one peer can make the owner hold, and
// applying the queue in the order the peer sent it. Node::Impl (node_rma.hpp) feeds these from
// its UCX handler and applies each write; the fuzzer (fuzz/net) feeds them directly.

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <ferry/afd/doorbell.hpp>
#include <ferry/net/detail/wire.hpp>
#include <optional>
#include <span>
#include <utility>
#include <vector>

struct ucp_mem; // UCX's registration (ucp_mem_h), opaque here: this header needs no UCX

namespace ferry::net::detail {

// A region this node exposed: peers write it with put messages this node checks and applies,
// or, with one_sided_rma, with one-sided puts through the registration `memh` (exactly
// `memory`) whose packed remote key is `key`.
struct LocalRegion {
    std::span<std::byte> memory;
    afd::Doorbell bell;
    ucp_mem* memh = nullptr;
    std::vector<std::byte> key;
};

// A put, ring or flush; queued when it arrived while an earlier put of the same peer was still landing:
// applied, in order, once it has (the data before the flag; docs/multi-node.md).
struct Deferred {
    wire::Kind kind = wire::Kind::put;
    std::uint32_t region = 0;
    std::uint64_t offset = 0;
    bool rings = false;           // a put that rings the region's doorbell once applied
    std::vector<std::byte> bytes; // an eager put's bytes, copied
    void* descriptor = nullptr;   // a rendezvous put's descriptor, received when its turn comes
    std::uint64_t length = 0;     // a rendezvous put's length
    std::uint64_t sequence = 0;   // a flush's
};

// Private bounds on what a peer can make this node hold for it.
inline constexpr std::size_t k_max_deferred = 4096;
inline constexpr std::size_t k_max_deferred_bytes = std::size_t{64} << 20;

// One peer's writes not yet applied, in the order it sent them.
struct WriteQueue {
    unsigned landing = 0; // rendezvous puts being received
    std::deque<Deferred> deferred;
    std::size_t deferred_bytes = 0;
};

// A write's header after its Frame, for a payload of `length` bytes; nullopt when malformed (a
// body of the wrong size, a ring or flush with a payload, another kind).
[[nodiscard]] inline std::optional<Deferred>
decode_write(wire::Kind kind, std::span<const std::byte> body, std::size_t length) {
    Deferred w;
    w.kind = kind;
    if (kind == wire::Kind::put) {
        const auto p = wire::read<wire::Put>(body, 0);
        if (!p || body.size() != sizeof(wire::Put) || (p->flags & ~wire::k_put_rings) != 0) {
            return std::nullopt;
        }
        w.region = p->region;
        w.offset = p->offset;
        w.rings = p->flags == wire::k_put_rings;
    } else if (kind == wire::Kind::ring) {
        const auto r = wire::read<wire::Ring>(body, 0);
        if (!r || body.size() != sizeof(wire::Ring) || length != 0) {
            return std::nullopt;
        }
        w.region = r->region;
    } else if (kind == wire::Kind::flush) {
        const auto f = wire::read<wire::Flush>(body, 0);
        if (!f || body.size() != sizeof(wire::Flush) || length != 0) {
            return std::nullopt;
        }
        w.sequence = f->sequence;
    } else {
        return std::nullopt;
    }
    return w;
}

// A region this node exposed, and offset + length inside it (no overflow: the offset is
// checked against the size first). nullptr when the write may go ahead, else why not.
[[nodiscard]] inline const char* check_write(std::span<const LocalRegion> regions,
                                             const Deferred& w, std::size_t length) {
    if (w.kind == wire::Kind::flush) {
        return nullptr;
    }
    if (w.region >= regions.size()) {
        return "write to a region that is not exposed";
    }
    const auto size = regions[w.region].memory.size();
    if (w.offset > size || length > size - w.offset) {
        return "write outside its region";
    }
    return nullptr;
}

// Whether the peer's queue may take one more write of `length` bytes: nullptr, or why not. A
// rendezvous put holds a descriptor, not bytes; an eager one that applies at once (nothing ahead
// of it) is never held.
[[nodiscard]] inline const char* admit_write(const WriteQueue& q, std::size_t length,
                                             bool rendezvous) {
    if (q.deferred.size() >= k_max_deferred) {
        return "too many writes waiting for an earlier one";
    }
    const bool behind = q.landing > 0 || !q.deferred.empty();
    if (!rendezvous && behind && q.deferred_bytes + length > k_max_deferred_bytes) {
        return "too many bytes waiting for an earlier write";
    }
    return nullptr;
}

// Queues a checked, admitted write: an eager put's bytes are copied (`data`, `length`), a
// rendezvous put keeps UCX's descriptor until its turn.
inline void enqueue_write(WriteQueue& q, Deferred w, const void* data, std::size_t length,
                          bool rendezvous) {
    if (rendezvous) {
        w.descriptor = const_cast<void*>(data);
        w.length = length;
    } else if (w.kind == wire::Kind::put && length > 0) {
        const auto* p = static_cast<const std::byte*>(data);
        w.bytes.assign(p, p + length);
        q.deferred_bytes += length;
    }
    q.deferred.push_back(std::move(w));
}

// Applies the queue in order until a put is still landing, the queue is empty, or `apply`
// (called with each write, which may start a landing) answers false.
template <typename Apply>
void drain_writes(WriteQueue& q, Apply&& apply) {
    while (q.landing == 0 && !q.deferred.empty()) {
        auto w = std::move(q.deferred.front());
        q.deferred.pop_front();
        q.deferred_bytes -= w.bytes.size();
        if (!apply(w)) {
            return;
        }
    }
}

// Writes a put's bytes. An aligned 4- or 8-byte put — a window's flag (afd::Window::publish) —
// is one release store, which a reader's acquire load of the flag pairs with: what this thread
// wrote before (the data) is visible to a reader that sees the flag. An empty put (a peer may
// send one; Node::put never does) writes nothing: its bytes have no address to copy from.
inline void store(std::span<std::byte> into, std::span<const std::byte> bytes) {
    if (bytes.empty()) {
        return;
    }
    const auto at = reinterpret_cast<std::uintptr_t>(into.data());
    if (bytes.size() == 4 && at % 4 == 0) {
        std::uint32_t v = 0;
        std::memcpy(&v, bytes.data(), 4);
        std::atomic_ref(*reinterpret_cast<std::uint32_t*>(into.data()))
            .store(v, std::memory_order_release);
    } else if (bytes.size() == 8 && at % 8 == 0) {
        std::uint64_t v = 0;
        std::memcpy(&v, bytes.data(), 8);
        std::atomic_ref(*reinterpret_cast<std::uint64_t*>(into.data()))
            .store(v, std::memory_order_release);
    } else {
        std::memcpy(into.data(), bytes.data(), bytes.size());
    }
}

} // namespace ferry::net::detail
