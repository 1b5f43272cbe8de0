#pragma once
// Node::Impl's state: the UCX objects, the connections and their peers, the services, the
// exposed regions, and the bookkeeping that lets callbacks defer what UCX forbids inside them
// (closing an endpoint, running user handlers). docs/multi-node.md.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <ferry/net/detail/address.hpp>
#include <ferry/net/detail/bootstrap.hpp>
#include <ferry/net/detail/node_state_file.hpp>
#include <ferry/net/detail/ucx_status.hpp>
#include <ferry/net/detail/window_writes.hpp>
#include <ferry/net/detail/wire.hpp>
#include <ferry/net/detail/worker_mutex.hpp>
#include <ferry/net/node.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::net {

namespace detail {

using clock = std::chrono::steady_clock;

// Private bounds on what a peer can make this node hold for it (and window_writes.hpp).
inline constexpr std::size_t k_max_pending_handshakes = 64;

enum class ConnState { handshake, peer, lost };

// One UCX endpoint: a connection in its handshake, a peer, or what is left of a lost one (kept
// until the node goes, so callbacks of requests that referred to it stay valid).
struct Conn {
    ucp_ep_h ep = nullptr;
    PeerId id = 0;
    ConnState state = ConnState::handshake;
    bool accepted = false;        // the other side connected to this node's listener
    std::string where;            // the other side's address, for log lines
    std::uint64_t recv_token = 0; // what the other side puts in its Frames
    std::uint64_t send_token = 0; // what this side puts in its Frames
    std::vector<RemoteRegion> regions;
    std::vector<ucp_rkey_h> rkeys; // per region: the unpacked remote key, null for checked puts
    clock::time_point last_heard;
    wire::Frame heartbeat; // the heartbeat's header: it must outlive every heartbeat sent
    // The other side's writes into this node's regions, applied in the order they were sent.
    WriteQueue writes;
    // This side's flushes: the last one asked, the last one answered.
    std::uint64_t flush_asked = 0;
    std::uint64_t flush_answered = 0;
    // Counters (Node::peer_stats), under the node's mutex like everything here.
    std::uint64_t messages_sent = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_received = 0;
    std::string lost_reason;
};

// A connection to this node's listener that has not finished the handshake.
struct Pending {
    bootstrap::Fd fd;
    handshake::ServerSession session;
    handshake::Framer framer;
    clock::time_point deadline;
    std::string where;
    Conn* conn = nullptr; // once the client proved the secret
    Pending(bootstrap::Fd f, const Secret& secret, const handshake::Identity& id)
        : fd(std::move(f)), session(secret, id), framer(session.cap()) {}
};

// Runs a user's callback; an exception it throws must not unwind through UCX (C) or end the
// progress thread: it is logged and dropped.
template <typename F, typename... Args>
void run_guarded(const char* what, F& f, Args&&... args) noexcept {
    try {
        if (f) {
            f(std::forward<Args>(args)...);
        }
    } catch (const std::exception& e) {
        log_line(std::string(what) + " threw: " + e.what());
    } catch (...) {
        log_line(std::string(what) + " threw");
    }
}

} // namespace detail

struct Delivery::Impl {
    Node::Impl* node = nullptr;
    detail::Conn* conn = nullptr;
    std::span<const std::byte> header;
    std::uint64_t length = 0;
    bool rendezvous = false;
    void* data = nullptr; // eager bytes, or UCX's rendezvous descriptor
    bool receiving = false;
};

struct Node::Impl {
    using clock = detail::clock;

    // A send or post in flight: the AM header stays here until UCX completes it.
    struct Op {
        Impl* node = nullptr;
        detail::Conn* conn = nullptr;
        std::vector<std::byte> header;
        std::vector<std::byte> staged; // a put's bytes copied when issued from a callback, a
                                       // post_copied's payload
        std::function<void(Status)> done;
        std::shared_ptr<const void> owner; // a post's payload, kept until UCX lets go of it
        bool owned_by_callback = false;    // post: the completion deletes it
        void* request = nullptr;           // UCX's, while in flight
        bool finished = false;
        Status result = Status::ok;
    };

    NodeOptions options;
    // Posts that UCX answered with a request although asked to complete at once or not at all
    // (post_at_once; UCX promises it does not happen): their connection, payload owner and
    // completion, by request, until on_sent_late. Declared before the worker and context, so
    // that it outlives them and the completions they run as they go. Guarded by `mu`.
    struct LatePost {
        detail::Conn* conn = nullptr;
        std::vector<std::byte> bytes; // its header (and copied payload): UCX reads them still
        std::shared_ptr<const void> owner;
        std::function<void(Status)> done;
    };
    std::unordered_map<void*, LatePost> late_posts;
    // An entry made ahead (key nullptr), and room for it in late_posts, so that a post that UCX
    // leaves in flight is remembered with no allocation after the send (post_at_once).
    std::unordered_map<void*, LatePost>::node_type late_spare;
    // The header of the post being sent at once (post_at_once), and after it the payload of a
    // post_copied, reused: one allocation for the node's life, not one per post. Guarded by `mu`.
    std::vector<std::byte> at_once_bytes;
    detail::ContextOwner context;
    detail::WorkerOwner worker;
    std::string listen_address;
    std::size_t max_am_header = 0;
    detail::bootstrap::Fd listener;               // ferry's own front door (bootstrap.hpp)
    std::map<int, std::unique_ptr<detail::Pending>> pending; // by descriptor
    detail::handshake::Identity identity{};       // this node's, in every handshake
    std::vector<std::byte> worker_address;        // told to peers that proved the secret

    mutable detail::WorkerMutex mu; // every UCX call, and all state below
    std::vector<std::unique_ptr<detail::Conn>> conns;
    std::unordered_map<ucp_ep_h, detail::Conn*> by_ep;
    std::unordered_map<std::uint64_t, detail::Conn*> by_token; // recv_token -> its connection
    std::map<PeerId, detail::Conn*> by_id;
    PeerId next_peer = 1;
    std::map<ServiceId, std::shared_ptr<Handler>> services;
    std::map<std::uint64_t, std::shared_ptr<std::function<void(PeerId)>>> watchers;
    std::uint64_t next_watch = 1;
    std::vector<detail::LocalRegion> exposed;
    std::vector<void*> closing;               // endpoint-close requests not yet complete
    std::vector<ucp_ep_h> to_close;           // endpoints to close after the current callback
    std::vector<PeerId> newly_lost;           // peers whose on_peer_lost handlers are due
    std::vector<std::function<void()>> later; // completions due after the current callback
    bool draining = false;
    bool closing_down = false; // the destructor runs: peers that go now are not reported lost
    std::mt19937_64 random{std::random_device{}()};

    std::atomic<std::uint64_t> losses{0};
    std::atomic<std::uint64_t> refusals{0};
    mutable std::mutex refusal_mu;
    std::string last_refusal;
    std::map<std::string, std::uint64_t> refusal_reasons;

    // Waiters (send, connect, await_peers, flush) sleep here; every completion bumps `generation`.
    std::mutex wait_mu;
    std::condition_variable wait_cv;
    std::uint64_t generation = 0;

    // Publishing the node's state (node_state_file.hpp): off unless the environment asks.
    detail::StateFile state_file;
    clock::time_point next_state{};
    std::vector<PeerStats> peer_stats_locked() const; // with `mu` held
    std::string state_json() const;                   // with `mu` held; the object left open
    void finish_state(std::string& state) const;      // adds "channels", closes: without `mu`
    mutable std::mutex channel_report_mu;
    std::function<std::string()> channel_report; // Node::report_channels

    // The progress thread.
    int epoll_fd = -1;
    int wake_fd = -1;
    int worker_fd = -1;          // the worker's event fd, in epoll_fd
    bool watching_worker = true; // guarded by `mu`: worker_fd is in epoll_fd (watch_worker)
    // Sharing the worker with callers that progress it themselves (docs/multi-node.md, The
    // progress thread): while Node::progress() keeps being called, the progress thread sleeps
    // off the worker's fd (k_off_slice at a time) instead of being woken by every segment that
    // the caller reads anyway; `wanted` (Node::done_progressing, a waiting send or put) brings
    // it back at once. `off_worker` and `wanted` pair like a doorbell's `sleepers` and `rings`.
    std::atomic<std::uint64_t> caller_progress{0}; // bumped by every Node::progress()
    std::uint64_t caller_progress_seen = 0;        // written by the progress thread, `mu` held
    std::atomic<bool> off_worker{false};           // asleep (or about to be) off the worker's fd
    std::atomic<bool> wanted{false};               // a caller stopped progressing: come back
    static constexpr auto k_off_slice = std::chrono::milliseconds(1);
    // Threads that wait on the worker themselves (Node::join_waiters, net/wait.hpp), by the
    // eventfd that ends their sleep; guarded by `mu`. While there is one, the progress thread
    // neither watches nor progresses the worker unless `wanted`: the waiters do.
    std::vector<int> fd_waiters;
    // Waits that end and begin again soon after (an exchange's rounds, a receiver's messages)
    // keep the worker: while the last waiter left since the progress thread last looked, the
    // thread sleeps at most k_off_slice (`slicing`), so a waiter that leaves need not hand the
    // worker back (leave_fd_waiters); both guarded by `mu`.
    std::uint64_t waiters_left = 0;      // bumped by every last waiter that leaves
    std::uint64_t waiters_left_seen = 0; // the progress thread's last look
    bool slicing = false;                // the progress thread looks again within k_off_slice
    void wake_fd_waiters(int except) const noexcept; // with `mu` held
    bool sleep_on_worker(std::unique_lock<detail::WorkerMutex>& lock, int own_fd,
                         clock::time_point deadline);
    // With `mu` held. join: false when there is no memory for the entry.
    bool join_fd_waiters(int fd) noexcept;
    [[nodiscard]] bool is_fd_waiter(int fd) const noexcept;
    void leave_fd_waiters(int fd) noexcept;
    // A caller waiting for its own put or flush (wait_on_worker): empty polls before it sleeps,
    // and its longest sleep on the worker's fd.
    static constexpr std::uint32_t k_own_spin = 64;
    static constexpr auto k_own_sleep = std::chrono::milliseconds(1);
    // Most progress calls in one go where a caller drains the worker for someone else (a
    // waiter's progress_or_sleep, a leaving waiter): a worker that never runs dry (a peer sending
    // faster than the handlers take it) must not keep a waiter from looking at what it waits for,
    // nor hold `mu` from the progress thread's heartbeats.
    static constexpr std::uint32_t k_progress_burst = 64;
    std::atomic<bool> stopping{false};
    std::thread thread;
    clock::time_point next_heartbeat; // the next look for silent peers (and heartbeats)
    clock::time_point next_beat;      // the next heartbeats, wherever they are sent from

    // Callbacks (AM handlers, completions, error handlers) must not progress the worker: code
    // that would wait checks this (per thread) and defers instead.
    static inline thread_local int callback_depth = 0;
    struct InCallback {
        InCallback() noexcept { ++callback_depth; }
        ~InCallback() { --callback_depth; }
        InCallback(const InCallback&) = delete;
        InCallback& operator=(const InCallback&) = delete;
    };

    // send, flush, connect and await_peers wait, which a callback must not: a clear error.
    [[nodiscard]] static bool refuse_wait_in_callback(const char* what) {
        if (callback_depth == 0) {
            return false;
        }
        detail::log_line(std::string(what) + " called from a handler or callback: invalid_param");
        return true;
    }

    Impl() = default;
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl();

    // The progress thread's epoll tags: the worker's event fd, the wake eventfd, the listener,
    // and a waiting connection (the tag's low 32 bits are its descriptor).
    static constexpr std::uint64_t k_worker_tag = 1;
    static constexpr std::uint64_t k_wake_tag = 2;
    static constexpr std::uint64_t k_listener_tag = 3;
    static constexpr std::uint64_t k_pending_tag = std::uint64_t{1} << 32;

    // node_progress.hpp
    Status configure_ucx(ucp_config_t* config);
    Status start_ucx();
    void handle_event(std::uint64_t tag);
    Status start_listener();
    Status start_thread();
    void run();
    bool progress_locked();
    bool progress_burst();
    void drain();
    void heartbeat_tick(clock::time_point now);
    void heartbeat_if_due(clock::time_point now);
    void send_heartbeats(clock::time_point now, const std::vector<detail::Conn*>& skip);
    void wake() const noexcept;
    void notify();
    bool stay_off();
    void watch_worker(bool on);
    void hand_back() noexcept;
    // Waits, progressing, until `ready()` (called with `mu` held) or the deadline.
    template <typename Ready>
    bool wait_until(std::unique_lock<detail::WorkerMutex>& lock, clock::time_point deadline,
                    Ready ready);
    // The same, the calling thread progressing the worker itself (a joined waiter).
    template <typename Ready>
    bool wait_on_worker(std::unique_lock<detail::WorkerMutex>& lock, clock::time_point deadline,
                        Ready ready);

    // node_connections.hpp
    static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status);
    ucp_ep_params_t ep_params();
    detail::Conn* admit(const detail::handshake::Info& theirs, std::uint64_t recv_token,
                        bool accepted, std::string where, std::string& error);
    void lose(detail::Conn& conn, const std::string& reason, bool closed = false);
    void refuse(detail::Conn* conn, const std::string& reason);
    void count_refusal(const std::string& reason);
    [[nodiscard]] detail::Conn* peer(PeerId id) const;
    [[nodiscard]] std::size_t accepted_peers() const;
    std::uint64_t token();

    // node_handshake.hpp
    detail::handshake::Info my_info(std::uint64_t recv_token) const;
    void accept_pending();
    void serve_pending(int fd);
    void step_pending(detail::Pending& p);
    void close_pending(int fd, const char* refusal);
    void expire_pending(clock::time_point now);
    Result<PeerId> connect(std::string_view address, Timeout timeout);
    Result<PeerId> connect_over(int fd, std::string_view address, clock::time_point deadline);
    detail::Conn* identify(std::span<const std::byte> header, detail::wire::Kind kind);
    static ucs_status_t on_bye(void* arg, const void* header, std::size_t header_length,
                               void* data, std::size_t length, const ucp_am_recv_param_t* param);
    void say_goodbye();

    // node_services.hpp
    static ucs_status_t on_service(void* arg, const void* header, std::size_t header_length,
                                   void* data, std::size_t length,
                                   const ucp_am_recv_param_t* param);
    static ucs_status_t on_heartbeat(void* arg, const void* header, std::size_t header_length,
                                     void* data, std::size_t length,
                                     const ucp_am_recv_param_t* param);
    static ucs_status_t on_flushed(void* arg, const void* header, std::size_t header_length,
                                   void* data, std::size_t length,
                                   const ucp_am_recv_param_t* param);
    static void on_sent(void* request, ucs_status_t status, void* user);
    static ucp_request_param_t sent_param(Op& op);
    Status settle(std::unique_ptr<Op>& op, void* request);
    void announce_request() noexcept;
    Status issue(detail::Conn& conn, std::unique_ptr<Op>& op, detail::wire::Kind kind,
                 std::span<const std::byte> payload, std::uint32_t flags);
    // A send started on `conn`: counted when it is a service message (Node::peer_stats).
    static void count_sent(detail::Conn& conn, detail::wire::Kind kind, std::size_t bytes) noexcept {
        if (kind == detail::wire::Kind::service) {
            ++conn.messages_sent;
            conn.bytes_sent += bytes;
        }
    }
    Status send(PeerId peer, ServiceId service, std::span<const std::byte> header,
                std::span<const std::byte> payload, Timeout timeout);
    // Who keeps a post's payload until UCX is done with it: the caller (its owner or its `done`
    // says when it may go) or the Node, which copies it (Node::post_copied).
    enum class Payload { kept_by_caller, copied };
    Status post(PeerId peer, ServiceId service, std::span<const std::byte> header,
                std::span<const std::byte> payload, std::function<void(Status)> done,
                std::shared_ptr<const void> owner, Payload payload_kept);
    std::unique_ptr<Op> service_op(detail::Conn& conn, ServiceId service,
                                   std::span<const std::byte> header);
    enum class AtOnce { sent, in_flight, failed, not_at_once };
    AtOnce post_at_once(detail::Conn& conn, ServiceId service, std::span<const std::byte> header,
                        std::span<const std::byte> payload, Payload payload_kept,
                        std::shared_ptr<const void>& owner, std::function<void(Status)>& done,
                        Status& failure);
    static void on_sent_late(void* request, ucs_status_t status, void* user);
    // A post sends at once (post_at_once) only up to this payload; a longer one goes through a
    // request (UCX sends it in pieces or by rendezvous, never inside the call).
    static constexpr std::size_t k_at_once_payload = 8192;
    static constexpr std::size_t k_at_once_header = 256; // the most header at_once_bytes holds
    Status receive(Delivery::Impl& delivery, std::span<std::byte> into,
                   std::function<void(Status)> done);

    // node_rma.hpp
    Result<RegionId> expose(std::span<std::byte> memory, afd::Doorbell bell);
    Status map_for_rma(detail::LocalRegion& region);
    void ring_mapped();
    bool unpack_keys(detail::Conn& conn, const detail::handshake::Info& theirs, std::string& error);
    void release_keys(detail::Conn& conn);
    void release_rma();
    Status put(PeerId peer, RegionId region, std::uint64_t owner_address,
               std::span<const std::byte> bytes, bool rings = false);
    Status fence(PeerId peer);
    Status flush(PeerId peer, Timeout timeout);
    Status ring(PeerId peer, RegionId region);
    Status send_small(detail::Conn& conn, detail::wire::Kind kind,
                      std::span<const std::byte> body);
    static ucs_status_t on_write(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
    ucs_status_t take_write(detail::Conn& conn, detail::wire::Kind kind,
                            std::span<const std::byte> header, void* data, std::size_t length,
                            bool rendezvous);
    void apply(detail::Conn& conn, detail::Deferred& w, std::span<const std::byte> eager);
    void apply_deferred(detail::Conn& conn);
};

} // namespace ferry::net
