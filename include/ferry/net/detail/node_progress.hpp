#pragma once
// Node::Impl: starting and stopping UCX, the progress thread, heartbeats, and waiting
// (docs/multi-node.md, Connections and Failure behaviour).

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ferry/net/detail/node_state.hpp>
#include <ferry/net/detail/ucx_log.hpp>
#include <ifaddrs.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace ferry::net {

namespace detail {

// The network interface that owns the numeric address `host` ("lo" for 127.0.0.1); empty when
// none does (a wildcard address, or an address of no interface).
[[nodiscard]] inline std::string interface_of(const SockAddr& at) {
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) {
        return {};
    }
    std::string name;
    for (const auto* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != at.get()->sa_family) {
            continue;
        }
        if (at.get()->sa_family == AF_INET) {
            const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
            const auto* b = reinterpret_cast<const sockaddr_in*>(at.get());
            name = a->sin_addr.s_addr == b->sin_addr.s_addr ? i->ifa_name : "";
        } else {
            const auto* a = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
            const auto* b = reinterpret_cast<const sockaddr_in6*>(at.get());
            name = std::memcmp(&a->sin6_addr, &b->sin6_addr, sizeof a->sin6_addr) == 0 ? i->ifa_name
                                                                                       : "";
        }
    }
    ::freeifaddrs(list);
    return name;
}

// The eventfd that ends this thread's sleeps on a worker (Node::join_waiters): made on first
// use, closed when the thread ends. -1 when none could be made or none was made yet.
struct WaitFd {
    int fd = -1;
    WaitFd() = default;
    WaitFd(const WaitFd&) = delete;
    WaitFd& operator=(const WaitFd&) = delete;
    ~WaitFd() {
        if (fd >= 0) {
            ::close(fd);
        }
    }
};
inline thread_local WaitFd t_wait_fd;

[[nodiscard]] inline int own_wait_fd() noexcept {
    if (t_wait_fd.fd < 0) {
        t_wait_fd.fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    }
    return t_wait_fd.fd;
}
[[nodiscard]] inline int own_wait_fd_if_any() noexcept {
    return t_wait_fd.fd;
}

} // namespace detail

// The UCX settings a node starts with: the user's, and unless the user chose UCX's network
// devices (UCX_NET_DEVICES or a NET_DEVICES setting), only the interface that owns the listen
// address, so that UCX's own sockets are not on every interface (docs/security.md).
inline Status Node::Impl::configure_ucx(ucp_config_t* config) {
    bool devices_chosen = std::getenv("UCX_NET_DEVICES") != nullptr;
    for (const auto& [name, value] : options.ucx_settings) {
        devices_chosen = devices_chosen || name == "NET_DEVICES";
        if (const auto s = ucp_config_modify(config, name.c_str(), value.c_str()); s != UCS_OK) {
            detail::log_ucx(("UCX setting " + name + "=" + value).c_str(), s);
            return Status::invalid_param;
        }
    }
    const auto parsed = detail::parse_address(options.listen);
    if (!devices_chosen && parsed.address) {
        const auto device = detail::interface_of(*parsed.address);
        if (!device.empty() && ucp_config_modify(config, "NET_DEVICES", device.c_str()) != UCS_OK) {
            detail::log_line("cannot restrict UCX to " + device);
            return Status::failure;
        }
    }
    return Status::ok;
}

inline Status Node::Impl::start_ucx() {
    detail::route_ucx_log(); // before UCX reads its configuration (it warns from there)
    detail::ConfigOwner config;
    if (const auto s = ucp_config_read(nullptr, nullptr, &config.h); s != UCS_OK) {
        detail::log_ucx("cannot read UCX's configuration", s);
        return Status::failure;
    }
    if (const auto s = configure_ucx(config.h); s != Status::ok) {
        return s;
    }
    // No UCP_FEATURE_RMA unless asked: over UCX's tcp transport a remote key is not checked, so
    // with RMA any process that reaches the worker could read and write registered memory.
    // Windows are then written by put messages this node checks (node_rma.hpp; docs/security.md).
    ucp_params_t params{};
    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
    if (options.one_sided_rma) {
        params.features |= UCP_FEATURE_RMA;
        detail::log_line("one-sided RMA is on: exposed memory is writable by whoever holds its "
                         "key, checked only by the transport (never safe over tcp)",
                         LogLevel::info);
    }
    if (const auto s = ucp_init(&params, config.h, &context.h); s != UCS_OK) {
        detail::log_ucx("cannot start UCX", s);
        return Status::failure;
    }
    ucp_worker_params_t wp{};
    wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED; // `mu` serialises every call
    if (const auto s = ucp_worker_create(context.h, &wp, &worker.h); s != UCS_OK) {
        detail::log_ucx("cannot create a UCX worker", s);
        return Status::failure;
    }
    ucp_worker_attr_t attr{};
    attr.field_mask = UCP_WORKER_ATTR_FIELD_MAX_AM_HEADER | UCP_WORKER_ATTR_FIELD_ADDRESS;
    if (const auto s = ucp_worker_query(worker.h, &attr); s != UCS_OK) {
        detail::log_ucx("cannot query the UCX worker", s);
        return Status::failure;
    }
    max_am_header = attr.max_am_header;
    const auto* address = reinterpret_cast<const std::byte*>(attr.address);
    worker_address.assign(address, address + attr.address_length);
    ucp_worker_release_address(worker.h, attr.address);
    if (worker_address.empty() ||
        worker_address.size() > detail::handshake::k_max_worker_address ||
        !detail::handshake::random_bytes(identity)) {
        detail::log_line("unusable UCX worker address, or no random bytes for an identity");
        return Status::failure;
    }
    for (const auto kind : detail::wire::k_kinds) {
        ucp_am_handler_param_t hp{};
        hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                        UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
        hp.id = static_cast<unsigned>(kind);
        hp.flags = UCP_AM_FLAG_WHOLE_MSG;
        hp.arg = this;
        switch (kind) {
        case detail::wire::Kind::heartbeat:
            hp.cb = &Impl::on_heartbeat;
            break;
        case detail::wire::Kind::service:
            hp.cb = &Impl::on_service;
            break;
        case detail::wire::Kind::ring:
        case detail::wire::Kind::put:
        case detail::wire::Kind::flush:
            hp.cb = &Impl::on_write;
            break;
        case detail::wire::Kind::flushed:
            hp.cb = &Impl::on_flushed;
            break;
        case detail::wire::Kind::bye:
            hp.cb = &Impl::on_bye;
            break;
        }
        if (const auto s = ucp_worker_set_am_recv_handler(worker.h, &hp); s != UCS_OK) {
            detail::log_ucx("cannot register an AM handler", s);
            return Status::failure;
        }
    }
    return Status::ok;
}

// ferry's own listening socket: nothing of UCX is reachable through it before the handshake.
inline Status Node::Impl::start_listener() {
    const auto parsed = detail::parse_address(options.listen);
    if (!parsed.address) {
        detail::log_line("cannot listen: " + parsed.error);
        return Status::invalid_param;
    }
    std::string error;
    listener = detail::bootstrap::listen_on(*parsed.address, listen_address, error);
    if (!listener.valid()) {
        detail::log_line(error + " (" + options.listen + ")");
        return Status::failure;
    }
    return Status::ok;
}

inline Status Node::Impl::start_thread() {
    int efd = -1;
    if (const auto s = ucp_worker_get_efd(worker.h, &efd); s != UCS_OK) {
        detail::log_ucx("cannot get the worker's event fd", s);
        return Status::failure;
    }
    epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (epoll_fd < 0 || wake_fd < 0) {
        detail::log_line("cannot create the progress thread's epoll or eventfd");
        return Status::failure;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = k_worker_tag;
    epoll_event wev{};
    wev.events = EPOLLIN;
    wev.data.u64 = k_wake_tag;
    epoll_event lev{};
    lev.events = EPOLLIN;
    lev.data.u64 = k_listener_tag;
    worker_fd = efd;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, efd, &ev) != 0 ||
        ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &wev) != 0 ||
        (listener.valid() && ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, listener.get(), &lev) != 0)) {
        detail::log_line("cannot watch the worker's event fd or the listener");
        return Status::failure;
    }
    next_heartbeat = clock::now() + options.heartbeat;
    next_beat = next_heartbeat;
    thread = std::thread([this] { run(); });
    if (options.progress_thread_batch) {
        // Set from here, before start() returns: the thread is SCHED_BATCH before any work.
        const sched_param normal_priority{}; // SCHED_BATCH takes priority 0
        if (const int e =
                ::pthread_setschedparam(thread.native_handle(), SCHED_BATCH, &normal_priority);
            e != 0) {
            detail::log_line(std::string("the progress thread stays on its policy: "
                                         "SCHED_BATCH refused (") +
                                 std::strerror(e) + ")",
                             LogLevel::warning);
        }
    }
    return Status::ok;
}

// The progress thread: progress while there is work, arm the worker, sleep in epoll until UCX
// has an event, someone wakes the thread (eventfd) or the next heartbeat is due. While callers
// progress the worker themselves it sleeps off the worker's fd instead (stay_off), waking every
// k_off_slice and for heartbeats, the listener, handshakes and the eventfd.
inline void Node::Impl::run() {
    while (!stopping.load(std::memory_order_acquire)) {
        ucs_status_t armed = UCS_OK;
        bool off = false;
        bool slicing_now = false; // off the worker, and looking again within k_off_slice
        clock::time_point due;
        std::string state; // to publish, once the lock is released
        {
            std::lock_guard lock(mu);
            // Drained until the worker runs dry, a heartbeat is due or a caller waits for `mu`:
            // a worker that never runs dry (a peer sending faster than this node's handlers take
            // it) must neither stop this node's heartbeats (the peer would lose a live node as
            // silent) nor lock callers out.
            while ((fd_waiters.empty() || wanted.load(std::memory_order_seq_cst)) &&
                   progress_locked() && clock::now() < next_heartbeat && !mu.contended()) {
            }
            const auto now = clock::now();
            heartbeat_if_due(now);
            if (state_file.enabled() && now >= next_state) {
                state = state_json();
                next_state = now + detail::k_state_interval;
            }
            due = next_heartbeat;
            const bool waiters = !fd_waiters.empty();
            off = stay_off();
            const bool waits_came_and_went = waiters_left != waiters_left_seen;
            waiters_left_seen = waiters_left;
            slicing = off && (!waiters || waits_came_and_went);
            slicing_now = slicing;
            armed = off ? UCS_OK : ucp_worker_arm(worker.h);
            if (armed != UCS_ERR_BUSY) {
                watch_worker(!off); // with `mu`: joining and leaving waiters switch it too
                slicing_now = slicing_now || (!off && !watching_worker); // could not add it
            }
        }
        if (!state.empty()) {
            finish_state(state);
        }
        if (std::string why; !state.empty() && state_file.write(state, why) != Status::ok) {
            detail::log_line(why, LogLevel::warning);
        }
        if (armed == UCS_ERR_BUSY) {
            // About to take `mu` straight back: a caller blocked on it goes first (WorkerMutex),
            // and the thread is back by the next heartbeat at the latest.
            mu.let_waiters_in(due);
            continue;
        }
        if (slicing_now) {
            due = std::min(due, clock::now() + k_off_slice);
        }
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(due - clock::now());
        epoll_event events[16];
        const int n =
            ::epoll_wait(epoll_fd, events, 16, static_cast<int>(std::max<long>(0, left.count())));
        for (int i = 0; i < n; ++i) {
            handle_event(events[i].data.u64);
        }
    }
}

inline void Node::Impl::handle_event(std::uint64_t tag) {
    if (tag == k_wake_tag) {
        std::uint64_t count = 0;
        [[maybe_unused]] const auto r = ::read(wake_fd, &count, sizeof count);
        return;
    }
    if (tag == k_worker_tag) {
        return; // the loop progresses the worker
    }
    std::lock_guard lock(mu);
    if (tag == k_listener_tag) {
        accept_pending();
    } else if ((tag & k_pending_tag) != 0) {
        serve_pending(static_cast<int>(tag & 0xffffffffU));
    }
    drain();
}

// Decided with `mu` held before sleeping: off the worker's fd while a caller progressed it
// since the last decision and nobody asked for the thread back since. Either a caller's
// hand_back() sees `off_worker` and wakes the thread, or this sees `wanted` (both seq_cst).
inline bool Node::Impl::stay_off() {
    off_worker.store(true, std::memory_order_seq_cst);
    const bool asked = wanted.exchange(false, std::memory_order_seq_cst);
    const auto progressed = caller_progress.load(std::memory_order_relaxed);
    const bool recent = progressed != caller_progress_seen;
    caller_progress_seen = progressed;
    if ((recent || !fd_waiters.empty()) && !asked) {
        return true;
    }
    off_worker.store(false, std::memory_order_seq_cst);
    return false;
}

// Watches the worker's fd or stops; a system call only when that changes. Stopping takes the
// fd out of the epoll set altogether: an entry left in with no events would still be called
// back, through UCX's nested epoll sets, for every segment that reaches the worker's sockets
// (docs/performance/net.md, Channel rate). With `mu` held: the progress thread, and waiters that
// join or leave (a leaving waiter puts the armed worker back in the sleeping thread's epoll set
// without waking it). When the fd cannot be added back, watching_worker stays false and the
// thread looks at the worker every k_off_slice instead (run()).
inline void Node::Impl::watch_worker(bool on) {
    if (on == watching_worker) {
        return;
    }
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = k_worker_tag;
    if (::epoll_ctl(epoll_fd, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, worker_fd, &ev) == 0) {
        watching_worker = on;
    }
}

// A caller stopped progressing the worker (it parks, or waits on the progress thread): the
// progress thread takes the worker back now rather than after its slice.
inline void Node::Impl::hand_back() noexcept {
    wanted.store(true, std::memory_order_seq_cst);
    if (off_worker.load(std::memory_order_seq_cst)) {
        wake();
    }
}

inline void Node::Impl::wake() const noexcept {
    const std::uint64_t one = 1;
    if (wake_fd >= 0) {
        [[maybe_unused]] const auto r = ::write(wake_fd, &one, sizeof one);
    }
}

inline void Node::Impl::notify() {
    {
        std::lock_guard lock(wait_mu);
        ++generation;
    }
    wait_cv.notify_all();
}

inline bool Node::Impl::progress_locked() {
    bool any = false;
    {
        InCallback guard; // what UCX calls from here runs as a callback
        any = ucp_worker_progress(worker.h) != 0;
    }
    if (any) {
        ring_mapped(); // a one-sided put may have landed
        if (!fd_waiters.empty()) {
            wake_fd_waiters(detail::own_wait_fd_if_any()); // what they sleep for may be here
        }
    }
    drain();
    return any;
}

// Progresses until the worker runs dry or k_progress_burst calls; true when anything happened.
inline bool Node::Impl::progress_burst() {
    bool any = false;
    for (std::uint32_t i = 0; i < k_progress_burst && progress_locked(); ++i) {
        any = true;
    }
    return any;
}

inline void Node::Impl::wake_fd_waiters(int except) const noexcept {
    const std::uint64_t one = 1;
    for (const int fd : fd_waiters) {
        if (fd != except) {
            [[maybe_unused]] const auto r = ::write(fd, &one, sizeof one);
        }
    }
}

// `fd` joins the waiters on the worker, `mu` held: the progress thread keeps off the worker
// from now on. False when there is no memory for the entry (the caller waits another way).
inline bool Node::Impl::join_fd_waiters(int fd) noexcept {
    try {
        fd_waiters.push_back(fd);
    } catch (...) {
        return false;
    }
    watch_worker(false);
    return true;
}

inline bool Node::Impl::is_fd_waiter(int fd) const noexcept {
    return std::ranges::find(fd_waiters, fd) != fd_waiters.end();
}

// `fd` leaves the joined waiters, `mu` held. The last one progresses the worker until idle,
// then hands it back to the progress thread: armed and in its epoll set, it wakes the thread
// for the next event only; events already pending (busy) wake it now. Except while the thread
// is slicing (waits came and went since it last looked): it looks again within k_off_slice
// anyway, so the worker stays off its fd and the next wait, which usually begins within
// microseconds, finds the worker its own instead of the thread woken by what arrives meanwhile.
// Nor is the worker progressed then: with no arm to follow, that progress only delayed the
// leaving waiter (in an exchange, the answer it is about to publish) by a system call; what is
// pending is the next wait's, or the thread's within the slice (docs/performance/net.md, The
// leaving waiter's last progress). Counted as a caller's progress: the thread stays off while
// waits keep coming (stay_off), and takes the worker back within two slices once they stop.
inline void Node::Impl::leave_fd_waiters(int fd) noexcept {
    if (const auto it = std::find(fd_waiters.begin(), fd_waiters.end(), fd);
        it != fd_waiters.end()) {
        fd_waiters.erase(it);
    }
    if (!fd_waiters.empty()) {
        return;
    }
    ++waiters_left;
    if (slicing && !wanted.load(std::memory_order_seq_cst)) {
        caller_progress.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    progress_burst(); // what is left makes the arm below busy: the thread is woken for it
    if (ucp_worker_arm(worker.h) == UCS_ERR_BUSY) {
        wake();
    } else {
        watch_worker(true);
    }
}

// A waiter's sleep (Node::progress_or_sleep), `mu` held on entry and on return: arm the worker
// and, unless UCX has events already (busy: the caller progresses again), poll the worker's fd
// and the waiter's own eventfd — written by any other thread's progress, a lost peer,
// wake_waiters() — until the deadline. True when it slept.
inline bool Node::Impl::sleep_on_worker(std::unique_lock<detail::WorkerMutex>& lock, int own_fd,
                                        clock::time_point deadline) {
    if (ucp_worker_arm(worker.h) == UCS_ERR_BUSY) {
        return false;
    }
    lock.unlock();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now());
    pollfd fds[2] = {{worker_fd, POLLIN, 0}, {own_fd, POLLIN, 0}};
    ::poll(fds, 2, static_cast<int>(std::clamp<long>(left.count(), 0, INT_MAX)));
    std::uint64_t count = 0;
    [[maybe_unused]] const auto r = ::read(own_fd, &count, sizeof count); // non-blocking
    lock.lock();
    return true;
}

// What callbacks deferred: close endpoints, run on_peer_lost handlers and completions. Runs
// with `mu` held, outside UCX's callbacks; handlers that post more are served by the loop.
inline void Node::Impl::drain() {
    if (draining || callback_depth > 0) {
        return;
    }
    draining = true;
    while (!to_close.empty() || !newly_lost.empty() || !later.empty()) {
        auto eps = std::exchange(to_close, {});
        for (auto* ep : eps) {
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;
            void* request = ucp_ep_close_nbx(ep, &p);
            if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
                closing.push_back(request);
            }
        }
        if (!newly_lost.empty()) {
            wake_fd_waiters(-1); // their probes end their waits
        }
        for (const PeerId id : std::exchange(newly_lost, {})) {
            std::vector<std::shared_ptr<std::function<void(PeerId)>>> handlers;
            for (const auto& [token, handler] : watchers) {
                handlers.push_back(handler);
            }
            for (const auto& handler : handlers) {
                detail::run_guarded("an on_peer_lost handler", *handler, id);
            }
        }
        for (auto& completion : std::exchange(later, {})) {
            detail::run_guarded("a completion", completion);
        }
    }
    std::erase_if(closing, [](void* request) {
        if (ucp_request_check_status(request) == UCS_INPROGRESS) {
            return false;
        }
        ucp_request_free(request);
        return true;
    });
    draining = false;
}

// With `mu` held, outside UCX's callbacks: the progress thread between sleeps, and a caller
// whose wait keeps the worker busy (the thread cannot take `mu` for the heartbeats then).
inline void Node::Impl::heartbeat_if_due(clock::time_point now) {
    if (now < next_heartbeat) {
        return;
    }
    expire_pending(now);
    heartbeat_tick(now);
    next_heartbeat = now + options.heartbeat;
}

// A heartbeat to each peer but `skip`. Also from UCX's callbacks (identify()): one progress call
// can run hundreds of handlers, and a node whose handlers are slow must not fall silent while
// it runs them (docs/multi-node.md, A worker that never runs dry).
inline void Node::Impl::send_heartbeats(clock::time_point now,
                                        const std::vector<detail::Conn*>& skip) {
    next_beat = now + options.heartbeat;
    std::vector<detail::Conn*> to;
    for (const auto& [ep, conn] : by_ep) {
        if (conn->state == detail::ConnState::peer &&
            std::find(skip.begin(), skip.end(), conn) == skip.end()) {
            to.push_back(conn); // a send below may lose a connection, changing by_ep
        }
    }
    for (auto* conn : to) {
        if (conn->state != detail::ConnState::peer) {
            continue;
        }
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_AM_SEND_FLAG_EAGER;
        void* request =
            ucp_am_send_nbx(conn->ep, static_cast<unsigned>(detail::wire::Kind::heartbeat),
                            &conn->heartbeat, sizeof conn->heartbeat, nullptr, 0, &p);
        if (request != nullptr && !UCS_PTR_IS_ERR(request)) {
            ucp_request_free(request); // released by UCX when it completes
        }
    }
}

// Every `heartbeat`: a heartbeat to each peer, and a connection silent for `peer_timeout` is
// lost (a stopped process raises no error in UCX; docs/multi-node.md, Failure behaviour).
inline void Node::Impl::heartbeat_tick(clock::time_point now) {
    std::vector<detail::Conn*> silent;
    for (const auto& [ep, conn] : by_ep) {
        if (conn->state != detail::ConnState::lost &&
            now - conn->last_heard > options.peer_timeout) {
            silent.push_back(conn);
        }
    }
    send_heartbeats(now, silent);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(options.peer_timeout);
    for (auto* conn : silent) {
        if (conn->state == detail::ConnState::peer) {
            lose(*conn, "silent for more than " + std::to_string(ms.count()) + " ms");
        } else {
            refuse(conn, "no handshake within " + std::to_string(ms.count()) + " ms");
        }
    }
    drain();
}

template <typename Ready>
bool Node::Impl::wait_until(std::unique_lock<detail::WorkerMutex>& lock, clock::time_point deadline,
                            Ready ready) {
    while (true) {
        // Until the worker runs dry, what we wait for is ready, or the deadline or a heartbeat
        // is due: a worker that never runs dry must not hold this wait (nor, through `mu`, the
        // heartbeats) past its answer.
        bool any = false;
        while ((any = progress_locked()) && !ready() &&
               clock::now() < std::min(deadline, next_heartbeat)) {
        }
        if (ready()) {
            return true;
        }
        const auto now = clock::now();
        if (now >= deadline) {
            return false;
        }
        if (any) { // still busy: a heartbeat is due
            heartbeat_if_due(now);
            continue;
        }
        // The progress thread sees the worker's events; sleep until a completion bumps
        // `generation` (read while `mu` is held, so no completion slips in between).
        std::uint64_t seen = 0;
        {
            std::lock_guard g(wait_mu);
            seen = generation;
        }
        wanted.store(true, std::memory_order_seq_cst); // this waiter stops progressing
        wake();
        lock.unlock();
        {
            std::unique_lock w(wait_mu);
            wait_cv.wait_until(w, std::min(deadline, clock::now() + std::chrono::milliseconds(5)),
                               [&] { return generation != seen; });
        }
        lock.lock();
    }
}

inline Node::Impl::~Impl() {
    if (thread.joinable()) {
        stopping.store(true, std::memory_order_release);
        wake();
        thread.join();
    }
    if (worker.h != nullptr) {
        std::unique_lock lock(mu);
        closing_down = true;
        while (!pending.empty()) {
            close_pending(pending.begin()->first, nullptr);
        }
        say_goodbye();
        for (auto& conn : conns) {
            if (conn->ep != nullptr) {
                for (auto& w : conn->writes.deferred) {
                    if (w.descriptor != nullptr) {
                        ucp_am_data_release(worker.h, w.descriptor);
                    }
                }
                conn->writes.deferred.clear();
                to_close.push_back(conn->ep);
                by_ep.erase(conn->ep);
                conn->ep = nullptr;
                conn->state = detail::ConnState::lost;
            }
        }
        newly_lost.clear(); // handlers do not run for a node going away
        drain();
        const auto deadline = clock::now() + std::chrono::seconds(1);
        while (!closing.empty() && clock::now() < deadline) {
            progress_locked();
        }
        for (void* request : closing) {
            ucp_request_cancel(worker.h, request);
        }
        release_rma();
        exposed.clear();
    }
    if (epoll_fd >= 0) {
        ::close(epoll_fd);
    }
    if (wake_fd >= 0) {
        ::close(wake_fd);
    }
}

} // namespace ferry::net
