#pragma once
// ReceiverLedger's out-of-line parts (declared in ferry/net/detail/channel_ledger.hpp).

#include <ferry/net/detail/channel_ledger.hpp>

namespace ferry::net::detail {

inline ReceiverLedger::ReceiverLedger(std::string name, Flavor flavor, std::size_t element_bytes,
                                      std::size_t capacity)
    : name_(std::move(name)), flavor_(flavor), element_bytes_(element_bytes), capacity_(capacity),
      slot_stride_(round_up(element_bytes, k_slot_alignment)),
      batch_(std::max<std::size_t>(1, capacity / 4)),
      pool_(static_cast<std::byte*>(
          ::operator new[](slot_stride_* capacity, std::align_val_t{k_slot_alignment}))),
      free_(capacity) {
    free_slots_.reserve(capacity);
    for (std::size_t i = capacity; i > 0; --i) {
        free_slots_.push_back(static_cast<std::uint32_t>(i - 1));
    }
}

// The sender's open is checked against this receiver (the name, in case two names share a
// hash; the flavor; a typed channel's element size), then the sender joins the ledger as
// wanting credits and its ACCEPT carries what it was granted at once (maybe 0).
inline const char* ReceiverLedger::open(std::uint32_t peer, const ChannelWire& w, bool rendezvous,
                                        std::span<const std::byte> name,
                                        std::vector<Outgoing>& out) {
    if (rendezvous || name.size() > k_max_name_bytes) {
        return "ferry.net.channel: open with an over-long name";
    }
    const std::string_view theirs(reinterpret_cast<const char*>(name.data()), name.size());
    Status refusal = Status::ok;
    if (theirs != name_) {
        refusal = Status::not_found; // another name with the same hash: not this channel
    } else if (w.b != static_cast<std::uint16_t>(flavor_) ||
               (flavor_ == Flavor::typed && w.a != element_bytes_)) {
        refusal = Status::mismatch;
    } else if (lost_) {
        refusal = Status::peer_lost;
    } else if (stopped_) {
        refusal = Status::stopped;
    }
    if (refusal != Status::ok) {
        out.push_back(
            {peer, make_wire(WireKind::refuse, w.from, id_, static_cast<std::uint64_t>(refusal))});
        return nullptr;
    }
    return admit_sender(peer, w, out);
}

inline const char* ReceiverLedger::admit_sender(std::uint32_t peer, const ChannelWire& w,
                                                std::vector<Outgoing>& out) {
    const std::uint64_t k = key(peer, w.from);
    if (senders_.contains(k)) {
        return "ferry.net.channel: a sender opened twice";
    }
    // Bounded: a peer cannot make this receiver hold records without end (forged sender ids).
    const auto of_peer = std::distance(senders_.lower_bound(key(peer, 0)),
                                       senders_.upper_bound(key(peer, ~std::uint32_t{0})));
    if (senders_.size() >= k_max_senders || of_peer >= k_max_senders_per_peer) {
        return "ferry.net.channel: too many senders";
    }
    Sender& s = senders_[k];
    s.peer = peer;
    s.id = w.from;
    s.wanting = true;
    wanting_.push_back(k);
    distribute(out);
    maybe_recall(out);
    s.accepted = true;
    out.push_back({s.peer, make_wire(WireKind::accept, s.id, id_, std::exchange(s.initial, 0),
                                     capacity_, element_bytes_)});
    return nullptr;
}

inline const char* ReceiverLedger::sender_message(std::uint32_t peer, const ChannelWire& w,
                                                  std::vector<Outgoing>& out) {
    const auto it = senders_.find(key(peer, w.from));
    if (it == senders_.end()) {
        // A GIVE_BACK of nothing (a RECALL's answer) may follow its sender's CLOSE: harmless.
        const bool nothing = w.kind == static_cast<std::uint16_t>(WireKind::give_back) && w.a == 0;
        return nothing ? nullptr : "ferry.net.channel: message from a sender that did not open";
    }
    Sender& s = it->second;
    switch (static_cast<WireKind>(w.kind)) {
    case WireKind::want:
        if (!s.wanting && !s.closed) {
            s.wanting = true;
            wanting_.push_back(it->first);
            if (queue_.empty() && consumed_since_flush_ > 0) {
                flush(out); // nothing queued will return them: pool what is owed now
            }
        }
        break;
    case WireKind::give_back:
    case WireKind::close:
        if (w.a > s.outstanding ||
            (s.closed && w.kind == static_cast<std::uint16_t>(WireKind::close))) {
            return "ferry.net.channel: credits returned that were never granted";
        }
        s.outstanding -= w.a;
        free_ += w.a;
        s.recalled = false;
        if (static_cast<WireKind>(w.kind) == WireKind::close) {
            s.closed = true; // a GIVE_BACK posted just before may still come: keep the record
            free_ += std::exchange(s.owed, 0);
            out.push_back({s.peer, make_wire(WireKind::close, s.id, id_)}); // the sender may go
        }
        if (s.closed && s.outstanding == 0) {
            drop_sender(it);
        }
        break;
    case WireKind::stop: // every sender hears STOP back, the stopping one too (its answer)
        if (!stopped_) {
            stopped_ = true;
            stop_senders(out);
        } else {
            out.push_back({s.peer, make_wire(WireKind::stop, s.id, id_)});
        }
        return nullptr;
    default:
        return "ferry.net.channel: not a message for a receiver";
    }
    distribute(out);
    maybe_recall(out);
    return nullptr;
}

// Why a DATA of `w.a` messages from `s` (nullptr: no such sender) is refused; nullptr when it
// is acceptable. Every field is checked before anything is taken: a sender that opened, a
// credit per message, a count within the batch limit (1 for a message channel), the size.
inline const char* ReceiverLedger::check_data(const ChannelWire& w, std::uint64_t length,
                                              bool rendezvous, std::span<const std::byte> eager,
                                              const Sender* s) const {
    if (s == nullptr || s->closed) {
        return "ferry.net.channel: data from a sender that did not open";
    }
    const bool typed = flavor_ == Flavor::typed;
    if (w.a == 0 || w.a > (typed ? max_batch(element_bytes_) : 1)) {
        return "ferry.net.channel: data carrying no messages, or more than a batch";
    }
    if (w.a > s->outstanding) {
        return "ferry.net.channel: data without a credit";
    }
    const bool fits =
        typed ? length == w.a * element_bytes_ : (length > 0 && length <= element_bytes_);
    if (!fits || (!rendezvous && eager.size() != length)) {
        return "ferry.net.channel: data of the wrong size";
    }
    if (free_slots_.size() < w.a) { // not reached: every credit has its slot
        return "ferry.net.channel: no free slot";
    }
    return nullptr;
}

// A DATA: checked (check_data), then each of its messages takes a free slot and a place in the
// queue. Eager, the bytes are copied in at once; rendezvous, the caller has them received (see
// Arrival) and the entries wait as pending until they landed, so that messages keep their order.
inline const char* ReceiverLedger::data(std::uint32_t peer, const ChannelWire& w,
                                        std::uint64_t length, bool rendezvous,
                                        std::span<const std::byte> eager, Arrival& arrival) {
    const auto it = senders_.find(key(peer, w.from));
    if (const char* why = check_data(w, length, rendezvous, eager,
                                     it == senders_.end() ? nullptr : &it->second)) {
        return why;
    }
    it->second.outstanding -= w.a;
    arrival.seq = next_seq_;
    arrival.count = w.a;
    const std::uint64_t each = length / w.a;
    for (std::uint64_t i = 0; i < w.a; ++i) {
        const std::uint32_t slot = free_slots_.back();
        free_slots_.pop_back();
        arrival.slot = slot_bytes(slot).first(each);
        if (!rendezvous) {
            std::memcpy(arrival.slot.data(), eager.data() + i * each, each);
        }
        queue_.push_back({next_seq_++, slot, it->first, each,
                          rendezvous ? EntryState::pending : EntryState::ready});
    }
    return nullptr;
}

inline void ReceiverLedger::landed(std::uint64_t seq, std::uint64_t count, bool ok,
                                   std::span<const std::byte> staged) {
    for (auto it = queue_.rbegin(); it != queue_.rend() && it->seq >= seq; ++it) {
        if (it->seq >= seq + count) {
            continue;
        }
        const std::uint64_t i = it->seq - seq;
        // A batch's bytes: its length was checked as count * each when it arrived.
        if (ok && !staged.empty() && (i + 1) * it->length <= staged.size()) {
            std::memcpy(slot_bytes(it->slot).data(), staged.data() + i * it->length, it->length);
        }
        it->state = ok ? EntryState::ready : EntryState::failed;
    }
}

// Not merely because a look found nothing: a receiver faster than its sender finds nothing at
// almost every receive, and returning then cost a CREDIT per message. What is owed goes back
// when a sender wants, or when a sender holds fewer credits than it is owed (it could run dry
// before the next batch); a sender holding more keeps sending and gets its batch in time.
inline void ReceiverLedger::idle(std::vector<Outgoing>& out) {
    if (consumed_since_flush_ == 0) {
        return;
    }
    const bool runs_low = std::ranges::any_of(
        senders_, [](const auto& entry) { return entry.second.owed > entry.second.outstanding; });
    if (runs_low || !wanting_.empty()) {
        flush(out);
    }
}

inline Status ReceiverLedger::take(Taken& out, std::vector<Outgoing>& messages) {
    while (!queue_.empty() && queue_.front().state == EntryState::failed) {
        const Entry e = queue_.front(); // its sender was lost mid-transfer: nothing to read
        queue_.pop_front();
        free_slots_.push_back(e.slot);
        consumed(e.sender, messages);
    }
    if (!queue_.empty()) {
        if (queue_.front().state == EntryState::pending) {
            return Status::empty; // the oldest message is still landing
        }
        const Entry e = queue_.front();
        queue_.pop_front();
        ++held_;
        out = Taken{e.slot, e.sender, slot_bytes(e.slot).first(e.length)};
        return Status::ok;
    }
    return lost_ ? Status::peer_lost : stopped_ ? Status::stopped : Status::empty;
}

inline void ReceiverLedger::give_back(const Taken& t, std::vector<Outgoing>& out) {
    --held_;
    free_slots_.push_back(t.slot);
    consumed(t.sender, out);
}

// A consumed message's credit is owed to its sender (or freed, when the sender is gone) and
// returned in batches: once a quarter of the capacity was consumed, when the queue ran empty
// while a sender wants, or when a receive finds nothing while a sender runs low (idle). Not
// merely because the queue ran empty: a receiver faster than its sender empties the queue at
// every message, and a CREDIT per message costs both nodes a send and a wake-up each
// (docs/performance/net.md, Channel rate).
inline void ReceiverLedger::consumed(std::uint64_t sender, std::vector<Outgoing>& out) {
    const auto it = senders_.find(sender);
    if (it != senders_.end() && !it->second.closed) {
        ++it->second.owed;
    } else {
        ++free_;
    }
    if (++consumed_since_flush_ >= batch_ || (queue_.empty() && !wanting_.empty())) {
        flush(out);
    }
}

// With nobody wanting, each sender gets back what it is owed (a steady sender keeps streaming
// without asking). With senders wanting, everything owed is pooled and split among them: a
// sender that ran dry is served at the next flush, whoever else is sending.
inline void ReceiverLedger::flush(std::vector<Outgoing>& out) {
    consumed_since_flush_ = 0;
    if (wanting_.empty()) {
        for (auto& [k, s] : senders_) {
            if (s.owed > 0) {
                grant(s, std::exchange(s.owed, 0), out);
            }
        }
        return;
    }
    for (auto& [k, s] : senders_) {
        free_ += std::exchange(s.owed, 0);
    }
    distribute(out);
}

// Splits the free credits evenly among the wanting senders, oldest first.
inline void ReceiverLedger::distribute(std::vector<Outgoing>& out) {
    while (free_ > 0 && !wanting_.empty()) {
        const std::uint64_t share = std::max<std::uint64_t>(1, free_ / wanting_.size());
        const auto it = senders_.find(wanting_.front());
        wanting_.pop_front();
        if (it == senders_.end() || it->second.closed) {
            continue;
        }
        it->second.wanting = false;
        free_ -= share;
        grant(it->second, share, out);
    }
}

inline void ReceiverLedger::grant(Sender& s, std::uint64_t n, std::vector<Outgoing>& out) {
    s.outstanding += n;
    if (s.accepted) {
        out.push_back({s.peer, make_wire(WireKind::credit, s.id, id_, n)});
    } else {
        s.initial += n; // the ACCEPT carries it
    }
}

// Senders want credits but none will come back by themselves (nothing queued or being read,
// nothing free): the credits sit with senders that are not using them. Those holding more than
// an even share are asked to give the excess back, so that no sender waits forever.
inline void ReceiverLedger::maybe_recall(std::vector<Outgoing>& out) {
    if (wanting_.empty() || free_ > 0 || !queue_.empty() || held_ > 0 || senders_.empty()) {
        return;
    }
    const std::uint64_t keep = capacity_ / senders_.size();
    for (auto& [k, s] : senders_) {
        if (!s.wanting && !s.closed && !s.recalled && s.outstanding > keep) {
            s.recalled = true;
            out.push_back({s.peer, make_wire(WireKind::recall, s.id, id_, keep)});
        }
    }
}

inline void ReceiverLedger::drop_sender(std::map<std::uint64_t, Sender>::iterator it) {
    free_ += it->second.outstanding + it->second.owed;
    std::erase(wanting_, it->first);
    senders_.erase(it);
}

inline void ReceiverLedger::stop_senders(std::vector<Outgoing>& out) {
    for (const auto& [k, s] : senders_) {
        if (!s.closed) {
            out.push_back({s.peer, make_wire(WireKind::stop, s.id, id_)});
        }
    }
}

inline bool ReceiverLedger::peer_lost(std::uint32_t peer, std::vector<Outgoing>& out) {
    bool ours = false;
    for (auto it = senders_.begin(); it != senders_.end();) {
        const auto next = std::next(it);
        if (it->second.peer == peer) {
            ours = ours || !it->second.closed; // one that closed first left, not got lost
            drop_sender(it); // its credits are free again; what it sent stays queued
        }
        it = next;
    }
    if (!ours) {
        return false;
    }
    lost_ = true;
    distribute(out);
    return true;
}

inline bool ReceiverLedger::stop(std::vector<Outgoing>& out) {
    if (stopped_) {
        return false;
    }
    stopped_ = true;
    stop_senders(out);
    return true;
}

inline std::vector<std::uint32_t> ReceiverLedger::peers() const {
    std::vector<std::uint32_t> peers;
    for (const auto& [k, s] : senders_) {
        peers.push_back(s.peer);
    }
    return peers;
}

inline std::uint64_t ReceiverLedger::credits_accounted() const {
    std::uint64_t sum = free_ + queue_.size() + held_;
    for (const auto& [k, s] : senders_) {
        sum += s.outstanding + s.owed;
    }
    return sum;
}

} // namespace ferry::net::detail
