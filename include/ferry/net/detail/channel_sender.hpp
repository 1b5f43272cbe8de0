#pragma once
// The sending end of a remote channel, shared by net::ChannelSender and net::MessageSender: the
// open handshake, the credits this sender holds, and stop / loss (docs/multi-node-channels.md).

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/detail/channel_counters.hpp>
#include <ferry/core/result.hpp>
#include <ferry/net/detail/channel_wait.hpp>
#include <ferry/net/detail/channel_wire.hpp>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <utility>

namespace ferry::net::detail {

// How long a sender's stop() or close waits for the receiver's answer at most.
inline constexpr auto k_echo_wait = std::chrono::seconds(1);

// What a receiver may answer an OPEN with.
[[nodiscard]] constexpr bool is_refusal(Status s) noexcept {
    return s == Status::not_found || s == Status::mismatch || s == Status::stopped ||
           s == Status::peer_lost;
}

class SenderState final : public Endpoint, public std::enable_shared_from_this<SenderState> {
public:
    SenderState(Node& node, PeerId peer, Flavor flavor, std::size_t element_bytes) noexcept
        : node_(node), peer_(peer), flavor_(flavor), element_bytes_(element_bytes) {}

    // Sends OPEN for `name` and waits for the answer: ok, or the receiver's refusal
    // (not_found: no such name; mismatch: another flavor or element size;
    // stopped; peer_lost), timed_out, peer_lost (not connected, or lost meanwhile).
    Status open(const std::string& name, Deadline d);
    // Sends CLOSE with the credits left (so the receiver can give them to others) and leaves.
    void leave();

    Verdict on_message(Delivery& d, const ChannelWire& w) override;
    [[nodiscard]] EndpointInfo describe() const override {
        const std::lock_guard lock(wait_.mutex);
        return {"sender", name_, {peer_}, capacity_, 0, credits_, stopped_, lost_};
    }
    void on_peer_lost(PeerId peer) override {
        if (peer != peer_) {
            return;
        }
        {
            const std::lock_guard lock(wait_.mutex);
            lost_ = true;
        }
        wait_.wake(node_); // also from check_peer, outside a handler
    }

    // Spends a credit, waiting for one: ok, full (no_wait), timed_out, stopped, peer_lost.
    Status acquire_credit(Deadline d) {
        std::uint64_t got = 0;
        return acquire_credits(d, 1, got);
    }
    // Spends between 1 and `most` credits (as many as this sender holds), waiting for the
    // first: ok with `got` set, or as acquire_credit.
    Status acquire_credits(Deadline d, std::uint64_t most, std::uint64_t& got) {
        const auto attempt = [&](std::vector<Outgoing>& out) -> Status {
            if (lost_) {
                return Status::peer_lost;
            }
            if (stopped_) {
                return Status::stopped;
            }
            if (credits_ > 0) {
                got = std::min(credits_, most);
                credits_ -= got;
                return Status::ok;
            }
            if (!want_sent_) { // once per dry spell: the next grant answers it
                want_sent_ = true;
                out.push_back({peer_, make_wire(WireKind::want, receiver_, id_)});
            }
            return Status::full;
        };
        return wait_until(node_, wait_, d, Status::full, attempt, [this] { check_peer(); });
    }
    // Posts one DATA carrying `count` messages (`payload`, back to back), with the `count`
    // credits the caller spent on it, kept alive by `owner` until UCX is done with it; without
    // an owner (nullptr) the Node copies what it keeps (Node::post_copied), and `payload` is
    // the caller's again when this returns. ok, peer_lost, bad_alloc (nothing was sent: the
    // credits are this sender's again).
    Status post_data(std::span<const std::byte> payload, std::uint64_t count,
                     std::shared_ptr<const void> owner) {
        const ChannelWire w = make_wire(WireKind::data, receiver_, id_, count);
        Status s = Status::ok;
        try {
            s = owner ? node_.post_owned(peer_, k_channel_service, bytes_of(w), payload,
                                         std::move(owner))
                      : node_.post_copied(peer_, k_channel_service, bytes_of(w), payload);
        } catch (const std::bad_alloc&) { // the Node allocates before it sends
            {
                const std::lock_guard lock(wait_.mutex);
                credits_ += count;
            }
            wait_.wake(node_);
            return Status::bad_alloc;
        }
        return s == Status::ok ? s : Status::peer_lost;
    }

    void stop();
    [[nodiscard]] bool stopped() const {
        return with_lock(wait_.mutex, [&] { return stopped_; });
    }
    [[nodiscard]] bool lost() const {
        return with_lock(wait_.mutex, [&] { return lost_; });
    }
    [[nodiscard]] std::size_t blocked() const {
        return with_lock(wait_.mutex, [&] { return wait_.blocked; });
    }
    [[nodiscard]] std::uint64_t credits() const {
        return with_lock(wait_.mutex, [&] { return credits_; });
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t element_bytes() const noexcept { return element_bytes_; }
    [[nodiscard]] PeerId peer() const noexcept { return peer_; }

    // This end's counts (docs/multi-node-channels.md, Counters): updated by the handle layer.
    ferry::detail::ChannelCounters<true, true> counters;

private:
    Verdict on_reply(const ChannelWire& w, std::vector<Outgoing>& out);
    template <typename Heard>
    void await_echo(Heard heard);
    void check_peer() {
        if (!node_.alive(peer_)) {
            on_peer_lost(peer_);
        }
    }

    Node& node_;
    const PeerId peer_;
    const Flavor flavor_;
    std::size_t element_bytes_; // the receiver's, once accepted (message channels)
    std::size_t capacity_ = 0;
    std::shared_ptr<Directory> directory_;
    std::string name_; // set before the sender is in the directory
    std::uint32_t id_ = 0;
    std::uint32_t receiver_ = 0; // the receiver's endpoint id, from its first message

    mutable WaitState wait_;
    enum class Phase : std::uint8_t { opening, open, refused } phase_ = Phase::opening;
    Status refusal_ = Status::ok;
    std::uint64_t credits_ = 0;
    bool want_sent_ = false;
    bool stopped_ = false;
    bool lost_ = false;
    bool closed_ = false;
    bool stop_heard_ = false;  // a STOP came from the receiver
    bool close_acked_ = false; // the receiver answered this sender's CLOSE
};

inline Status SenderState::open(const std::string& name, Deadline d) {
    if (!node_.alive(peer_)) {
        return Status::peer_lost;
    }
    name_ = name;
    directory_ = Directory::of(node_);
    id_ = directory_->add(shared_from_this());
    auto owned = std::make_shared<const std::string>(name);
    const ChannelWire w =
        make_wire(WireKind::open, fnv1a32(name), id_, flavor_ == Flavor::typed ? element_bytes_ : 0,
                  static_cast<std::uint16_t>(flavor_));
    const auto payload = std::as_bytes(std::span(owned->data(), owned->size()));
    if (node_.post_owned(peer_, k_channel_service, bytes_of(w), payload, owned) != Status::ok) {
        return Status::peer_lost;
    }
    const auto attempt = [&](std::vector<Outgoing>&) -> Status {
        if (phase_ == Phase::open) {
            return Status::ok;
        }
        if (phase_ == Phase::refused) {
            return refusal_;
        }
        return lost_ ? Status::peer_lost : Status::empty;
    };
    const Status s = wait_until(node_, wait_, d, Status::empty, attempt, [this] { check_peer(); });
    return s == Status::empty ? Status::timed_out : s;
}

inline void SenderState::leave() {
    if (!directory_) {
        return;
    }
    std::uint64_t left = 0;
    bool tell = false;
    {
        const std::lock_guard lock(wait_.mutex);
        closed_ = true;
        left = std::exchange(credits_, 0);
        tell = phase_ == Phase::open && !lost_;
    }
    if (tell) {
        post_all(node_, {Outgoing{peer_, make_wire(WireKind::close, receiver_, id_, left)}});
        await_echo([this] { return close_acked_; });
    }
    directory_->remove(id_);
    directory_.reset();
}

inline Verdict SenderState::on_message(Delivery& d, const ChannelWire& w) {
    if (d.peer() != peer_) {
        return "ferry.net.channel: message for a sender from another peer";
    }
    std::vector<Outgoing> out;
    Verdict v = nullptr;
    {
        const std::lock_guard lock(wait_.mutex);
        if (w.kind == static_cast<std::uint16_t>(WireKind::refuse)) {
            const auto why = static_cast<Status>(static_cast<std::int32_t>(w.a));
            if (phase_ != Phase::opening || !is_refusal(why)) {
                v = "ferry.net.channel: a refusal after the open, or of an unknown kind";
            } else {
                phase_ = Phase::refused;
                refusal_ = why;
            }
        } else if (receiver_ != 0 && w.from != receiver_) {
            v = "ferry.net.channel: message from another receiver";
        } else {
            if (receiver_ == 0) {
                receiver_ = w.from; // the first message may overtake the ACCEPT
            }
            v = on_reply(w, out);
        }
    }
    post_all(node_, out);
    wait_.cv.notify_all();
    return v;
}

inline Verdict SenderState::on_reply(const ChannelWire& w, std::vector<Outgoing>& out) {
    switch (static_cast<WireKind>(w.kind)) {
    case WireKind::accept:
        if (phase_ != Phase::opening || w.b == 0 || w.b > k_max_channel_capacity || w.a > w.b ||
            w.c == 0 || (flavor_ == Flavor::typed && w.c != element_bytes_)) {
            return "ferry.net.channel: a malformed or repeated accept";
        }
        phase_ = Phase::open;
        capacity_ = w.b;
        element_bytes_ = w.c;
        credits_ += w.a;
        return nullptr;
    case WireKind::credit:
        if (w.a == 0 || w.a > (capacity_ != 0 ? capacity_ : k_max_channel_capacity)) {
            return "ferry.net.channel: a malformed credit";
        }
        credits_ += w.a;
        want_sent_ = false;
        return nullptr;
    case WireKind::recall: {
        // Keep `a`, give back the rest; closed: the CLOSE returned everything already.
        if (!closed_) {
            const std::uint64_t give = credits_ > w.a ? credits_ - w.a : 0;
            credits_ -= give;
            out.push_back({peer_, make_wire(WireKind::give_back, receiver_, id_, give)});
        }
        return nullptr;
    }
    case WireKind::stop:
        stopped_ = true;
        stop_heard_ = true;
        return nullptr;
    case WireKind::close: // the receiver took this sender's CLOSE
        close_acked_ = true;
        return nullptr;
    default:
        return "ferry.net.channel: not a message for a sender";
    }
}

inline void SenderState::stop() {
    bool tell = false;
    {
        const std::lock_guard lock(wait_.mutex);
        tell = !stopped_ && !lost_ && phase_ == Phase::open;
        stopped_ = true;
    }
    wait_.wake(node_);
    if (tell) {
        post_all(node_, {Outgoing{peer_, make_wire(WireKind::stop, receiver_, id_)}});
        await_echo([this] { return stop_heard_; });
    }
}

// Waits (bounded by k_echo_wait) until the receiver's answer to a STOP or CLOSE came, or the
// receiver is lost. Until then the message may still sit in this node's queues: a process that
// stops or closes and then exits would take it down with its Node (docs/multi-node-channels.md,
// Stop).
template <typename Heard>
void SenderState::await_echo(Heard heard) {
    const auto attempt = [&](std::vector<Outgoing>&) {
        return heard() || lost_ ? Status::ok : Status::empty;
    };
    static_cast<void>(wait_until(node_, wait_, Deadline{true, Clock::now() + k_echo_wait},
                                 Status::empty, attempt, [this] { check_peer(); }));
}

} // namespace ferry::net::detail
