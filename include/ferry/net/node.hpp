#pragma once
// ferry::net::Node — one process's presence on the network: a UCX context and worker, an
// optional listener, authenticated connections to peers, and the services (remote channels,
// remote windows) that use them. Everything ferry/net builds sits on a Node; nothing in ferry
// speaks a transport of its own (UCX's UCP API carries every byte). docs/multi-node.md.
//
// Connections. A node that listens accepts connections on its address ("127.0.0.1:0" picks a
// free port; address() tells the real one). connect(address) opens one to another node. Either
// way the connection is a *peer* (PeerId) only after the handshake: the connecting side sends
// the job's shared secret (secret.hpp) and its exposed regions; the listening side checks the
// secret (constant time) before it exposes anything, and answers with its own regions. A peer
// that sends anything else first, or a wrong secret, is disconnected with a logged reason.
//
// Services. A service (a channel's receiving end, a window) registers a handler under a
// ServiceId; messages for it arrive as Deliveries, on whichever thread is progressing the worker
// (the node's progress thread, or a caller of progress()). A handler validates what it got and
// returns nullptr to accept, or a reason to refuse: the node then disconnects that peer and logs
// the reason — a forged or malformed message changes nothing and costs its sender the connection.
// A message for a ServiceId nobody serves is refused the same way.
//
// Liveness. UCX reports a peer whose process died or whose connection broke (peer error
// handling): the peer is lost at once. A frozen peer (SIGSTOP) or a silent network raises no
// error in UCX, so every node sends a heartbeat to each peer every `heartbeat`, and a peer
// that has sent nothing for `peer_timeout` is lost too. A lost peer stays lost (ids are never
// reused): every later operation on it answers Status::peer_lost, and on_peer_lost handlers run
// once for it.
//
// Threads. Every member function is thread-safe. Handlers and completion callbacks run with the
// worker held: they may call post(), put(), fence() and ring() (non-blocking); send(), flush(),
// connect() and await_peers() answer invalid_param there (they would wait), progress() does
// nothing, and the destructor must not be called.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ferry/afd/doorbell.hpp>
#include <ferry/core/expected.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/secret.hpp>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::net {

using PeerId = std::uint32_t;    // 0 is never a peer
using ServiceId = std::uint32_t; // chosen by the service (a channel hashes its name)
using RegionId = std::uint32_t;  // index into the exposing node's region table

struct NodeOptions {
    // "host:port" to listen on; empty: this node only connects. Port 0 picks a free port.
    std::string listen;
    Secret secret;
    std::chrono::milliseconds heartbeat{100};
    std::chrono::milliseconds peer_timeout{2000};
    // How long a connection to this node's listener has to complete the handshake.
    std::chrono::milliseconds handshake_timeout{5000};
    // Extra UCX settings (name without the UCX_ prefix, value), applied over the environment's
    // UCX_* variables; e.g. {"TLS", "tcp"}.
    std::vector<std::pair<std::string, std::string>> ucx_settings;
    // One-sided RMA for windows, for RDMA fabrics whose NIC checks remote keys (verbs rc / dc),
    // never over tcp, where UCX does not check them (docs/security.md, One-sided RMA). Off: peers
    // write exposed memory only with put messages this node checks and applies. On: the UCX
    // context has RMA, expose() registers exactly the exposed memory, its packed key goes to
    // peers that proved the secret, and a write to a peer that gave a key (and enabled it too)
    // is a ucp_put_nbx that no code of the owner checks. Either way the owner rings its own
    // doorbell, and RemoteWindow / ExposedWindow look the same.
    bool one_sided_rma = false;
    // The Node's progress thread runs as SCHED_BATCH: a wake-up of it (an event on the worker
    // that no caller is watching, a send still in flight) never preempts a running thread; it
    // runs on a free CPU, or when the running thread blocks or its time slice ends. For
    // streams whose sending and receiving threads share their CPUs with the progress thread:
    // the thread then stops taking the CPU, and the Node's lock, from under each send. The
    // price: where every CPU is busy, what only the progress thread does (a put's ring for a
    // waiter parked on a doorbell, a completion nobody waits for) can wait up to a scheduler
    // slice. Off: the thread keeps the process's policy (docs/multi-node.md, The progress
    // thread's scheduling).
    bool progress_thread_batch = false;
};

// Whether FERRY_NET_ONE_SIDED_RMA is "1": how the examples and tests choose
// NodeOptions::one_sided_rma (the library itself never reads it).
[[nodiscard]] inline bool one_sided_rma_from_environment() noexcept {
    const char* value = std::getenv("FERRY_NET_ONE_SIDED_RMA");
    return value != nullptr && std::string_view(value) == "1";
}

// A region another node exposed: its addresses in the owner's address space, and whether this
// node writes it with one-sided puts (the owner gave its key and both enabled one_sided_rma).
struct RemoteRegion {
    RegionId id = 0;
    std::uint64_t base = 0;
    std::uint64_t size = 0;
    bool one_sided = false;
};

// One message for a service; valid only during the handler call.
class Delivery {
public:
    [[nodiscard]] PeerId peer() const noexcept;
    [[nodiscard]] std::span<const std::byte> header() const noexcept;
    [[nodiscard]] std::uint64_t length() const noexcept; // payload bytes
    [[nodiscard]] bool is_rendezvous() const noexcept;
    // The payload when it came eagerly (is_rendezvous() false); valid during the handler.
    [[nodiscard]] std::span<const std::byte> eager() const noexcept;
    // A rendezvous payload: UCX places it straight into `into` (at least length() bytes, valid
    // until `done` runs); `done(Status)` runs from a later progress call when it has landed
    // (ok) or failed (peer_lost). Only during the handler; invalid_param when `into` is short.
    Status receive_into(std::span<std::byte> into, std::function<void(Status)> done);

private:
    friend class Node;
    struct Impl;
    Impl* impl_ = nullptr;
};

// What a node counted for one peer (docs/multi-node.md, Counters). Service messages only (the
// channels' and windows' messages); heartbeats and the handshake are not counted.
struct PeerStats {
    PeerId peer = 0;
    std::string address;     // the other side's address, as this node knows it
    bool accepted = false;   // it connected to this node's listener
    bool alive = false;      // false once lost
    std::string lost_reason; // why it was lost (empty while alive)
    std::uint64_t messages_sent = 0;
    std::uint64_t bytes_sent = 0; // payload bytes
    std::uint64_t messages_received = 0;
    std::uint64_t bytes_received = 0;
};

// nullptr: accepted. Otherwise why the message is refused (the peer is disconnected).
using Verdict = const char*;
using Handler = std::function<Verdict(Delivery&)>;

class Node {
public:
    // Starts the worker, the listener (when options.listen is set) and the progress thread.
    // invalid_param for an unparsable address, an empty secret, a heartbeat that is not
    // positive and shorter than peer_timeout, or a UCX setting UCX rejects; failure when UCX
    // cannot start or bind. The Error's message says why (it is also logged).
    [[nodiscard]] static Expected<std::unique_ptr<Node>> start(NodeOptions options);
    ~Node(); // disconnects every peer (bounded wait), stops the thread, releases UCX
    Node(const Node&) = delete;
    Node& operator=(const Node&) = delete;

    // "host:port" with the real port; empty when not listening.
    [[nodiscard]] std::string address() const;

    // Connects and completes the handshake. timed_out, peer_lost (refused, unreachable),
    // invalid_param (unparsable address, or called from a handler); the message says which.
    [[nodiscard]] Expected<PeerId> connect(std::string_view address, Timeout timeout);
    // Peers that completed the handshake and are not lost (both directions).
    [[nodiscard]] std::vector<PeerId> peers() const;
    // Blocks until at least `count` peers connected to this node (accepted), or the timeout.
    [[nodiscard]] Status await_peers(std::size_t count, Timeout timeout);
    void disconnect(PeerId peer);

    // Services.
    void serve(ServiceId service, Handler handler);
    void unserve(ServiceId service);

    // Sends header + payload to the peer's `service`; returns when the payload may be reused,
    // or timed_out (cancelled: the peer may or may not have got it; when UCX cannot cancel it,
    // as a rendezvous the peer never answers, the peer is disconnected, i.e. lost), peer_lost.
    // invalid_param for a header longer than UCX's active-message header limit.
    [[nodiscard]] Status send(PeerId peer, ServiceId service, std::span<const std::byte> header,
                              std::span<const std::byte> payload, Timeout timeout);
    // Starts the same send and returns: the header is copied, the payload must stay valid until
    // `done(Status)` runs (from a progress call; at once when it completed inline). A failure
    // returned here (invalid_param, peer_lost) means nothing started: `done` never runs.
    [[nodiscard]] Status post(PeerId peer, ServiceId service, std::span<const std::byte> header,
                              std::span<const std::byte> payload, std::function<void(Status)> done);
    // post() for a payload whose completion only has to let it go: the Node holds `owner`
    // (which keeps the payload alive) until UCX is done with the payload, then releases it; no
    // callback runs. A `done` that captured the owner would cost an allocation per post.
    [[nodiscard]] Status post_owned(PeerId peer, ServiceId service,
                                    std::span<const std::byte> header,
                                    std::span<const std::byte> payload,
                                    std::shared_ptr<const void> owner);
    // post() for a payload the caller takes back when this returns: the Node copies what it has
    // to keep (a short message goes inside the call from a buffer the Node reuses, allocating
    // nothing; a longer one is copied into a buffer of its own); no callback runs.
    [[nodiscard]] Status post_copied(PeerId peer, ServiceId service,
                                     std::span<const std::byte> header,
                                     std::span<const std::byte> payload);

    // Runs the worker once; true when something happened. Waiters that want low latency call it
    // themselves; otherwise the progress thread does it when the worker has events.
    bool progress();
    // A caller that called progress() in a loop and now sleeps or stops waiting calls this: the
    // progress thread, which stays off the worker while callers progress it, takes the worker
    // back at once (without it, within a few milliseconds; docs/multi-node.md, The progress
    // thread).
    void done_progressing() noexcept;

    // Waiting on the worker from the waiting thread, as raw UCX does (net/wait.hpp's NetWait;
    // docs/multi-node.md, Waiting with the latency of raw UCX). Between join_waiters() and
    // leave_waiters() the calling thread progresses the worker itself and sleeps on the worker's
    // event fd in progress_or_sleep(), so what arrives for it is applied on its own thread; the
    // progress thread keeps off the worker meanwhile (it still sends heartbeats and judges
    // silence, from what the waiters receive). A waiter's sleep also ends when another thread
    // progresses the worker, when a peer is lost, and on wake_waiters().
    // join_waiters(): false when the thread cannot wait so (no eventfd; logged) — then
    // progress_or_sleep() only progresses and naps. Not from a handler (false).
    [[nodiscard]] bool join_waiters() noexcept;
    // Progresses (64 calls at most: a worker that never runs dry must not keep the caller from
    // its condition); when nothing happened, arms the worker and sleeps until an event, a wake or
    // `deadline` (never past it). True when something happened or may have (look again).
    bool progress_or_sleep(std::chrono::steady_clock::time_point deadline) noexcept;
    // Ends what join_waiters() began and hands the worker back to the progress thread.
    void leave_waiters() noexcept;
    // Ends every waiter's current sleep (a stop flag was set, a window closes).
    void wake_waiters() noexcept;

    // Liveness.
    [[nodiscard]] bool alive(PeerId peer) const noexcept;
    // Bumped whenever a peer is lost: waiters compare it cheaply instead of asking per peer.
    [[nodiscard]] std::uint64_t losses() const noexcept;
    // Runs once per lost peer (disconnect() included), on the thread that noticed — the progress
    // thread, or a caller of disconnect(), send() or progress() — with the worker held, outside
    // UCX's callbacks: like a service handler it may post, put, fence and ring. Not for peers
    // the destructor closes. Returns a token for unwatch().
    std::uint64_t on_peer_lost(std::function<void(PeerId)> handler);
    void unwatch(std::uint64_t token);

    // Connections and messages refused (bad secret, malformed or unknown input, a handler's
    // verdict, too many unfinished handshakes), the last reason, and the count per reason.
    [[nodiscard]] std::uint64_t refusals() const noexcept;
    [[nodiscard]] std::string last_refusal() const;
    [[nodiscard]] std::map<std::string, std::uint64_t> refusals_by_reason() const;
    // Every peer this node has had (lost ones too, in id order) and what it counted for each.
    [[nodiscard]] std::vector<PeerStats> peer_stats() const;
    // The "channels" of this node's state file (docs/multi-node.md, Publishing a node's state):
    // `report` returns a JSON array. ferry/net's channels set it with their first end on the
    // node; the progress thread calls it without the worker held. A later call replaces it.
    void report_channels(std::function<std::string()> report);

    // Remote writes. expose() offers memory to peers' writes (before connecting or accepting
    // peers: the table travels in the handshake); `bell` is rung when a peer calls ring() for
    // the region, and with one_sided_rma after this node's worker made progress (a one-sided put
    // may have landed). regions(peer) lists what the peer exposed. failure when UCX cannot
    // register the memory for one-sided RMA.
    [[nodiscard]] Result<RegionId> expose(std::span<std::byte> memory, afd::Doorbell bell = {});
    [[nodiscard]] std::vector<RemoteRegion> regions(PeerId peer) const;
    // Writes `bytes` at the owner's address inside the peer's region (invalid_param, nothing
    // sent, when any of it is outside). Returns when `bytes` may be reused.
    [[nodiscard]] Status put(PeerId peer, RegionId region, std::uint64_t owner_address,
                             std::span<const std::byte> bytes);
    // put(), then the peer rings the doorbell it exposed with `region` once these bytes are in
    // place: a flag and its ring in one message where puts are checked (put + ring otherwise).
    [[nodiscard]] Status put_and_ring(PeerId peer, RegionId region, std::uint64_t owner_address,
                                      std::span<const std::byte> bytes);
    // Orders every earlier put to the peer before every later one (the data before its flag):
    // ucp_worker_fence where puts are one-sided; checked puts are applied in order anyway.
    [[nodiscard]] Status fence(PeerId peer);
    // Waits until every earlier put to the peer has landed in its memory.
    [[nodiscard]] Status flush(PeerId peer, Timeout timeout);
    // Asks the peer to ring the doorbell it exposed with `region` (a small message after the puts;
    // after a fence where puts are one-sided).
    [[nodiscard]] Status ring(PeerId peer, RegionId region);

private:
    friend class Delivery; // a Delivery refers to the node that delivers it
    struct Impl;
    explicit Node(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

} // namespace ferry::net

#include <ferry/net/detail/node_impl.hpp>
