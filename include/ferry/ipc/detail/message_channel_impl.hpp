#pragma once
// MessageChannel's out-of-line parts (declared in ferry/ipc/message_channel.hpp).

#include <chrono>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/runtime/profiler.hpp>
#include <memory>
#include <new>
#include <optional>
#include <string>

namespace ferry::ipc::detail {

inline Error message_param_error(const std::string& text) {
    return Error{Status::invalid_param, "ipc: message channel " + text, 0};
}

inline std::optional<Error> check_geometry(std::size_t capacity, std::size_t max_message_bytes) {
    if (capacity < k_ring_min_capacity || capacity > k_ring_max_capacity) {
        return message_param_error("capacity " + std::to_string(capacity) + " is outside [" +
                                   std::to_string(k_ring_min_capacity) + ", " +
                                   std::to_string(k_ring_max_capacity) + "]");
    }
    if (max_message_bytes == 0 || max_message_bytes > k_max_message_bytes) {
        return message_param_error("max_message_bytes " + std::to_string(max_message_bytes) +
                                   " is outside [1, " + std::to_string(k_max_message_bytes) + "]");
    }
    return std::nullopt;
}

// The ring in an opened segment. Segment::open returns once the segment is ready, but its
// creator constructs the ring after that: wait (bounded) until it has, or has died.
inline Expected<SharedRing> attach_ring(const Segment& segment, std::size_t capacity,
                                        std::size_t cell_bytes, RingPolicy policy,
                                        Clock::time_point deadline) {
    std::string why;
    SharedRing ring;
    const bool done = poll_until(deadline, [&] {
        ring = SharedRing::attach(segment.payload(), capacity, cell_bytes, policy, &why);
        return ring.attached() || !why.empty() || segment.lost_participant().has_value();
    });
    if (ring.attached()) {
        return ring;
    }
    if (why.empty()) {
        why = done ? "its creator died before setting it up" : "its creator did not set it up";
    }
    return Error{done ? Status::invalid_file : Status::timed_out,
                 "ipc: message channel " + segment.name() + ": " + why, 0};
}

// Creates or opens the segment and places or finds the ring in it.
inline Expected<MessageStatePtr> make_state(std::string_view name, std::size_t capacity,
                                            std::size_t max_message_bytes, RingPolicy policy,
                                            bool create, std::chrono::milliseconds wait) {
    if (auto e = check_geometry(capacity, max_message_bytes)) {
        return *e;
    }
    const std::size_t cell_bytes = cell_bytes_for(max_message_bytes);
    const std::string layout =
        message_layout_name(policy == RingPolicy::mpmc, capacity, max_message_bytes);
    const LayoutTag tag = message_layout_tag(layout, k_ring_format);
    const auto deadline = Clock::now() + wait;
    auto segment =
        create ? Segment::create(name, SharedRing::bytes_for(capacity, cell_bytes), tag, wait)
               : Segment::open(name, tag, wait);
    if (!segment) {
        return segment.error();
    }
    auto state = std::make_shared<MessageState>(std::move(*segment), max_message_bytes);
    state->counters = ProcessCounters<true>(own_block(state->segment), policy == RingPolicy::mpmc);
    if (create) {
        state->ring = SharedRing::create(state->segment.payload(), capacity, cell_bytes, policy);
        if (!state->ring.attached()) { // not reached: the payload was sized for this geometry
            return Error{Status::internal_error, "ipc: cannot place a ring in " + layout, 0};
        }
        return state;
    }
    auto ring = attach_ring(state->segment, capacity, cell_bytes, policy, deadline);
    if (!ring) {
        return ring.error();
    }
    state->ring = *ring;
    return state;
}

// Timeout -> the ring's (may_wait, deadline): no_wait and forever wait for no deadline.
inline Clock::time_point deadline_of(Timeout timeout) noexcept {
    return timeout.is_forever() || timeout.is_no_wait() ? Clock::time_point::max()
                                                        : timeout.deadline_from(Clock::now());
}

} // namespace ferry::ipc::detail

namespace ferry::ipc {

template <ChannelPolicy Policy>
Expected<MessageChannel<Policy>>
MessageChannel<Policy>::make(std::string_view name, std::size_t capacity,
                             std::size_t max_message_bytes, bool create,
                             std::chrono::milliseconds wait) noexcept {
    constexpr auto policy =
        Policy::multi_producer ? detail::RingPolicy::mpmc : detail::RingPolicy::spsc;
    try {
        auto state = detail::make_state(name, capacity, max_message_bytes, policy, create, wait);
        if (!state) {
            return state.error();
        }
        return MessageChannel(std::move(*state));
    } catch (const std::bad_alloc&) { // a message or the shared state; nothing was kept
        return Error{Status::bad_alloc, {}, 0};
    }
}

template <ChannelPolicy Policy>
Expected<MessageChannel<Policy>>
MessageChannel<Policy>::create(std::string_view name, std::size_t capacity,
                               std::size_t max_message_bytes,
                               std::chrono::milliseconds wait) noexcept {
    return make(name, capacity, max_message_bytes, true, wait);
}

template <ChannelPolicy Policy>
Expected<MessageChannel<Policy>>
MessageChannel<Policy>::open(std::string_view name, std::size_t capacity,
                             std::size_t max_message_bytes,
                             std::chrono::milliseconds wait) noexcept {
    return make(name, capacity, max_message_bytes, false, wait);
}

template <ChannelPolicy Policy>
Result<MessageLoan> MessageChannel<Policy>::loan(std::size_t bytes, Timeout timeout) noexcept {
    if (!state_) {
        return Status::uninitialized;
    }
    if (bytes > state_->max_message_bytes) {
        return Status::invalid_param;
    }
    detail::MessageClaim claim;
    const Status s = state_->counters.claim(state_->ring, claim, detail::deadline_of(timeout),
                                            !timeout.is_no_wait(), &state_->segment);
    if (failed(s)) {
        return s;
    }
    return MessageLoan(state_, claim, bytes);
}

template <ChannelPolicy Policy>
Status MessageChannel<Policy>::send(const Dataset& ds, Timeout timeout) noexcept {
    const TraceSpan trace("ipc.send", "channel");
    // Checked before claiming: an oversized or unsendable dataset leaves the channel unchanged.
    // A closed channel is loan()'s to report.
    const Result<std::size_t> size = serialized_size(ds);
    if (!size) {
        return size.status();
    }
    auto cell = loan(*size, timeout);
    if (!cell) {
        return cell.status();
    }
    const Result<std::size_t> written = serialize_into(ds, cell->bytes());
    if (!written) {
        return written.status(); // not reached: sized above; the loan is cancelled
    }
    return cell->publish(*written);
}

template <ChannelPolicy Policy>
Status MessageChannel<Policy>::acquire_message(detail::MessageClaim& claim, Timeout timeout,
                                               detail::CellContent& content) noexcept {
    if (!state_) {
        return Status::uninitialized;
    }
    const auto deadline = detail::deadline_of(timeout);
    bool skipped = false;
    for (;;) {
        const Status s = state_->counters.acquire(state_->ring, claim, deadline,
                                                  !timeout.is_no_wait(), &state_->segment);
        if (s == Status::empty && skipped && !timeout.is_no_wait()) {
            return Status::timed_out; // the deadline passed while skipping cancelled loans
        }
        if (failed(s)) {
            return s;
        }
        content = detail::read_cell(claim.cell, state_->max_message_bytes);
        if (content.valid && content.kind == detail::CellKind::message) {
            state_->counters.received(content.bytes.size());
            return Status::ok;
        }
        state_->ring.release(claim);
        if (!content.valid) {
            return Status::failure; // a header no ferry writes: dropped, never read past
        }
        skipped = true;
        // A cancelled loan: skip it, with what is left of the same deadline.
    }
}

template <ChannelPolicy Policy>
Result<MessageView> MessageChannel<Policy>::receive_view(Timeout timeout) noexcept {
    const TraceSpan trace("ipc.receive", "channel");
    detail::MessageClaim claim;
    detail::CellContent content{};
    if (const Status s = acquire_message(claim, timeout, content); failed(s)) {
        return s;
    }
    return MessageView(state_, claim, content.bytes);
}

template <ChannelPolicy Policy>
Result<Dataset> MessageChannel<Policy>::receive(Timeout timeout) noexcept {
    auto view = receive_view(timeout);
    if (!view) {
        return view.status();
    }
    return parse(view->bytes()); // the view releases the cell after the copy
}

template <ChannelPolicy Policy>
Status MessageChannel<Policy>::receive(Dataset& out, Timeout timeout) noexcept {
    if (!out.accepts_receive()) {
        return Status::invalid_param;
    }
    auto view = receive_view(timeout);
    if (!view) {
        return view.status();
    }
    return parse_into(out, view->bytes());
}

} // namespace ferry::ipc
