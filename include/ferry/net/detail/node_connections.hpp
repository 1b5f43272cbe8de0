#pragma once
// Node::Impl: endpoints, connecting, accepting, refusing and losing peers (docs/multi-node.md,
// Connections and Failure behaviour).

#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

inline std::uint64_t Node::Impl::token() {
    std::uint64_t t = 0;
    while (t == 0) { // 0 is the hello's token
        t = random();
    }
    return t;
}

// Peer error handling: without it a dead peer's sends hang forever.
inline ucp_ep_params_t Node::Impl::ep_params() {
    ucp_ep_params_t p{};
    p.field_mask = UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = &Impl::on_ep_error;
    p.err_handler.arg = this;
    return p;
}

inline detail::Conn* Node::Impl::add_conn(ucp_ep_h ep, bool accepted, std::string where) {
    auto conn = std::make_unique<detail::Conn>();
    conn->ep = ep;
    conn->accepted = accepted;
    conn->where = std::move(where);
    conn->recv_token = token();
    conn->last_heard = clock::now();
    auto* raw = conn.get();
    conns.push_back(std::move(conn));
    by_ep[ep] = raw;
    return raw;
}

inline void Node::Impl::on_conn_request(ucp_conn_request_h request, void* arg) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    ucp_conn_request_attr_t attr{};
    attr.field_mask = UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR;
    std::string where = "?";
    if (ucp_conn_request_query(request, &attr) == UCS_OK) {
        where = detail::format_address(attr.client_address);
    }
    auto p = self.ep_params();
    p.field_mask |= UCP_EP_PARAM_FIELD_CONN_REQUEST;
    p.conn_request = request;
    ucp_ep_h ep = nullptr;
    if (const auto s = ucp_ep_create(self.worker.h, &p, &ep); s != UCS_OK) {
        detail::log_ucx(("cannot accept " + where).c_str(), s);
        return;
    }
    self.add_conn(ep, true, std::move(where));
}

inline void Node::Impl::on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const auto found = self.by_ep.find(ep);
    if (found != self.by_ep.end()) {
        self.lose(*found->second, std::string("connection failed: ") + ucs_status_string(status));
    }
}

// Marks the connection lost (for good), schedules its endpoint's forced close (which fails its
// outstanding requests) and, for a peer, its on_peer_lost handlers.
inline void Node::Impl::lose(detail::Conn& conn, const std::string& reason) {
    if (conn.state == detail::ConnState::lost) {
        return;
    }
    const bool was_peer = conn.state == detail::ConnState::peer;
    conn.state = detail::ConnState::lost;
    if (conn.ep != nullptr) {
        by_ep.erase(conn.ep);
        to_close.push_back(conn.ep);
        conn.ep = nullptr;
    }
    if (was_peer) {
        detail::log_line("lost peer " + std::to_string(conn.id) + " (" + conn.where +
                         "): " + reason);
        losses.fetch_add(1, std::memory_order_acq_rel);
        newly_lost.push_back(conn.id);
    }
    notify();
    drain();
}

// A refusal: counted, logged, and the connection closed (a peer is lost). `conn` null: the
// sender cannot be told apart (a forged endpoint id), so only the count and the log.
inline void Node::Impl::refuse(detail::Conn* conn, const std::string& reason) {
    const std::string who =
        conn == nullptr ? "an unidentified sender"
                        : (conn->where + (conn->id != 0 ? " (peer " + std::to_string(conn->id) + ")"
                                                        : std::string()));
    {
        std::lock_guard lock(refusal_mu);
        last_refusal = reason;
        refusals.fetch_add(1, std::memory_order_acq_rel);
    }
    detail::log_line("refused " + who + ": " + reason);
    if (conn != nullptr) {
        lose(*conn, "refused: " + reason);
    }
}

inline detail::Conn* Node::Impl::peer(PeerId id) const {
    const auto found = by_id.find(id);
    return found == by_id.end() || found->second->state != detail::ConnState::peer ? nullptr
                                                                                   : found->second;
}

inline std::size_t Node::Impl::accepted_peers() const {
    std::size_t n = 0;
    for (const auto& [id, conn] : by_id) {
        n += conn->accepted && conn->state == detail::ConnState::peer ? 1 : 0;
    }
    return n;
}

inline Result<PeerId> Node::Impl::connect(std::string_view address, Timeout timeout) {
    const auto deadline = timeout.deadline_from(clock::now());
    if (refuse_wait_in_callback("connect")) {
        return Status::invalid_param;
    }
    const auto parsed = detail::parse_address(address);
    if (!parsed.address) {
        detail::log_line("cannot connect: " + parsed.error);
        return Status::invalid_param;
    }
    std::unique_lock lock(mu);
    auto p = ep_params();
    p.field_mask |= UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR;
    p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    p.sockaddr.addr = parsed.address->get();
    p.sockaddr.addrlen = parsed.address->length;
    ucp_ep_h ep = nullptr;
    if (const auto s = ucp_ep_create(worker.h, &p, &ep); s != UCS_OK) {
        detail::log_ucx(("cannot connect to " + std::string(address)).c_str(), s);
        return Status::peer_lost;
    }
    auto* conn = add_conn(ep, false, std::string(address));
    if (const auto s = send_hello(*conn, detail::wire::Kind::hello); s != Status::ok) {
        lose(*conn, "cannot send the hello");
        return Status::peer_lost;
    }
    wake();
    const bool answered =
        wait_until(lock, deadline, [&] { return conn->state != detail::ConnState::handshake; });
    if (!answered) {
        lose(*conn, "no answer to the hello");
        return Status::timed_out;
    }
    if (conn->state != detail::ConnState::peer) {
        return Status::peer_lost;
    }
    return conn->id;
}

} // namespace ferry::net
