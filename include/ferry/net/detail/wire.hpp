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
inline constexpr std::uint16_t k_version = 1;

// Doubles as the UCX AM id: small numbers keep UCX's handler table small.
enum class Kind : std::uint16_t {
    hello = 1,     // client -> server: secret, client's regions, client's token
    hello_ack = 2, // server -> client: secret, server's regions, server's token
    heartbeat = 3, // either way, every NodeOptions::heartbeat
    service = 4,   // either way: a Service header, the service's header, the payload as data
    ring = 5,      // either way: ring the doorbell of one of the receiver's regions
};
inline constexpr Kind k_kinds[] = {Kind::hello, Kind::hello_ack, Kind::heartbeat, Kind::service,
                                   Kind::ring};

struct Frame {
    std::uint32_t magic = k_magic;
    std::uint16_t version = k_version;
    std::uint16_t kind = 0;
    // The token the receiver gave for this connection (0 in a hello, which is the first):
    // a message that names another connection's endpoint cannot pass for it without this.
    std::uint64_t token = 0;
};

// hello and hello_ack. Data: `secret_length` bytes of secret, then `region_count` Regions, each
// followed by its packed remote key.
struct Hello {
    std::uint64_t reply_token = 0; // put this in every Frame sent back on this connection
    std::uint32_t secret_length = 0;
    std::uint32_t region_count = 0;
};

struct Region {
    std::uint32_t id = 0;
    std::uint32_t rkey_length = 0;
    std::uint64_t base = 0;
    std::uint64_t size = 0;
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

static_assert(std::is_trivially_copyable_v<Frame> && sizeof(Frame) == 16);
static_assert(sizeof(Hello) == 16 && sizeof(Region) == 24 && sizeof(Service) == 8);

// Bounds a hello must respect: it travels eagerly, in one message.
inline constexpr std::uint32_t k_max_regions = 256;
inline constexpr std::uint32_t k_max_rkey = 4096;

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
