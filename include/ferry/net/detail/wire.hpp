#pragma once
// The messages ferry/net's nodes exchange, as UCX active messages (docs/multi-node.md,
// Connections). Every message's AM header starts with a Frame: a magic, a version, its kind
// (which is also its AM id) and the receiver's token for the connection. Fixed-size structs,
// copied with memcpy (never cast from the receive buffer, which may be unaligned), in the
// byte order of the host: ferry/net joins machines of one architecture.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

namespace ferry::net::detail::wire {

inline constexpr std::uint32_t k_magic = 0x46524e54; // "FRNT"
inline constexpr std::uint16_t k_version = 2;

// Doubles as the UCX AM id: small numbers keep UCX's handler table small. The handshake is not
// here: it runs on ferry's own TCP connection before any of these (handshake.hpp).
enum class Kind : std::uint16_t {
    heartbeat = 1, // either way, every NodeOptions::heartbeat
    service = 2,   // either way: a Service header, the service's header, the payload as data
    ring = 3,      // either way: ring the doorbell of one of the receiver's regions
    put = 4,       // either way: a Put header, the bytes to write as data
    flush = 5,     // either way: a Flush; answered by `flushed` once what came before is applied
    flushed = 6,   // the answer to a flush, with its sequence number
    bye = 7,       // the sender is closing normally: report the peer closed, not lost
};
inline constexpr Kind k_kinds[] = {Kind::heartbeat, Kind::service, Kind::ring, Kind::put,
                                   Kind::flush,     Kind::flushed, Kind::bye};

struct Frame {
    std::uint32_t magic = k_magic;
    std::uint16_t version = k_version;
    std::uint16_t kind = 0;
    // The token the receiver gave for this connection in the handshake: it names the
    // connection, and only a peer that proved the secret was told it.
    std::uint64_t token = 0;
};

// service: followed by `header_length` bytes of the service's own header.
struct Service {
    std::uint32_t service = 0;
    std::uint32_t header_length = 0;
};

struct Ring {
    std::uint32_t region = 0;
    std::uint32_t reserved = 0;
};

// put: write the message's data at `offset` in the receiver's region `region`; with
// k_put_rings in `flags`, then ring the region's doorbell (a flag and its ring in one message).
inline constexpr std::uint32_t k_put_rings = 1;
struct Put {
    std::uint32_t region = 0;
    std::uint32_t flags = 0; // 0 or k_put_rings
    std::uint64_t offset = 0;
};

// flush and flushed.
struct Flush {
    std::uint64_t sequence = 0;
};

static_assert(std::is_trivially_copyable_v<Frame> && sizeof(Frame) == 16);
static_assert(sizeof(Service) == 8 && sizeof(Put) == 16 && sizeof(Flush) == 8);

// The most regions a node exposes (its table travels in the handshake).
inline constexpr std::uint32_t k_max_regions = 256;

// Reads the bytes of a T at `at` in `bytes`; nullopt when they are not all there.
template <typename T>
[[nodiscard]] std::optional<T> read(std::span<const std::byte> bytes, std::size_t at) {
    if (at > bytes.size() || bytes.size() - at < sizeof(T)) {
        return std::nullopt;
    }
    T value;
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    return value;
}

template <typename T>
void append(std::vector<std::byte>& out, const T& value) {
    const auto* p = reinterpret_cast<const std::byte*>(&value);
    out.insert(out.end(), p, p + sizeof(T));
}

inline void append_bytes(std::vector<std::byte>& out, std::span<const std::byte> bytes) {
    out.insert(out.end(), bytes.begin(), bytes.end());
}

// The frame of a message, checked: nullopt when the magic, version or kind is wrong.
[[nodiscard]] inline std::optional<Frame> read_frame(std::span<const std::byte> header, Kind kind) {
    const auto frame = read<Frame>(header, 0);
    if (!frame || frame->magic != k_magic || frame->version != k_version ||
        frame->kind != static_cast<std::uint16_t>(kind)) {
        return std::nullopt;
    }
    return frame;
}

[[nodiscard]] inline Frame frame(Kind kind, std::uint64_t token) {
    Frame f;
    f.kind = static_cast<std::uint16_t>(kind);
    f.token = token;
    return f;
}

} // namespace ferry::net::detail::wire
