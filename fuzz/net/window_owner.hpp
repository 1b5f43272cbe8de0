#pragma once
// fuzz/net: the owner of two exposed regions taking put, ring and flush messages
// (detail/window_writes.hpp) as Node::Impl::on_write does — the frame and its token first (only
// the authenticated peer was told the token), then decode, check, admit, queue, apply in order —
// with a fake UCX: a rendezvous put "lands" when the input says so.
//
// The regions lie in one arena between guard zones. Properties, after every message: the guards
// are intact (no write outside an exposed region, neither an eager put nor a landing), a message
// without the right token changes nothing, writes are applied in the order they were queued and
// nothing overtakes a put still landing, and the peer's queue stays within its caps.

#include "script.hpp"

#include <algorithm>
#include <array>
#include <deque>
#include <ferry/net/detail/handshake.hpp>
#include <ferry/net/detail/window_writes.hpp>
#include <vector>

namespace net_fuzz {

class WindowOwner {
public:
    WindowOwner() {
        arena_.fill(k_guard);
        std::size_t at = k_guard_bytes;
        for (const std::size_t size : k_sizes) {
            std::fill_n(arena_.begin() + static_cast<std::ptrdiff_t>(at), size, std::byte{0});
            regions_.push_back({std::span(arena_).subspan(at, size), {}});
            at += size + k_guard_bytes;
        }
        reconnect();
    }

    // One write message. `bytes`: which kind (a byte), the header body's length (a byte), the
    // header body, then the payload. The authenticated peer frames it with its token; the other
    // with a token of its own (or, with the top bit of the kind byte, the bytes are the whole
    // header, frame included).
    void write(bool authenticated, bool rendezvous, std::span<const std::byte> bytes) {
        if (bytes.size() < 2) {
            return;
        }
        const auto which = std::to_integer<unsigned>(bytes[0]);
        const std::size_t body_length =
            std::min<std::size_t>(std::to_integer<unsigned>(bytes[1]), bytes.size() - 2);
        const auto body = bytes.subspan(2, body_length);
        const auto payload = bytes.subspan(2 + body_length);
        std::vector<std::byte> header;
        if (which >= 0x80) {
            wire::append_bytes(header, body);
        } else {
            constexpr wire::Kind k_write_kinds[] = {wire::Kind::put, wire::Kind::ring,
                                                    wire::Kind::flush, wire::Kind::heartbeat};
            const auto kind = k_write_kinds[which % 4];
            wire::append(header, wire::frame(kind, authenticated ? token_ : token_ ^ (which + 1)));
            wire::append_bytes(header, body);
        }
        const auto before = arena_;
        const auto queued = queue_.deferred.size();
        const bool took = on_write(header, payload, rendezvous);
        require(took || (arena_ == before && queue_.deferred.size() == queued));
        require(!took || authenticated || which >= 0x80); // a forged token is never taken
        check();
    }

    // The oldest rendezvous put lands: UCX writes its bytes where the owner checked they fit.
    void land() {
        if (landings_.empty()) {
            return;
        }
        const Landing l = landings_.front();
        landings_.pop_front();
        const auto& memory = regions_.at(l.region).memory;
        require(l.offset <= memory.size() && l.length <= memory.size() - l.offset);
        std::memset(memory.data() + l.offset, 0xa5, l.length);
        if (l.connection == connection_) {
            --queue_.landing;
            drain();
        }
        check();
    }

    // The connection is lost (what a refusal does): its queue goes, as in Node::Impl::lose; a put
    // already landing still lands. The peer connects again with a new token.
    void reconnect() {
        queue_ = {};
        expected_.clear();
        ++connection_;
        static_cast<void>(hs::random_bytes(std::as_writable_bytes(std::span(&token_, 1))));
    }

private:
    static constexpr std::size_t k_guard_bytes = 64;
    static constexpr std::array<std::size_t, 2> k_sizes = {256, 200};
    static constexpr std::byte k_guard{0xee};
    static constexpr std::size_t k_arena_bytes = 3 * k_guard_bytes + 256 + 200;

    struct Landing {
        std::uint32_t region;
        std::uint64_t offset;
        std::uint64_t length;
        std::uint64_t connection;
    };

    // Node::Impl::on_write, identify and take_write; false when the message was dropped or
    // refused (a refusal loses the connection).
    bool on_write(std::span<const std::byte> header, std::span<const std::byte> payload,
                  bool rendezvous) {
        const auto frame = wire::read<wire::Frame>(header, 0);
        const auto kind = frame ? static_cast<wire::Kind>(frame->kind) : wire::Kind::put;
        if (kind != wire::Kind::put && kind != wire::Kind::ring && kind != wire::Kind::flush) {
            return false;
        }
        const auto checked = wire::read_frame(header, kind);
        if (!checked || checked->token != token_) {
            return false; // an unknown token: refused, no connection touched
        }
        auto w = nd::decode_write(kind, header.subspan(sizeof(wire::Frame)), payload.size());
        const char* why = w ? nd::check_write(regions_, *w, payload.size()) : "malformed write";
        if (why == nullptr) {
            why = nd::admit_write(queue_, payload.size(), rendezvous);
        }
        if (why != nullptr) {
            reconnect();
            return true; // the connection changed: its queue went
        }
        expected_.push_back({w->kind, w->region, w->offset});
        nd::enqueue_write(queue_, std::move(*w), payload.data(), payload.size(), rendezvous);
        drain();
        return true;
    }

    void drain() {
        nd::drain_writes(queue_, [&](nd::Deferred& w) {
            apply(w);
            return true;
        });
    }

    // Node::Impl::apply with a fake UCX; checks the order first.
    void apply(nd::Deferred& w) {
        require(!expected_.empty() && queue_.landing == 0);
        const auto e = expected_.front();
        expected_.pop_front();
        require(e.kind == w.kind && e.region == w.region && e.offset == w.offset);
        if (w.kind != wire::Kind::put) {
            return; // a ring or a flush: nothing written
        }
        const auto& memory = regions_.at(w.region).memory;
        if (w.descriptor != nullptr) {
            ++queue_.landing;
            landings_.push_back({w.region, w.offset, w.length, connection_});
            return;
        }
        nd::store(std::span(memory.data() + w.offset, w.bytes.size()), w.bytes);
    }

    void check() const {
        require(queue_.deferred.size() <= nd::k_max_deferred &&
                queue_.deferred_bytes <= nd::k_max_deferred_bytes && queue_.landing <= 1);
        std::size_t at = 0;
        for (const std::size_t size : k_sizes) {
            require(std::all_of(arena_.begin() + static_cast<std::ptrdiff_t>(at),
                                arena_.begin() + static_cast<std::ptrdiff_t>(at + k_guard_bytes),
                                [](std::byte b) { return b == k_guard; }));
            at += k_guard_bytes + size;
        }
        require(std::all_of(arena_.end() - k_guard_bytes, arena_.end(),
                            [](std::byte b) { return b == k_guard; }));
    }

    struct Expected {
        wire::Kind kind;
        std::uint32_t region;
        std::uint64_t offset;
    };

    alignas(64) std::array<std::byte, k_arena_bytes> arena_{};
    std::vector<nd::LocalRegion> regions_;
    nd::WriteQueue queue_;
    std::deque<Expected> expected_;
    std::deque<Landing> landings_;
    std::uint64_t connection_ = 0;
    std::uint64_t token_ = 0;
};

} // namespace net_fuzz
