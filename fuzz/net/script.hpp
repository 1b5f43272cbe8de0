#pragma once
// The input of fuzz/net/messages.cpp: a sequence of records, each one message (or one event) from
// one of two peers, the authenticated one (it holds the secret; after the handshake its frames
// carry the token this node gave it) and an unauthenticated one (no secret, tokens of its own
// choosing). A record is
//
//   kind u8 | flags u8 | length u16 (little endian) | length bytes
//
// flags: bit 0 the authenticated peer, bit 1 a rendezvous payload (window writes), bits 4-7 a
// repeat count's exponent (a window or channel record applies 2^e times, e at most
// k_max_repeat_exponent), so that an input of a few records can reach the per-peer caps.
// make_seeds.py writes this format.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ferry::net::detail {}

namespace net_fuzz {

namespace nd = ferry::net::detail;

// Kinds travel modulo k_kind_count, so every byte names one.
enum class Kind : std::uint8_t {
    server_bytes = 0,  // raw bytes into the listening side's framer
    server_turn = 1,   // the next handshake message a client peer builds for the listening side
    client_turn = 2,   // a Challenge the connecting side gets (bytes: the listener's identity)
    answer_info = 3,   // an Info the connecting side reads as the listener's answer
    window_write = 4,  // a put, ring or flush header and payload to the window's owner
    window_land = 5,   // the oldest rendezvous put lands
    channel = 6,       // a channel message (ChannelWire header, payload) to a receiver
    channel_local = 7, // the receiver's own side: take, give back, stop, peer lost
    reconnect = 8,     // the connection is lost and the peer connects again
};
inline constexpr std::uint8_t k_kind_count = 9;
inline constexpr unsigned k_max_repeat_exponent = 12;
inline constexpr std::size_t k_max_steps = std::size_t{1} << 13; // per input: past every cap

struct Record {
    Kind kind = Kind::server_bytes;
    bool authenticated = false;
    bool rendezvous = false;
    std::size_t repeat = 1;
    std::span<const std::byte> bytes;
};

// The next record at the front of `input`, consumed; nullopt when no whole record is left.
[[nodiscard]] inline std::optional<Record> next_record(std::span<const std::byte>& input) {
    if (input.size() < 4) {
        return std::nullopt;
    }
    const auto u8 = [&](std::size_t i) { return std::to_integer<unsigned>(input[i]); };
    Record r;
    r.kind = static_cast<Kind>(u8(0) % k_kind_count);
    r.authenticated = (u8(1) & 1U) != 0;
    r.rendezvous = (u8(1) & 2U) != 0;
    const unsigned exponent = u8(1) >> 4U;
    // Repeats serve the per-peer caps of windows and channels; a handshake message costs HMACs
    // and grows nothing, so it applies once.
    const bool repeats = r.kind >= Kind::window_write && r.kind <= Kind::channel_local;
    r.repeat = repeats ? std::size_t{1} << std::min(exponent, k_max_repeat_exponent) : 1;
    const std::size_t length = u8(2) | (u8(3) << 8U);
    input = input.subspan(4);
    const std::size_t taken = length < input.size() ? length : input.size();
    r.bytes = input.first(taken);
    input = input.subspan(taken);
    return r;
}

// The trap every broken property ends in: libFuzzer records the input.
inline void require(bool ok) {
    if (!ok) {
        __builtin_trap();
    }
}

} // namespace net_fuzz
