#pragma once
// fuzz/net: both roles of the bootstrap handshake (detail/handshake_session.hpp), driven as
// Node::Impl drives them, against a peer that holds the secret and one that does not.
//
// The listening side: a Framer and a ServerSession per connection, the Framer fed what the
// socket would give (never past the current message), a refusal or the Ready ending the
// connection (a new one takes its place). Its properties: the framer never holds more than the
// stage's cap; the session takes a client's Info only with a proof the authenticated peer made
// for this very session, and answers with this node's Info only then.
//
// The connecting side: a ClientSession per connection, answered by a Challenge. Its properties:
// it reveals its Proof and Info only to a listener that proved the secret, and what it reveals
// decodes to exactly its Info.

#include "script.hpp"

#include <ferry/net/detail/handshake_session.hpp>
#include <optional>
#include <vector>

namespace net_fuzz {

namespace hs = ferry::net::detail::handshake;
namespace wire = ferry::net::detail::wire;

// The secret both nodes hold, and another one.
struct Secrets {
    ferry::net::Secret right = ferry::net::Secret::from_bytes("ferry-fuzz-secret").value();
    ferry::net::Secret wrong = ferry::net::Secret::from_bytes("not-the-fuzz-secret").value();
    [[nodiscard]] const ferry::net::Secret& of(bool authenticated) const {
        return authenticated ? right : wrong;
    }
};

[[nodiscard]] inline hs::Identity identity_from(std::span<const std::byte> bytes, std::byte fill) {
    hs::Identity id{};
    id.fill(fill);
    std::memcpy(id.data(), bytes.data(), std::min(bytes.size(), id.size()));
    return id;
}

// What this node tells a peer that proved the secret: a made-up worker address, two regions.
[[nodiscard]] inline hs::Info node_info(std::uint64_t token) {
    hs::Info info;
    info.token = token;
    info.worker_address.assign(48, std::byte{0x5a});
    info.regions.push_back({0, 0, 0x10000, 256});
    info.regions.push_back({1, 0, 0x20000, 200});
    return info;
}

[[nodiscard]] inline std::vector<std::byte> encoded(const hs::Info& info) {
    std::vector<std::byte> out;
    hs::encode_info(out, info);
    return out;
}

class ListeningSide {
public:
    explicit ListeningSide(const Secrets& secrets) : secrets_(secrets) { restart(); }

    // Raw bytes from the socket: the unauthenticated peer's, whatever they hold.
    void stream(std::span<const std::byte> bytes) {
        while (!bytes.empty() && session_) {
            const std::size_t n = std::min(bytes.size(), framer_->want());
            if (!framer_->give(bytes.first(n))) {
                restart(); // over the stage's cap: the node closes the connection
                return;
            }
            bytes = bytes.subspan(n);
            require(framer_->body().size() <= session_->cap());
            if (framer_->complete()) {
                step();
            }
        }
    }

    // The next message a client builds from what it saw on the wire; with the secret when
    // `authenticated`. `bytes` give a Hello's nonce and identity, or a Proof's Info.
    void turn(bool authenticated, std::span<const std::byte> bytes) {
        std::vector<std::byte> body;
        if (session_->stage() == hs::ServerSession::Stage::hello) {
            hs::Hello hello;
            hello.id = identity_from(bytes, std::byte{0x11});
            hello.nonce = {};
            std::memcpy(hello.nonce.data(), bytes.data() + std::min<std::size_t>(bytes.size(), 16),
                        std::min<std::size_t>(bytes.size() > 16 ? bytes.size() - 16 : 0, 32));
            wire::append(body, hello);
        } else if (session_->stage() == hs::ServerSession::Stage::proof && challenge_) {
            const auto proof = hs::prove(secrets_.of(authenticated), hs::Role::client, *hello_,
                                         challenge_->nonce, challenge_->id);
            if (authenticated) {
                made_proof_ = proof;
            }
            wire::append_bytes(body, proof);
            wire::append_bytes(body, bytes);
        } else {
            wire::append(body, hs::k_ready_magic);
        }
        stream(hs::message(body));
    }

    void restart() {
        session_.emplace(secrets_.right, k_node_id);
        framer_.emplace(session_->cap());
        hello_.reset();
        challenge_.reset();
        made_proof_.reset();
        proved_ = false;
    }

private:
    static constexpr hs::Identity k_node_id = {std::byte{0x4e}};

    void step() {
        const auto stage = session_->stage();
        const auto body = framer_->body();
        auto step = session_->take(body);
        if (step.refusal != nullptr) {
            restart();
            return;
        }
        if (stage == hs::ServerSession::Stage::hello) {
            hello_ = hs::decode_hello(body);
            challenge_ = hs::decode_fixed<hs::Challenge>(std::span(step.reply).subspan(4));
            require(hello_ && challenge_ && challenge_->id == k_node_id);
            // The listener proves first: a client holding the secret can check it.
            require(hs::same(challenge_->proof, hs::prove(secrets_.right, hs::Role::server, *hello_,
                                                          challenge_->nonce, k_node_id)));
        }
        if (step.client) {
            // Only a proof the authenticated peer made for this session lets the Info in.
            require(made_proof_ && hs::same(*made_proof_, hs::split_proof(body)->first));
            require(step.client->regions.size() <= wire::k_max_regions &&
                    step.client->worker_address.size() <= hs::k_max_worker_address);
            const auto answer = session_->answer(node_info(0x5eed));
            require(answer == hs::message(encoded(node_info(0x5eed))));
            proved_ = true;
        }
        if (step.done) {
            require(proved_);
            restart();
            return;
        }
        framer_->reset(session_->cap());
    }

    const Secrets& secrets_;
    std::optional<hs::ServerSession> session_;
    std::optional<hs::Framer> framer_;
    std::optional<hs::Hello> hello_;
    std::optional<hs::Challenge> challenge_;
    std::optional<hs::Mac> made_proof_;
    bool proved_ = false;
};

// The connecting side gets a Challenge: built with the secret by the authenticated peer (its
// identity from `bytes`), else `bytes` as they are or proved with the wrong secret.
inline void connecting_side(const Secrets& secrets, bool authenticated,
                            std::span<const std::byte> bytes) {
    constexpr hs::Identity k_client_id = {std::byte{0xc1}};
    hs::ClientSession client(secrets.right, k_client_id);
    const auto hello_message = client.hello();
    const auto hello = hs::decode_hello(std::span(hello_message).subspan(4));
    require(hello.has_value());
    std::vector<std::byte> body(bytes.begin(), bytes.end());
    if (authenticated || bytes.size() <= sizeof(hs::Challenge)) {
        hs::Challenge c;
        c.id = identity_from(bytes, std::byte{0x22});
        std::memcpy(c.nonce.data(), bytes.data() + std::min<std::size_t>(bytes.size(), 16),
                    std::min<std::size_t>(bytes.size() > 16 ? bytes.size() - 16 : 0, 32));
        c.proof = hs::prove(secrets.of(authenticated), hs::Role::server, *hello, c.nonce, c.id);
        body.clear();
        wire::append(body, c);
    }
    const char* refusal = nullptr;
    const auto mine = node_info(0xc0ffee);
    const auto proof = client.respond(body, mine, refusal);
    require(proof.empty() == (refusal != nullptr));
    if (proof.empty()) {
        return;
    }
    // Revealed only to the listener that proved the secret; exactly the proof and the Info.
    require(authenticated);
    const auto c = *hs::decode_fixed<hs::Challenge>(body);
    const auto split = hs::split_proof(std::span(proof).subspan(4));
    require(split && hs::same(split->first,
                              hs::prove(secrets.right, hs::Role::client, *hello, c.nonce, c.id)));
    require(std::ranges::equal(split->second, encoded(mine)));
}

// The connecting side reads the listener's answer: decoded only when every field checks out,
// and then it encodes back to the same bytes.
inline void answer_info(std::span<const std::byte> bytes) {
    const auto info = hs::decode_info(bytes);
    if (info) {
        require(info->token != 0 && !info->worker_address.empty() &&
                info->worker_address.size() <= hs::k_max_worker_address &&
                info->regions.size() <= wire::k_max_regions);
        for (std::size_t i = 0; i < info->regions.size(); ++i) {
            const auto& r = info->regions[i];
            require(r.id == i && r.size != 0 && r.base + r.size > r.base); // no wrapping range
        }
        require(std::ranges::equal(encoded(*info), bytes));
    }
}

} // namespace net_fuzz
