// ferry's remote channels against the raw rows of raw_stream.cpp, in the same shapes
// (shapes.hpp), between this process (a Node listening on 127.0.0.1) and its peer (a Node that
// connects):
//   rate/ferry/64B       net::ChannelSender<64-byte message> -> net::ChannelReceiver<message,
//                        4096>: blocking send and receive, the capacity equal to the raw
//                        baselines' window (ferry's credits do what the raw sender's window
//                        does by hand)
//   bandwidth/ferry/S    net::MessageSender::send(bytes) -> net::MessageReceiver with a pool of
//                        16 (64KiB) or 4 (4MiB) buffers of S bytes, read in place
//                        (receive_view, then release): the Dataset channel's transport without
//                        the wire format, as the raw row moves bare payloads
// The peer checks every sequence number (the payload's first 8 bytes), so a lost, duplicated or
// reordered message voids the run. Timing and warm-up as the raw rows (peer.hpp, timed_stream).
#include "../ipc/messages.hpp"
#include "ferry_node.hpp"
#include "peer.hpp"
#include "shapes.hpp"

#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/net/channel.hpp>
#include <ferry/net/message_channel.hpp>
#include <string>
#include <vector>

namespace {
using ferry::bench::Message;
using ferry::bench::message_of;
using ferry::bench::record;
using ferry::bench::Timed;
using ferry::bench::value_of;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::Reporter;
using ferry::bench::net::shape_of;
using ferry::bench::net::StreamShape;

constexpr std::size_t k_rate_capacity = 4096; // shape_of(64).window
using RateReceiver = ferry::net::ChannelReceiver<Message, k_rate_capacity>;
using RateSender = ferry::net::ChannelSender<Message>;
constexpr const char* k_rate_name = "bench-rate";
constexpr const char* k_bulk_name = "bench-bulk";

Timed failed(const std::string& why) {
    Timed t;
    t.error = why;
    return t;
}

Timed rate_to_peer() {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(64);
    auto node = ferry::bench::net::start_node(true);
    ExecPeer peer(cpus.second, "ferry_rate_sink", {node->address(), std::to_string(shape.count)});
    const ferry::net::PeerId them = ferry::bench::net::accept_one(*node);
    auto sender = RateSender::open(*node, them, k_rate_name);
    if (!sender) {
        return failed("ChannelSender::open failed, status " +
                      std::to_string(static_cast<int>(sender.status())));
    }
    return ferry::bench::net::timed_stream(
        peer, shape.count,
        [&](std::uint64_t i) { return sender->send(message_of(i)) == ferry::Status::ok; },
        [&](char what) { return peer.await(what); });
}

Timed bulk_to_peer(std::size_t size) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(size);
    auto node = ferry::bench::net::start_node(true);
    ExecPeer peer(cpus.second, "ferry_bulk_sink",
                  {node->address(), std::to_string(size), std::to_string(shape.count),
                   std::to_string(shape.window)});
    const ferry::net::PeerId them = ferry::bench::net::accept_one(*node);
    auto sender = ferry::net::MessageSender::open(*node, them, k_bulk_name);
    if (!sender) {
        return failed("MessageSender::open failed, status " +
                      std::to_string(static_cast<int>(sender.status())));
    }
    std::vector<std::byte> storage;
    std::byte* payload = ferry::bench::page_aligned(storage, size);
    return ferry::bench::net::timed_stream(
        peer, shape.count,
        [&](std::uint64_t i) {
            std::memcpy(payload, &i, sizeof i);
            return sender->send(std::span<const std::byte>(payload, size)) == ferry::Status::ok;
        },
        [&](char what) { return peer.await(what); });
}

void rate_ferry(benchmark::State& state) {
    for (auto _ : state) {
        if (!record(state, ferry::bench::net::guarded<Timed>(rate_to_peer))) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(shape_of(64).count) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(shape_of(64).count * 64) *
                            state.iterations());
}

void bandwidth_ferry(benchmark::State& state, std::size_t size) {
    const StreamShape shape = shape_of(size);
    for (auto _ : state) {
        if (!record(state, ferry::bench::net::guarded<Timed>([&] { return bulk_to_peer(size); }))) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(shape.count) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(shape.count * size) * state.iterations());
}

// The peer's receive loop: `take(i)` receives message i and says whether it was message i.
template <typename Take>
int receive_all(std::uint64_t count, Reporter report, Take take) {
    const std::uint64_t warmup = count / 4;
    bool in_order = true;
    for (std::uint64_t i = 0; i < warmup + count; ++i) {
        const int got = take(i);
        if (got < 0) {
            return 2;
        }
        in_order = in_order && got == 1;
        if (i + 1 == warmup) {
            report('w');
        }
    }
    report('d');
    return in_order ? 0 : 1;
}

// argv: address count.
int ferry_rate_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 2) {
        return 2;
    }
    auto node = ferry::bench::net::start_node(false);
    auto rx = RateReceiver::create(*node, k_rate_name);
    if (!rx || !node->connect(args[0], ferry::Timeout(ferry::bench::net::k_connect_patience))) {
        return 2;
    }
    report('r');
    return receive_all(std::stoull(args[1]), report, [&](std::uint64_t i) {
        const auto m = rx->receive();
        return !m ? -1 : value_of(*m) == i ? 1 : 0;
    });
}

// argv: address size count window.
int ferry_bulk_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 4) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    auto node = ferry::bench::net::start_node(false);
    auto rx = ferry::net::MessageReceiver::create(*node, k_bulk_name, std::stoul(args[3]), size);
    if (!rx || !node->connect(args[0], ferry::Timeout(ferry::bench::net::k_connect_patience))) {
        return 2;
    }
    report('r');
    return receive_all(std::stoull(args[2]), report, [&](std::uint64_t i) {
        auto view = rx->receive_view();
        if (!view || view->bytes().size() != size) {
            return -1;
        }
        std::uint64_t seq = 0;
        std::memcpy(&seq, view->bytes().data(), sizeof seq);
        view->release();
        return seq == i ? 1 : 0;
    });
}

[[maybe_unused]] const bool registered =
    ferry::bench::net::add_role("ferry_rate_sink", &ferry_rate_sink) &&
    ferry::bench::net::add_role("ferry_bulk_sink", &ferry_bulk_sink);

BENCHMARK(rate_ferry)->Name("rate/ferry/64B")->UseManualTime()->Iterations(1);
BENCHMARK_CAPTURE(bandwidth_ferry, ferry_64KiB, 64 << 10)
    ->Name("bandwidth/ferry/64KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(bandwidth_ferry, ferry_4MiB, 4 << 20)
    ->Name("bandwidth/ferry/4MiB")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
