// ferry's one-sided layer against exchange/raw_put/S (raw_exchange.cpp), in the same rounds:
//   exchange/ferry_node/S  per round this process (a Node, the attention side) calls
//                          Node::put(micro-batch), Node::fence, Node::put(flag) into the
//                          region the peer's Node exposed, then Node::ring for it; the peer
//                          (the FFN side) waits with afd::DoorbellPark (the FFN scheduler's wait
//                          policy, its defaults) on the doorbell it exposed the region with,
//                          checks the batch's first and last 8 bytes, and answers the same way
//                          into this process's exposed answer word. Both Nodes' progress threads
//                          land the puts (over tcp a put lands only while the target
//                          progresses) and ring the doorbells.
// The AFD row proper (net::RemoteWindow, AttentionToFfn, the FFN scheduler returning) goes beside
// it once that layer is in the tree (docs/performance/net.md).
#include "../ipc/messages.hpp"
#include "ferry_node.hpp"
#include "peer.hpp"
#include "shapes.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/afd/doorbell.hpp>
#include <string>
#include <vector>

namespace {
using ferry::bench::net::ExecPeer;
using ferry::bench::net::k_rounds;
using ferry::bench::net::Reporter;
using ferry::bench::net::Rounds;
using ferry::net::Node;
using ferry::net::PeerId;
using ferry::net::RemoteRegion;

constexpr std::size_t k_line = 64;

// This process's exposed memory: `data` bytes, then a flag word on its own line, and the
// doorbell that the other side's ring() rings.
class Region {
public:
    Region(Node& node, std::size_t data) : data_(data) {
        base_ = ferry::bench::page_aligned(storage_, data + k_line);
        std::memset(base_, 0, data + k_line);
        const auto id = node.expose(std::span<std::byte>(base_, data + k_line), bell());
        if (!id) {
            throw std::runtime_error("Node::expose failed");
        }
    }
    [[nodiscard]] ferry::afd::Doorbell bell() {
        return ferry::afd::Doorbell(&word_, ferry::detail::FutexScope::process);
    }
    [[nodiscard]] const std::byte* data() const { return base_; }
    // Waits (DoorbellPark, the FFN scheduler's defaults) until the flag shows `value`.
    bool wait_for(std::uint64_t value) {
        const std::atomic_ref<std::uint64_t> flag(*reinterpret_cast<std::uint64_t*>(base_ + data_));
        ferry::afd::DoorbellPark park(bell());
        const auto give_up = ferry::bench::clock::now() + std::chrono::minutes(1);
        bool seen = false;
        while (!seen && ferry::bench::clock::now() < give_up) {
            park.prepare();
            seen = flag.load(std::memory_order_acquire) == value;
            if (!seen) {
                park.pause_until(ferry::afd::Doorbell::clock::now() + std::chrono::seconds(1));
            }
        }
        park.finish();
        return seen;
    }

private:
    std::size_t data_;
    std::vector<std::byte> storage_;
    std::byte* base_ = nullptr;
    ferry::afd::DoorbellWord word_;
};

// One publish into the other side's region: data (when any), fence, flag, ring.
bool publish(Node& node, PeerId peer, const RemoteRegion& to, std::span<const std::byte> data,
             const std::uint64_t& flag) {
    const auto ok = ferry::Status::ok;
    return (data.empty() || node.put(peer, to.id, to.base, data) == ok) && node.fence(peer) == ok &&
           node.put(peer, to.id, to.base + data.size(), std::as_bytes(std::span(&flag, 1))) == ok &&
           node.ring(peer, to.id) == ok;
}

Rounds exchange_with_peer(std::size_t size) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    auto node = ferry::bench::net::start_node(true);
    Region answer(*node, 0);
    ExecPeer peer(cpus.second, "ferry_node_ffn",
                  {node->address(), std::to_string(size), std::to_string(k_rounds / 4 + k_rounds)});
    const PeerId them = ferry::bench::net::accept_one(*node);
    const auto regions = them == 0 ? std::vector<RemoteRegion>{} : node->regions(them);
    std::vector<std::byte> storage;
    std::byte* batch = ferry::bench::page_aligned(storage, size);
    std::uint64_t flag = 0;
    return ferry::bench::net::timed_rounds(
        peer, k_rounds,
        [&](std::uint64_t r) {
            std::memcpy(batch, &r, sizeof r);
            std::memcpy(batch + size - sizeof r, &r, sizeof r);
            flag = r;
            return publish(*node, them, regions.front(), std::span(batch, size), flag) &&
                   answer.wait_for(r);
        },
        [&](char what) { return !regions.empty() && peer.await(what); });
}

void exchange_node(benchmark::State& state, std::size_t size) {
    for (auto _ : state) {
        Rounds rounds =
            ferry::bench::net::guarded<Rounds>([&] { return exchange_with_peer(size); });
        if (!ferry::bench::net::record_rounds(state, rounds)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_rounds) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(k_rounds * size) * state.iterations());
}

// The peer (FFN side). argv: address size rounds. Exit 0 when every batch was whole before its
// flag.
int ferry_node_ffn(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 3) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    const std::uint64_t rounds = std::stoull(args[2]);
    auto node = ferry::bench::net::start_node(false);
    Region mine(*node, size);
    const auto them = node->connect(args[0], ferry::Timeout(ferry::bench::net::k_connect_patience));
    if (!them || node->regions(*them).empty()) {
        return 2;
    }
    const RemoteRegion to = node->regions(*them).front();
    report('r');
    bool whole = true;
    std::uint64_t answer = 0;
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        if (!mine.wait_for(r)) {
            return 2;
        }
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        std::memcpy(&first, mine.data(), sizeof first);
        std::memcpy(&last, mine.data() + size - sizeof last, sizeof last);
        whole = whole && first == r && last == r;
        answer = r;
        if (!publish(*node, *them, to, {}, answer)) {
            return 2;
        }
    }
    if (node->flush(*them, ferry::Timeout(std::chrono::seconds(10))) != ferry::Status::ok) {
        return 2;
    }
    report('d');
    return whole ? 0 : 1;
}

[[maybe_unused]] const bool registered =
    ferry::bench::net::add_role("ferry_node_ffn", &ferry_node_ffn);

BENCHMARK_CAPTURE(exchange_node, ferry_node_1KiB, 1 << 10)
    ->Name("exchange/ferry_node/1KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(exchange_node, ferry_node_56KiB, 8 * 7168)
    ->Name("exchange/ferry_node/56KiB")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
