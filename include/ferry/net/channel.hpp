#pragma once
// ferry::net::ChannelReceiver<T, Capacity> and ChannelSender<T> — a bounded, typed channel
// between processes on different nodes, over ferry::net::Node (docs/multi-node-channels.md).
//
//     auto node = ferry::net::Node::start({.listen = "127.0.0.1:0", .secret = secret});
//     auto jobs = ferry::net::ChannelReceiver<Job, 64>::create(**node, "jobs");   // node A
//     auto out = ferry::net::ChannelSender<Job>::open(*other, peer_a, "jobs");     // node B
//     out->send(job);                                  // blocks while the receiver is full
//     out->send_n(jobs_batch, sent);                   // many per network message
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
#include <ferry/net/detail/channel_handle.hpp>
#include <ferry/net/node.hpp>
#include <ferry/runtime/profiler.hpp>
#include <memory>
#include <new>
#include <span>
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

template <NetSendable T, std::size_t Capacity>
requires(is_valid_channel_capacity(Capacity)) class ChannelReceiver
    : public detail::ReceiverHandle {
public:
    using value_type = T;
    using clock = Timeout::clock;

    // Serves the channel `name` on `node`. invalid_param for an empty or over-long (255) name;
    // repeat_initialize when a receiver on this node already serves a name with the same
    // FNV-1a hash (the name itself, or a colliding one); bad_alloc. The node must outlive it.
    [[nodiscard]] static Expected<ChannelReceiver> create(Node& node,
                                                          std::string_view name) noexcept {
        auto state = serve(node, name, detail::Flavor::typed, sizeof(T), Capacity);
        if (!state) {
            return state.error();
        }
        return ChannelReceiver(std::move(*state));
    }

    // Move-only; close, is_open, stop, stopped, lost, size, empty, blocked and senders come
    // from detail::ReceiverHandle (closing stops the channel and stops serving the name).

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

    // ---- size -------------------------------------------------------------------------------
    [[nodiscard]] static constexpr std::size_t capacity() noexcept { return Capacity; }

private:
    explicit ChannelReceiver(std::shared_ptr<detail::ReceiverState> s) noexcept
        : ReceiverHandle(std::move(s)) {}

    Status receive_bytes(void* out, detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        const TraceSpan trace("net.receive", "channel");
        try {
            detail::Taken t;
            const Status s = take_counted(t, d);
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
};

template <NetSendable T>
class ChannelSender : public detail::SenderHandle {
public:
    using value_type = T;
    using clock = Timeout::clock;

    // Opens the channel `name` served by the connected peer `peer`: waits (up to `wait`) for
    // the receiver's answer. invalid_param (bad name); not_found (the peer serves no such
    // name); mismatch (it carries another T size, or is a message channel);
    // stopped (it was stopped); peer_lost (not a live peer, or the receiver's channel is lost);
    // timed_out; bad_alloc. The node must outlive the sender.
    [[nodiscard]] static Expected<ChannelSender>
    open(Node& node, PeerId peer, std::string_view name,
         Timeout wait = std::chrono::seconds(5)) noexcept {
        auto state = open_state(node, peer, name, detail::Flavor::typed, sizeof(T), wait);
        if (!state) {
            return state.error();
        }
        return ChannelSender(std::move(*state));
    }
    // Opens, waiting up to `wait` for the peer to serve the name as well (open answers
    // not_found at once when it does not); not_found when it never did.
    [[nodiscard]] static Expected<ChannelSender> await_open(Node& node, PeerId peer,
                                                            std::string_view name, Timeout wait) {
        return retry_while_not_found(detail::bounded_milliseconds(wait), [&](auto left) {
            return open(node, peer, name, Timeout(left));
        });
    }

    // Move-only; close (leaves the channel, not a stop), is_open, stop, stopped, lost,
    // capacity, credits and blocked come from detail::SenderHandle.

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

    // ---- send a batch ------------------------------------------------------------------------
    // Sends `values` in order, as send() would one by one — one credit per message, the same
    // statuses — but packs as many as this sender holds credits for (up to 4 KiB, at least one
    // message) into each UCX message: one network send per batch instead of per message. The
    // receiver still receives them one by one. `timeout` bounds the whole call. `sent` is always
    // set: how many of the first values were handed to UCX; ok means all of them. With no_wait
    // the values that credits allow go, then full. An empty span answers ok at once.
    Status send_n(std::span<const T> values, std::size_t& sent,
                  Timeout timeout = forever) noexcept {
        return send_n_at(values, sent, detail::Deadline::of(timeout));
    }
    Status try_send_n(std::span<const T> values, std::size_t& sent) noexcept {
        return send_n(values, sent, no_wait);
    }
    template <typename Duration>
    Status send_n_until(std::span<const T> values, std::size_t& sent,
                        std::chrono::time_point<clock, Duration> deadline) noexcept {
        return send_n_at(values, sent, detail::Deadline::until(deadline));
    }

private:
    explicit ChannelSender(std::shared_ptr<detail::SenderState> s) noexcept
        : SenderHandle(std::move(s)) {}

    Status send_at(const T& value, detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        // The Node copies what UCX may read after send returns (nothing, for a message that
        // goes inside the call).
        return post_with_credit(std::as_bytes(std::span(&value, 1)), nullptr, d);
    }
    Status send_n_at(std::span<const T> values, std::size_t& sent, detail::Deadline d) noexcept {
        sent = 0;
        if (!state_) {
            return Status::uninitialized;
        }
        return post_n_with_credits(std::as_bytes(values), sizeof(T), sent, d);
    }
};

} // namespace ferry::net
