#pragma once
// Node::Impl: endpoints, admitting, refusing and losing peers (docs/multi-node.md, Connections
// and Failure behaviour; docs/security.md for what is refused).

#include <ferry/net/detail/node_state.hpp>
#include <ferry/runtime/profiler.hpp>

namespace ferry::net {

inline std::uint64_t Node::Impl::token() {
    std::uint64_t t = 0;
    while (t == 0 || by_token.contains(t)) { // 0 names no connection
        if (!detail::handshake::random_bytes(std::as_writable_bytes(std::span(&t, 1)))) {
            t = random();
        }
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

// A connection whose other side proved the secret and told its Info: an endpoint to its UCX
// worker address, its regions, and a PeerId. A connecting side's connection is a peer at once;
// an accepted one when the client's Ready (or its first message) arrives. nullptr and `error`
// when UCX cannot reach the worker address.
inline detail::Conn* Node::Impl::admit(const detail::handshake::Info& theirs,
                                       std::uint64_t recv_token, bool accepted, std::string where,
                                       std::string& error) {
    auto p = ep_params();
    p.field_mask |= UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    p.address = reinterpret_cast<const ucp_address_t*>(theirs.worker_address.data());
    ucp_ep_h ep = nullptr;
    if (const auto s = ucp_ep_create(worker.h, &p, &ep); s != UCS_OK) {
        error = std::string("cannot reach the peer's UCX worker: ") + ucs_status_string(s);
        return nullptr;
    }
    auto conn = std::make_unique<detail::Conn>();
    conn->ep = ep;
    conn->accepted = accepted;
    conn->where = std::move(where);
    conn->recv_token = recv_token;
    conn->send_token = theirs.token;
    conn->heartbeat = detail::wire::frame(detail::wire::Kind::heartbeat, conn->send_token);
    conn->last_heard = clock::now();
    for (const auto& r : theirs.regions) {
        conn->regions.push_back(RemoteRegion{r.id, r.base, r.size, false});
    }
    if (!unpack_keys(*conn, theirs, error)) {
        release_keys(*conn);
        to_close.push_back(ep);
        return nullptr;
    }
    conn->id = next_peer++;
    conn->state = accepted ? detail::ConnState::handshake : detail::ConnState::peer;
    auto* raw = conn.get();
    conns.push_back(std::move(conn));
    by_ep[ep] = raw;
    by_token[recv_token] = raw;
    by_id[raw->id] = raw;
    notify();
    return raw;
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
// outstanding requests) and, for a peer, its on_peer_lost handlers. `closed`: the peer said
// goodbye (a normal end, logged as such).
inline void Node::Impl::lose(detail::Conn& conn, const std::string& reason, bool closed) {
    if (conn.state == detail::ConnState::lost) {
        return;
    }
    const bool was_peer = conn.state == detail::ConnState::peer;
    conn.lost_reason = reason;
    conn.state = detail::ConnState::lost; // its token stays known: what it still sends is dropped
    if (conn.ep != nullptr) {
        by_ep.erase(conn.ep);
        to_close.push_back(conn.ep);
        conn.ep = nullptr;
    }
    for (auto& w : conn.writes.deferred) {
        if (w.descriptor != nullptr) {
            ucp_am_data_release(worker.h, w.descriptor);
        }
    }
    conn.writes.deferred.clear();
    conn.writes.deferred_bytes = 0;
    if (was_peer) {
        if (closed || closing_down) { // a node going away has no use for "lost" of its peers
            detail::log_line("peer " + std::to_string(conn.id) + " (" + conn.where + ") closed",
                             LogLevel::info);
        } else {
            detail::log_line("lost peer " + std::to_string(conn.id) + " (" + conn.where +
                             "): " + reason);
            trace_instant("net.peer_lost", "net");
        }
        losses.fetch_add(1, std::memory_order_acq_rel);
        newly_lost.push_back(conn.id);
    }
    notify();
    drain();
}

inline void Node::Impl::count_refusal(const std::string& reason) {
    std::lock_guard lock(refusal_mu);
    last_refusal = reason;
    ++refusal_reasons[reason];
    refusals.fetch_add(1, std::memory_order_acq_rel);
}

// A refusal: counted, logged, and the connection closed (a peer is lost). `conn` null: the
// sender cannot be told apart (an unknown token), so only the count and the log.
inline void Node::Impl::refuse(detail::Conn* conn, const std::string& reason) {
    const std::string who =
        conn == nullptr ? "an unidentified sender"
                        : (conn->where + (conn->id != 0 ? " (peer " + std::to_string(conn->id) + ")"
                                                        : std::string()));
    count_refusal(reason);
    detail::log_line("refused " + who + ": " + reason, LogLevel::warning);
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

} // namespace ferry::net
