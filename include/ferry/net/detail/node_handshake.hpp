#pragma once
// Node::Impl: the handshake on ferry's own TCP connection — the listening side, driven by the
// progress thread, and connect() — and telling which connection sent a UCX message
// (docs/security.md, The handshake; docs/multi-node.md, Connections).

#include <ferry/net/detail/node_state.hpp>
#include <sys/epoll.h>

namespace ferry::net {

// What this node tells a peer that proved the secret.
inline detail::handshake::Info Node::Impl::my_info(std::uint64_t recv_token) const {
    detail::handshake::Info info;
    info.token = recv_token;
    info.worker_address = worker_address;
    for (std::size_t i = 0; i < exposed.size(); ++i) {
        const auto& r = exposed[i];
        info.regions.push_back({static_cast<std::uint32_t>(i), 0,
                                reinterpret_cast<std::uintptr_t>(r.memory.data()),
                                r.memory.size()});
        info.keys.push_back(r.key); // empty unless registered for one-sided RMA
    }
    return info;
}

// Takes every waiting connection; over k_max_pending_handshakes unfinished ones, a new one is
// closed at once (refused, counted).
inline void Node::Impl::accept_pending() {
    while (true) {
        sockaddr_storage from{};
        socklen_t length = sizeof from;
        detail::bootstrap::Fd fd(::accept4(listener.get(), reinterpret_cast<sockaddr*>(&from),
                                           &length, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!fd.valid()) {
            return; // EAGAIN, or an error of that one connection
        }
        const std::string where = detail::format_address(from);
        if (pending.size() >= detail::k_max_pending_handshakes) {
            count_refusal("too many unfinished handshakes");
            detail::log_line("refused " + where + ": too many unfinished handshakes",
                             LogLevel::warning);
            continue; // `fd` closes
        }
        const int raw = fd.get();
        auto p = std::make_unique<detail::Pending>(std::move(fd), options.secret, identity);
        p->deadline = clock::now() + options.handshake_timeout;
        p->where = where;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.u64 = k_pending_tag | static_cast<std::uint32_t>(raw);
        if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, raw, &ev) != 0) {
            continue;
        }
        pending[raw] = std::move(p);
    }
}

// A waiting connection is readable: its next message, if whole, takes the handshake a step.
inline void Node::Impl::serve_pending(int fd) {
    const auto found = pending.find(fd);
    if (found == pending.end()) {
        return;
    }
    auto& p = *found->second;
    while (pending.contains(fd)) {
        switch (detail::bootstrap::read_some(fd, p.framer)) {
        case detail::bootstrap::ReadResult::more:
            return;
        case detail::bootstrap::ReadResult::closed:
            close_pending(fd, "connection closed during the handshake");
            return;
        case detail::bootstrap::ReadResult::too_long:
            close_pending(fd, "handshake message over its length limit");
            return;
        case detail::bootstrap::ReadResult::complete:
            step_pending(p);
            break;
        }
    }
}

inline void Node::Impl::step_pending(detail::Pending& p) {
    const int fd = p.fd.get();
    auto step = p.session.take(p.framer.body());
    if (step.refusal != nullptr) {
        close_pending(fd, step.refusal);
        return;
    }
    if (step.client) {
        std::string error;
        p.conn = admit(*step.client, token(), true, p.where, error);
        if (p.conn == nullptr) {
            close_pending(fd, "the client's UCX worker address is not usable");
            return;
        }
        step.reply = p.session.answer(my_info(p.conn->recv_token));
    }
    // Replies are small (under k_max_info): the socket takes them whole or the client is not
    // reading, which ends its handshake.
    if (!step.reply.empty() &&
        ::send(fd, step.reply.data(), step.reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT) !=
            static_cast<ssize_t>(step.reply.size())) {
        close_pending(fd, "the client does not take the handshake's answer");
        return;
    }
    if (step.done) {
        if (p.conn->state == detail::ConnState::handshake) {
            p.conn->state = detail::ConnState::peer;
            notify();
        }
        p.conn = nullptr;
        close_pending(fd, nullptr);
        return;
    }
    p.framer.reset(p.session.cap());
}

// Ends a waiting connection: closes and frees it; with a refusal, counts and logs it, and a
// connection admitted but not finished is lost with it.
inline void Node::Impl::close_pending(int fd, const char* refusal) {
    const auto found = pending.find(fd);
    if (found == pending.end()) {
        return;
    }
    auto owned = std::move(found->second);
    pending.erase(found);
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    if (refusal != nullptr) {
        if (owned->conn != nullptr && owned->conn->state == detail::ConnState::handshake) {
            refuse(owned->conn, refusal);
        } else {
            count_refusal(refusal);
            detail::log_line("refused " + owned->where + ": " + refusal, LogLevel::warning);
        }
    }
}

inline void Node::Impl::expire_pending(clock::time_point now) {
    std::vector<int> late;
    for (const auto& [fd, p] : pending) {
        if (now >= p->deadline) {
            late.push_back(fd);
        }
    }
    for (const int fd : late) {
        close_pending(fd, "no handshake within the handshake timeout");
    }
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
    const auto fd = detail::bootstrap::connect_to(*parsed.address, deadline);
    if (!fd.valid()) {
        detail::log_line("cannot connect to " + std::string(address));
        return clock::now() >= deadline ? Status::timed_out : Status::peer_lost;
    }
    const auto id = connect_over(fd.get(), address, deadline);
    if (!id && id.status() == Status::peer_lost && clock::now() >= deadline) {
        return Status::timed_out;
    }
    return id;
}

// The connecting side's handshake on `fd`, without the worker held while it waits.
inline Result<PeerId> Node::Impl::connect_over(int fd, std::string_view address,
                                               clock::time_point deadline) {
    namespace hs = detail::handshake;
    namespace bs = detail::bootstrap;
    hs::ClientSession session(options.secret, identity);
    const auto hello = session.hello();
    if (hello.empty() || !bs::write_all(fd, hello, deadline)) {
        return Status::peer_lost;
    }
    const auto challenge = bs::read_message(fd, sizeof(hs::Challenge), deadline);
    if (!challenge) {
        detail::log_line("no handshake from " + std::string(address));
        return Status::peer_lost;
    }
    std::unique_lock lock(mu);
    const std::uint64_t recv_token = token();
    const char* refusal = nullptr;
    const auto proof = session.respond(*challenge, my_info(recv_token), refusal);
    lock.unlock();
    if (refusal != nullptr) {
        refuse(nullptr, std::string(refusal) + " (" + std::string(address) + ")");
        return Status::peer_lost;
    }
    const auto answer = bs::write_all(fd, proof, deadline)
                            ? bs::read_message(fd, hs::k_max_info, deadline)
                            : std::nullopt;
    const auto info = answer ? hs::decode_info(*answer) : std::nullopt;
    if (!info) {
        detail::log_line("refused by " + std::string(address) + " (or a malformed answer)");
        return Status::peer_lost;
    }
    lock.lock();
    std::string error;
    auto* conn = admit(*info, recv_token, false, std::string(address), error);
    if (conn == nullptr) {
        detail::log_line(error);
        return Status::peer_lost;
    }
    const PeerId id = conn->id;
    lock.unlock();
    const auto ready = hs::message_of(hs::k_ready_magic);
    if (!bs::write_all(fd, ready, deadline)) {
        lock.lock();
        lose(*conn, "the listener left before the handshake's end");
        return Status::peer_lost;
    }
    wake();
    return id;
}

// The connection that sent a message, checked: the frame, and the token that names the
// connection (which only a peer that proved the secret was told). nullptr when the message must
// be dropped (then it was refused, or it came on a connection already lost). An accepted
// connection whose Ready has not been read yet becomes a peer with its first message: the client
// sends only once its side is a peer.
inline detail::Conn* Node::Impl::identify(std::span<const std::byte> header,
                                          detail::wire::Kind kind) {
    const auto frame = detail::wire::read_frame(header, kind);
    if (!frame) {
        refuse(nullptr, "malformed message");
        return nullptr;
    }
    const auto found = by_token.find(frame->token);
    if (found == by_token.end()) {
        refuse(nullptr, "unknown connection token");
        return nullptr;
    }
    auto* conn = found->second;
    if (conn->state == detail::ConnState::lost) {
        return nullptr; // a connection already closed: what was in flight on it is dropped
    }
    if (conn->state == detail::ConnState::handshake) {
        conn->state = detail::ConnState::peer;
        notify();
    }
    const auto now = clock::now();
    conn->last_heard = now;
    if (now >= next_beat) {
        send_heartbeats(now, {}); // handlers that run long keep this node heard
    }
    return conn;
}

inline ucs_status_t Node::Impl::on_bye(void* arg, const void* header, std::size_t header_length,
                                       void*, std::size_t, const ucp_am_recv_param_t*) {
    auto& self = *static_cast<Impl*>(arg);
    std::lock_guard lock(self.mu);
    InCallback guard;
    const std::span bytes(static_cast<const std::byte*>(header), header_length);
    if (auto* conn = self.identify(bytes, detail::wire::Kind::bye)) {
        self.lose(*conn, "closed", true);
    }
    return UCS_OK;
}

// Before the node goes: every peer gets a bye after what was sent to it (bounded wait).
inline void Node::Impl::say_goodbye() {
    std::vector<detail::Conn*> peers;
    for (const auto& [id, conn] : by_id) {
        if (conn->state == detail::ConnState::peer) {
            peers.push_back(conn);
        }
    }
    std::vector<std::pair<detail::Conn*, void*>> flushes;
    for (detail::Conn* conn : peers) {
        static_cast<void>(send_small(*conn, detail::wire::Kind::bye, {}));
        // A send that failed may have lost the connection and closed its endpoint.
        if (conn->state != detail::ConnState::peer || conn->ep == nullptr) {
            continue;
        }
        ucp_request_param_t p{};
        flushes.emplace_back(conn, ucp_ep_flush_nbx(conn->ep, &p));
    }
    const auto deadline = clock::now() + std::chrono::milliseconds(500);
    const auto settled = [&] {
        for (const auto& [conn, request] : flushes) {
            if (conn->state != detail::ConnState::lost &&
                detail::request_state(request) == UCS_INPROGRESS) {
                return false;
            }
        }
        return true;
    };
    while (!settled() && clock::now() < deadline) {
        progress_locked();
    }
    for (const auto& [conn, request] : flushes) {
        if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
            ucp_request_free(request);
        }
    }
}

} // namespace ferry::net
