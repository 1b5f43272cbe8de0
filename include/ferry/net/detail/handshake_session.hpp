#pragma once
// The handshake's state on either side, fed one message body at a time (handshake.hpp has the
// messages), and the Framer that cuts a byte stream into length-prefixed bodies without ever
// reading past the current one or buffering more than the stage's cap. Pure, like handshake.hpp:
// the fuzzer drives these directly (docs/security.md).

#include <ferry/net/detail/handshake.hpp>

namespace ferry::net::detail::handshake {

// Collects one length-prefixed message. want() is how many bytes to read next (never past the
// message); give() takes them. A length above `cap` is an error before any of it is read.
class Framer {
public:
    explicit Framer(std::size_t cap) : cap_(cap) {}
    void reset(std::size_t cap) {
        cap_ = cap;
        prefix_filled_ = 0;
        body_.clear();
        length_ = 0;
    }
    [[nodiscard]] std::size_t want() const noexcept {
        return prefix_filled_ < sizeof length_ ? sizeof length_ - prefix_filled_
                                               : length_ - body_.size();
    }
    // False when the announced length is over the cap.
    [[nodiscard]] bool give(std::span<const std::byte> bytes) {
        if (prefix_filled_ < sizeof length_) {
            const auto n = std::min(bytes.size(), sizeof length_ - prefix_filled_);
            std::memcpy(prefix_ + prefix_filled_, bytes.data(), n);
            prefix_filled_ += n;
            bytes = bytes.subspan(n);
            if (prefix_filled_ == sizeof length_) {
                std::memcpy(&length_, prefix_, sizeof length_);
                if (length_ > cap_) {
                    return false;
                }
                body_.reserve(length_);
            }
        }
        wire::append_bytes(body_, bytes.first(std::min(bytes.size(), want())));
        return true;
    }
    [[nodiscard]] bool complete() const noexcept {
        return prefix_filled_ == sizeof length_ && body_.size() == length_;
    }
    [[nodiscard]] std::span<const std::byte> body() const noexcept { return body_; }

private:
    std::size_t cap_;
    std::byte prefix_[sizeof(std::uint32_t)] = {};
    std::size_t prefix_filled_ = 0;
    std::uint32_t length_ = 0;
    std::vector<std::byte> body_;
};

// What a step of the server's side produced: a refusal, or bytes to send back, and (once the
// client proved) the client's Info for the node to act on.
struct ServerStep {
    const char* refusal = nullptr;
    std::vector<std::byte> reply;
    std::optional<Info> client;
    bool done = false; // the client's Ready: the connection's work is over
};

// The listening side of one connection: Hello, then Proof (answered by the node with its own
// Info through answer()), then Ready.
class ServerSession {
public:
    enum class Stage { hello, proof, answer, ready, done };

    ServerSession(const Secret& secret, const Identity& id) : secret_(&secret), id_(id) {}

    [[nodiscard]] Stage stage() const noexcept { return stage_; }
    // The most bytes the next message may have.
    [[nodiscard]] std::size_t cap() const noexcept {
        switch (stage_) {
        case Stage::hello:
            return sizeof(Hello);
        case Stage::proof:
            return k_max_proof;
        case Stage::ready:
            return sizeof(k_ready_magic);
        default:
            return 0;
        }
    }

    [[nodiscard]] ServerStep take(std::span<const std::byte> body) {
        ServerStep step;
        if (stage_ == Stage::hello) {
            const auto hello = decode_hello(body);
            if (!hello) {
                step.refusal = "malformed hello";
                return step;
            }
            if (hello->id == id_) {
                // This node's own identity: a relay is turning this node's connection to some
                // listener back onto itself (docs/security.md, The handshake).
                step.refusal = "reflected handshake";
                return step;
            }
            hello_ = *hello;
            Challenge c;
            if (!random_bytes(c.nonce)) {
                step.refusal = "no random bytes for a nonce";
                return step;
            }
            nonce_ = c.nonce;
            c.id = id_;
            c.proof = prove(*secret_, Role::server, hello_, nonce_, id_);
            step.reply = message_of(c);
            stage_ = Stage::proof;
        } else if (stage_ == Stage::proof) {
            take_proof(body, step);
        } else if (stage_ == Stage::ready) {
            const auto magic = decode_fixed<std::uint32_t>(body);
            if (!magic || *magic != k_ready_magic) {
                step.refusal = "malformed ready";
                return step;
            }
            stage_ = Stage::done;
            step.done = true;
        } else {
            step.refusal = "message out of turn";
        }
        return step;
    }

    // The node's Info for the client that proved; bytes to send.
    [[nodiscard]] std::vector<std::byte> answer(const Info& mine) {
        std::vector<std::byte> body;
        encode_info(body, mine);
        stage_ = Stage::ready;
        return message(body);
    }

private:
    void take_proof(std::span<const std::byte> body, ServerStep& step) {
        const auto split = split_proof(body);
        if (!split) {
            step.refusal = "malformed proof";
            return;
        }
        // The proof first: nothing the client sent is looked at before it checks out.
        if (!same(split->first, prove(*secret_, Role::client, hello_, nonce_, id_))) {
            step.refusal = "wrong secret";
            return;
        }
        auto info = decode_info(split->second);
        if (!info) {
            step.refusal = "malformed info";
            return;
        }
        step.client = std::move(*info);
        stage_ = Stage::answer;
    }

    const Secret* secret_;
    Identity id_;
    Stage stage_ = Stage::hello;
    Hello hello_{};
    Nonce nonce_{};
};

// The connecting side: makes the Hello, checks the Challenge and makes its Proof.
class ClientSession {
public:
    ClientSession(const Secret& secret, const Identity& id) : secret_(&secret) { hello_.id = id; }

    // The Hello to send; empty when no random bytes could be had.
    [[nodiscard]] std::vector<std::byte> hello() {
        if (!random_bytes(hello_.nonce)) {
            return {};
        }
        return message_of(hello_);
    }
    // Checks the server's Challenge; the Proof message with `mine` when the server proved, else
    // the reason in `refusal` and nothing.
    [[nodiscard]] std::vector<std::byte> respond(std::span<const std::byte> body, const Info& mine,
                                                 const char*& refusal) {
        const auto c = decode_fixed<Challenge>(body);
        if (!c) {
            refusal = "malformed challenge";
            return {};
        }
        if (c->id == hello_.id) {
            refusal = "reflected handshake";
            return {};
        }
        if (!same(c->proof, prove(*secret_, Role::server, hello_, c->nonce, c->id))) {
            refusal = "the listener did not prove the secret";
            return {};
        }
        return encode_proof(prove(*secret_, Role::client, hello_, c->nonce, c->id), mine);
    }

private:
    const Secret* secret_;
    Hello hello_{};
};

} // namespace ferry::net::detail::handshake
