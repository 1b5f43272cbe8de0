#pragma once
// ReceiverState's out-of-line parts (declared in ferry/net/detail/channel_receiver.hpp).

#include <ferry/net/detail/channel_receiver.hpp>
#include <utility>

namespace ferry::net::detail {

inline Status ReceiverState::serve() {
    auto dir = Directory::of(node_);
    // Under the lock: an OPEN may be handled (and answered from the id) as soon as add() returns.
    const std::lock_guard lock(wait_.mutex);
    const std::uint32_t id = dir->add(shared_from_this(), fnv1a32(ledger_.name()));
    if (id == 0) {
        return Status::repeat_initialize;
    }
    ledger_.set_id(id);
    directory_ = std::move(dir);
    return Status::ok;
}

inline void ReceiverState::leave() {
    stop();
    if (directory_) {
        directory_->remove(ledger_.id(), fnv1a32(ledger_.name()));
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
        v = kind == WireKind::open ? ledger_.open(d.peer(), w, d.is_rendezvous(), d.eager(), out)
                                   : ledger_.sender_message(d.peer(), w, out);
    }
    post_all(node_, out);
    wait_.cv.notify_all();
    return v;
}

// A rendezvous DATA of one message is pulled by UCX straight into the slot the ledger gave it;
// a batch, into a staging buffer (its slots are not contiguous), copied into its slots when it
// landed.
inline Verdict ReceiverState::on_data(Delivery& d, const ChannelWire& w) {
    Arrival arrival;
    {
        const std::lock_guard lock(wait_.mutex);
        const auto eager = d.is_rendezvous() ? std::span<const std::byte>{} : d.eager();
        if (const Verdict v =
                ledger_.data(d.peer(), w, d.length(), d.is_rendezvous(), eager, arrival)) {
            return v;
        }
    }
    if (d.is_rendezvous() && arrival.count > 1) {
        receive_batch(d, arrival);
    } else if (d.is_rendezvous()) {
        // The pool must outlive the transfer: the completion holds the state.
        auto self = shared_from_this();
        const auto seq = arrival.seq;
        const Status s =
            d.receive_into(arrival.slot, [self, seq](Status st) { self->landed(seq, 1, st); });
        if (s != Status::ok) {
            landed(seq, 1, Status::failure);
        }
    }
    wait_.cv.notify_all();
    return nullptr;
}

inline void ReceiverState::receive_batch(Delivery& d, const Arrival& arrival) {
    auto staging = std::make_shared<std::vector<std::byte>>(d.length());
    auto self = shared_from_this();
    const auto seq = arrival.seq;
    const auto count = arrival.count;
    const Status s = d.receive_into(*staging, [self, seq, count, staging](Status st) {
        self->landed(seq, count, st, *staging);
    });
    if (s != Status::ok) {
        landed(seq, count, Status::failure);
    }
}

inline void ReceiverState::landed(std::uint64_t seq, std::uint64_t count, Status s,
                                  std::span<const std::byte> staged) {
    {
        const std::lock_guard lock(wait_.mutex);
        ledger_.landed(seq, count, s == Status::ok, staged);
    }
    wait_.cv.notify_all();
}

inline Status ReceiverState::take(Taken& out, Deadline d) {
    const auto attempt = [&](std::vector<Outgoing>& o) { return ledger_.take(out, o); };
    // Found nothing and about to park or give up: this receiver is idle, so what it owes goes
    // back now (a receiver that keeps finding messages returns credits in batches only).
    const auto idle = [this](std::vector<Outgoing>& o) { ledger_.idle(o); };
    return wait_until(
        node_, wait_, d, Status::empty, attempt, [this] { check_peers(); }, idle);
}

inline void ReceiverState::give_back(const Taken& t) {
    std::vector<Outgoing> out;
    {
        const std::lock_guard lock(wait_.mutex);
        ledger_.give_back(t, out);
    }
    post_all(node_, out);
}

inline void ReceiverState::on_peer_lost(PeerId peer) {
    std::vector<Outgoing> out;
    {
        const std::lock_guard lock(wait_.mutex);
        if (!ledger_.peer_lost(peer, out)) {
            return;
        }
    }
    post_all(node_, out);
    wait_.wake(node_); // a stop or loss seen outside a handler
}

inline void ReceiverState::check_peers() {
    const auto peers = with_lock(wait_.mutex, [&] { return ledger_.peers(); });
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
        if (!ledger_.stop(out)) {
            return;
        }
    }
    post_all(node_, out);
    wait_.wake(node_); // a stop or loss seen outside a handler
}

} // namespace ferry::net::detail
