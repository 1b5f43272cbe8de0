#pragma once
// Node::Impl: writes into exposed regions — expose, put, fence, flush, ring (docs/multi-node.md,
// Windows; docs/security.md). By default a put is a message the owner checks (an authenticated
// peer, a region it exposed, offset and length inside it) and applies itself: no memory of this
// node is registered with UCX, so nothing is reachable where a transport would not check a
// remote key. The owner applies one peer's puts, rings and flushes in the order they were sent:
// a put still landing (a rendezvous) holds back what came after it, so the data is in place
// before its flag.
//
// With NodeOptions::one_sided_rma (both sides) a put into a region whose owner gave its key is a
// ucp_put_nbx: the owner's code sees none of it, the NIC's key check is the only bound (docs/
// security.md, One-sided RMA). fence() is then ucp_worker_fence, a ring follows a fence, and the
// owner rings the doorbells of its registered regions whenever its worker made progress (over
// tcp a put lands inside that progress), so a parked owner wakes either way.

#include <algorithm>
#include <ferry/net/detail/node_progress.hpp>
#include <ferry/net/detail/node_state.hpp>

namespace ferry::net {

inline Result<RegionId> Node::Impl::expose(std::span<std::byte> memory, afd::Doorbell bell) {
    std::lock_guard lock(mu);
    // The table travels in the handshake: a region exposed later would reach no peer.
    if (memory.empty() || !conns.empty() || !pending.empty() ||
        exposed.size() >= detail::wire::k_max_regions) {
        return Status::invalid_param;
    }
    detail::LocalRegion region;
    region.memory = memory;
    region.bell = bell;
    if (options.one_sided_rma) {
        if (const auto s = map_for_rma(region); s != Status::ok) {
            return s;
        }
    }
    exposed.push_back(std::move(region));
    return static_cast<RegionId>(exposed.size() - 1);
}

// Registers exactly `region.memory` (ferry allocates and widens nothing) and packs its remote
// key; a key over the handshake's limits is not used (failure, nothing stays registered).
inline Status Node::Impl::map_for_rma(detail::LocalRegion& region) {
    namespace hs = detail::handshake;
    ucp_mem_map_params_t p{};
    p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    p.address = region.memory.data();
    p.length = region.memory.size();
    if (const auto s = ucp_mem_map(context.h, &p, &region.memh); s != UCS_OK) {
        detail::log_ucx("cannot register exposed memory for one-sided RMA", s);
        region.memh = nullptr;
        return Status::failure;
    }
    std::size_t keys = 0;
    for (const auto& r : exposed) {
        keys += r.key.size();
    }
    void* packed = nullptr;
    std::size_t size = 0;
    if (ucp_rkey_pack(context.h, region.memh, &packed, &size) == UCS_OK) {
        if (size != 0 && size <= hs::k_max_key && keys + size <= hs::k_max_keys) {
            const auto* bytes = static_cast<const std::byte*>(packed);
            region.key.assign(bytes, bytes + size);
        }
        ucp_rkey_buffer_release(packed);
    }
    if (region.key.empty()) {
        detail::log_line("cannot pack a remote key for exposed memory (or over " +
                         std::to_string(hs::k_max_key) + " bytes)");
        static_cast<void>(ucp_mem_unmap(context.h, region.memh));
        region.memh = nullptr;
        return Status::failure;
    }
    return Status::ok;
}

// After the worker made progress: a one-sided put may have landed in a registered region.
inline void Node::Impl::ring_mapped() {
    for (const auto& r : exposed) {
        if (r.memh != nullptr) {
            r.bell.ring();
        }
    }
}

// The keys of the regions a peer exposed, unpacked on its endpoint when this node does
// one-sided RMA too; regions without a key stay checked. False and `error` when UCX refuses a
// key (its length was checked against k_max_key when the Info was decoded).
inline bool Node::Impl::unpack_keys(detail::Conn& conn, const detail::handshake::Info& theirs,
                                    std::string& error) {
    conn.rkeys.assign(conn.regions.size(), nullptr);
    for (std::size_t i = 0; options.one_sided_rma && i < conn.regions.size(); ++i) {
        if (i >= theirs.keys.size() || theirs.keys[i].empty()) {
            continue;
        }
        if (const auto s = ucp_ep_rkey_unpack(conn.ep, theirs.keys[i].data(), &conn.rkeys[i]);
            s != UCS_OK) {
            conn.rkeys[i] = nullptr;
            error = std::string("the peer's remote key is not usable: ") + ucs_status_string(s);
            return false;
        }
        conn.regions[i].one_sided = true;
    }
    return true;
}

// A connection's unpacked keys (kept while the node lives: a put in flight may use one).
inline void Node::Impl::release_keys(detail::Conn& conn) {
    for (auto*& rkey : conn.rkeys) {
        if (rkey != nullptr) {
            ucp_rkey_destroy(rkey);
            rkey = nullptr;
        }
    }
}

// Before the worker goes: every unpacked key destroyed, every registration undone.
inline void Node::Impl::release_rma() {
    for (auto& conn : conns) {
        release_keys(*conn);
    }
    for (auto& r : exposed) {
        if (r.memh != nullptr) {
            static_cast<void>(ucp_mem_unmap(context.h, r.memh));
            r.memh = nullptr;
        }
    }
}

namespace detail {

// Whether this node writes any of the peer's regions one-sidedly.
[[nodiscard]] inline bool one_sided(const Conn& conn) {
    return std::any_of(conn.rkeys.begin(), conn.rkeys.end(),
                       [](ucp_rkey_h k) { return k != nullptr; });
}

} // namespace detail

// A small eager message of `kind` with `body` after the frame, completing on its own.
inline Status Node::Impl::send_small(detail::Conn& conn, detail::wire::Kind kind,
                                     std::span<const std::byte> body) {
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = &conn;
    op->owned_by_callback = true;
    op->header.reserve(sizeof(detail::wire::Frame) + body.size());
    detail::wire::append(op->header, detail::wire::frame(kind, conn.send_token));
    detail::wire::append_bytes(op->header, body);
    return issue(conn, op, kind, {}, UCP_AM_SEND_FLAG_EAGER);
}

// A caller waiting for its own operation (a put, a flush) progresses the worker itself, as a
// joined waiter does (Node::join_waiters), so that the completion is applied on its own thread
// with no hand-off through the progress thread: it progresses while there is work, polls up to
// k_own_spin times more, then sleeps on the worker's fd (at most k_own_sleep, as the tcp
// transport may miss a wake-up) until `ready()` (called with `mu` held) or the deadline. The
// progress thread keeps the heartbeats meanwhile, or this caller when the worker never runs dry
// (it holds `mu` then). Where the thread cannot join (no eventfd), it waits through the progress
// thread (wait_until).
template <typename Ready>
bool Node::Impl::wait_on_worker(std::unique_lock<detail::WorkerMutex>& lock,
                                clock::time_point deadline, Ready ready) {
    const int fd = detail::own_wait_fd();
    if (fd < 0) {
        return wait_until(lock, deadline, ready);
    }
    // A thread joined already (a NetWait's, progressing) stays joined after this wait.
    const bool joins_here = !is_fd_waiter(fd);
    if (joins_here && !join_fd_waiters(fd)) {
        return wait_until(lock, deadline, ready); // no memory for the entry
    }
    bool done = false;
    std::uint32_t idle = 0;
    while (true) {
        const bool any = progress_locked();
        const auto now = clock::now();
        if ((done = ready()) || now >= deadline) {
            break;
        }
        heartbeat_if_due(now);
        idle = any ? 0 : idle + 1;
        if (idle <= k_own_spin) {
            continue;
        }
        idle = 0;
        const auto bound = std::min(deadline, clock::now() + k_own_sleep);
        sleep_on_worker(lock, fd, bound); // busy: progresses again at once
    }
    if (joins_here) {
        leave_fd_waiters(fd);
    }
    return done;
}

// `rings`: the owner rings the region's doorbell once the bytes are applied — in the put's
// message where puts are checked; by a ring message after a fence where they are one-sided.
inline Status Node::Impl::put(PeerId peer_id, RegionId region, std::uint64_t owner_address,
                              std::span<const std::byte> bytes, bool rings) {
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
        return rings ? ring(peer_id, region) : Status::ok;
    }
    auto op = std::make_unique<Op>();
    op->node = this;
    op->conn = conn;
    std::span<const std::byte> source = bytes;
    const bool in_callback = callback_depth > 0;
    if (in_callback) {
        // A callback cannot wait for the put: the bytes are copied, and the put completes alone.
        op->staged.assign(bytes.begin(), bytes.end());
        source = op->staged;
        op->owned_by_callback = true;
    }
    Status s = Status::ok;
    if (const ucp_rkey_h rkey = conn->rkeys.empty() ? nullptr : conn->rkeys[region]) {
        ucp_request_param_t p = sent_param(*op);
        s = settle(op,
                   ucp_put_nbx(conn->ep, source.data(), source.size(), owner_address, rkey, &p));
        if (s == Status::ok && rings) {
            s = ring(peer_id, region); // after a fence
        }
    } else {
        op->header.reserve(sizeof(detail::wire::Frame) + sizeof(detail::wire::Put));
        detail::wire::append(op->header,
                             detail::wire::frame(detail::wire::Kind::put, conn->send_token));
        detail::wire::append(
            op->header, detail::wire::Put{region, rings ? detail::wire::k_put_rings : 0, offset});
        s = issue(*conn, op, detail::wire::Kind::put, source, 0);
    }
    if (s != Status::ok || in_callback || op->finished) {
        return s;
    }
    wait_on_worker(lock, clock::time_point::max(), [&] { return op->finished; });
    return op->result;
}

inline Status Node::Impl::fence(PeerId peer_id) {
    std::lock_guard lock(mu);
    auto* conn = peer(peer_id);
    if (conn == nullptr) {
        return by_id.contains(peer_id) ? Status::peer_lost : Status::invalid_param;
    }
    // Checked puts are applied in the order they were sent: the order a fence asks for holds.
    if (detail::one_sided(*conn)) {
        if (const auto s = ucp_worker_fence(worker.h); s != UCS_OK) {
            return detail::to_status(s);
        }
    }
    return Status::ok;
}

// Where puts are one-sided, their remote completion (ucp_ep_flush_nbx) first. Then a flush
// message; the peer answers it once every earlier checked put and ring of this node is applied.
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
    if (detail::one_sided(*conn)) {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.send = [](void*, ucs_status_t, void* self) { static_cast<Impl*>(self)->notify(); };
        p.user_data = this;
        void* request = ucp_ep_flush_nbx(conn->ep, &p);
        const bool done = wait_on_worker(
            lock, deadline, [&] { return detail::request_state(request) != UCS_INPROGRESS; });
        const ucs_status_t state = detail::request_state(request);
        if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
            ucp_request_free(request); // a request still in flight is freed when it completes
        }
        if (conn->state == detail::ConnState::lost) {
            return Status::peer_lost;
        }
        if (!done || state != UCS_OK) {
            return done ? detail::to_status(state) : Status::timed_out;
        }
    }
    const detail::wire::Flush f{++conn->flush_asked};
    if (const auto s =
            send_small(*conn, detail::wire::Kind::flush, std::as_bytes(std::span(&f, 1)));
        s != Status::ok) {
        return s;
    }
    const bool done = wait_on_worker(lock, deadline, [&] {
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
    // After the one-sided puts: UCX orders every operation of the worker across a fence.
    if (detail::one_sided(*conn)) {
        if (const auto s = ucp_worker_fence(worker.h); s != UCS_OK) {
            return detail::to_status(s);
        }
    }
    const detail::wire::Ring r{region, 0};
    return send_small(*conn, detail::wire::Kind::ring, std::as_bytes(std::span(&r, 1)));
}

inline ucs_status_t Node::Impl::on_flushed(void* arg, const void* header, std::size_t header_length,
                                           void*, std::size_t, const ucp_am_recv_param_t*) {
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
    const auto kind =
        frame ? static_cast<detail::wire::Kind>(frame->kind) : detail::wire::Kind::put;
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
    if (conn.state != detail::ConnState::lost && conn.writes.landing == 0 &&
        conn.writes.deferred.empty()) {
        // Nothing of the peer's ahead of it: applied at once — an eager put straight from UCX's
        // buffer, with no copy (queued, its bytes are copied: the buffer is gone after this).
        if (rendezvous) {
            w->descriptor = data;
            w->length = length;
        }
        apply(conn, *w,
              {static_cast<const std::byte*>(data), rendezvous || data == nullptr ? 0 : length});
    } else {
        detail::enqueue_write(conn.writes, std::move(*w), data, length, rendezvous);
    }
    // A rendezvous descriptor is this node's now: received (or waiting its turn to be).
    return rendezvous ? UCS_INPROGRESS : UCS_OK;
}

// Applies the peer's waiting writes in order, until one is still landing.
inline void Node::Impl::apply_deferred(detail::Conn& conn) {
    if (conn.state == detail::ConnState::lost) {
        return;
    }
    detail::drain_writes(conn.writes, [&](detail::Deferred& w) {
        apply(conn, w, w.bytes);
        return conn.state != detail::ConnState::lost;
    });
}

// `eager`: an eager put's bytes (its own copy in `w`, or UCX's buffer when applied at once).
inline void Node::Impl::apply(detail::Conn& conn, detail::Deferred& w,
                              std::span<const std::byte> eager) {
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
    const afd::Doorbell bell = w.rings ? region.bell : afd::Doorbell{};
    if (w.descriptor == nullptr) {
        detail::store(into, eager);
        bell.ring(); // after the store: a woken reader sees the bytes
        return;
    }
    // A rendezvous: UCX places the bytes straight into the region; what follows waits for it.
    struct Landing {
        Impl* node;
        detail::Conn* conn;
        afd::Doorbell bell; // silent unless the put rings
    };
    auto landing = std::make_unique<Landing>(Landing{this, &conn, bell});
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.user_data = landing.get();
    p.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user) {
        const std::unique_ptr<Landing> l(static_cast<Landing*>(user));
        InCallback guard;
        ucp_request_free(request);
        if (status == UCS_OK) {
            l->bell.ring();
        }
        --l->conn->writes.landing;
        l->node->later.push_back([node = l->node, conn = l->conn] { node->apply_deferred(*conn); });
    };
    void* request = ucp_am_recv_data_nbx(worker.h, w.descriptor, into.data(), w.length, &p);
    if (request == nullptr) {
        bell.ring(); // landed at once
    } else if (!UCS_PTR_IS_ERR(request)) {
        ++conn.writes.landing; // in flight (an error: the connection failed)
        static_cast<void>(landing.release());
    }
}

} // namespace ferry::net
