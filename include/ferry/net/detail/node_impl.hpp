#pragma once
// ferry::net::Node's definitions (node.hpp declares them). One header per facility:
// node_state.hpp (what a Node holds), node_progress.hpp (UCX start and stop, the progress
// thread, heartbeats), node_connections.hpp (endpoints, peers, refusals, losses),
// node_handshake.hpp, node_services.hpp, node_rma.hpp.

#include <ferry/net/detail/node_connections.hpp>
#include <ferry/net/detail/node_handshake.hpp>
#include <ferry/net/detail/node_progress.hpp>
#include <ferry/net/detail/node_rma.hpp>
#include <ferry/net/detail/node_services.hpp>
#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

inline PeerId Delivery::peer() const noexcept {
    return impl_->conn->id;
}
inline std::span<const std::byte> Delivery::header() const noexcept {
    return impl_->header;
}
inline std::uint64_t Delivery::length() const noexcept {
    return impl_->length;
}
inline bool Delivery::is_rendezvous() const noexcept {
    return impl_->rendezvous;
}
inline std::span<const std::byte> Delivery::eager() const noexcept {
    if (impl_->rendezvous || impl_->data == nullptr) {
        return {};
    }
    return {static_cast<const std::byte*>(impl_->data), static_cast<std::size_t>(impl_->length)};
}
inline Status Delivery::receive_into(std::span<std::byte> into, std::function<void(Status)> done) {
    if (impl_ == nullptr || !impl_->rendezvous || impl_->receiving || into.size() < impl_->length) {
        return Status::invalid_param;
    }
    return impl_->node->receive(*impl_, into, std::move(done));
}

inline Node::Node(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
inline Node::~Node() = default;

inline Result<std::unique_ptr<Node>> Node::start(NodeOptions options) {
    if (options.secret.empty() || options.heartbeat.count() <= 0 ||
        options.peer_timeout <= options.heartbeat || options.handshake_timeout.count() <= 0) {
        detail::log_line("cannot start: empty secret, heartbeat not shorter than peer_timeout, "
                         "or a handshake_timeout that is not positive");
        return Status::invalid_param;
    }
    if (!options.listen.empty() && !detail::parse_address(options.listen).address) {
        detail::log_line("cannot listen: " + detail::parse_address(options.listen).error);
        return Status::invalid_param;
    }
    auto impl = std::make_unique<Impl>();
    impl->options = std::move(options);
    if (const auto s = impl->start_ucx(); s != Status::ok) {
        return s;
    }
    if (!impl->options.listen.empty()) {
        if (const auto s = impl->start_listener(); s != Status::ok) {
            return s;
        }
    }
    if (const auto s = impl->start_thread(); s != Status::ok) {
        return s;
    }
    return std::unique_ptr<Node>(new Node(std::move(impl)));
}

inline std::string Node::address() const {
    return impl_->listen_address;
}

inline Result<PeerId> Node::connect(std::string_view address, Timeout timeout) {
    return impl_->connect(address, timeout);
}

inline std::vector<PeerId> Node::peers() const {
    std::lock_guard lock(impl_->mu);
    std::vector<PeerId> out;
    for (const auto& [id, conn] : impl_->by_id) {
        if (conn->state == detail::ConnState::peer) {
            out.push_back(id);
        }
    }
    return out;
}


inline Status Node::await_peers(std::size_t count, Timeout timeout) {
    const auto deadline = timeout.deadline_from(detail::clock::now());
    if (Impl::refuse_wait_in_callback("await_peers")) {
        return Status::invalid_param;
    }
    std::unique_lock lock(impl_->mu);
    return impl_->wait_until(lock, deadline, [&] { return impl_->accepted_peers() >= count; })
               ? Status::ok
               : Status::timed_out;
}

inline void Node::disconnect(PeerId peer) {
    std::lock_guard lock(impl_->mu);
    if (auto* conn = impl_->peer(peer)) {
        impl_->lose(*conn, "disconnected by this node");
    }
}

inline void Node::serve(ServiceId service, Handler handler) {
    std::lock_guard lock(impl_->mu);
    impl_->services[service] = std::make_shared<Handler>(std::move(handler));
}

inline void Node::unserve(ServiceId service) {
    std::lock_guard lock(impl_->mu);
    impl_->services.erase(service);
}

inline Status Node::send(PeerId peer, ServiceId service, std::span<const std::byte> header,
                         std::span<const std::byte> payload, Timeout timeout) {
    return impl_->send(peer, service, header, payload, timeout);
}

inline Status Node::post(PeerId peer, ServiceId service, std::span<const std::byte> header,
                         std::span<const std::byte> payload, std::function<void(Status)> done) {
    return impl_->post(peer, service, header, payload, std::move(done));
}

inline bool Node::progress() {
    if (Impl::callback_depth > 0) {
        return false; // UCX forbids progressing from its callbacks; the caller's caller does
    }
    std::lock_guard lock(impl_->mu);
    return impl_->progress_locked();
}

inline bool Node::alive(PeerId peer) const noexcept {
    std::lock_guard lock(impl_->mu);
    return impl_->peer(peer) != nullptr;
}

inline std::uint64_t Node::losses() const noexcept {
    return impl_->losses.load(std::memory_order_acquire);
}

inline std::uint64_t Node::on_peer_lost(std::function<void(PeerId)> handler) {
    std::lock_guard lock(impl_->mu);
    const auto token = impl_->next_watch++;
    impl_->watchers[token] = std::make_shared<std::function<void(PeerId)>>(std::move(handler));
    return token;
}

inline void Node::unwatch(std::uint64_t token) {
    std::lock_guard lock(impl_->mu);
    impl_->watchers.erase(token);
}

inline std::uint64_t Node::refusals() const noexcept {
    return impl_->refusals.load(std::memory_order_acquire);
}

inline std::string Node::last_refusal() const {
    std::lock_guard lock(impl_->refusal_mu);
    return impl_->last_refusal;
}

inline std::map<std::string, std::uint64_t> Node::refusals_by_reason() const {
    std::lock_guard lock(impl_->refusal_mu);
    return impl_->refusal_reasons;
}

inline Result<RegionId> Node::expose(std::span<std::byte> memory, afd::Doorbell bell) {
    return impl_->expose(memory, bell);
}

inline std::vector<RemoteRegion> Node::regions(PeerId peer) const {
    std::lock_guard lock(impl_->mu);
    std::vector<RemoteRegion> out;
    if (const auto* conn = impl_->peer(peer)) {
        out = conn->regions;
    }
    return out;
}

inline Status Node::put(PeerId peer, RegionId region, std::uint64_t owner_address,
                        std::span<const std::byte> bytes) {
    return impl_->put(peer, region, owner_address, bytes);
}

inline Status Node::put_and_ring(PeerId peer, RegionId region, std::uint64_t owner_address,
                                 std::span<const std::byte> bytes) {
    return impl_->put(peer, region, owner_address, bytes, true);
}

inline Status Node::fence(PeerId peer) {
    return impl_->fence(peer);
}

inline Status Node::flush(PeerId peer, Timeout timeout) {
    return impl_->flush(peer, timeout);
}

inline Status Node::ring(PeerId peer, RegionId region) {
    return impl_->ring(peer, region);
}

} // namespace ferry::net
