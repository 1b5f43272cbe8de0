#pragma once
// Node::Impl's state: the UCX objects, the connections and their peers, the services, the
// exposed regions, and the bookkeeping that lets callbacks defer what UCX forbids inside them
// (closing an endpoint, running user handlers). docs/multi-node.md.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <ferry/net/detail/address.hpp>
#include <ferry/net/detail/ucx_status.hpp>
#include <ferry/net/detail/wire.hpp>
#include <ferry/net/node.hpp>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace ferry::net {

namespace detail {

using clock = std::chrono::steady_clock;

// A region this node exposed.
struct LocalRegion {
    std::span<std::byte> memory;
    afd::Doorbell bell;
    ucp_mem_h memh = nullptr;
    void* rkey_buffer = nullptr;
    std::size_t rkey_length = 0;
};

// A region a peer exposed, with the remote key unpacked for this connection's endpoint.
struct PeerRegion {
    RemoteRegion region;
    ucp_rkey_h rkey = nullptr;
};

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
    std::vector<PeerRegion> regions;
    clock::time_point last_heard;
    wire::Frame heartbeat; // the heartbeat's header: it must outlive every heartbeat sent
};

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
        std::vector<std::byte> staged; // a put's bytes copied when issued from a callback
        std::function<void(Status)> done;
        bool owned_by_callback = false; // post: the completion deletes it
        void* request = nullptr;        // UCX's, while in flight
        bool finished = false;
        Status result = Status::ok;
    };

    NodeOptions options;
    detail::ContextOwner context;
    detail::WorkerOwner worker;
    ucp_listener_h listener = nullptr;
    std::string listen_address;
    std::size_t max_am_header = 0;

    mutable std::recursive_mutex mu; // every UCX call, and all state below
    std::vector<std::unique_ptr<detail::Conn>> conns;
    std::unordered_map<ucp_ep_h, detail::Conn*> by_ep;
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
    std::mt19937_64 random{std::random_device{}()};

    std::atomic<std::uint64_t> losses{0};
    std::atomic<std::uint64_t> refusals{0};
    mutable std::mutex refusal_mu;
    std::string last_refusal;

    // Waiters (send, connect, await_peers, flush) sleep here; every completion bumps `generation`.
    std::mutex wait_mu;
    std::condition_variable wait_cv;
    std::uint64_t generation = 0;

    // The progress thread.
    int epoll_fd = -1;
    int wake_fd = -1;
    std::atomic<bool> stopping{false};
    std::thread thread;
    clock::time_point next_heartbeat;

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

    // node_progress.hpp
    Status start_ucx();
    Status start_listener();
    Status start_thread();
    void run();
    bool progress_locked();
    void drain();
    void heartbeat_tick(clock::time_point now);
    void wake() const noexcept;
    void notify();
    // Waits, progressing, until `ready()` (called with `mu` held) or the deadline.
    template <typename Ready>
    bool wait_until(std::unique_lock<std::recursive_mutex>& lock, clock::time_point deadline,
                    Ready ready);

    // node_connections.hpp
    static void on_conn_request(ucp_conn_request_h request, void* arg);
    static void on_ep_error(void* arg, ucp_ep_h ep, ucs_status_t status);
    detail::Conn* add_conn(ucp_ep_h ep, bool accepted, std::string where);
    ucp_ep_params_t ep_params();
    Result<PeerId> connect(std::string_view address, Timeout timeout);
    void lose(detail::Conn& conn, const std::string& reason);
    void refuse(detail::Conn* conn, const std::string& reason);
    [[nodiscard]] detail::Conn* peer(PeerId id) const;
    [[nodiscard]] std::size_t accepted_peers() const;
    std::uint64_t token();

    // node_handshake.hpp
    std::vector<std::byte> hello_data() const;
    Status send_hello(detail::Conn& conn, detail::wire::Kind kind);
    const char* take_hello(detail::Conn& conn, std::span<const std::byte> header,
                           std::span<const std::byte> data);
    static ucs_status_t on_hello(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
    detail::Conn* identify(const ucp_am_recv_param_t* param, std::span<const std::byte> header,
                           detail::wire::Kind kind);

    // node_services.hpp
    static ucs_status_t on_service(void* arg, const void* header, std::size_t header_length,
                                   void* data, std::size_t length,
                                   const ucp_am_recv_param_t* param);
    static ucs_status_t on_heartbeat(void* arg, const void* header, std::size_t header_length,
                                     void* data, std::size_t length,
                                     const ucp_am_recv_param_t* param);
    static void on_sent(void* request, ucs_status_t status, void* user);
    Status issue(detail::Conn& conn, std::unique_ptr<Op>& op, detail::wire::Kind kind,
                 std::span<const std::byte> payload, std::uint32_t flags);
    Status send(PeerId peer, ServiceId service, std::span<const std::byte> header,
                std::span<const std::byte> payload, Timeout timeout);
    Status post(PeerId peer, ServiceId service, std::span<const std::byte> header,
                std::span<const std::byte> payload, std::function<void(Status)> done);
    std::unique_ptr<Op> service_op(detail::Conn& conn, ServiceId service,
                                   std::span<const std::byte> header);
    Status receive(Delivery::Impl& delivery, std::span<std::byte> into,
                   std::function<void(Status)> done);

    // node_rma.hpp
    Result<RegionId> expose(std::span<std::byte> memory, afd::Doorbell bell);
    Status put(PeerId peer, RegionId region, std::uint64_t owner_address,
               std::span<const std::byte> bytes);
    Status flush(PeerId peer, Timeout timeout);
    Status ring(PeerId peer, RegionId region);
    static ucs_status_t on_ring(void* arg, const void* header, std::size_t header_length,
                                void* data, std::size_t length, const ucp_am_recv_param_t* param);
    void release_regions();
};

} // namespace ferry::net
