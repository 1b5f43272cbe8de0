#pragma once
// ReceiverState's out-of-line parts (declared in ferry/net/detail/channel_receiver.hpp).

#include <algorithm>
#include <ferry/net/detail/channel_receiver.hpp>
#include <string_view>
#include <utility>

namespace ferry::net::detail {

inline std::size_t round_up(std::size_t n, std::size_t to) noexcept {
    return (n + to - 1) / to * to;
}

inline ReceiverState::ReceiverState(Node& node, std::string name, Flavor flavor,
                                    std::size_t element_bytes, std::size_t capacity)
    : node_(node), name_(std::move(name)), flavor_(flavor), element_bytes_(element_bytes),
      capacity_(capacity), slot_stride_(round_up(element_bytes, k_slot_alignment)),
      batch_(std::max<std::size_t>(1, capacity / 4)),
      pool_(static_cast<std::byte*>(
          ::operator new[](slot_stride_* capacity, std::align_val_t{k_slot_alignment}))),
      free_(capacity) {
    free_slots_.reserve(capacity);
    for (std::size_t i = capacity; i > 0; --i) {
        free_slots_.push_back(static_cast<std::uint32_t>(i - 1));
    }
}

inline Status ReceiverState::serve() {
    auto dir = Directory::of(node_);
    // Under the lock: an OPEN may be handled (and answered from id_) as soon as add() returns.
    const std::lock_guard lock(wait_.mutex);
    id_ = dir->add(shared_from_this(), fnv1a32(name_));
    if (id_ == 0) {
        return Status::repeat_initialize;
    }
    directory_ = std::move(dir);
    return Status::ok;
}

inline void ReceiverState::leave() {
    stop();
    if (directory_) {
        directory_->remove(id_, fnv1a32(name_));
        directory_.reset();
    }
}

inline Verdict ReceiverState::on_message(Delivery& d, const ChannelWire& w) {
    const auto kind = static_cast<WireKind>(w.kind);
    if (kind == WireKind::data) {
        return on_data(d, w);
    }
    std::vector<Outgoing> out;
    Verdict v = nullptr;
    {
        const std::lock_guard lock(wait_.mutex);
        v = kind == WireKind::open ? on_open(d, w, out) : on_sender_message(d.peer(), w, out);
    }
    post_all(node_, out);
    wait_.cv.notify_all();
    return v;
}

// The sender's open is checked against this receiver (the name, in case two names share a
// hash; the flavor; a typed channel's element size), then the sender joins the ledger as
// wanting credits and its ACCEPT carries what it was granted at once (maybe 0).
inline Verdict ReceiverState::on_open(Delivery& d, const ChannelWire& w,
                                      std::vector<Outgoing>& out) {
    if (d.is_rendezvous() || d.eager().size() > k_max_name_bytes) {
        return "ferry.net.channel: open with an over-long name";
    }
    const auto name = d.eager();
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
        out.push_back({d.peer(), make_wire(WireKind::refuse, w.from, id_,
                                           static_cast<std::uint64_t>(refusal))});
        return nullptr;
    }
    const std::uint64_t k = key(d.peer(), w.from);
    if (senders_.contains(k)) {
        return "ferry.net.channel: a sender opened twice";
    }
    // Bounded: a peer cannot make this receiver hold records without end (forged sender ids).
    const auto of_peer = std::distance(senders_.lower_bound(key(d.peer(), 0)),
                                       senders_.upper_bound(key(d.peer(), ~std::uint32_t{0})));
    if (senders_.size() >= k_max_senders || of_peer >= k_max_senders_per_peer) {
        return "ferry.net.channel: too many senders";
    }
    Sender& s = senders_[k];
    s.peer = d.peer();
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

inline Verdict ReceiverState::on_sender_message(PeerId peer, const ChannelWire& w,
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

// Why a DATA of `w.a` messages from `s` (nullptr: no such sender) is refused; nullptr when it is
// acceptable. Every field is checked before anything is taken: a sender that opened, a credit
// per message, a count within the batch limit (1 for a message channel), the size.
inline const char* ReceiverState::check_data(const Delivery& d, const ChannelWire& w,
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
    const std::uint64_t length = d.length();
    const bool fits =
        typed ? length == w.a * element_bytes_ : (length > 0 && length <= element_bytes_);
    if (!fits || (!d.is_rendezvous() && d.eager().size() != length)) {
        return "ferry.net.channel: data of the wrong size";
    }
    if (free_slots_.size() < w.a) { // not reached: every credit has its slot
        return "ferry.net.channel: no free slot";
    }
    return nullptr;
}

// A DATA: checked (check_data), then each of its messages takes a free slot and a place in the
// queue. Eager, the bytes are copied in at once; rendezvous, UCX pulls them (into the slot for
// one message, into a staging buffer for a batch, whose slots are not contiguous) and the
// entries wait as pending until they landed, so that messages keep their order.
inline Verdict ReceiverState::on_data(Delivery& d, const ChannelWire& w) {
    const std::uint64_t length = d.length();
    const bool eager = !d.is_rendezvous();
    std::uint64_t first = 0;
    std::uint32_t slot = 0;
    {
        const std::lock_guard lock(wait_.mutex);
        const auto it = senders_.find(key(d.peer(), w.from));
        if (const char* why = check_data(d, w, it == senders_.end() ? nullptr : &it->second)) {
            return why;
        }
        it->second.outstanding -= w.a;
        first = next_seq_;
        const std::uint64_t each = length / w.a;
        for (std::uint64_t i = 0; i < w.a; ++i) {
            slot = free_slots_.back();
            free_slots_.pop_back();
            if (eager) {
                std::memcpy(slot_bytes(slot).data(), d.eager().data() + i * each, each);
            }
            queue_.push_back({next_seq_++, slot, it->first, each,
                              eager ? EntryState::ready : EntryState::pending});
        }
    }
    if (!eager && w.a > 1) {
        receive_batch(d, first, w.a);
    } else if (!eager) {
        // The pool must outlive the transfer: the completion holds the state.
        auto self = shared_from_this();
        const Status s = d.receive_into(slot_bytes(slot).first(length),
                                        [self, first](Status st) { self->landed(first, 1, st); });
        if (s != Status::ok) {
            landed(first, 1, Status::failure);
        }
    }
    wait_.cv.notify_all();
    return nullptr;
}

// A batch that came by rendezvous: pulled whole into a staging buffer, then copied into its
// messages' slots when it landed.
inline void ReceiverState::receive_batch(Delivery& d, std::uint64_t first, std::uint64_t count) {
    auto staging = std::make_shared<std::vector<std::byte>>(d.length());
    auto self = shared_from_this();
    const Status s = d.receive_into(*staging, [self, first, count, staging](Status st) {
        self->landed(first, count, st, *staging);
    });
    if (s != Status::ok) {
        landed(first, count, Status::failure);
    }
}

// Messages first .. first + count - 1 landed (or failed); a batch's bytes are in `staged`.
inline void ReceiverState::landed(std::uint64_t first, std::uint64_t count, Status s,
                                  std::span<const std::byte> staged) {
    {
        const std::lock_guard lock(wait_.mutex);
        for (auto it = queue_.rbegin(); it != queue_.rend() && it->seq >= first; ++it) {
            if (it->seq >= first + count) {
                continue;
            }
            const std::uint64_t i = it->seq - first;
            if (s == Status::ok && !staged.empty()) {
                std::memcpy(slot_bytes(it->slot).data(), staged.data() + i * it->length,
                            it->length);
            }
            it->state = s == Status::ok ? EntryState::ready : EntryState::failed;
        }
    }
    wait_.cv.notify_all();
}

inline Status ReceiverState::take(Taken& out, Deadline d) {
    const auto attempt = [&](std::vector<Outgoing>& o) -> Status {
        while (!queue_.empty() && queue_.front().state == EntryState::failed) {
            const Entry e = queue_.front(); // its sender was lost mid-transfer: nothing to read
            queue_.pop_front();
            free_slots_.push_back(e.slot);
            consumed(e.sender, o);
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
    };
    // Found nothing and about to park or give up: this receiver is idle, so what it owes goes
    // back now (a receiver that keeps finding messages returns credits in batches only).
    const auto idle = [this](std::vector<Outgoing>& o) {
        if (consumed_since_flush_ > 0) {
            flush(o);
        }
    };
    return wait_until(
        node_, wait_, d, Status::empty, attempt, [this] { check_peers(); }, idle);
}

inline void ReceiverState::give_back(const Taken& t) {
    std::vector<Outgoing> out;
    {
        const std::lock_guard lock(wait_.mutex);
        --held_;
        free_slots_.push_back(t.slot);
        consumed(t.sender, out);
    }
    post_all(node_, out);
}

// A consumed message's credit is owed to its sender (or freed, when the sender is gone) and
// returned in batches: once a quarter of the capacity was consumed, when the queue ran empty
// while a sender wants, or when a receive finds nothing (take's idle hook). Not merely because
// the queue ran empty: a receiver faster than its sender empties the queue at every message,
// and a CREDIT per message costs both nodes a send and a wake-up each
// (docs/performance/net.md, Channel rate).
inline void ReceiverState::consumed(std::uint64_t sender, std::vector<Outgoing>& out) {
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
inline void ReceiverState::flush(std::vector<Outgoing>& out) {
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
inline void ReceiverState::distribute(std::vector<Outgoing>& out) {
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

inline void ReceiverState::grant(Sender& s, std::uint64_t n, std::vector<Outgoing>& out) {
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
inline void ReceiverState::maybe_recall(std::vector<Outgoing>& out) {
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

inline void ReceiverState::drop_sender(std::map<std::uint64_t, Sender>::iterator it) {
    free_ += it->second.outstanding + it->second.owed;
    std::erase(wanting_, it->first);
    senders_.erase(it);
}

inline void ReceiverState::stop_senders(std::vector<Outgoing>& out) {
    for (const auto& [k, s] : senders_) {
        if (!s.closed) {
            out.push_back({s.peer, make_wire(WireKind::stop, s.id, id_)});
        }
    }
}

inline void ReceiverState::on_peer_lost(PeerId peer) {
    std::vector<Outgoing> out;
    {
        const std::lock_guard lock(wait_.mutex);
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
            return;
        }
        lost_ = true;
        distribute(out);
    }
    post_all(node_, out);
    wait_.cv.notify_all();
}

inline void ReceiverState::check_peers() {
    std::vector<PeerId> peers;
    {
        const std::lock_guard lock(wait_.mutex);
        for (const auto& [k, s] : senders_) {
            peers.push_back(s.peer);
        }
    }
    for (const PeerId p : peers) {
        if (!node_.alive(p)) {
            on_peer_lost(p);
        }
    }
}

inline void ReceiverState::stop() {
    std::vector<Outgoing> out;
    {
        const std::lock_guard lock(wait_.mutex);
        if (stopped_) {
            return;
        }
        stopped_ = true;
        stop_senders(out);
    }
    post_all(node_, out);
    wait_.cv.notify_all();
}

} // namespace ferry::net::detail
