#pragma once
// ferry::ipc::MessageChannel — datasets (or raw messages) of any size up to a limit fixed at
// creation, between processes, through a named shared-memory segment.
//
//     auto ch = ferry::ipc::MessageChannel<>::create("feed", 8, 4 << 20);    // process A
//     auto peer = ferry::ipc::MessageChannel<>::open("feed", 8, 4 << 20);    // process B
//     ch->send(dataset);                          // copies: serialize_into the shared cell
//     auto ds = peer->receive(10s);               // copies out: parse
//
//     auto loan = ch->loan(bytes);                // zero copy: write in place, then publish
//     serialize_into(dataset, loan->bytes());  loan->publish();
//     auto view = peer->receive_view();           // reads in place until view->release()
//     auto borrowed = view->dataset();            // items point into the segment
//
// Semantics (full guide: docs/processes.md, Message channels): capacity N holds exactly N
// messages; timeouts are never early; stop from any process is sticky, wakes every blocked call
// in every process and lets receivers drain; a participant that dies makes the channel lost:
// blocked calls (within 100 ms) and every later call answer peer_lost. A dropped loan becomes a
// cancelled marker receivers skip. Policy spsc: one sending and one receiving thread, across
// all processes, at a time; mpmc: any number. stats(): what every process counted on the
// channel, kept in the segment (docs/processes.md, Counters); bytes are message lengths.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/policy.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/ipc/detail/channel_counters.hpp>
#include <ferry/ipc/detail/message_cell.hpp>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <ferry/ipc/error.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace ferry::ipc {

// The largest max_message_bytes a channel accepts (1 GiB less a cell header); the segment holds
// capacity cells of that size, reserved up front in /dev/shm.
inline constexpr std::size_t k_max_message_bytes =
    detail::k_ring_max_cell_bytes - detail::k_cell_header_bytes;

namespace detail {

// What a channel object shares with its loans and views. Each holds it by shared_ptr, so the
// segment stays mapped (and this process registered) until the last of them is gone: a loan or
// view that outlives its channel object is still safe to publish, read or release.
struct MessageState {
    Segment segment;
    SharedRing ring; // this process's handle on the ring in segment's payload
    std::size_t max_message_bytes = 0;
    ProcessCounters<true> counters; // this process's block in segment's counter area

    MessageState(Segment s, std::size_t max) noexcept
        : segment(std::move(s)), max_message_bytes(max) {}
    MessageState(const MessageState&) = delete;
    MessageState& operator=(const MessageState&) = delete;
    // The last live participant to leave removes the name (Segment::close_and_remove_if_last).
    ~MessageState() {
        try {
            static_cast<void>(segment.close_and_remove_if_last());
        } catch (...) { // only an out-of-memory message; the segment is closed either way
        }
    }
};

using MessageClaim = SharedRing::Claim;
using MessageStatePtr = std::shared_ptr<MessageState>;

} // namespace detail

// A cell claimed for one message: write bytes(), then publish(). Dropping (or cancel()) an
// unpublished loan publishes a "cancelled" marker that receivers skip, so the position it held
// never blocks the channel (docs/processes.md, Message channels, Loan rules).
class MessageLoan {
public:
    MessageLoan() noexcept = default;
    MessageLoan(MessageLoan&& other) noexcept
        : state_(std::move(other.state_)), claim_(other.claim_),
          bytes_(std::exchange(other.bytes_, 0)) {}
    MessageLoan& operator=(MessageLoan&& other) noexcept {
        if (this != &other) {
            cancel();
            state_ = std::move(other.state_);
            claim_ = other.claim_;
            bytes_ = std::exchange(other.bytes_, 0);
        }
        return *this;
    }
    MessageLoan(const MessageLoan&) = delete;
    MessageLoan& operator=(const MessageLoan&) = delete;
    ~MessageLoan() { cancel(); }

    // True until published or cancelled.
    [[nodiscard]] bool active() const noexcept { return state_ != nullptr; }
    // The loaned bytes, in the shared cell (64-byte aligned); empty once inactive.
    [[nodiscard]] std::span<std::byte> bytes() const noexcept {
        return active() ? detail::cell_payload(claim_.cell, bytes_) : std::span<std::byte>{};
    }

    // Publishes the first `length` bytes (default: all of bytes()) as one message. invalid_param
    // (the loan stays active, nothing is published) when inactive or `length` > bytes().size().
    Status publish() noexcept { return publish(bytes_); }
    Status publish(std::size_t length) noexcept {
        if (!active() || length > bytes_) {
            return Status::invalid_param;
        }
        finish(detail::CellKind::message, length);
        return Status::ok;
    }
    // Gives the position back unpublished, as a cancelled marker (what the destructor does);
    // idempotent.
    void cancel() noexcept {
        if (active()) {
            finish(detail::CellKind::cancelled, 0);
        }
    }

private:
    template <ChannelPolicy>
    friend class MessageChannel;
    MessageLoan(detail::MessageStatePtr state, detail::MessageClaim claim,
                std::size_t bytes) noexcept
        : state_(std::move(state)), claim_(claim), bytes_(bytes) {}

    void finish(detail::CellKind kind, std::size_t length) noexcept {
        detail::write_cell_header(claim_.cell, kind, length);
        state_->ring.publish(claim_);
        state_->ring.prefetch_next(claim_.position);
        if (kind == detail::CellKind::message) {
            state_->counters.sent(state_->ring, length);
        }
        state_.reset();
        bytes_ = 0;
    }

    detail::MessageStatePtr state_;
    detail::MessageClaim claim_{};
    std::size_t bytes_ = 0;
};

// A received message read in place. Its cell stays taken — and counts against the capacity —
// until release() or destruction. A dataset() borrows from the cell: it must not outlive the
// view's release.
class MessageView {
public:
    MessageView() noexcept = default;
    MessageView(MessageView&& other) noexcept
        : state_(std::move(other.state_)), claim_(other.claim_),
          bytes_(std::exchange(other.bytes_, {})) {}
    MessageView& operator=(MessageView&& other) noexcept {
        if (this != &other) {
            release();
            state_ = std::move(other.state_);
            claim_ = other.claim_;
            bytes_ = std::exchange(other.bytes_, {});
        }
        return *this;
    }
    MessageView(const MessageView&) = delete;
    MessageView& operator=(const MessageView&) = delete;
    ~MessageView() { release(); }

    [[nodiscard]] bool active() const noexcept { return state_ != nullptr; }
    // The message; empty once released.
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
    // The message as a dataset whose items borrow their payloads from the cell (wire_format
    // parse_view): no copy. The parser's status when the bytes are not a dataset's message;
    // invalid_param once released.
    [[nodiscard]] Result<Dataset> dataset() const noexcept {
        if (!active()) {
            return Status::invalid_param;
        }
        return parse_view(bytes_);
    }
    // Hands the cell back to senders; idempotent.
    void release() noexcept {
        if (active()) {
            state_->ring.release(claim_);
            state_.reset();
            bytes_ = {};
        }
    }

private:
    template <ChannelPolicy>
    friend class MessageChannel;
    MessageView(detail::MessageStatePtr state, detail::MessageClaim claim,
                std::span<const std::byte> bytes) noexcept
        : state_(std::move(state)), claim_(claim), bytes_(bytes) {}

    detail::MessageStatePtr state_;
    detail::MessageClaim claim_{};
    std::span<const std::byte> bytes_;
};

template <ChannelPolicy Policy = spsc>
class MessageChannel {
public:
    using Loan = MessageLoan;
    using View = MessageView;
    using policy_type = Policy;

    // Creates the segment `name` (reclaiming a stale one) for `capacity` messages of at most
    // `max_message_bytes` each. invalid_param for a capacity outside [2, 8192] or
    // max_message_bytes outside [1, k_max_message_bytes]; otherwise Segment::create's errors
    // (docs/processes.md, Errors). Never throws.
    [[nodiscard]] static Expected<MessageChannel>
    create(std::string_view name, std::size_t capacity, std::size_t max_message_bytes,
           std::chrono::milliseconds wait = k_default_wait) noexcept;
    // Opens the channel `name` another process created with the same policy, capacity and
    // max_message_bytes (otherwise invalid_file, naming both layouts); waits up to `wait` for a
    // creator still setting it up. Never throws.
    [[nodiscard]] static Expected<MessageChannel>
    open(std::string_view name, std::size_t capacity, std::size_t max_message_bytes,
         std::chrono::milliseconds wait = k_default_wait) noexcept;
    // Opens, or creates when there is no such name; as Channel::open_or_create.
    [[nodiscard]] static Expected<MessageChannel>
    open_or_create(std::string_view name, std::size_t capacity, std::size_t max_message_bytes,
                   std::chrono::milliseconds wait = k_default_wait) {
        return open_or_create_with([&] { return open(name, capacity, max_message_bytes, wait); },
                                   [&] { return create(name, capacity, max_message_bytes, wait); });
    }
    // Opens, waiting up to `wait` for the name to appear as well; as Channel::await_open.
    [[nodiscard]] static Expected<MessageChannel> await_open(std::string_view name,
                                                             std::size_t capacity,
                                                             std::size_t max_message_bytes,
                                                             std::chrono::milliseconds wait) {
        return retry_while_not_found(
            wait, [&](auto left) { return open(name, capacity, max_message_bytes, left); });
    }

    MessageChannel(MessageChannel&&) noexcept = default;
    MessageChannel& operator=(MessageChannel&&) noexcept = default;
    MessageChannel(const MessageChannel&) = delete;
    MessageChannel& operator=(const MessageChannel&) = delete;
    ~MessageChannel() = default;

    // Copying send: serializes `ds` straight into a cell (one payload copy). invalid_param when
    // its message is larger than max_message_bytes(), or serialized_size's error for a dataset
    // that cannot be sent; the channel is then unchanged. Otherwise as loan().
    Status send(const Dataset& ds, Timeout timeout = forever) noexcept;
    // Copying receive: a dataset owning copies of the payloads. A message that is not a
    // dataset's is consumed and the parser's status returned.
    Result<Dataset> receive(Timeout timeout = forever) noexcept;
    // Refills `out` (wire_format parse_into); invalid_param, before anything is dequeued, when
    // `out` holds items the caller added.
    Status receive(Dataset& out, Timeout timeout = forever) noexcept;

    // Zero copy: a cell for a message of up to `bytes` bytes. invalid_param when `bytes` >
    // max_message_bytes(); full (no_wait), timed_out, stopped, peer_lost.
    Result<Loan> loan(std::size_t bytes, Timeout timeout = forever) noexcept;
    // The next message, read in place: empty (no_wait), timed_out, stopped (once drained),
    // peer_lost.
    Result<View> receive_view(Timeout timeout = forever) noexcept;

    // Sticky; wakes every blocked call in every process.
    void stop() noexcept {
        if (state_) {
            state_->ring.stop();
        }
    }
    [[nodiscard]] bool stopped() const noexcept { return !state_ || state_->ring.stopped(); }
    // True once a participant was found dead (sticky): the channel answers peer_lost.
    [[nodiscard]] bool lost() const noexcept { return state_ && state_->ring.lost(); }
    // Drops the queued messages (cancelled loans included) and wakes blocked senders; returns
    // how many. spsc: call it from the receiving side.
    std::size_t clear() noexcept {
        if (!state_) {
            return 0;
        }
        const std::size_t dropped = state_->ring.clear(&state_->segment);
        state_->counters.dropped(dropped);
        return dropped;
    }
    // Messages queued (published, claimed by a loan, or cancelled markers not yet skipped); a
    // message being read through a view no longer counts, though its cell is still taken.
    [[nodiscard]] std::size_t size() const noexcept { return state_ ? state_->ring.size() : 0; }
    [[nodiscard]] bool empty() const noexcept { return size() == 0; }
    [[nodiscard]] std::size_t capacity() const noexcept {
        return state_ ? state_->ring.capacity() : 0;
    }
    [[nodiscard]] std::size_t max_message_bytes() const noexcept {
        return state_ ? state_->max_message_bytes : 0;
    }
    // Calls, of every process, parked in a blocking call (after their spin phase).
    [[nodiscard]] std::size_t blocked() const noexcept {
        return state_ ? state_->ring.blocked() : 0;
    }
    [[nodiscard]] bool is_open() const noexcept { return state_ != nullptr; }
    // What every process counted on this channel since it was created (zero when closed).
    [[nodiscard]] ChannelStats stats() const noexcept {
        return state_ ? detail::sum_counters(state_->segment.counter_area()) : ChannelStats{};
    }

    // Leaves the channel (not a stop); idempotent. The segment stays mapped while loans or views
    // from this object live; then the last live participant to leave removes the name. Calls on
    // a closed (or moved-from) channel answer uninitialized. Always ok (a removal that fails
    // happens later, when the last loan or view goes, and is not reported).
    Expected<void> close() noexcept {
        state_.reset();
        return {};
    }

private:
    explicit MessageChannel(detail::MessageStatePtr state) noexcept : state_(std::move(state)) {}

    static Expected<MessageChannel> make(std::string_view name, std::size_t capacity,
                                         std::size_t max_message_bytes, bool create,
                                         std::chrono::milliseconds wait) noexcept;
    // The next published message: cancelled markers are released and skipped.
    Status acquire_message(detail::MessageClaim& claim, Timeout timeout,
                           detail::CellContent& content) noexcept;

    detail::MessageStatePtr state_;
};

} // namespace ferry::ipc

#include <ferry/ipc/detail/message_channel_impl.hpp>
