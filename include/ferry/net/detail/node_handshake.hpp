#pragma once
// Node::Impl: the handshake, and telling which connection sent a message (docs/multi-node.md,
// Connections and Security).

#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

// This node's half of a hello: the secret, then every exposed region with its packed key.
inline std::vector<std::byte> Node::Impl::hello_data() const {
    std::vector<std::byte> out;
    detail::wire::append_bytes(out, options.secret.bytes());
    for (std::size_t i = 0; i < exposed.size(); ++i) {
        const auto& r = exposed[i];
        detail::wire::Region entry;
        entry.id = static_cast<std::uint32_t>(i);
        entry.rkey_length = static_cast<std::uint32_t>(r.rkey_length);
        entry.base = reinterpret_cast<std::uintptr_t>(r.memory.data());
        entry.size = r.memory.size();
        detail::wire::append(out, entry);
        detail::wire::append_bytes(
            out, std::span(static_cast<const std::byte*>(r.rkey_buffer), r.rkey_length));
    }
    return out;
}

inline Status Node::Impl::send_hello(detail::Conn& conn, detail::wire::Kind kind) {
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = &conn;
    op->owned_by_callback = true;
    detail::wire::Hello hello;
    hello.reply_token = conn.recv_token;
    hello.secret_length = static_cast<std::uint32_t>(options.secret.bytes().size());
    hello.region_count = static_cast<std::uint32_t>(exposed.size());
    detail::wire::append(
        op->header,
        detail::wire::frame(kind, kind == detail::wire::Kind::hello ? 0 : conn.send_token));
    detail::wire::append(op->header, hello);
    op->staged = hello_data();
    const std::span<const std::byte> data(op->staged);
    return issue(conn, op, kind, data, UCP_AM_SEND_FLAG_EAGER);
}

// Checks and takes a hello (or its answer): the secret first, before anything in it is looked
// at or anything of this node is revealed; then the region table. A reason when refused.
inline const char* Node::Impl::take_hello(detail::Conn& conn, std::span<const std::byte> header,
                                          std::span<const std::byte> data) {
    namespace wire = detail::wire;
    const auto hello = wire::read<wire::Hello>(header, sizeof(wire::Frame));
    if (!hello || header.size() != sizeof(wire::Frame) + sizeof(wire::Hello) ||
        hello->secret_length > data.size()) {
        return "malformed hello";
    }
    if (!options.secret.matches(data.first(hello->secret_length))) {
        return "wrong secret";
    }
    if (hello->region_count > wire::k_max_regions) {
        return "malformed hello: too many regions";
    }
    std::vector<detail::PeerRegion> regions;
    std::size_t at = hello->secret_length;
    const char* why = nullptr;
    for (std::uint32_t i = 0; i < hello->region_count && why == nullptr; ++i) {
        const auto entry = wire::read<wire::Region>(data, at);
        if (!entry || entry->rkey_length > wire::k_max_rkey ||
            entry->base + entry->size < entry->base ||
            data.size() - at - sizeof(wire::Region) < entry->rkey_length || entry->id != i) {
            why = "malformed hello: bad region table";
            break;
        }
        at += sizeof(wire::Region);
        detail::PeerRegion r;
        r.region = RemoteRegion{entry->id, entry->base, entry->size};
        if (ucp_ep_rkey_unpack(conn.ep, data.data() + at, &r.rkey) != UCS_OK) {
            why = "malformed hello: remote key does not unpack";
            break;
        }
        at += entry->rkey_length;
        regions.push_back(r);
    }
    if (why == nullptr && at != data.size()) {
        why = "malformed hello: trailing bytes";
    }
    if (why != nullptr) {
        for (auto& r : regions) {
            ucp_rkey_destroy(r.rkey);
        }
        return why;
    }
    conn.regions = std::move(regions);
    conn.send_token = hello->reply_token;
    conn.heartbeat = wire::frame(wire::Kind::heartbeat, conn.send_token);
    conn.id = next_peer++;
    by_id[conn.id] = &conn;
    if (conn.accepted && send_hello(conn, wire::Kind::hello_ack) != Status::ok) {
        return "cannot answer the hello";
    }
    conn.state = detail::ConnState::peer;
    notify();
    return nullptr;
}

// The connection that sent a message, checked: its endpoint (UCX's reply endpoint, which is
// this node's endpoint of that connection), the frame, the stage of the handshake and the
// connection's token. nullptr when the message must be dropped (then it was refused, or it
// came on a connection already lost).
inline detail::Conn* Node::Impl::identify(const ucp_am_recv_param_t* param,
                                          std::span<const std::byte> header,
                                          detail::wire::Kind kind) {
    namespace wire = detail::wire;
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) == 0) {
        refuse(nullptr, "message without a reply endpoint");
        return nullptr;
    }
    const auto found = by_ep.find(param->reply_ep);
    if (found == by_ep.end()) {
        return nullptr; // a connection already closed: what was in flight on it is dropped
    }
    auto* conn = found->second;
    const auto frame = wire::read_frame(header, kind);
    if (!frame) {
        refuse(conn, "malformed message");
        return nullptr;
    }
    const auto handshake = conn->accepted ? wire::Kind::hello : wire::Kind::hello_ack;
    if (conn->state == detail::ConnState::handshake && kind != handshake) {
        refuse(conn, "message before the handshake");
        return nullptr;
    }
    if (conn->state == detail::ConnState::peer && kind == handshake) {
        refuse(nullptr, "second hello on a connection");
        return nullptr;
    }
    const std::uint64_t expected = kind == wire::Kind::hello ? 0 : conn->recv_token;
    if (frame->token != expected) {
        // Another connection may have named this one's endpoint: it cannot be told which.
        refuse(nullptr, "wrong connection token");
        return nullptr;
    }
    conn->last_heard = clock::now();
    return conn;
}

inline ucs_status_t Node::Impl::on_hello(void* arg, const void* header, std::size_t header_length,
                                         void* data, std::size_t length,
                                         const ucp_am_recv_param_t* param) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    const auto frame = detail::wire::read<detail::wire::Frame>(bytes, 0);
    const auto kind =
        frame && frame->kind == static_cast<std::uint16_t>(detail::wire::Kind::hello_ack)
            ? detail::wire::Kind::hello_ack
            : detail::wire::Kind::hello;
    auto* conn = self.identify(param, bytes, kind);
    if (conn == nullptr) {
        return UCS_OK;
    }
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) != 0) {
        self.refuse(conn, "hello too large");
        return UCS_OK;
    }
    const std::span payload(static_cast<const std::byte*>(data), length);
    if (const char* why = self.take_hello(*conn, bytes, payload); why != nullptr) {
        self.refuse(conn, why);
    }
    return UCS_OK;
}

} // namespace ferry::net
