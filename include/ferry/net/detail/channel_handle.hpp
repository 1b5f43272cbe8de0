#pragma once
// What the typed and the message flavours of a remote channel share at the public surface:
// ReceiverHandle (base of net::ChannelReceiver and net::MessageReceiver) and SenderHandle (base
// of net::ChannelSender and net::MessageSender), over StateHandle, own the shared state, make it
// (create / open), and forward close, stop and the counters to it, so that both flavours answer
// alike (docs/multi-node-channels.md). Bases only: their constructors, moves and destructor are
// protected, so a handle is never sliced off its channel. Moving onto an open handle closes it
// first; every call on a closed (or moved-from) handle answers uninitialized, 0 or stopped.

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <ferry/channel/stats.hpp>
#include <ferry/core/expected.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/detail/channel_receiver.hpp>
#include <ferry/net/detail/channel_sender.hpp>
#include <ferry/net/node.hpp>
#include <ferry/runtime/profiler.hpp>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::net::detail {

// A channel name: 1 to k_max_name_bytes bytes (any bytes; it travels in the OPEN).
[[nodiscard]] constexpr bool valid_channel_name(std::string_view name) noexcept {
    return !name.empty() && name.size() <= k_max_name_bytes;
}

// A Timeout as a wait in milliseconds for await_open (forever: the longest there is).
[[nodiscard]] inline std::chrono::milliseconds bounded_milliseconds(const Timeout& t) noexcept {
    if (t.is_forever()) {
        return std::chrono::milliseconds::max();
    }
    return t.is_no_wait() ? std::chrono::milliseconds(0)
                          : std::chrono::ceil<std::chrono::milliseconds>(t.duration());
}

// Why a create (serve) or an open failed, in words (docs/core.md, Expected). Out of memory for
// the sentence leaves the status with an empty message.
[[nodiscard]] inline Error channel_error(Status s, std::string_view name, PeerId peer) noexcept {
    try {
        const std::string channel = "ferry/net: channel '" + std::string(name) + "'";
        const std::string on = peer == 0 ? "" : " on peer " + std::to_string(peer);
        switch (s) {
        case Status::invalid_param:
            return {s,
                    channel + ": a name must have 1 to " + std::to_string(k_max_name_bytes) +
                        " bytes",
                    0};
        case Status::repeat_initialize:
            return {s, channel + ": this node already serves it (or a name of the same hash)", 0};
        case Status::not_found:
            return {s, channel + on + ": no receiver serves that name", 0};
        case Status::mismatch:
            return {s, channel + on + ": it carries another kind or size of message", 0};
        case Status::stopped:
            return {s, channel + on + ": it was stopped", 0};
        case Status::peer_lost:
            return {s, channel + on + ": not a live peer, or lost", 0};
        case Status::timed_out:
            return {s, channel + on + ": no answer within the wait", 0};
        default:
            return {s, channel + on + ": " + name_of(s), 0};
        }
    } catch (const std::bad_alloc&) {
        return {s, {}, 0};
    }
}

// The part both ends share: the state (ReceiverState or SenderState) and what forwards to it.
template <typename State>
class StateHandle {
public:
    // Closes this end. A receiver stops the channel (its senders answer stopped) and stops
    // serving the name; views taken from a message receiver stay readable. A sender leaves
    // the channel (not a stop: the receiver and other senders go on); its unused credits go
    // back to the receiver, and it waits (at most 1 s) until the receiver took the CLOSE, so
    // that a process that closes and exits is not taken for lost. Idempotent; later calls
    // answer uninitialized. bad_alloc: closed, but the other side was not told.
    Expected<void> close() noexcept {
        if (!state_) {
            return {};
        }
        Expected<void> done;
        try {
            state_->leave();
        } catch (const std::bad_alloc&) { // the other side was not told (credits stay lent)
            done = Error{Status::bad_alloc, {}, 0};
        }
        state_.reset();
        return done;
    }
    [[nodiscard]] bool is_open() const noexcept { return state_ != nullptr; }

    // Sticky. A receiver tells every sender (their blocked and later sends answer stopped)
    // and wakes its side's blocked receivers, which drain what arrived and then answer
    // stopped. A sender tells the receiver, which stops the channel for everyone (its blocked
    // receives drain and answer stopped; the other senders answer stopped), and returns once
    // the receiver answered (one round trip), was lost, or after 1 s.
    void stop() noexcept {
        if (state_) {
            try {
                state_->stop();
            } catch (const std::bad_alloc&) { // stopped here; the other side was not told
            }
        }
    }
    [[nodiscard]] bool stopped() const noexcept { return !state_ || state_->stopped(); }
    // True once the other side's node was lost (sticky): a sender's sends answer peer_lost; a
    // receiver's receive answers peer_lost once drained (any one sender's node suffices).
    [[nodiscard]] bool lost() const noexcept { return state_ && state_->lost(); }
    // This process's calls parked in send / receive (after their spin phase).
    [[nodiscard]] std::size_t blocked() const noexcept { return state_ ? state_->blocked() : 0; }
    // What this end counted (docs/multi-node-channels.md, Counters): a sender its sends, a
    // receiver its receives; zero once closed.
    [[nodiscard]] ChannelStats stats() const noexcept {
        return state_ ? state_->counters.snapshot() : ChannelStats{};
    }

protected:
    explicit StateHandle(std::shared_ptr<State> s) noexcept : state_(std::move(s)) {}
    StateHandle(StateHandle&&) noexcept = default;
    StateHandle& operator=(StateHandle&& other) noexcept {
        if (this != &other) {
            static_cast<void>(close());
            state_ = std::move(other.state_);
        }
        return *this;
    }
    StateHandle(const StateHandle&) = delete;
    StateHandle& operator=(const StateHandle&) = delete;
    ~StateHandle() { static_cast<void>(close()); }

    using ParkedTime = typename decltype(State::counters)::ParkedTime;

    std::shared_ptr<State> state_;
};

class ReceiverHandle : public StateHandle<ReceiverState> {
public:
    // Messages arrived (a rendezvous still landing counts) and not yet taken; a message read
    // through a view no longer counts, though its buffer is still taken.
    [[nodiscard]] std::size_t size() const noexcept { return state_ ? state_->size() : 0; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    // Senders that opened and have not closed or been lost.
    [[nodiscard]] std::size_t senders() const noexcept { return state_ ? state_->senders() : 0; }

protected:
    explicit ReceiverHandle(std::shared_ptr<ReceiverState> s) noexcept
        : StateHandle(std::move(s)) {}
    ReceiverHandle(ReceiverHandle&&) noexcept = default;
    ReceiverHandle& operator=(ReceiverHandle&&) noexcept = default;
    ~ReceiverHandle() = default;

    // state_->take, counted: a first attempt without waiting; only when that finds nothing (and
    // the caller may wait) the waiting take, timed. The handle must be open.
    Status take_counted(Taken& t, Deadline d) {
        auto& counters = state_->counters;
        Status s = state_->take(t, Deadline::of(no_wait));
        if (s == Status::empty) {
            counters.found_empty();
            if (d.may_wait) {
                const ParkedTime parked(counters, ferry::detail::ChannelSide::receive);
                s = state_->take(t, d);
            }
        }
        if (s == Status::ok &&
            counters.received(t.bytes.size()) % ferry::detail::k_high_water_sample == 0) {
            counters.observed_depth(state_->size() + 1); // the depth before this take
        }
        return s;
    }

    // A state serving `name` on `node`: invalid_param (bad name), repeat_initialize (the name's
    // hash is served on this node), bad_alloc.
    [[nodiscard]] static Expected<std::shared_ptr<ReceiverState>>
    serve(Node& node, std::string_view name, Flavor flavor, std::size_t element_bytes,
          std::size_t capacity) noexcept {
        Status s = Status::invalid_param;
        if (valid_channel_name(name)) {
            try {
                auto state = std::make_shared<ReceiverState>(node, std::string(name), flavor,
                                                             element_bytes, capacity);
                if (s = state->serve(); s == Status::ok) {
                    return state;
                }
            } catch (const std::bad_alloc&) {
                s = Status::bad_alloc;
            }
        }
        return channel_error(s, name, 0);
    }
};

class SenderHandle : public StateHandle<SenderState> {
public:
    // The receiver's capacity.
    [[nodiscard]] std::size_t capacity() const noexcept { return state_ ? state_->capacity() : 0; }
    // Credits this sender holds: sends that can go without waiting.
    [[nodiscard]] std::size_t credits() const noexcept { return state_ ? state_->credits() : 0; }

protected:
    explicit SenderHandle(std::shared_ptr<SenderState> s) noexcept : StateHandle(std::move(s)) {}
    SenderHandle(SenderHandle&&) noexcept = default;
    SenderHandle& operator=(SenderHandle&&) noexcept = default;
    ~SenderHandle() = default;

    // A state that opened `name` on `peer` (waiting up to `wait` for the answer): invalid_param
    // (bad name), the receiver's refusal, timed_out, peer_lost, bad_alloc. A failed open leaves
    // at once, so the receiver does not keep it as a sender.
    [[nodiscard]] static Expected<std::shared_ptr<SenderState>>
    open_state(Node& node, PeerId peer, std::string_view name, Flavor flavor,
               std::size_t element_bytes, Timeout wait) noexcept {
        Status s = Status::invalid_param;
        if (valid_channel_name(name)) {
            try {
                auto state = std::make_shared<SenderState>(node, peer, flavor, element_bytes);
                if (s = state->open(std::string(name), Deadline::of(wait)); s == Status::ok) {
                    return state;
                }
                state->leave();
            } catch (const std::bad_alloc&) {
                s = Status::bad_alloc;
            }
        }
        return channel_error(s, name, peer);
    }

    // Takes a credit (waiting until `d`) and hands `bytes` to UCX, which may read them after
    // this returns: `owner` keeps them alive; without one (nullptr) the Node copies what it
    // keeps. ok, full, timed_out, stopped, peer_lost, bad_alloc. The handle must be open.
    Status post_with_credit(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                            Deadline d) noexcept {
        const TraceSpan trace("net.send", "channel");
        auto& counters = state_->counters;
        Status s = Status::bad_alloc;
        try {
            s = state_->acquire_credit(Deadline::of(no_wait));
            if (s == Status::full) {
                counters.found_full(0); // out of credits; the receiver's depth is its own
                if (d.may_wait) {
                    const ParkedTime parked(counters, ferry::detail::ChannelSide::send);
                    s = state_->acquire_credit(d);
                }
            }
            if (s == Status::ok) {
                s = state_->post_data(bytes, 1, std::move(owner));
            }
        } catch (const std::bad_alloc&) {
            s = Status::bad_alloc;
        }
        if (s == Status::ok) {
            counters.sent(bytes.size(), [] { return std::size_t{0}; });
        } else {
            counters.refused();
        }
        return s;
    }

    // Posts the messages of `bytes` (each `element` bytes) in order, packing into each DATA as
    // many as the credits held allow (at most max_batch(element)), waiting until `d` for
    // credits. `sent`: how many went (a prefix). ok when all did; else as post_with_credit.
    // The handle must be open.
    Status post_n_with_credits(std::span<const std::byte> bytes, std::size_t element,
                               std::size_t& sent, Deadline d) noexcept {
        sent = 0;
        const std::size_t total = bytes.size() / element;
        const Status s = post_batches(bytes, element, total, sent, d);
        auto& counters = state_->counters;
        for (std::size_t i = 0; i < sent; ++i) {
            counters.sent(element, [] { return std::size_t{0}; });
        }
        if (s != Status::ok) {
            counters.refused();
        }
        return s;
    }

private:
    Status post_batches(std::span<const std::byte> bytes, std::size_t element, std::size_t total,
                        std::size_t& sent, Deadline d) noexcept {
        try {
            while (sent < total) {
                const std::size_t most = std::min(total - sent, max_batch(element));
                std::uint64_t got = 0;
                if (const Status s = state_->acquire_credits(d, most, got); s != Status::ok) {
                    return s;
                }
                // Copied by the Node where it must keep them: a batch (at most 4 KiB) goes
                // inside the call from the Node's reused buffer, allocating nothing.
                const auto payload = bytes.subspan(sent * element, got * element);
                if (const Status s = state_->post_data(payload, got, nullptr); s != Status::ok) {
                    return s;
                }
                sent += got;
            }
            return Status::ok;
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }
};

} // namespace ferry::net::detail
