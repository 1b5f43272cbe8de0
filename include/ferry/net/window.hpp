#pragma once
// ferry::net::RemoteWindow and ferry::net::ExposedWindow — afd windows between nodes.
//
// The owner of some memory (the FFN's ScheduleContext buffers, an attention rank's flags and
// results) exposes it on its Node with an ExposedWindow: the Node registers it for remote writes
// (Node::expose) with the window's doorbell, which the Node rings when a peer asks it to, and the
// window enters the process's afd::WaitDirectory with that doorbell, a probe of the Node's
// peers and a wait driver. So the owner's schedulers, unchanged, wait on their own memory with
// the default AutoWait, which progresses the Node on the waiting thread as net::NetWait does
// (the writer's put and flag are applied there, no progress-thread hand-off), and end with
// peer_lost when a writer node is lost (docs/afd.md, The default wait). An explicit
// afd::DoorbellPark parks on the doorbell, which the Node's progress thread rings.
//
// A writer reaches a peer's exposed region through a RemoteWindow: an afd::RemoteAccess over
// Node::put / fence / ring / flush for (peer, region), whose afd::Window covers the region's
// range in the owner's address space (Node::regions). AttentionToFfn and FfnToAttention write
// through it as through any window (docs/afd.md, Remote windows): payload puts, a fence, the
// flag's put, a ring.
//
// Which path carries the bytes is the Nodes' choice, hidden here: put messages the owner's
// Node checks and applies (the default), or, where both Nodes enabled
// NodeOptions::one_sided_rma and the owner gave the region's key, one-sided ucp_put_nbx into
// memory registered for exactly the window (docs/security.md, One-sided RMA). one_sided() says
// which. Either way the owner's Node rings the owner's doorbell.
//
// Over UCX's tcp transport a put of either kind lands only while the owner progresses its
// worker: the owner's Node progress thread does that, woken by the incoming data, so an owner
// that only polls its memory still receives. docs/multi-node.md, Attention/FFN across nodes. A
// waiter with net::NetWait (wait.hpp) progresses the Node itself instead and receives on its own
// thread, with the latency of a raw UCX waiter.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/remote_access.hpp>
#include <ferry/afd/wait_directory.hpp>
#include <ferry/afd/window.hpp>
#include <ferry/core/expected.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/net/detail/window_wait.hpp>
#include <ferry/net/node.hpp>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ferry::net {

// A peer's exposed region, written through the node's puts. Not movable: windows point at it.
// The node must outlive it.
class RemoteWindow final : public afd::RemoteAccess {
public:
    // not_found when the peer exposed no such region; peer_lost when `peer` is not a live
    // peer (lost, or never one).
    [[nodiscard]] static Expected<std::unique_ptr<RemoteWindow>> open(Node& node, PeerId peer,
                                                                      RegionId region) {
        const std::string which =
            "ferry/net: region " + std::to_string(region) + " of peer " + std::to_string(peer);
        if (!node.alive(peer)) {
            return Error{Status::peer_lost, which + ": not a live peer", 0};
        }
        const std::vector<RemoteRegion> regions = node.regions(peer);
        const auto it = std::find_if(regions.begin(), regions.end(),
                                     [&](const RemoteRegion& r) { return r.id == region; });
        if (it == regions.end() || it->size == 0) {
            return Error{Status::not_found, which + ": the peer exposed no such region", 0};
        }
        return std::unique_ptr<RemoteWindow>(new RemoteWindow(node, peer, *it));
    }

    // Leaves the window: every later write, publish, ring and flush answers uninitialized (the
    // peer's region stays exposed: it is the owner's). Idempotent; the same signature as every
    // ferry handle's close() (docs/core.md, Lifecycle).
    Expected<void> close() noexcept {
        closed_.store(true, std::memory_order_release);
        return {};
    }
    [[nodiscard]] bool is_open() const noexcept {
        return !closed_.load(std::memory_order_acquire);
    }

    [[nodiscard]] PeerId peer() const noexcept { return peer_; }
    [[nodiscard]] const RemoteRegion& region() const noexcept { return region_; }
    // Whether the bytes go by one-sided RMA (else by put messages the owner checks).
    [[nodiscard]] bool one_sided() const noexcept { return region_.one_sided; }
    // The afd::Window over the region (owner's addresses), valid while this object lives.
    [[nodiscard]] afd::Window window() noexcept { return {*this, region_.base, region_.size}; }

    [[nodiscard]] Status write(std::uint64_t owner_address,
                               std::span<const std::byte> bytes) noexcept override {
        if (!is_open()) {
            return Status::uninitialized;
        }
        if (bytes.empty()) {
            return node_->alive(peer_) ? Status::ok : Status::peer_lost;
        }
        rung_.store(false, std::memory_order_relaxed);
        return node_->put(peer_, region_.id, owner_address, bytes);
    }
    // The fence orders every earlier put to the peer before the flag's put (checked puts are
    // applied in order; one-sided ones are separated by ucp_worker_fence). The flag's put
    // carries the ring (Node::put_and_ring): the ring() that follows a publish has nothing
    // left to send — one message fewer per hand-off (docs/performance/net.md, Profile).
    [[nodiscard]] Status publish(std::uint64_t owner_address,
                                 std::int32_t value) noexcept override {
        if (!is_open()) {
            return Status::uninitialized;
        }
        if (const Status s = node_->fence(peer_); s != Status::ok) {
            return s;
        }
        const Status s =
            node_->put_and_ring(peer_, region_.id, owner_address,
                                std::as_bytes(std::span<const std::int32_t>(&value, 1)));
        rung_.store(s == Status::ok, std::memory_order_relaxed);
        return s;
    }
    // Rings unless the last thing written was a publish, which rang already.
    [[nodiscard]] Status ring() noexcept override {
        if (!is_open()) {
            return Status::uninitialized;
        }
        if (rung_.exchange(false, std::memory_order_relaxed)) {
            return node_->alive(peer_) ? Status::ok : Status::peer_lost;
        }
        return node_->ring(peer_, region_.id);
    }
    [[nodiscard]] Status flush(const Timeout& timeout) noexcept override {
        if (!is_open()) {
            return Status::uninitialized;
        }
        return node_->flush(peer_, timeout);
    }

private:
    RemoteWindow(Node& node, PeerId peer, RemoteRegion region) noexcept
        : node_(&node), peer_(peer), region_(region) {}

    Node* node_;
    PeerId peer_;
    RemoteRegion region_;
    std::atomic<bool> rung_{false}; // the last write was a publish, whose put rang
    std::atomic<bool> closed_{false};
};

// This process's memory, exposed on a Node for peers to write, with the doorbell they ring and an
// entry in afd::WaitDirectory. Expose before connecting or accepting the peers that will write
// (the region table travels in the handshake). Not movable: the Node and the directory hold its
// doorbell's address. Lifetimes: the memory outlives it, and it outlives the Node — the Node
// rings its doorbell for as long as peers may ask, and has no way to forget a region — while no
// wait on the memory may outlast the Node (the probe asks it). Declare it before the Node.
//
// Peer loss: a waiter on this memory ends with peer_lost once a watched peer is lost; with no
// peer watched (watch() never called), once any peer of the node is lost — in an AFD job every
// node is needed, so losing any of them ends the job's waits.
class ExposedWindow {
public:
    // invalid_param for empty memory; what Node::expose answers otherwise.
    [[nodiscard]] static Expected<std::unique_ptr<ExposedWindow>>
    expose(Node& node, std::span<std::byte> memory) {
        if (memory.empty()) {
            return Error{Status::invalid_param, "ferry/net: cannot expose empty memory", 0};
        }
        std::unique_ptr<ExposedWindow> w(new ExposedWindow(node, memory));
        const Result<RegionId> region = node.expose(memory, w->doorbell());
        if (!region) {
            return Error{region.status(),
                         "ferry/net: cannot expose " + std::to_string(memory.size()) +
                             " bytes: " + name_of(region.status()),
                         0};
        }
        w->region_ = *region;
        w->token_ = afd::WaitDirectory::instance().add(
            memory, {w->doorbell(), afd::PeerProbe{&ExposedWindow::probe, w.get()},
                     detail::wait_driver(node)});
        return w;
    }
    ~ExposedWindow() { static_cast<void>(close()); }
    // Leaves the window: waits on the memory no longer find it in afd::WaitDirectory. The Node
    // keeps the region (and rings its doorbell) until the Node closes — it cannot forget a
    // region its peers were told of — so the memory must still outlive the Node. Idempotent;
    // the same signature as every ferry handle's close() (docs/core.md, Lifecycle).
    Expected<void> close() noexcept {
        if (const std::uint64_t token = std::exchange(token_, 0); token != 0) {
            afd::WaitDirectory::instance().remove(token);
        }
        return {};
    }
    [[nodiscard]] bool is_open() const noexcept { return token_ != 0; }
    ExposedWindow(const ExposedWindow&) = delete;
    ExposedWindow& operator=(const ExposedWindow&) = delete;

    [[nodiscard]] RegionId region() const noexcept { return region_; }
    [[nodiscard]] Node& node() const noexcept { return *node_; }
    [[nodiscard]] std::span<std::byte> data() const noexcept { return memory_; }
    // The owner's address of data(): this process's pointer.
    [[nodiscard]] std::uint64_t owner_base() const noexcept {
        return reinterpret_cast<std::uintptr_t>(memory_.data());
    }
    [[nodiscard]] afd::Doorbell doorbell() noexcept {
        return {&word_, ferry::detail::FutexScope::process};
    }
    // A window onto the memory for writers in this process (they ring the same doorbell).
    [[nodiscard]] afd::Window window() noexcept {
        return {memory_.data(), owner_base(), memory_.size(), doorbell()};
    }

    // From now on only `peer`'s loss (and that of other watched peers) ends waits on this memory.
    void watch(PeerId peer) {
        const std::lock_guard lock(mutex_);
        watched_.push_back(peer);
    }
    // What a waiter's probe asks: has a peer this memory depends on been lost?
    [[nodiscard]] bool peer_lost() const noexcept {
        if (node_->losses() == losses_at_start_) {
            return false; // the common case: one atomic load
        }
        const std::lock_guard lock(mutex_);
        return watched_.empty() || std::any_of(watched_.begin(), watched_.end(),
                                               [&](PeerId p) { return !node_->alive(p); });
    }

private:
    ExposedWindow(Node& node, std::span<std::byte> memory) noexcept
        : node_(&node), memory_(memory), losses_at_start_(node.losses()) {}
    static bool probe(const void* self) noexcept {
        return static_cast<const ExposedWindow*>(self)->peer_lost();
    }

    Node* node_;
    std::span<std::byte> memory_;
    std::uint64_t losses_at_start_;
    afd::DoorbellWord word_;
    RegionId region_ = 0;
    std::uint64_t token_ = 0;
    mutable std::mutex mutex_;
    std::vector<PeerId> watched_;
};

} // namespace ferry::net
