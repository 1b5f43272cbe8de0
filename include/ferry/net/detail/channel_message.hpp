#pragma once
// The wire format of ferry/net's remote channels (docs/multi-node-channels.md, Wire messages):
// the 40-byte ChannelWire header every channel message starts with, and its decoder. Pure: no
// Node, no UCX — channel_wire.hpp routes decoded messages to endpoints, and the fuzzer (fuzz/net)
// feeds the decoder directly.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace ferry::net::detail {

// FNV-1a, 32 bits: a channel's name hashed into the id senders address their OPEN to.
[[nodiscard]] constexpr std::uint32_t fnv1a32(std::string_view text) noexcept {
    std::uint32_t h = 2166136261U;
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619U;
    }
    return h;
}

inline constexpr std::uint32_t k_channel_service = fnv1a32("ferry.net.channel");
inline constexpr std::uint32_t k_wire_magic = 0x464e4348U; // "FNCH"
inline constexpr std::size_t k_max_name_bytes = 255;

enum class WireKind : std::uint16_t {
    open = 1,  // sender -> receiver: to = name hash, a = element bytes, b = flavor; payload: name
    accept,    // receiver -> sender: a = initial credits, b = capacity, c = element bytes
    refuse,    // receiver -> sender: a = the Status the sender's open answers
    data,      // sender -> receiver: a = messages carried (1, or up to max_batch for a
               // typed channel's send_n); payload = their bytes back to back; one credit each
    credit,    // receiver -> sender: a = credits granted
    want,      // sender -> receiver: the sender has no credit left and wants some
    recall,    // receiver -> sender: give back the credits above a = keep
    give_back, // sender -> receiver: a = credits returned unused
    stop,      // either way: the channel is stopped (the receiver answers a sender's STOP)
    close,     // sender -> receiver: the sender leaves; a = credits it returns unused;
               // receiver -> sender: the CLOSE was taken
};
inline constexpr std::uint16_t k_last_kind = static_cast<std::uint16_t>(WireKind::close);

// A typed channel's send_n packs several messages into one DATA, up to this many bytes (at
// least one message): one UCX send, one system call over tcp, instead of one per message
// (docs/performance/net.md, Channel rate). Both ends derive the limit from the element size;
// the receiver refuses a DATA carrying more.
inline constexpr std::size_t k_max_batch_bytes = 4096;
[[nodiscard]] constexpr std::size_t max_batch(std::size_t element_bytes) noexcept {
    return element_bytes == 0 || element_bytes >= k_max_batch_bytes
               ? 1
               : k_max_batch_bytes / element_bytes;
}

// What a channel carries: both ends must agree (an OPEN for the other flavor is refused).
enum class Flavor : std::uint16_t { typed = 1, message = 2 };

// Host byte order: both ends run the same build on the same architecture.
struct ChannelWire {
    std::uint32_t magic = k_wire_magic;
    std::uint16_t kind = 0;
    std::uint16_t reserved = 0;
    std::uint32_t to = 0;   // endpoint id on the destination node (the name hash for open)
    std::uint32_t from = 0; // endpoint id on the sending node
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::uint64_t c = 0;
};
static_assert(sizeof(ChannelWire) == 40);

[[nodiscard]] inline ChannelWire make_wire(WireKind kind, std::uint32_t to, std::uint32_t from,
                                           std::uint64_t a = 0, std::uint64_t b = 0,
                                           std::uint64_t c = 0) noexcept {
    ChannelWire w;
    w.kind = static_cast<std::uint16_t>(kind);
    w.to = to;
    w.from = from;
    w.a = a;
    w.b = b;
    w.c = c;
    return w;
}

[[nodiscard]] inline std::span<const std::byte> bytes_of(const ChannelWire& w) noexcept {
    return std::as_bytes(std::span(&w, 1));
}

// A message to post once the lock that decided it is released: handlers and channel calls
// never call into the Node while holding a channel's mutex (the Node runs handlers with its
// worker held, so the other order would deadlock). `peer` is a net::PeerId.
struct Outgoing {
    std::uint32_t peer = 0;
    ChannelWire wire;
};

// A channel message's header, checked: its size, magic and kind. nullptr and `out` filled, or
// why the message is refused.
[[nodiscard]] inline const char* decode_channel_wire(std::span<const std::byte> header,
                                                     ChannelWire& out) noexcept {
    if (header.size() != sizeof out) {
        return "ferry.net.channel: header of the wrong size";
    }
    std::memcpy(&out, header.data(), sizeof out);
    if (out.magic != k_wire_magic || out.kind == 0 || out.kind > k_last_kind) {
        return "ferry.net.channel: not a channel message";
    }
    return nullptr;
}

} // namespace ferry::net::detail
