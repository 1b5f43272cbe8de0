#pragma once
// Node::Impl: one-sided access — exposing memory, put, flush, ring (docs/multi-node.md).

#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

inline Result<RegionId> Node::Impl::expose(std::span<std::byte> memory, afd::Doorbell bell) {
    std::lock_guard lock(mu);
    // The table travels in the handshake: a region exposed later would reach no peer.
    if (memory.empty() || !conns.empty() || exposed.size() >= detail::wire::k_max_regions) {
        return Status::invalid_param;
    }
    ucp_mem_map_params_t mp{};
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address = memory.data();
    mp.length = memory.size();
    detail::LocalRegion r{memory, bell, nullptr, nullptr, 0};
    if (const auto s = ucp_mem_map(context.h, &mp, &r.memh); s != UCS_OK) {
        detail::log_ucx("cannot map memory to expose", s);
        return detail::to_status(s) == Status::invalid_param ? Status::invalid_param
                                                             : Status::failure;
    }
    if (const auto s = ucp_rkey_pack(context.h, r.memh, &r.rkey_buffer, &r.rkey_length);
        s != UCS_OK) {
        detail::log_ucx("cannot pack a remote key", s);
        ucp_mem_unmap(context.h, r.memh);
        return Status::failure;
    }
    exposed.push_back(r);
    return static_cast<RegionId>(exposed.size() - 1);
}

inline void Node::Impl::release_regions() {
    for (auto& conn : conns) {
        for (auto& r : conn->regions) {
            ucp_rkey_destroy(r.rkey);
        }
        conn->regions.clear();
    }
    for (auto& r : exposed) {
        ucp_rkey_buffer_release(r.rkey_buffer);
        ucp_mem_unmap(context.h, r.memh);
    }
    exposed.clear();
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
    const auto offset = owner_address - r.region.base; // wraps when below: caught next
    if (owner_address < r.region.base || offset > r.region.size ||
        bytes.size() > r.region.size - offset) {
        return Status::invalid_param;
    }
    if (bytes.empty()) {
        return Status::ok;
    }
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = conn;
    std::span<const std::byte> source = bytes;
    if (callback_depth > 0) {
        // A callback cannot wait for the put: the bytes are copied, and the put completes alone.
        op->staged.assign(bytes.begin(), bytes.end());
        source = op->staged;
        op->owned_by_callback = true;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = &Impl::on_sent;
    p.user_data = op.get();
    void* request = ucp_put_nbx(conn->ep, source.data(), source.size(), owner_address, r.rkey, &p);
    if (request == nullptr) {
        return Status::ok;
    }
    if (UCS_PTR_IS_ERR(request)) {
        return detail::to_status(UCS_PTR_STATUS(request));
    }
    op->request = request;
    wake();
    if (op->owned_by_callback) {
        static_cast<void>(op.release());
        return Status::ok;
    }
    wait_until(lock, clock::time_point::max(), [&] { return op->finished; });
    return op->result;
}

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
    ucp_request_param_t p{};
    void* request = ucp_ep_flush_nbx(conn->ep, &p);
    wake();
    const bool done = wait_until(lock, deadline, [&] {
        return conn->state == detail::ConnState::lost ||
               detail::request_state(request) != UCS_INPROGRESS;
    });
    const auto s = detail::request_state(request);
    if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
        ucp_request_free(request); // released by UCX when it completes, if it has not
    }
    if (conn->state == detail::ConnState::lost) {
        return Status::peer_lost;
    }
    return done ? detail::to_status(s) : Status::timed_out;
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
    // The ring follows the puts before it: the peer rings its doorbell after they landed.
    if (const auto s = ucp_worker_fence(worker.h); s != UCS_OK) {
        return detail::to_status(s);
    }
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = conn;
    op->owned_by_callback = true;
    detail::wire::append(op->header,
                         detail::wire::frame(detail::wire::Kind::ring, conn->send_token));
    detail::wire::append(op->header, detail::wire::Ring{region, 0});
    return issue(*conn, op, detail::wire::Kind::ring, {}, UCP_AM_SEND_FLAG_EAGER);
}

inline ucs_status_t Node::Impl::on_ring(void* arg, const void* header, std::size_t header_length,
                                        void*, std::size_t, const ucp_am_recv_param_t* param) {
    namespace wire = detail::wire;
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    auto* conn = self.identify(param, bytes, wire::Kind::ring);
    if (conn == nullptr) {
        return UCS_OK;
    }
    const auto ring = wire::read<wire::Ring>(bytes, sizeof(wire::Frame));
    if (!ring || header_length != sizeof(wire::Frame) + sizeof(wire::Ring)) {
        self.refuse(conn, "malformed ring");
    } else if (ring->region >= self.exposed.size()) {
        self.refuse(conn,
                    "ring for region " + std::to_string(ring->region) + ", which is not exposed");
    } else {
        self.exposed[ring->region].bell.ring();
    }
    return UCS_OK;
}

} // namespace ferry::net
