#pragma once
// Node::Impl: writes into exposed regions — expose, put, flush, ring (docs/multi-node.md,
// Windows; docs/security.md). A put is a message the owner checks (an authenticated peer, a
// region it exposed, offset and length inside it) and applies itself: no memory of this node is
// registered with UCX, so nothing is reachable where a transport would not check a remote key.
// The owner applies one peer's puts, rings and flushes in the order they were sent: a put still
// landing (a rendezvous) holds back what came after it, so the data is in place before its flag.

#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

inline Result<RegionId> Node::Impl::expose(std::span<std::byte> memory, afd::Doorbell bell) {
    std::lock_guard lock(mu);
    // The table travels in the handshake: a region exposed later would reach no peer.
    if (memory.empty() || !conns.empty() || !pending.empty() ||
        exposed.size() >= detail::wire::k_max_regions) {
        return Status::invalid_param;
    }
    exposed.push_back(detail::LocalRegion{memory, bell});
    return static_cast<RegionId>(exposed.size() - 1);
}

// A small eager message of `kind` with `body` after the frame, completing on its own.
inline Status Node::Impl::send_small(detail::Conn& conn, detail::wire::Kind kind,
                                     std::span<const std::byte> body) {
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = &conn;
    op->owned_by_callback = true;
    detail::wire::append(op->header, detail::wire::frame(kind, conn.send_token));
    detail::wire::append_bytes(op->header, body);
    return issue(conn, op, kind, {}, UCP_AM_SEND_FLAG_EAGER);
}

inline Status Node::Impl::put(PeerId peer_id, RegionId region, std::uint64_t owner_address,
                              std::span<const std::byte> bytes) {
    std::unique_lock lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    if (region >= conn->regions.size()) {
        return Status::invalid_param;
    }
    const auto& r = conn->regions[region];
    const auto offset = owner_address - r.base; // wraps when below: caught next
    if (owner_address < r.base || offset > r.size || bytes.size() > r.size - offset) {
        return Status::invalid_param;
    }
    if (bytes.empty()) {
        return Status::ok;
    }
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = conn;
    detail::wire::append(op->header, detail::wire::frame(detail::wire::Kind::put, conn->send_token));
    detail::wire::append(op->header, detail::wire::Put{region, 0, offset});
    std::span<const std::byte> source = bytes;
    const bool in_callback = callback_depth > 0;
    if (in_callback) {
        // A callback cannot wait for the put: the bytes are copied, and the put completes alone.
        op->staged.assign(bytes.begin(), bytes.end());
        source = op->staged;
        op->owned_by_callback = true;
    }
    const auto s = issue(*conn, op, detail::wire::Kind::put, source, 0);
    if (s != Status::ok || in_callback || op->finished) {
        return s;
    }
    wait_until(lock, clock::time_point::max(), [&] { return op->finished; });
    return op->result;
}

// A flush message; the peer answers it once every earlier put and ring of this node is applied.
inline Status Node::Impl::flush(PeerId peer_id, Timeout timeout) {
    const auto deadline = timeout.deadline_from(clock::now());
    if (refuse_wait_in_callback("flush")) {
        return Status::invalid_param;
    }
    std::unique_lock lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    const detail::wire::Flush f{++conn->flush_asked};
    if (const auto s = send_small(*conn, detail::wire::Kind::flush,
                                  std::as_bytes(std::span(&f, 1)));
        s != Status::ok) {
        return s;
    }
    const bool done = wait_until(lock, deadline, [&] {
        return conn->state == detail::ConnState::lost || conn->flush_answered >= f.sequence;
    });
    if (conn->state == detail::ConnState::lost) {
        return Status::peer_lost;
    }
    return done ? Status::ok : Status::timed_out;
}

inline Status Node::Impl::ring(PeerId peer_id, RegionId region) {
    std::lock_guard lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    if (region >= conn->regions.size()) {
        return Status::invalid_param;
    }
    const detail::wire::Ring r{region, 0};
    return send_small(*conn, detail::wire::Kind::ring, std::as_bytes(std::span(&r, 1)));
}

inline ucs_status_t Node::Impl::on_flushed(void* arg, const void* header,
                                           std::size_t header_length, void*, std::size_t,
                                           const ucp_am_recv_param_t*) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    auto* conn = self.identify(bytes, detail::wire::Kind::flushed);
    if (conn == nullptr) {
        return UCS_OK;
    }
    const auto f = detail::wire::read<detail::wire::Flush>(bytes, sizeof(detail::wire::Frame));
    if (!f || header_length != sizeof(detail::wire::Frame) + sizeof(detail::wire::Flush) ||
        f->sequence > conn->flush_asked) {
        self.refuse(conn, "malformed flush answer");
        return UCS_OK;
    }
    conn->flush_answered = std::max(conn->flush_answered, f->sequence);
    self.notify();
    return UCS_OK;
}

// put, ring and flush from a peer.
inline ucs_status_t Node::Impl::on_write(void* arg, const void* header, std::size_t header_length,
                                         void* data, std::size_t length,
                                         const ucp_am_recv_param_t* param) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    const bool rendezvous = (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0;
    const ucs_status_t refused = rendezvous ? UCS_ERR_REJECTED : UCS_OK;
    const auto frame = detail::wire::read<detail::wire::Frame>(bytes, 0);
    const auto kind = frame ? static_cast<detail::wire::Kind>(frame->kind) : detail::wire::Kind::put;
    if (kind != detail::wire::Kind::put && kind != detail::wire::Kind::ring &&
        kind != detail::wire::Kind::flush) {
        self.refuse(nullptr, "malformed message");
        return refused;
    }
    auto* conn = self.identify(bytes, kind);
    if (conn == nullptr) {
        return refused;
    }
    return self.take_write(*conn, kind, bytes, data, length, rendezvous);
}

// Checks a write (window_writes.hpp) and queues it behind the peer's earlier ones.
inline ucs_status_t Node::Impl::take_write(detail::Conn& conn, detail::wire::Kind kind,
                                           std::span<const std::byte> header, void* data,
                                           std::size_t length, bool rendezvous) {
    const ucs_status_t refused = rendezvous ? UCS_ERR_REJECTED : UCS_OK;
    auto w = detail::decode_write(kind, header.subspan(sizeof(detail::wire::Frame)), length);
    const char* why = w ? detail::check_write(exposed, *w, length) : "malformed write";
    if (why == nullptr) {
        why = detail::admit_write(conn.writes, length, rendezvous);
    }
    if (why != nullptr) {
        refuse(&conn, why);
        return refused;
    }
    detail::enqueue_write(conn.writes, std::move(*w), data, length, rendezvous);
    apply_deferred(conn);
    // A rendezvous descriptor is this node's now: received (or waiting its turn to be).
    return rendezvous ? UCS_INPROGRESS : UCS_OK;
}

// Applies the peer's waiting writes in order, until one is still landing.
inline void Node::Impl::apply_deferred(detail::Conn& conn) {
    if (conn.state == detail::ConnState::lost) {
        return;
    }
    detail::drain_writes(conn.writes, [&](detail::Deferred& w) {
        apply(conn, w);
        return conn.state != detail::ConnState::lost;
    });
}

inline void Node::Impl::apply(detail::Conn& conn, detail::Deferred& w) {
    namespace wire = detail::wire;
    if (w.kind == wire::Kind::flush) {
        const wire::Flush f{w.sequence};
        static_cast<void>(send_small(conn, wire::Kind::flushed, std::as_bytes(std::span(&f, 1))));
        return;
    }
    auto& region = exposed[w.region];
    if (w.kind == wire::Kind::ring) {
        region.bell.ring();
        return;
    }
    auto into = region.memory.subspan(static_cast<std::size_t>(w.offset));
    if (w.descriptor == nullptr) {
        detail::store(into, w.bytes);
        return;
    }
    // A rendezvous: UCX places the bytes straight into the region; what follows waits for it.
    struct Landing {
        Impl* node;
        detail::Conn* conn;
    };
    auto landing = std::make_unique<Landing>(Landing{this, &conn});
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.user_data = landing.get();
    p.cb.recv_am = [](void* request, ucs_status_t, std::size_t, void* user) {
        const std::unique_ptr<Landing> l(static_cast<Landing*>(user));
        InCallback guard;
        ucp_request_free(request);
        --l->conn->writes.landing;
        l->node->later.push_back([node = l->node, conn = l->conn] { node->apply_deferred(*conn); });
    };
    void* request = ucp_am_recv_data_nbx(worker.h, w.descriptor, into.data(), w.length, &p);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
        ++conn.writes.landing; // in flight (NULL: landed at once; an error: the connection failed)
        static_cast<void>(landing.release());
    }
}

} // namespace ferry::net
