#pragma once
// The bootstrap handshake's messages and proofs (docs/security.md, The handshake). Pure: no
// sockets, no UCX — bootstrap.hpp moves the bytes, node_handshake.hpp acts on the results, and
// the fuzzer (fuzz/net) feeds the decoders directly.
//
// Over ferry's own TCP connection, every message is a 4-byte length (host order) and that many
// bytes; each stage has a private cap on the length, checked before anything is buffered.
//
//   client -> server  Hello      magic, version, client nonce, client identity       (fixed)
//   server -> client  Challenge  server nonce, server identity, server proof          (fixed)
//   client -> server  Proof      client proof, then the client's Info
//   server -> client  Info       the server's Info
//   client -> server  Ready      magic                                                 (fixed)
//
// A proof is HMAC-SHA256 under the shared secret of a label naming the prover's role, both
// nonces and both identities: a proof recorded on one connection is worthless on any other (the
// other side's nonce is fresh), and the secret never travels. The server proves first, so a
// client reveals its Info only to a listener that holds the secret; the server checks the
// client's proof before it looks at the client's Info or reveals its own.

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/net/detail/wire.hpp>
#include <ferry/net/secret.hpp>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ferry::net::detail::handshake {

inline constexpr std::uint32_t k_magic = 0x46524248; // "FRBH"
inline constexpr std::uint16_t k_version = 1;
inline constexpr std::uint32_t k_ready_magic = 0x52454459;
inline constexpr std::size_t k_nonce_bytes = 32;
inline constexpr std::size_t k_id_bytes = 16;
inline constexpr std::size_t k_mac_bytes = 32; // SHA-256
// A UCX 1.13 worker address over tcp, shm and an RDMA NIC or two is a few hundred bytes.
inline constexpr std::uint32_t k_max_worker_address = 4096;

using Nonce = std::array<std::byte, k_nonce_bytes>;
using Identity = std::array<std::byte, k_id_bytes>;
using Mac = std::array<std::byte, k_mac_bytes>;

struct Hello {
    std::uint32_t magic = k_magic;
    std::uint16_t version = k_version;
    std::uint16_t reserved = 0;
    Nonce nonce{};
    Identity id{};
};

struct Challenge {
    Nonce nonce{};
    Identity id{};
    Mac proof{};
};

// What a side tells the other once the other proved the secret: the token to put in every frame
// sent to it, its UCX worker address, and its exposed regions (owner addresses). A region exposed
// for one-sided RMA (NodeOptions::one_sided_rma) carries its packed UCX remote key: key_length
// bytes, the keys of all regions following the entries in region order. A region without a key
// is written only by checked put messages.
struct InfoHead {
    std::uint64_t token = 0;
    std::uint32_t address_length = 0;
    std::uint32_t region_count = 0;
};
struct RegionEntry {
    std::uint32_t id = 0;
    std::uint32_t key_length = 0; // 0: no remote key
    std::uint64_t base = 0;
    std::uint64_t size = 0;
};

struct Info {
    std::uint64_t token = 0;
    std::vector<std::byte> worker_address;
    std::vector<RegionEntry> regions;
    std::vector<std::vector<std::byte>> keys; // one per region, empty for none
};

static_assert(sizeof(Hello) == 56 && sizeof(Challenge) == 80);
static_assert(sizeof(InfoHead) == 16 && sizeof(RegionEntry) == 24);

// A UCX 1.13 remote key packed for tcp, shm and a verbs device or two is tens of bytes; these
// bound what a peer can make this side read and unpack.
inline constexpr std::uint32_t k_max_key = 1024;
inline constexpr std::size_t k_max_keys = 16384; // all regions' keys together

inline constexpr std::size_t k_max_info = sizeof(InfoHead) + k_max_worker_address +
                                          wire::k_max_regions * sizeof(RegionEntry) + k_max_keys;
inline constexpr std::size_t k_max_proof = k_mac_bytes + k_max_info;
inline constexpr std::size_t k_max_message = k_max_proof;

// Random bytes from OpenSSL's generator; false when it cannot give them.
[[nodiscard]] inline bool random_bytes(std::span<std::byte> out) noexcept {
    return RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(out.size())) ==
           1;
}

enum class Role : std::uint8_t { client, server };

// The proof `role` gives: HMAC-SHA256(secret, label(role) | client nonce | server nonce |
// client id | server id).
[[nodiscard]] inline Mac prove(const Secret& secret, Role role, const Hello& hello,
                               const Nonce& server_nonce, const Identity& server_id) {
    const std::string_view label = role == Role::client ? "ferry-net/1 client proof"
                                                        : "ferry-net/1 server proof";
    std::vector<std::byte> transcript;
    wire::append_bytes(transcript, std::as_bytes(std::span(label.data(), label.size())));
    wire::append_bytes(transcript, hello.nonce);
    wire::append_bytes(transcript, server_nonce);
    wire::append_bytes(transcript, hello.id);
    wire::append_bytes(transcript, server_id);
    Mac mac{};
    unsigned int length = 0;
    const auto key = secret.bytes();
    const auto* ok = HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
                          reinterpret_cast<const unsigned char*>(transcript.data()),
                          transcript.size(), reinterpret_cast<unsigned char*>(mac.data()), &length);
    if (ok == nullptr || length != k_mac_bytes) {
        RAND_bytes(reinterpret_cast<unsigned char*>(mac.data()), static_cast<int>(mac.size()));
    }
    return mac;
}

// Constant time in the bytes compared.
[[nodiscard]] inline bool same(const Mac& a, const Mac& b) noexcept {
    return CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// A length-prefixed message.
[[nodiscard]] inline std::vector<std::byte> message(std::span<const std::byte> body) {
    std::vector<std::byte> out;
    wire::append(out, static_cast<std::uint32_t>(body.size()));
    wire::append_bytes(out, body);
    return out;
}

template <typename T>
[[nodiscard]] std::vector<std::byte> message_of(const T& value) {
    return message(std::as_bytes(std::span(&value, 1)));
}

// A fixed-size message's body; nullopt when the length is not exactly the struct's.
template <typename T>
[[nodiscard]] std::optional<T> decode_fixed(std::span<const std::byte> body) {
    if (body.size() != sizeof(T)) {
        return std::nullopt;
    }
    return wire::read<T>(body, 0);
}

[[nodiscard]] inline std::optional<Hello> decode_hello(std::span<const std::byte> body) {
    auto hello = decode_fixed<Hello>(body);
    if (!hello || hello->magic != k_magic || hello->version != k_version) {
        return std::nullopt;
    }
    return hello;
}

inline void encode_info(std::vector<std::byte>& out, const Info& info) {
    InfoHead head;
    head.token = info.token;
    head.address_length = static_cast<std::uint32_t>(info.worker_address.size());
    head.region_count = static_cast<std::uint32_t>(info.regions.size());
    wire::append(out, head);
    wire::append_bytes(out, info.worker_address);
    for (std::size_t i = 0; i < info.regions.size(); ++i) {
        RegionEntry r = info.regions[i];
        r.key_length = i < info.keys.size() ? static_cast<std::uint32_t>(info.keys[i].size()) : 0;
        wire::append(out, r);
    }
    for (const auto& key : info.keys) {
        wire::append_bytes(out, key);
    }
}

// Every field checked: a non-zero token, a worker address of 1..k_max_worker_address bytes, at
// most k_max_regions regions numbered 0, 1, ... whose ends do not wrap, keys of at most
// k_max_key bytes each and k_max_keys together, nothing after them.
[[nodiscard]] inline std::optional<Info> decode_info(std::span<const std::byte> body) {
    const auto head = wire::read<InfoHead>(body, 0);
    if (!head || head->token == 0 || head->address_length == 0 ||
        head->address_length > k_max_worker_address || head->region_count > wire::k_max_regions) {
        return std::nullopt;
    }
    const std::size_t entries = sizeof(InfoHead) + std::size_t{head->address_length};
    const std::size_t keys_at = entries + std::size_t{head->region_count} * sizeof(RegionEntry);
    if (body.size() < keys_at || body.size() - keys_at > k_max_keys) {
        return std::nullopt;
    }
    Info info;
    info.token = head->token;
    const auto address = body.subspan(sizeof(InfoHead), head->address_length);
    info.worker_address.assign(address.begin(), address.end());
    std::size_t key_at = keys_at;
    for (std::uint32_t i = 0; i < head->region_count; ++i) {
        const auto r = wire::read<RegionEntry>(body, entries + i * sizeof(RegionEntry));
        if (!r || r->id != i || r->size == 0 || r->base + r->size < r->base ||
            r->key_length > k_max_key || body.size() - key_at < r->key_length) {
            return std::nullopt;
        }
        const auto key = body.subspan(key_at, r->key_length);
        key_at += r->key_length;
        info.regions.push_back(*r);
        info.keys.emplace_back(key.begin(), key.end());
    }
    if (key_at != body.size()) {
        return std::nullopt;
    }
    return info;
}

// The client's third message: its proof, then its Info.
[[nodiscard]] inline std::vector<std::byte> encode_proof(const Mac& proof, const Info& info) {
    std::vector<std::byte> body;
    wire::append_bytes(body, proof);
    encode_info(body, info);
    return message(body);
}

// Splits a Proof message's body; nullopt when too short for the proof.
[[nodiscard]] inline std::optional<std::pair<Mac, std::span<const std::byte>>>
split_proof(std::span<const std::byte> body) {
    if (body.size() < k_mac_bytes) {
        return std::nullopt;
    }
    Mac mac{};
    std::memcpy(mac.data(), body.data(), k_mac_bytes);
    return std::pair{mac, body.subspan(k_mac_bytes)};
}

} // namespace ferry::net::detail::handshake
