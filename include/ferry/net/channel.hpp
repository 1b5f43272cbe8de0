#pragma once
// ferry::net::ChannelReceiver<T, Capacity> and ChannelSender<T> — a bounded, typed channel
// between processes on different nodes, over ferry::net::Node (docs/multi-node-channels.md).
//
//     auto node = ferry::net::Node::start({.listen = "127.0.0.1:0", .secret = secret});
//     auto jobs = ferry::net::ChannelReceiver<Job, 64>::create(**node, "jobs");   // node A
//     auto out = ferry::net::ChannelSender<Job>::open(*other, peer_a, "jobs");     // node B
//     out->send(job);                                  // blocks while the receiver is full
//     auto next = jobs->receive_for(5ms);              // Result<Job>
//
// Semantics: those of ferry::ipc::Channel across nodes — send/try_send/send_for/send_until,
// receive/try_receive/receive_for/receive_until, the same Status codes. Many senders may feed
// one receiver. The capacity is held end to end by credits: the receiver never holds more than
// Capacity undelivered messages from all its senders together, and a sender sends only with a
// credit the receiver granted (full / timed_out otherwise; never unbounded memory). stop() on
// either side is sticky and wakes blocked callers on both sides; the receiver drains what it
// got, then answers stopped. A lost peer answers peer_lost (docs/multi-node-channels.md,
// Failure). T is copied byte for byte; a pointer inside it means nothing on the other node.

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ferry/channel/capacity.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/detail/channel_receiver.hpp>
#include <ferry/net/detail/channel_sender.hpp>
#include <ferry/net/node.hpp>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace ferry::net {

// A typed message travels whole in one eager UCX message; larger data goes through
// MessageSender / MessageReceiver (message_channel.hpp), which take UCX's rendezvous path.
inline constexpr std::size_t k_max_typed_bytes = 1024;

template <typename T>
concept NetSendable =
    std::is_trivially_copyable_v<T> && std::is_object_v<T> && !std::is_const_v<T> &&
    sizeof(T) <= k_max_typed_bytes;

namespace detail {
// A channel name: 1 to k_max_name_bytes bytes (any bytes; it travels in the OPEN).
[[nodiscard]] constexpr bool valid_channel_name(std::string_view name) noexcept {
    return !name.empty() && name.size() <= k_max_name_bytes;
}
} // namespace detail

template <NetSendable T, std::size_t Capacity>
requires(is_valid_channel_capacity(Capacity)) class ChannelReceiver {
public:
    using value_type = T;
    using clock = Timeout::clock;

    // Serves the channel `name` on `node`. invalid_param for an empty or over-long (255) name;
    // repeat_initialize when a receiver on this node already serves a name with the same
    // FNV-1a hash (the name itself, or a colliding one); bad_alloc. The node must outlive it.
    [[nodiscard]] static Result<ChannelReceiver> create(Node& node,
                                                        std::string_view name) noexcept {
        if (!detail::valid_channel_name(name)) {
            return Status::invalid_param;
        }
        try {
            auto state = std::make_shared<detail::ReceiverState>(
                node, std::string(name), detail::Flavor::typed, sizeof(T), Capacity);
            if (const Status s = state->serve(); s != Status::ok) {
                return s;
            }
            return ChannelReceiver(std::move(state));
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    ChannelReceiver(ChannelReceiver&&) noexcept = default;
    ChannelReceiver& operator=(ChannelReceiver&& other) noexcept {
        if (this != &other) {
            close();
            state_ = std::move(other.state_);
        }
        return *this;
    }
    ChannelReceiver(const ChannelReceiver&) = delete;
    ChannelReceiver& operator=(const ChannelReceiver&) = delete;
    ~ChannelReceiver() { close(); }

    // Stops the channel (its senders answer stopped) and stops serving the name. Idempotent;
    // later calls answer uninitialized.
    void close() noexcept {
        if (state_) {
            guarded([&] { state_->leave(); });
            state_.reset();
        }
    }
    [[nodiscard]] bool is_open() const noexcept { return state_ != nullptr; }

    // ---- receive ----------------------------------------------------------------------------
    Result<T> receive(Timeout timeout = forever) noexcept {
        return receive_result(detail::Deadline::of(timeout));
    }
    Result<T> try_receive() noexcept { return receive(no_wait); }
    template <typename Rep, typename Period>
    Result<T> receive_for(std::chrono::duration<Rep, Period> timeout) noexcept {
        return receive(Timeout(timeout));
    }
    template <typename Duration>
    Result<T> receive_until(std::chrono::time_point<clock, Duration> deadline) noexcept {
        return receive_result(detail::Deadline::until(deadline));
    }
    // Into an existing object; `out` is untouched on failure.
    Status receive(T& out, Timeout timeout = forever) noexcept {
        return receive_bytes(&out, detail::Deadline::of(timeout));
    }

    // ---- stop / size ------------------------------------------------------------------------
    // Sticky; tells every sender (their blocked and later sends answer stopped) and wakes this
    // side's blocked receivers, which drain what arrived and then answer stopped.
    void stop() noexcept {
        if (state_) {
            guarded([&] { state_->stop(); });
        }
    }
    [[nodiscard]] bool stopped() const noexcept { return !state_ || state_->stopped(); }
    // True once a sender's node was lost (sticky): receive answers peer_lost once drained.
    [[nodiscard]] bool lost() const noexcept { return state_ && state_->lost(); }
    // Messages arrived and not yet received (a rendezvous still landing counts).
    [[nodiscard]] std::size_t size() const noexcept { return state_ ? state_->size() : 0; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] static constexpr std::size_t capacity() noexcept { return Capacity; }
    // This process's calls parked in receive (after their spin phase).
    [[nodiscard]] std::size_t blocked() const noexcept { return state_ ? state_->blocked() : 0; }
    // Senders that opened and have not closed or been lost.
    [[nodiscard]] std::size_t senders() const noexcept { return state_ ? state_->senders() : 0; }

private:
    explicit ChannelReceiver(std::shared_ptr<detail::ReceiverState> s) noexcept
        : state_(std::move(s)) {}

    template <typename F>
    static Status guarded(F f) noexcept {
        try {
            f();
            return Status::ok;
        } catch (const std::bad_alloc&) { // a control message could not be queued
            return Status::bad_alloc;
        }
    }
    Status receive_bytes(void* out, detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        try {
            detail::Taken t;
            const Status s = state_->take(t, d);
            if (s == Status::ok) {
                std::memcpy(out, t.bytes.data(), sizeof(T));
                state_->give_back(t);
            }
            return s;
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }
    // T need not be default-constructible: the bytes land in raw storage, and a trivially
    // copyable T is an implicit-lifetime type, so the copy creates the object.
    Result<T> receive_result(detail::Deadline d) noexcept {
        alignas(T) std::byte storage[sizeof(T)];
        const Status s = receive_bytes(storage, d);
        return s == Status::ok ? Result<T>(*std::launder(reinterpret_cast<T*>(storage)))
                               : Result<T>(s);
    }

    std::shared_ptr<detail::ReceiverState> state_;
};

template <NetSendable T>
class ChannelSender {
public:
    using value_type = T;
    using clock = Timeout::clock;

    // Opens the channel `name` served by the connected peer `peer`: waits (up to `wait`) for
    // the receiver's answer. invalid_param (bad name); invalid_file (the peer serves no such
    // name); unsupported_data_type (it carries another T size, or is a message channel);
    // stopped (it was stopped); peer_lost (not a live peer, or the receiver's channel is lost);
    // timed_out; bad_alloc. The node must outlive the sender.
    [[nodiscard]] static Result<ChannelSender>
    open(Node& node, PeerId peer, std::string_view name,
         Timeout wait = std::chrono::seconds(5)) noexcept {
        if (!detail::valid_channel_name(name)) {
            return Status::invalid_param;
        }
        try {
            auto state =
                std::make_shared<detail::SenderState>(node, peer, detail::Flavor::typed, sizeof(T));
            const Status s = state->open(std::string(name), detail::Deadline::of(wait));
            if (s != Status::ok) {
                state->leave();
                return s;
            }
            return ChannelSender(std::move(state));
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    ChannelSender(ChannelSender&&) noexcept = default;
    ChannelSender& operator=(ChannelSender&& other) noexcept {
        if (this != &other) {
            close();
            state_ = std::move(other.state_);
        }
        return *this;
    }
    ChannelSender(const ChannelSender&) = delete;
    ChannelSender& operator=(const ChannelSender&) = delete;
    ~ChannelSender() { close(); }

    // Leaves the channel (not a stop: the receiver and other senders go on); its unused
    // credits go back to the receiver. Waits (at most 1 s) until the receiver took the CLOSE,
    // so that a process that closes and exits is not taken for lost. Idempotent; later calls
    // answer uninitialized.
    void close() noexcept {
        if (state_) {
            try {
                state_->leave();
            } catch (const std::bad_alloc&) { // the CLOSE could not be queued: credits stay lent
            }
            state_.reset();
        }
    }
    [[nodiscard]] bool is_open() const noexcept { return state_ != nullptr; }

    // ---- send -------------------------------------------------------------------------------
    // ok once the message is handed to UCX with a credit (it will be delivered unless the
    // receiver's node is lost); full (no_wait), timed_out, stopped, peer_lost, bad_alloc.
    Status send(const T& value, Timeout timeout = forever) noexcept {
        return send_at(value, detail::Deadline::of(timeout));
    }
    Status try_send(const T& value) noexcept { return send(value, no_wait); }
    template <typename Rep, typename Period>
    Status send_for(const T& value, std::chrono::duration<Rep, Period> timeout) noexcept {
        return send(value, Timeout(timeout));
    }
    template <typename Duration>
    Status send_until(const T& value, std::chrono::time_point<clock, Duration> deadline) noexcept {
        return send_at(value, detail::Deadline::until(deadline));
    }

    // Sticky; tells the receiver, which stops the channel for everyone (its blocked receives
    // drain and answer stopped; the other senders answer stopped). Returns once the receiver
    // answered (one round trip), was lost, or after 1 s.
    void stop() noexcept {
        if (state_) {
            try {
                state_->stop();
            } catch (const std::bad_alloc&) { // stopped here; the receiver was not told
            }
        }
    }
    [[nodiscard]] bool stopped() const noexcept { return !state_ || state_->stopped(); }
    // True once the receiver's node was lost (sticky): every send answers peer_lost.
    [[nodiscard]] bool lost() const noexcept { return state_ && state_->lost(); }
    // The receiver's capacity.
    [[nodiscard]] std::size_t capacity() const noexcept { return state_ ? state_->capacity() : 0; }
    // Credits this sender holds: sends that can go without waiting.
    [[nodiscard]] std::size_t credits() const noexcept { return state_ ? state_->credits() : 0; }
    // This process's calls parked in send (after their spin phase).
    [[nodiscard]] std::size_t blocked() const noexcept { return state_ ? state_->blocked() : 0; }

private:
    explicit ChannelSender(std::shared_ptr<detail::SenderState> s) noexcept
        : state_(std::move(s)) {}

    Status send_at(const T& value, detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        try {
            auto box = std::make_shared<T>(value); // UCX may read it after send returns
            if (const Status s = state_->acquire_credit(d); s != Status::ok) {
                return s;
            }
            const auto bytes = std::as_bytes(std::span(box.get(), 1));
            return state_->post_data(bytes, std::move(box));
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }

    std::shared_ptr<detail::SenderState> state_;
};

} // namespace ferry::net
