#pragma once
// fuzz/net: a remote channel's receiver (detail/channel_ledger.hpp) taking channel messages from
// two peers as its Node and Directory route them — a header that does not decode, or a verdict
// against the message, disconnects the peer (its senders are lost) — and the receiving
// process's own calls: take, give back, a rendezvous landing or failing, stop.
//
// Properties, after every message: the credit ledger balances (free + outstanding + owed +
// queued + held == capacity), so do the slots, the sender table stays within its caps (overall
// and per peer), a taken message lies inside its slot, and every control message the receiver
// queues goes to one of the two peers.

#include "script.hpp"

#include <algorithm>
#include <deque>
#include <ferry/net/detail/channel_ledger.hpp>
#include <vector>

namespace net_fuzz {

class ChannelReceiver {
public:
    static constexpr std::string_view k_name = "fuzz.channel";
    static constexpr std::size_t k_capacity = 8;
    static constexpr std::size_t k_element_bytes = 64;
    static constexpr std::uint32_t k_id = 7;

    ChannelReceiver()
        : ledger_(std::string(k_name), nd::Flavor::message, k_element_bytes, k_capacity) {
        ledger_.set_id(k_id);
    }

    // A message from peer 1 (the authenticated flag) or 2: a ChannelWire header, then the
    // payload. `nth` of a repeated record shifts the sender id, so that repeats open new senders.
    void message(bool first_peer, bool rendezvous, std::span<const std::byte> bytes,
                 std::size_t nth) {
        const std::uint32_t peer = first_peer ? 1 : 2;
        const auto header = bytes.first(std::min(bytes.size(), sizeof(nd::ChannelWire)));
        const auto payload = bytes.subspan(header.size());
        nd::ChannelWire w;
        std::vector<nd::Outgoing> out;
        const char* verdict = nd::decode_channel_wire(header, w);
        w.from += static_cast<std::uint32_t>(nth);
        if (verdict == nullptr) {
            verdict = route(peer, w, rendezvous, payload, out);
        }
        if (verdict != nullptr) {
            ledger_.peer_lost(peer, out); // the Node disconnects the peer
        }
        check(out);
    }

    // The receiving process: bytes[0] picks take, give back, land, fail, stop or a peer's loss.
    void local(std::span<const std::byte> bytes) {
        std::vector<nd::Outgoing> out;
        const unsigned what = bytes.empty() ? 0 : std::to_integer<unsigned>(bytes[0]) % 6;
        if (what == 0) {
            nd::Taken t;
            if (ledger_.take(t, out) == ferry::Status::ok) {
                require(t.bytes.size() <= k_element_bytes);
                taken_.push_back(t);
            } else {
                ledger_.idle(out); // as a receive that found nothing, before it parks
            }
        } else if (what == 1 && !taken_.empty()) {
            ledger_.give_back(taken_.front(), out);
            taken_.pop_front();
        } else if ((what == 2 || what == 3) && !landing_.empty()) {
            const Landing& l = landing_.front();
            const std::vector<std::byte> staged(l.count > 1 ? l.length : 0, std::byte{0x5c});
            ledger_.landed(l.seq, l.count, what == 2, staged);
            landing_.pop_front();
        } else if (what == 4) {
            static_cast<void>(ledger_.stop(out));
        } else if (what == 5) {
            static_cast<void>(ledger_.peer_lost(bytes.size() > 1 ? 1 : 2, out));
        }
        check(out);
    }

private:
    // Directory::dispatch: an OPEN goes by the name's hash, the rest by endpoint id; a message
    // for an endpoint that is gone is dropped.
    const char* route(std::uint32_t peer, const nd::ChannelWire& w, bool rendezvous,
                      std::span<const std::byte> payload, std::vector<nd::Outgoing>& out) {
        const auto kind = static_cast<nd::WireKind>(w.kind);
        if (kind == nd::WireKind::open) {
            return w.to == nd::fnv1a32(k_name) ? ledger_.open(peer, w, rendezvous, payload, out)
                                               : nullptr;
        }
        if (w.to != k_id) {
            return nullptr;
        }
        if (kind != nd::WireKind::data) {
            return ledger_.sender_message(peer, w, out);
        }
        nd::Arrival arrival;
        const std::uint64_t length = rendezvous ? payload.size() * 16 : payload.size();
        const char* v = ledger_.data(peer, w, length, rendezvous, payload, arrival);
        if (v == nullptr) {
            require(arrival.count >= 1 && arrival.slot.size() * arrival.count == length &&
                    arrival.slot.size() <= k_element_bytes);
            if (rendezvous && arrival.count == 1) {
                std::memset(arrival.slot.data(), 0x5c, arrival.slot.size()); // UCX's landing
            }
            if (rendezvous) {
                landing_.push_back({arrival.seq, arrival.count, length});
            }
        }
        return v;
    }

    void check(const std::vector<nd::Outgoing>& out) const {
        require(ledger_.credits_accounted() == k_capacity);
        require(ledger_.slots_accounted() == k_capacity);
        require(ledger_.senders() <= nd::ReceiverLedger::k_max_senders);
        const auto peers = ledger_.peers();
        for (const std::uint32_t p : {1U, 2U}) {
            require(std::count(peers.begin(), peers.end(), p) <=
                    nd::ReceiverLedger::k_max_senders_per_peer);
        }
        for (const auto& o : out) {
            require(o.peer == 1 || o.peer == 2);
            require(o.wire.magic == nd::k_wire_magic && o.wire.from == k_id);
        }
    }

    nd::ReceiverLedger ledger_;
    std::deque<nd::Taken> taken_;
    struct Landing {
        std::uint64_t seq;
        std::uint64_t count;
        std::uint64_t length;
    };
    std::deque<Landing> landing_; // rendezvous DATA not landed yet, oldest first
};

} // namespace net_fuzz
