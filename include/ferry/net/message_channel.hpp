#pragma once
// ferry::net::MessageReceiver and MessageSender — datasets (or raw messages) of any size up to a
// limit fixed by the receiver, between nodes, over ferry::net::Node.
//
//     auto feed = ferry::net::MessageReceiver::create(node, "feed", 8, 4 << 20);   // node A
//     auto out = ferry::net::MessageSender::open(other, peer_a, "feed");           // node B
//     out->send(dataset);                       // serialize, then one UCX send
//     auto loan = out->loan(n);                 // or write a message in place ...
//     out->send(std::move(*loan));              // ... and send it without a copy
//     auto ds = feed->receive(10s);             // parse: a dataset owning its payloads
//     auto view = feed->receive_view();         // or read in place until view->release()
//
// The receiver owns a pool of `capacity` buffers of max_message_bytes each; a sender holds one
// credit per buffer it may fill (docs/multi-node-channels.md, Credits). A large message comes
// by UCX's rendezvous protocol straight into its pool buffer: ferry copies nothing on the
// receiving side until the caller parses (receive) — or not at all (receive_view). Otherwise
// the semantics of net::ChannelReceiver / ChannelSender (stop both ways, drain, peer_lost).

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ferry/channel/capacity.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/channel.hpp>
#include <ferry/net/detail/channel_handle.hpp>
#include <ferry/net/detail/send_buffers.hpp>
#include <ferry/net/node.hpp>
#include <ferry/runtime/profiler.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace ferry::net {

// The largest max_message_bytes a receiver accepts (1 GiB); its pool holds capacity of them.
inline constexpr std::size_t k_max_net_message_bytes = std::size_t{1} << 30;

// A received message read in place, in its pool buffer. The buffer stays taken — and its
// credit unreturned — until release() or destruction. A dataset() borrows from the buffer: it
// must not outlive the view's release.
class MessageView {
public:
    MessageView() noexcept = default;
    MessageView(MessageView&& other) noexcept
        : state_(std::move(other.state_)), taken_(std::exchange(other.taken_, {})) {}
    MessageView& operator=(MessageView&& other) noexcept {
        if (this != &other) {
            release();
            state_ = std::move(other.state_);
            taken_ = std::exchange(other.taken_, {});
        }
        return *this;
    }
    MessageView(const MessageView&) = delete;
    MessageView& operator=(const MessageView&) = delete;
    ~MessageView() { release(); }

    [[nodiscard]] bool active() const noexcept { return state_ != nullptr; }
    // The message; empty once released.
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return taken_.bytes; }
    // The message as a dataset whose items borrow their payloads from the buffer (wire_format
    // parse_view). The parser's status when the bytes are not a dataset's message;
    // invalid_param once released.
    [[nodiscard]] Result<Dataset> dataset() const noexcept {
        if (!active()) {
            return Status::invalid_param;
        }
        return parse_view(taken_.bytes);
    }
    // Hands the buffer back (and, batched, its credit to the senders); idempotent.
    void release() noexcept {
        if (active()) {
            try {
                state_->give_back(taken_);
            } catch (const std::bad_alloc&) { // the buffer is free; a credit message was lost
            }
            state_.reset();
            taken_ = {};
        }
    }

private:
    friend class MessageReceiver;
    MessageView(std::shared_ptr<detail::ReceiverState> state, detail::Taken taken) noexcept
        : state_(std::move(state)), taken_(taken) {}

    std::shared_ptr<detail::ReceiverState> state_;
    detail::Taken taken_;
};

class MessageReceiver : public detail::ReceiverHandle {
public:
    using View = MessageView;

    // Serves `name` on `node` with `capacity` buffers of `max_message_bytes`. invalid_param for
    // a bad name, a capacity outside [2, 8192] or max_message_bytes outside
    // [1, k_max_net_message_bytes]; repeat_initialize (the name's hash is served on this node);
    // bad_alloc (the pool). The node must outlive the receiver and its views.
    [[nodiscard]] static Expected<MessageReceiver> create(Node& node, std::string_view name,
                                                          std::size_t capacity,
                                                          std::size_t max_message_bytes) noexcept {
        // serve checks the name (invalid_param too), before anything is made
        if (!is_valid_channel_capacity(capacity) || max_message_bytes == 0 ||
            max_message_bytes > k_max_net_message_bytes) {
            return Error{Status::invalid_param,
                         "ferry/net: message channel: capacity outside [2, 8192] or message size "
                         "outside [1, k_max_net_message_bytes]",
                         0};
        }
        auto state = serve(node, name, detail::Flavor::message, max_message_bytes, capacity);
        if (!state) {
            return state.error();
        }
        return MessageReceiver(std::move(*state));
    }

    // Move-only; close (views taken stay readable), is_open, stop, stopped, lost, size, empty,
    // blocked and senders come from detail::ReceiverHandle.

    // The next message, read in place: empty (no_wait), timed_out, stopped (once drained),
    // peer_lost (a sender was lost, once drained).
    Result<View> receive_view(Timeout timeout = forever) noexcept {
        return view_at(detail::Deadline::of(timeout));
    }
    template <typename Duration>
    Result<View> receive_view_until(std::chrono::time_point<Timeout::clock, Duration> d) noexcept {
        return view_at(detail::Deadline::until(d));
    }
    // A dataset owning copies of the payloads. A message that is not a dataset's is consumed
    // and the parser's status returned.
    Result<Dataset> receive(Timeout timeout = forever) noexcept {
        auto view = receive_view(timeout);
        if (!view) {
            return view.status();
        }
        return parse(view->bytes()); // the view hands the buffer back after the copy
    }
    Result<Dataset> try_receive() noexcept { return receive(no_wait); }
    template <typename Duration>
    Result<Dataset>
    receive_until(std::chrono::time_point<Timeout::clock, Duration> deadline) noexcept {
        auto view = receive_view_until(deadline);
        if (!view) {
            return view.status();
        }
        return parse(view->bytes());
    }
    template <typename Rep, typename Period>
    Result<Dataset> receive_for(std::chrono::duration<Rep, Period> timeout) noexcept {
        return receive(Timeout(timeout));
    }
    // Refills `out` (wire_format parse_into); invalid_param, before anything is taken, when
    // `out` holds items the caller added.
    Status receive(Dataset& out, Timeout timeout = forever) noexcept {
        if (!out.accepts_receive()) {
            return Status::invalid_param;
        }
        auto view = receive_view(timeout);
        if (!view) {
            return view.status();
        }
        return parse_into(out, view->bytes());
    }

    // The number of buffers in the pool, and the size of each.
    [[nodiscard]] std::size_t capacity() const noexcept { return state_ ? state_->capacity() : 0; }
    [[nodiscard]] std::size_t max_message_bytes() const noexcept {
        return state_ ? state_->element_bytes() : 0;
    }

private:
    explicit MessageReceiver(std::shared_ptr<detail::ReceiverState> s) noexcept
        : ReceiverHandle(std::move(s)) {}

    Result<View> view_at(detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        const TraceSpan trace("net.receive", "channel");
        try {
            detail::Taken t;
            if (const Status s = take_counted(t, d); s != Status::ok) {
                return s;
            }
            return View(state_, t);
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }
};

// A buffer of a MessageSender's own to write one message into, then send without a copy
// (MessageSender::loan, send(MessageLoan&&)). Dropping a loan unsent gives the buffer back.
class MessageLoan {
public:
    MessageLoan() noexcept = default;
    // The message's bytes, to write (contents unspecified until written).
    [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {buffer_.get(), size_}; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    // False for a default-made loan and one that was sent.
    explicit operator bool() const noexcept { return buffer_ != nullptr; }

private:
    friend class MessageSender;
    MessageLoan(std::shared_ptr<std::byte> buffer, std::size_t size) noexcept
        : buffer_(std::move(buffer)), size_(size) {}

    std::shared_ptr<std::byte> buffer_;
    std::size_t size_ = 0;
};

class MessageSender : public detail::SenderHandle {
public:
    // Opens the message channel `name` served by `peer`; as ChannelSender::open
    // (mismatch when `name` is a typed channel).
    [[nodiscard]] static Expected<MessageSender>
    open(Node& node, PeerId peer, std::string_view name,
         Timeout wait = std::chrono::seconds(5)) noexcept {
        auto state = open_state(node, peer, name, detail::Flavor::message, 0, wait);
        if (!state) {
            return state.error();
        }
        return MessageSender(std::move(*state));
    }
    // Opens, waiting up to `wait` for the peer to serve the name as well; as
    // ChannelSender::await_open.
    [[nodiscard]] static Expected<MessageSender> await_open(Node& node, PeerId peer,
                                                            std::string_view name, Timeout wait) {
        return retry_while_not_found(detail::bounded_milliseconds(wait), [&](auto left) {
            return open(node, peer, name, Timeout(left));
        });
    }

    // Move-only; close (leaves, not a stop), is_open, stop, stopped, lost, capacity, credits
    // and blocked come from detail::SenderHandle.

    // Serializes `ds` (ferry's wire format) and sends it with a credit. invalid_param when the
    // message is larger than max_message_bytes(), or serialized_size's error for a dataset that
    // cannot be sent — checked before anything is sent or a credit spent. Otherwise ok, full
    // (no_wait), timed_out, stopped, peer_lost, bad_alloc.
    Status send(const Dataset& ds, Timeout timeout = forever) noexcept {
        return send_dataset(ds, detail::Deadline::of(timeout));
    }
    Status try_send(const Dataset& ds) noexcept { return send(ds, no_wait); }
    template <typename Duration>
    Status send_until(const Dataset& ds,
                      std::chrono::time_point<Timeout::clock, Duration> deadline) noexcept {
        return send_dataset(ds, detail::Deadline::until(deadline));
    }
    template <typename Rep, typename Period>
    Status send_for(const Dataset& ds, std::chrono::duration<Rep, Period> timeout) noexcept {
        return send(ds, Timeout(timeout));
    }
    // Sends raw bytes as one message (copied first, into a buffer of this sender's: UCX reads
    // them after send returns). invalid_param for an empty message or one over
    // max_message_bytes(), nothing sent.
    Status send(std::span<const std::byte> message, Timeout timeout = forever) noexcept {
        auto into = loan(message.size());
        if (!into) {
            return into.status();
        }
        std::memcpy(into->bytes().data(), message.data(), message.size());
        return send(std::move(*into), timeout);
    }

    // A buffer of `bytes` bytes to write a message into, from this sender's own (reused once a
    // message sent from it has left): send(MessageLoan&&) then sends it without a copy.
    // invalid_param for 0 or over max_message_bytes(); bad_alloc; uninitialized when closed.
    [[nodiscard]] Result<MessageLoan> loan(std::size_t bytes) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        if (bytes == 0 || bytes > max_message_bytes()) {
            return Status::invalid_param;
        }
        try {
            if (!buffers_) {
                buffers_ = std::make_shared<detail::SendBuffers>(capacity());
            }
            return MessageLoan(buffers_->take(bytes), bytes);
        } catch (const std::bad_alloc&) {
            return Status::bad_alloc;
        }
    }
    // Sends a loaned buffer's bytes as one message, without a copy; as send(bytes). On ok the
    // loan is spent (empty); otherwise it is still the caller's, to send again or drop.
    // invalid_param for an empty loan.
    Status send(MessageLoan&& loan, Timeout timeout = forever) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        if (!loan) {
            return Status::invalid_param;
        }
        return post_loan(loan, detail::Deadline::of(timeout));
    }

    // The receiver's limit, learnt when it accepted the open.
    [[nodiscard]] std::size_t max_message_bytes() const noexcept {
        return state_ ? state_->element_bytes() : 0;
    }

private:
    explicit MessageSender(std::shared_ptr<detail::SenderState> s) noexcept
        : SenderHandle(std::move(s)) {}

    Status send_dataset(const Dataset& ds, detail::Deadline d) noexcept {
        if (!state_) {
            return Status::uninitialized;
        }
        const Result<std::size_t> size = serialized_size(ds);
        if (!size) {
            return size.status();
        }
        auto into = loan(*size); // invalid_param over max_message_bytes(): before a credit
        if (!into) {
            return into.status();
        }
        if (const auto written = serialize_into(ds, into->bytes()); !written) {
            return written.status();
        }
        return post_loan(*into, d);
    }
    // Takes a credit and hands the loan's buffer to UCX; the loan is spent on ok.
    Status post_loan(MessageLoan& loan, detail::Deadline d) noexcept {
        const std::span<const std::byte> bytes(loan.buffer_.get(), loan.size_);
        const Status s = post_with_credit(bytes, loan.buffer_, d);
        if (s == Status::ok) {
            loan = MessageLoan();
        }
        return s;
    }

    std::shared_ptr<detail::SendBuffers> buffers_; // made by the first loan
};

} // namespace ferry::net
