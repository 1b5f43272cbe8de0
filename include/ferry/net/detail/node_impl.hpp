#pragma once
// ferry::net::Node's definitions (node.hpp declares them). One header per facility:
// node_state.hpp (what a Node holds), node_progress.hpp (UCX start and stop, the progress
// thread, heartbeats), node_connections.hpp (endpoints, peers, refusals, losses),
// node_handshake.hpp, node_services.hpp, node_rma.hpp.

#include <algorithm>
#include <chrono>
#include <ferry/core/detail/json_string.hpp>
#include <ferry/net/detail/node_connections.hpp>
#include <ferry/net/detail/node_handshake.hpp>
#include <ferry/net/detail/node_progress.hpp>
#include <ferry/net/detail/node_rma.hpp>
#include <ferry/net/detail/node_services.hpp>
#include <ferry/net/detail/node_state.hpp>
#include <ferry/runtime/profiler.hpp>
#include <unistd.h>

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

inline Expected<std::unique_ptr<Node>> Node::start(NodeOptions options) {
    const detail::ErrorCapture reason;
    const auto failed = [&](Status s) {
        return Error{
            s, reason.text_or("ferry/net: cannot start a node: " + std::string(name_of(s))), 0};
    };
    if (options.secret.empty() || options.heartbeat.count() <= 0 ||
        options.peer_timeout <= options.heartbeat || options.handshake_timeout.count() <= 0) {
        detail::log_line("cannot start: empty secret, heartbeat not shorter than peer_timeout, "
                         "or a handshake_timeout that is not positive");
        return failed(Status::invalid_param);
    }
    if (!options.listen.empty() && !detail::parse_address(options.listen).address) {
        detail::log_line("cannot listen: " + detail::parse_address(options.listen).error);
        return failed(Status::invalid_param);
    }
    auto impl = std::make_unique<Impl>();
    impl->options = std::move(options);
    if (std::string why; impl->state_file.configure_from_environment(why), !why.empty()) {
        detail::log_line(why); // an error: what the environment asked for does not happen
    }
    if (const auto s = impl->start_ucx(); s != Status::ok) {
        return failed(s);
    }
    if (!impl->options.listen.empty()) {
        if (const auto s = impl->start_listener(); s != Status::ok) {
            return failed(s);
        }
    }
    if (const auto s = impl->start_thread(); s != Status::ok) {
        return failed(s);
    }
    return std::unique_ptr<Node>(new Node(std::move(impl)));
}

inline std::string Node::address() const {
    return impl_->listen_address;
}

inline Expected<PeerId> Node::connect(std::string_view address, Timeout timeout) {
    const TraceSpan trace("net.connect", "net");
    const detail::ErrorCapture reason;
    const Result<PeerId> id = impl_->connect(address, timeout);
    if (id) {
        return *id;
    }
    const std::string what =
        "ferry/net: connect to " + std::string(address) + ": " + name_of(id.status());
    const std::string why = reason.text_or({});
    return Error{id.status(), why.empty() ? what : what + " (" + why + ")", 0};
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
    return impl_->post(peer, service, header, payload, std::move(done), nullptr,
                       Impl::Payload::kept_by_caller);
}

inline Status Node::post_owned(PeerId peer, ServiceId service, std::span<const std::byte> header,
                               std::span<const std::byte> payload,
                               std::shared_ptr<const void> owner) {
    return impl_->post(peer, service, header, payload, nullptr, std::move(owner),
                       Impl::Payload::kept_by_caller);
}

inline Status Node::post_copied(PeerId peer, ServiceId service, std::span<const std::byte> header,
                                std::span<const std::byte> payload) {
    return impl_->post(peer, service, header, payload, nullptr, nullptr, Impl::Payload::copied);
}

inline bool Node::progress() {
    if (Impl::callback_depth > 0) {
        return false; // UCX forbids progressing from its callbacks; the caller's caller does
    }
    impl_->caller_progress.fetch_add(1, std::memory_order_relaxed);
    std::lock_guard lock(impl_->mu);
    return impl_->progress_locked();
}

inline void Node::done_progressing() noexcept {
    impl_->hand_back();
}

inline bool Node::join_waiters() noexcept {
    const int fd = detail::own_wait_fd();
    if (fd < 0 || Impl::callback_depth > 0) {
        detail::log_line("ferry/net: this thread cannot sleep on the worker (no eventfd, or in a "
                         "handler): it naps instead",
                         LogLevel::warning);
        return false;
    }
    std::lock_guard lock(impl_->mu);
    return impl_->join_fd_waiters(fd); // false: no memory for the entry, the caller naps
}

inline bool Node::progress_or_sleep(std::chrono::steady_clock::time_point deadline) noexcept {
    if (Impl::callback_depth > 0) {
        return false;
    }
    std::unique_lock lock(impl_->mu);
    const bool any = impl_->progress_burst(); // bounded: the caller looks at its condition again
    if (any) {
        impl_->heartbeat_if_due(std::chrono::steady_clock::now()); // a worker that never runs dry
    }
    const int fd = detail::own_wait_fd_if_any();
    if (any || !impl_->is_fd_waiter(fd)) {
        return any; // a thread that did not join does not sleep here
    }
    if (!impl_->sleep_on_worker(lock, fd, deadline)) {
        return true; // busy: events arrived after the progress
    }
    impl_->progress_burst();
    return true;
}

inline void Node::leave_waiters() noexcept {
    const int fd = detail::own_wait_fd_if_any();
    std::lock_guard lock(impl_->mu);
    impl_->leave_fd_waiters(fd);
}

inline void Node::wake_waiters() noexcept {
    std::lock_guard lock(impl_->mu);
    impl_->wake_fd_waiters(-1);
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

inline std::vector<PeerStats> Node::peer_stats() const {
    std::lock_guard lock(impl_->mu);
    return impl_->peer_stats_locked();
}

inline std::vector<PeerStats> Node::Impl::peer_stats_locked() const {
    std::vector<PeerStats> out;
    for (const auto& [id, conn] : by_id) {
        const bool alive = conn->state == detail::ConnState::peer;
        out.push_back({id, conn->where, conn->accepted, alive, alive ? "" : conn->lost_reason,
                       conn->messages_sent, conn->bytes_sent, conn->messages_received,
                       conn->bytes_received});
    }
    return out;
}

// The state file's text (docs/multi-node.md, Publishing a node's state): one JSON object.
inline std::string Node::Impl::state_json() const {
    using ferry::detail::json_string;
    const auto written = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    std::string out = "{\"pid\": " + std::to_string(::getpid()) +
                      ",\n \"address\": " + json_string(listen_address) +
                      ",\n \"written_unix_ms\": " + std::to_string(written.count()) +
                      ",\n \"peers\": [";
    const char* separator = "";
    for (const PeerStats& p : peer_stats_locked()) {
        out += std::string(separator) + "\n  {\"peer\": " + std::to_string(p.peer) +
               ", \"address\": " + json_string(p.address) +
               ", \"accepted\": " + (p.accepted ? "true" : "false") +
               ", \"alive\": " + (p.alive ? "true" : "false") +
               ", \"lost_reason\": " + json_string(p.lost_reason) +
               ", \"messages_sent\": " + std::to_string(p.messages_sent) +
               ", \"bytes_sent\": " + std::to_string(p.bytes_sent) +
               ", \"messages_received\": " + std::to_string(p.messages_received) +
               ", \"bytes_received\": " + std::to_string(p.bytes_received) + "}";
        separator = ",";
    }
    std::lock_guard lock(refusal_mu);
    out += "],\n \"refusals\": " + std::to_string(refusals.load(std::memory_order_acquire)) +
           ",\n \"refusals_by_reason\": {";
    separator = "";
    for (const auto& [reason, count] : refusal_reasons) {
        out += std::string(separator) + json_string(reason) + ": " + std::to_string(count);
        separator = ", ";
    }
    return out + "}";
}

inline void Node::report_channels(std::function<std::string()> report) {
    const std::lock_guard lock(impl_->channel_report_mu);
    impl_->channel_report = std::move(report);
}

// Called without `mu`: the channel ends take their own locks, which their handlers take with
// `mu` held.
inline void Node::Impl::finish_state(std::string& state) const {
    std::function<std::string()> report;
    {
        const std::lock_guard lock(channel_report_mu);
        report = channel_report;
    }
    state += ",\n \"channels\": " + (report ? report() : std::string("[]")) + "}\n";
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
