#pragma once
// Node::Impl: service messages — sending (send, post), delivering to handlers, rendezvous
// payloads — and heartbeats (docs/multi-node.md, Connections).

#include <cstring>
#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

// A send's completion. A request of a lost connection fails as peer_lost whatever UCX says.
inline void Node::Impl::on_sent(void* request, ucs_status_t status, void* user) {
    auto* op = static_cast<Op*>(user);
    InCallback guard;
    ucp_request_free(request);
    op->request = nullptr;
    op->finished = true;
    op->result = status == UCS_OK                             ? Status::ok
                 : op->conn->state == detail::ConnState::lost ? Status::peer_lost
                 : status == UCS_ERR_CANCELED                 ? Status::timed_out
                                                              : detail::to_status(status);
    if (!op->owned_by_callback) {
        op->node->notify();
        return;
    }
    std::unique_ptr<Op> owned(op);
    detail::run_guarded("a post's completion", owned->done, owned->result);
}

// The parameters of a send or put whose completion is on_sent with `op`.
inline ucp_request_param_t Node::Impl::sent_param(Op& op) {
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = &Impl::on_sent;
    p.user_data = &op;
    return p;
}

// Starts an AM send of op->header + payload on `conn`.
inline Status Node::Impl::issue(detail::Conn& conn, std::unique_ptr<Op>& op,
                                detail::wire::Kind kind, std::span<const std::byte> payload,
                                std::uint32_t flags) {
    ucp_request_param_t p = sent_param(*op);
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = flags;
    const Status s =
        settle(op, ucp_am_send_nbx(conn.ep, static_cast<unsigned>(kind), op->header.data(),
                                   op->header.size(), payload.data(), payload.size(), &p));
    if (s == Status::ok) {
        count_sent(conn, kind, payload.size());
    }
    return s;
}

// What a send or put UCX started with sent_param(*op) returned: done at once, failed, or in
// flight. A post's op (owned_by_callback) passes to the completion when in flight; otherwise the
// caller keeps it and waits.
inline Status Node::Impl::settle(std::unique_ptr<Op>& op, void* request) {
    if (request == nullptr) {
        op->finished = true;
        return Status::ok;
    }
    if (UCS_PTR_IS_ERR(request)) {
        op->finished = true;
        op->result = detail::to_status(UCS_PTR_STATUS(request));
        return op->result;
    }
    op->request = request;
    if (op->owned_by_callback) {
        static_cast<void>(op.release());
    }
    announce_request();
    return Status::ok;
}

// A request is in flight: whoever sleeps on the worker's fd must see what it brings. While the
// progress thread is slicing (callers' waits came and went since it last looked), nothing is
// done: it looks at the worker again within k_off_slice whatever happens, and the callers that
// keep it off progress the worker meanwhile. When they went to sleep as they left the worker
// (progressed until idle, then armed it) and no caller progressed it since, arming it again
// here is enough: UCX reports the request's events on the fd. Otherwise they are woken as
// before: when nobody sleeps on the fd (the progress thread is off the worker), when a caller
// progressed it since (it may have left work behind), when UCX has work already (busy: arming
// drained a signal they may have been about to see), or inside a callback (the thread
// progressing re-arms itself). Waking the progress thread for every in-flight send cost a
// thread switch and a contended `mu` per message; a stream's sender, which waits for room
// between its posts, kept the thread slicing and still woke it once per post
// (docs/performance/net.md, Bandwidth).
inline void Node::Impl::announce_request() noexcept {
    if (slicing) {
        return;
    }
    const bool watched = watching_worker || !fd_waiters.empty();
    const bool as_left = caller_progress.load(std::memory_order_relaxed) == caller_progress_seen;
    if (!watched || !as_left || callback_depth != 0) {
        wake();
        return;
    }
    if (ucp_worker_arm(worker.h) == UCS_OK) {
        return;
    }
    wake();
    wake_fd_waiters(detail::own_wait_fd_if_any()); // the arm may have drained their signal
}

inline std::unique_ptr<Node::Impl::Op> Node::Impl::service_op(detail::Conn& conn, ServiceId service,
                                                              std::span<const std::byte> header) {
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = &conn;
    // One allocation for the whole header, not one per append.
    op->header.reserve(sizeof(detail::wire::Frame) + sizeof(detail::wire::Service) + header.size());
    detail::wire::append(op->header,
                         detail::wire::frame(detail::wire::Kind::service, conn.send_token));
    detail::wire::Service s;
    s.service = service;
    s.header_length = static_cast<std::uint32_t>(header.size());
    detail::wire::append(op->header, s);
    detail::wire::append_bytes(op->header, header);
    return op;
}

// Most posts are sent inside ucp_am_send_nbx (over tcp a short message is written to the
// socket there and then): try that first, asking UCX to complete at once or not at all
// (UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL), with the header (and a copied payload) in the node's
// reused at_once_bytes and no request, so that such a post allocates nothing. sent: gone
// (`done` is the caller's to run); not_at_once: nothing was sent (the message is not short, the
// connection's queue is not empty, the header does not fit): post through a request; failed:
// `failure`; in_flight: UCX answered with a request after all, which it promises not to do —
// the bytes, `owner` and `done` wait for it in late_posts (on_sent_late).
inline Node::Impl::AtOnce
Node::Impl::post_at_once(detail::Conn& conn, ServiceId service, std::span<const std::byte> header,
                         std::span<const std::byte> payload, Payload payload_kept,
                         std::shared_ptr<const void>& owner, std::function<void(Status)>& done,
                         Status& failure) {
    namespace wire = detail::wire;
    const std::size_t size = sizeof(wire::Frame) + sizeof(wire::Service) + header.size();
    if (size > k_at_once_header || payload.size() > k_at_once_payload ||
        (max_am_header != 0 && size > max_am_header)) {
        return AtOnce::not_at_once;
    }
    const bool copied = payload_kept == Payload::copied;
    try { // all that may allocate, before anything is sent (once, in practice)
        at_once_bytes.reserve(k_at_once_header + k_at_once_payload);
        if (late_spare.empty()) {
            late_spare = late_posts.extract(late_posts.try_emplace(nullptr).first);
        }
        late_posts.reserve(late_posts.size() + 1);
    } catch (const std::bad_alloc&) {
        return AtOnce::not_at_once;
    }
    at_once_bytes.resize(size + (copied ? payload.size() : 0)); // within its capacity
    std::byte* const bytes = at_once_bytes.data();
    if (copied && !payload.empty()) {
        std::memcpy(bytes + size, payload.data(), payload.size());
        payload = std::span<const std::byte>(bytes + size, payload.size());
    }
    const wire::Frame f = wire::frame(wire::Kind::service, conn.send_token);
    wire::Service s;
    s.service = service;
    s.header_length = static_cast<std::uint32_t>(header.size());
    std::memcpy(bytes, &f, sizeof f);
    std::memcpy(bytes + sizeof f, &s, sizeof s);
    if (!header.empty()) {
        std::memcpy(bytes + sizeof f + sizeof s, header.data(), header.size());
    }
    ucp_request_param_t p{};
    p.op_attr_mask =
        UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL | UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = &Impl::on_sent_late;
    p.user_data = this;
    void* request = ucp_am_send_nbx(conn.ep, static_cast<unsigned>(wire::Kind::service), bytes,
                                    size, payload.data(), payload.size(), &p);
    if (request == nullptr) {
        count_sent(conn, wire::Kind::service, payload.size());
        return AtOnce::sent;
    }
    if (UCS_PTR_IS_ERR(request)) {
        if (UCS_PTR_STATUS(request) == UCS_ERR_NO_RESOURCE) {
            return AtOnce::not_at_once;
        }
        failure = detail::to_status(UCS_PTR_STATUS(request));
        return AtOnce::failed;
    }
    late_spare.key() = request;
    LatePost& late = late_spare.mapped();
    late.conn = &conn;
    late.bytes = std::move(at_once_bytes); // its buffer stays where UCX reads it
    late.owner = std::move(owner);
    late.done = std::move(done);
    late_posts.insert(std::move(late_spare)); // room reserved above: no allocation
    count_sent(conn, wire::Kind::service, payload.size());
    return AtOnce::in_flight;
}

// The completion of a post that post_at_once found in flight.
inline void Node::Impl::on_sent_late(void* request, ucs_status_t status, void* user) {
    auto& self = *static_cast<Impl*>(user);
    InCallback guard;
    ucp_request_free(request);
    auto entry = self.late_posts.extract(request);
    if (entry.empty()) {
        return;
    }
    LatePost& late = entry.mapped();
    const Status result = status == UCS_OK                              ? Status::ok
                          : late.conn->state == detail::ConnState::lost ? Status::peer_lost
                                                                        : detail::to_status(status);
    detail::run_guarded("a post's completion", late.done, result);
}

inline Status Node::Impl::send(PeerId peer_id, ServiceId service, std::span<const std::byte> header,
                               std::span<const std::byte> payload, Timeout timeout) {
    const auto deadline = timeout.deadline_from(clock::now());
    if (refuse_wait_in_callback("send")) {
        return Status::invalid_param;
    }
    std::unique_lock lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    auto op = service_op(*conn, service, header);
    if (max_am_header != 0 && op->header.size() > max_am_header) {
        return Status::invalid_param;
    }
    if (const auto s = issue(*conn, op, detail::wire::Kind::service, payload, 0); s != Status::ok) {
        return s;
    }
    if (wait_until(lock, deadline, [&] { return op->finished; })) {
        return op->result;
    }
    // Cancelled, the request completes (UCS_ERR_CANCELED) once UCX lets go of the payload. If
    // UCX cannot cancel it (a rendezvous the peer never answers), the connection is closed:
    // only that guarantees the payload is not read after send() returns.
    ucp_request_cancel(worker.h, op->request);
    if (!wait_until(lock, clock::now() + std::chrono::milliseconds(100),
                    [&] { return op->finished; })) {
        lose(*conn, "a send could not be cancelled after its timeout");
        wait_until(lock, clock::time_point::max(), [&] { return op->finished; });
    }
    return op->result == Status::ok ? Status::ok : Status::timed_out;
}

inline Status Node::Impl::post(PeerId peer_id, ServiceId service, std::span<const std::byte> header,
                               std::span<const std::byte> payload, std::function<void(Status)> done,
                               std::shared_ptr<const void> owner, Payload payload_kept) {
    std::unique_lock lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    Status failure = Status::ok;
    switch (post_at_once(*conn, service, header, payload, payload_kept, owner, done, failure)) {
    case AtOnce::sent:
        detail::run_guarded("a post's completion", done, Status::ok);
        return Status::ok;
    case AtOnce::in_flight:
        return Status::ok;
    case AtOnce::failed:
        return failure; // nothing started: `done` does not run
    case AtOnce::not_at_once:
        break;
    }
    auto op = service_op(*conn, service, header);
    if (max_am_header != 0 && op->header.size() > max_am_header) {
        return Status::invalid_param;
    }
    op->owned_by_callback = true;
    op->done = std::move(done);
    op->owner = std::move(owner);
    if (payload_kept == Payload::copied) { // kept with the op until UCX lets go of it
        op->staged.assign(payload.begin(), payload.end());
        payload = op->staged;
    }
    const auto s = issue(*conn, op, detail::wire::Kind::service, payload, 0);
    if (s != Status::ok) {
        return s; // nothing started: `done` does not run
    }
    if (op) { // completed at once: the op is still ours
        detail::run_guarded("a post's completion", op->done, Status::ok);
    }
    return Status::ok;
}

inline ucs_status_t Node::Impl::on_heartbeat(void* arg, const void* header,
                                             std::size_t header_length, void*, std::size_t,
                                             const ucp_am_recv_param_t*) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    // identify() refreshes the peer's last-heard time; that is all a heartbeat is for.
    static_cast<void>(self.identify(
        std::span(static_cast<const std::byte*>(header), header_length), detail::wire::Kind::heartbeat));
    return UCS_OK;
}

inline ucs_status_t Node::Impl::on_service(void* arg, const void* header, std::size_t header_length,
                                           void* data, std::size_t length,
                                           const ucp_am_recv_param_t* param) {
    namespace wire = detail::wire;
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    auto* conn = self.identify(bytes, wire::Kind::service);
    const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    // A refused rendezvous fails the sender's send; an eager message is just dropped.
    const ucs_status_t refused = rendezvous ? UCS_ERR_REJECTED : UCS_OK;
    if (conn == nullptr) {
        return refused;
    }
    const auto s = wire::read<wire::Service>(bytes, sizeof(wire::Frame));
    constexpr std::size_t fixed = sizeof(wire::Frame) + sizeof(wire::Service);
    if (!s || header_length - fixed != s->header_length) {
        self.refuse(conn, "malformed service message");
        return refused;
    }
    const auto found = self.services.find(s->service);
    if (found == self.services.end()) {
        self.refuse(conn,
                    "message for service " + std::to_string(s->service) + ", which nobody serves");
        return refused;
    }
    const auto handler = found->second; // unserve() inside the handler leaves it alive
    Delivery::Impl d{&self, conn, bytes.subspan(fixed), length, rendezvous, data, false};
    Delivery delivery;
    delivery.impl_ = &d;
    Verdict verdict = nullptr;
    try {
        verdict = (*handler)(delivery);
    } catch (...) {
        verdict = "the service's handler threw";
    }
    if (verdict != nullptr) {
        self.refuse(conn, std::string("service ") + std::to_string(s->service) + ": " + verdict);
        return d.receiving ? UCS_INPROGRESS : refused;
    }
    ++conn->messages_received;
    conn->bytes_received += length;
    // Not received: UCX drops the rendezvous descriptor (the sender's send completes).
    return d.receiving ? UCS_INPROGRESS : UCS_OK;
}

inline Status Node::Impl::receive(Delivery::Impl& d, std::span<std::byte> into,
                                  std::function<void(Status)> done) {
    struct Receipt {
        Impl* node;
        detail::Conn* conn;
        std::function<void(Status)> done;
    };
    auto receipt = std::make_unique<Receipt>(Receipt{this, d.conn, std::move(done)});
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.user_data = receipt.get();
    p.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user) {
        std::unique_ptr<Receipt> r(static_cast<Receipt*>(user));
        InCallback guard;
        ucp_request_free(request);
        const Status result = status == UCS_OK ? Status::ok : Status::peer_lost;
        detail::run_guarded("a receive's completion", r->done, result);
    };
    void* request = ucp_am_recv_data_nbx(worker.h, d.data, into.data(), d.length, &p);
    d.receiving = true; // UCX owns the descriptor now, whatever happened
    if (UCS_PTR_IS_ERR(request)) {
        return d.conn->state == detail::ConnState::lost
                   ? Status::peer_lost
                   : detail::to_status(UCS_PTR_STATUS(request));
    }
    if (request == nullptr) { // landed at once: `done` still runs from a later progress call
        auto* r = receipt.release();
        later.push_back([r] {
            std::unique_ptr<Receipt> owned(r);
            detail::run_guarded("a receive's completion", owned->done, Status::ok);
        });
        return Status::ok;
    }
    static_cast<void>(receipt.release());
    return Status::ok;
}

} // namespace ferry::net
