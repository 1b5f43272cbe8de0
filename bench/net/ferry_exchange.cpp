// ferry's AFD path between nodes against exchange/raw_put/S (raw_exchange.cpp) and
// exchange/raw_am/S (raw_am_exchange.cpp), in the same rounds:
//   exchange/ferry/S  this process (the attention side) writes through a net::RemoteWindow onto
//                     the region the peer's net::ExposedWindow exposed, with the afd::Window
//                     calls AttentionToFfn makes: write(micro-batch), publish(flag) (a fence,
//                     then the flag's put), ring(). The peer (the FFN side) waits on its own
//                     memory with net::NetWait (the waiter progresses its Node and sleeps on the
//                     worker's fd, as raw_exchange.cpp's waiter does), checks the batch's first
//                     and last 8 bytes, and answers with publish + ring into this process's
//                     ExposedWindow, on which this process waits the same way. The window's bytes
//                     go as put messages the owner checks (the default path).
//   exchange/ferry_rma/S  the same with NodeOptions::one_sided_rma on both nodes: the window's
//                     bytes go by ucp_put_nbx (the run is void if a window is not one-sided).
//   exchange/ferry_doorbell/S, exchange/ferry_rma_doorbell/S  both sides wait with
//                     afd::DoorbellPark on the ExposedWindow's doorbell (an explicit policy;
//                     AutoWait drives the Node as NetWait does) instead: the Nodes' progress
//                     threads land the puts and ring.
// Not in the loop: AttentionToFfn's descriptor bookkeeping and the scheduler's group logic
// around the wait (docs/performance/net.md, What the exchange row covers).
#include "../ipc/messages.hpp"
#include "ferry_node.hpp"
#include "peer.hpp"
#include "shapes.hpp"

#include <algorithm>
#include <atomic>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/afd/doorbell.hpp>
#include <ferry/net/wait.hpp>
#include <ferry/net/window.hpp>
#include <memory>
#include <string>
#include <vector>

namespace {
using ferry::bench::net::ExecPeer;
using ferry::bench::net::k_rounds;
using ferry::bench::net::Reporter;
using ferry::bench::net::Rounds;
using ferry::net::ExposedWindow;
using ferry::net::Node;
using ferry::net::PeerId;
using ferry::net::RemoteWindow;

constexpr std::size_t k_line = 64;

// How the attention side's waits went (counters of the row): a DoorbellPark wait whose first park
// ended without the flag slept out its bound (or was woken for nothing) — a missed ring. For
// NetWait, `parks` counts every pause between two polls (a progress call, or a sleep on the
// worker's fd after NetWait's spin of idle progress calls).
struct ParkCounts {
    std::uint64_t waits = 0;
    std::uint64_t parks = 0;
    std::uint64_t parked_again = 0;
};

enum class Waiter : std::uint8_t { net_wait, doorbell };

// This process's exposed memory: `data` bytes, then the int32 flag on a line of its own.
class Exposed {
public:
    Exposed(Node& node, std::size_t data) : data_(data) {
        base_ = ferry::bench::page_aligned(storage_, data + k_line);
        std::memset(base_, 0, data + k_line);
        auto w = ExposedWindow::expose(node, std::span<std::byte>(base_, data + k_line));
        if (!w) {
            throw std::runtime_error("ExposedWindow::expose failed");
        }
        window_ = std::move(*w);
    }
    [[nodiscard]] const std::byte* data() const { return base_; }
    ParkCounts counts;
    // Waits with `how` until the flag shows `value`.
    bool wait_for(std::int32_t value, Waiter how) {
        return how == Waiter::net_wait
                   ? wait_with(value, ferry::net::NetWait(*window_))
                   : wait_with(value, ferry::afd::DoorbellPark(window_->doorbell()));
    }

private:
    template <typename Policy>
    bool wait_with(std::int32_t value, Policy policy) {
        const std::atomic_ref<std::int32_t> flag(*reinterpret_cast<std::int32_t*>(base_ + data_));
        const auto give_up = ferry::bench::clock::now() + std::chrono::minutes(1);
        bool seen = false;
        std::uint64_t parks = 0;
        while (!seen && ferry::bench::clock::now() < give_up) {
            policy.prepare();
            seen = flag.load(std::memory_order_acquire) == value;
            if (!seen) {
                policy.pause_until(std::chrono::steady_clock::now() + std::chrono::seconds(1));
                ++parks;
            }
        }
        policy.finish();
        ++counts.waits;
        counts.parks += parks;
        counts.parked_again += parks >= 2 ? 1 : 0;
        return seen;
    }

    std::size_t data_;
    std::vector<std::byte> storage_;
    std::byte* base_ = nullptr;
    std::unique_ptr<ExposedWindow> window_;
};

// The other side's first exposed region as a RemoteWindow on the path asked for; null when it
// exposed none or the path differs.
std::unique_ptr<RemoteWindow> open_remote(Node& node, PeerId peer, bool one_sided) {
    if (peer == 0 || node.regions(peer).empty()) {
        return nullptr;
    }
    auto w = RemoteWindow::open(node, peer, node.regions(peer).front().id);
    return w && (*w)->one_sided() == one_sided ? std::move(*w) : nullptr;
}

// One publish through an afd::Window: data (when any), then the flag, then the ring.
bool publish(RemoteWindow& to, std::span<const std::byte> data, std::int32_t flag) {
    const ferry::afd::Window w = to.window();
    const std::uint64_t base = to.region().base;
    return (data.empty() || w.write(base, data) == ferry::Status::ok) &&
           w.publish(base + data.size(), flag) == ferry::Status::ok &&
           w.ring() == ferry::Status::ok;
}

Rounds exchange_with_peer(std::size_t size, bool one_sided, Waiter how, ParkCounts& counts) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    // The exposed memory outlives the Node, which may ring its doorbell until it stops.
    std::unique_ptr<Exposed> exposed;
    auto node = ferry::bench::net::start_node(true, one_sided);
    exposed = std::make_unique<Exposed>(*node, 0);
    Exposed& answer = *exposed;
    ExecPeer peer(cpus.second, "ferry_ffn",
                  {node->address(), std::to_string(size), std::to_string(k_rounds / 4 + k_rounds),
                   one_sided ? "rma" : "am", how == Waiter::net_wait ? "net" : "doorbell"});
    const auto remote = open_remote(*node, ferry::bench::net::accept_one(*node), one_sided);
    std::vector<std::byte> storage;
    std::byte* batch = ferry::bench::page_aligned(storage, size);
    auto rounds = ferry::bench::net::timed_rounds(
        peer, k_rounds,
        [&](std::uint64_t r) {
            std::memcpy(batch, &r, sizeof r);
            std::memcpy(batch + size - sizeof r, &r, sizeof r);
            const auto flag = static_cast<std::int32_t>(r);
            return publish(*remote, std::span(batch, size), flag) && answer.wait_for(flag, how);
        },
        [&](char what) { return remote != nullptr && peer.await(what); });
    counts = answer.counts;
    return rounds;
}

void exchange_ferry(benchmark::State& state, std::size_t size, bool one_sided, Waiter how) {
    ParkCounts counts;
    ferry::bench::net::exchange_rows(
        state, k_rounds, size, [&] { return exchange_with_peer(size, one_sided, how, counts); });
    const double waits = static_cast<double>(std::max<std::uint64_t>(counts.waits, 1));
    state.counters["parks_per_wait"] = static_cast<double>(counts.parks) / waits;
    state.counters["parked_again"] = static_cast<double>(counts.parked_again) / waits;
}

// The peer (FFN side). argv: address size rounds path ("am" or "rma") waiter ("net" or
// "doorbell"). Exit 0 when every batch
// was whole before its flag.
int ferry_ffn(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 5) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    const auto rounds = static_cast<std::int32_t>(std::stol(args[2]));
    const bool one_sided = args[3] == "rma";
    const Waiter how = args[4] == "net" ? Waiter::net_wait : Waiter::doorbell;
    std::unique_ptr<Exposed> exposed; // outlives the Node, as above
    auto node = ferry::bench::net::start_node(false, one_sided);
    exposed = std::make_unique<Exposed>(*node, size);
    Exposed& mine = *exposed;
    const auto them = node->connect(args[0], ferry::Timeout(ferry::bench::net::k_connect_patience));
    const auto remote = them ? open_remote(*node, *them, one_sided) : nullptr;
    if (remote == nullptr) {
        return 2;
    }
    report('r');
    bool whole = true;
    for (std::int32_t r = 1; r <= rounds; ++r) {
        if (!mine.wait_for(r, how)) {
            return 2;
        }
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        std::memcpy(&first, mine.data(), sizeof first);
        std::memcpy(&last, mine.data() + size - sizeof last, sizeof last);
        whole = whole && first == static_cast<std::uint64_t>(r) &&
                last == static_cast<std::uint64_t>(r);
        if (!publish(*remote, {}, r)) {
            return 2;
        }
    }
    if (remote->flush(ferry::Timeout(std::chrono::seconds(10))) != ferry::Status::ok) {
        return 2;
    }
    report('d');
    return whole ? 0 : 1;
}

[[maybe_unused]] const bool registered = ferry::bench::net::add_role("ferry_ffn", &ferry_ffn);

#define FERRY_NET_FERRY_EXCHANGE(side, param, size, one_sided, how)                                \
    BENCHMARK_CAPTURE(exchange_ferry, side##_##param, size, one_sided, how)                        \
        ->Name("exchange/" #side "/" #param)                                                       \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_NET_FERRY_EXCHANGE(ferry, 1KiB, 1 << 10, false, Waiter::net_wait);
FERRY_NET_FERRY_EXCHANGE(ferry, 56KiB, 8 * 7168, false, Waiter::net_wait);
FERRY_NET_FERRY_EXCHANGE(ferry_rma, 1KiB, 1 << 10, true, Waiter::net_wait);
FERRY_NET_FERRY_EXCHANGE(ferry_rma, 56KiB, 8 * 7168, true, Waiter::net_wait);
FERRY_NET_FERRY_EXCHANGE(ferry_doorbell, 1KiB, 1 << 10, false, Waiter::doorbell);
FERRY_NET_FERRY_EXCHANGE(ferry_rma_doorbell, 1KiB, 1 << 10, true, Waiter::doorbell);
} // namespace
