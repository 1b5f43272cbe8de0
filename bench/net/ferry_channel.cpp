// ferry's remote channels against the raw rows of raw_stream.cpp, in the same shapes
// (shapes.hpp), between this process (a Node listening on 127.0.0.1) and its peer (a Node that
// connects):
//   rate/ferry/64B       net::ChannelSender<64-byte message> -> net::ChannelReceiver<message,
//                        4096>: blocking send and receive, the capacity equal to the raw
//                        baselines' window (ferry's credits do what the raw sender's window
//                        does by hand)
//   rate/ferry_batch/64B the same channel and messages, sent with send_n in batches of
//                        k_rate_batch (the receiver still receives them one by one)
//   bandwidth/ferry/S    net::MessageSender::send(bytes) -> net::MessageReceiver with a pool of
//                        16 (64KiB) or 4 (4MiB) buffers of S bytes, read in place
//                        (receive_view, then release): the Dataset channel's transport without
//                        the wire format, as the raw row moves bare payloads
//   bandwidth/ferry_loan/S  the same, each message written in place into a buffer the sender
//                        lends (MessageSender::loan, then send(loan): no copy, as the raw
//                        sender fills its slot)
//   bandwidth/ferry_dataset/S  the Dataset channel proper: MessageSender::send(const Dataset&)
//                        of a dataset holding one uint8 tensor of S bytes (serialised into
//                        ferry's wire format, the payload copied once), received as a view and
//                        parsed in place (MessageView::dataset)
//   rate/ferry_sched_batch/64B, bandwidth/ferry_sched_batch/S, bandwidth/ferry_loan_sched_batch/S
//                        rate/ferry, bandwidth/ferry and bandwidth/ferry_loan with
//                        NodeOptions::progress_thread_batch on both Nodes (each process's
//                        threads share the one CPU it is pinned to: the progress thread then
//                        does not preempt the sending or receiving thread when woken)
// The peer checks every sequence number (the payload's first 8 bytes), so a lost, duplicated or
// reordered message voids the run. Timing and warm-up as the raw rows (peer.hpp, timed_stream).
#include "../ipc/messages.hpp"
#include "ferry_node.hpp"
#include "peer.hpp"
#include "shapes.hpp"

#include <array>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/net/channel.hpp>
#include <ferry/net/message_channel.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace {
using ferry::bench::Message;
using ferry::bench::message_of;
using ferry::bench::record;
using ferry::bench::Timed;
using ferry::bench::value_of;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::ProgressThread;
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

// Streams `count` messages to the peer started on `cpu` as `role` (its arguments: this node's
// address, then `args`) through an `S` opened on `name`: send(sender, i) sends message i.
template <typename S, typename Send>
Timed stream_to_peer(int cpu, const char* role, std::vector<std::string> args, const char* name,
                     std::uint64_t count, ProgressThread progress, Send send) {
    auto node = ferry::bench::net::start_node(true, false, progress);
    args.insert(args.begin(), node->address());
    args.emplace_back(ferry::bench::net::name_of(progress));
    ExecPeer peer(cpu, role, args);
    const ferry::net::PeerId them = ferry::bench::net::accept_one(*node);
    auto sender = S::open(*node, them, name);
    if (!sender) {
        const char* kind =
            std::is_same_v<S, ferry::net::MessageSender> ? "MessageSender" : "ChannelSender";
        return failed(std::string(kind) + "::open failed, status " +
                      std::to_string(static_cast<int>(sender.status())));
    }
    return ferry::bench::net::timed_stream(
        peer, count, [&](std::uint64_t i) { return send(*sender, i) == ferry::Status::ok; },
        [&](char what) { return peer.await(what); });
}

Timed rate_to_peer(ProgressThread progress) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(64);
    return stream_to_peer<RateSender>(
        cpus.second, "ferry_rate_sink", {std::to_string(shape.count)}, k_rate_name, shape.count,
        progress, [](RateSender& sender, std::uint64_t i) { return sender.send(message_of(i)); });
}

constexpr std::size_t k_rate_batch = 64; // 4 KiB of 64-byte messages: one send_n batch

// Message i staged into a batch, sent with send_n when the batch is full or i ends the warm-up
// or the stream (the harness times from the first message after the warm-up).
class Batcher {
public:
    explicit Batcher(std::uint64_t count) : warmup_(count / 4), last_(count / 4 + count - 1) {}
    ferry::Status add(RateSender& sender, std::uint64_t i) {
        batch_[staged_++] = message_of(i);
        if (staged_ < k_rate_batch && i + 1 != warmup_ && i != last_) {
            return ferry::Status::ok;
        }
        std::size_t sent = 0;
        const ferry::Status s = sender.send_n(std::span(batch_).first(staged_), sent);
        staged_ = 0;
        return s;
    }

private:
    std::uint64_t warmup_;
    std::uint64_t last_;
    std::array<Message, k_rate_batch> batch_{};
    std::size_t staged_ = 0;
};

Timed batched_rate_to_peer() {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(64);
    Batcher batcher(shape.count);
    return stream_to_peer<RateSender>(
        cpus.second, "ferry_rate_sink", {std::to_string(shape.count)}, k_rate_name, shape.count,
        ProgressThread::inherited,
        [&](RateSender& sender, std::uint64_t i) { return batcher.add(sender, i); });
}

// How the bulk rows hand their message to the sender.
enum class Bulk { copy, loan, dataset };

Timed bulk_to_peer(std::size_t size, Bulk how, ProgressThread progress) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(size);
    std::vector<std::byte> storage;
    std::byte* payload = ferry::bench::page_aligned(storage, size);
    return stream_to_peer<ferry::net::MessageSender>(
        cpus.second, "ferry_bulk_sink",
        {std::to_string(size), std::to_string(shape.count), std::to_string(shape.window)},
        k_bulk_name, shape.count, progress,
        [&](ferry::net::MessageSender& sender, std::uint64_t i) {
            if (how == Bulk::loan) { // written in place, as the raw sender fills its slot
                auto loan = sender.loan(size);
                if (!loan) {
                    return loan.status();
                }
                std::memcpy(loan->bytes().data(), &i, sizeof i);
                return sender.send(std::move(*loan));
            }
            std::memcpy(payload, &i, sizeof i);
            return sender.send(std::span<const std::byte>(payload, size));
        });
}

// A dataset of one uint8 tensor of `bytes` bytes, borrowed from a page-aligned buffer whose
// first 8 bytes carry the sequence number.
struct Source {
    std::vector<std::byte> storage;
    std::byte* payload;
    std::array<std::int64_t, 1> dims;
    ferry::Dataset ds;

    explicit Source(std::size_t bytes)
        : payload(ferry::bench::page_aligned(storage, bytes)), dims{static_cast<std::int64_t>(
                                                                   bytes)} {
        auto item = ferry::DataItem::borrow(ferry::TensorKind::tensor, dims.data(), dims.size(),
                                            ferry::DType::uint8, payload, bytes);
        if (!item || ds.add(std::move(*item)) != ferry::Status::ok) {
            throw std::runtime_error("cannot make the benchmark dataset");
        }
    }
    const ferry::Dataset& stamped(std::uint64_t i) noexcept {
        std::memcpy(payload, &i, sizeof i);
        return ds;
    }
};

Timed datasets_to_peer(std::size_t size) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    const StreamShape shape = shape_of(size);
    Source source(size);
    const std::size_t message = ferry::serialized_size(source.ds).value_or(0);
    return stream_to_peer<ferry::net::MessageSender>(
        cpus.second, "ferry_dataset_sink",
        {std::to_string(message), std::to_string(shape.count), std::to_string(shape.window)},
        k_bulk_name, shape.count, ProgressThread::inherited,
        [&](ferry::net::MessageSender& sender, std::uint64_t i) {
            return sender.send(source.stamped(i));
        });
}

void rate_ferry(benchmark::State& state, bool batched,
                ProgressThread progress = ProgressThread::inherited) {
    for (auto _ : state) {
        if (!record(state, ferry::bench::net::guarded<Timed>([&] {
                        return batched ? batched_rate_to_peer() : rate_to_peer(progress);
                    }))) {
            break;
        }
    }
    state.counters["load_after"] = ferry::bench::net::load_1min();
    state.SetItemsProcessed(static_cast<std::int64_t>(shape_of(64).count) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(shape_of(64).count * 64) *
                            state.iterations());
}

void bandwidth_ferry(benchmark::State& state, std::size_t size, Bulk how,
                     ProgressThread progress = ProgressThread::inherited) {
    const StreamShape shape = shape_of(size);
    for (auto _ : state) {
        if (!record(state, ferry::bench::net::guarded<Timed>([&] {
                        return how == Bulk::dataset ? datasets_to_peer(size)
                                                    : bulk_to_peer(size, how, progress);
                    }))) {
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

// argv: address count progress-thread.
int ferry_rate_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 3) {
        return 2;
    }
    auto node =
        ferry::bench::net::start_node(false, false, ferry::bench::net::progress_thread_of(args[2]));
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

// argv: address size count window progress-thread.
int ferry_bulk_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 5) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    auto node =
        ferry::bench::net::start_node(false, false, ferry::bench::net::progress_thread_of(args[4]));
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

// argv: address max_message_bytes count window progress-thread.
int ferry_dataset_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 5) {
        return 2;
    }
    auto node =
        ferry::bench::net::start_node(false, false, ferry::bench::net::progress_thread_of(args[4]));
    auto rx = ferry::net::MessageReceiver::create(*node, k_bulk_name, std::stoul(args[3]),
                                                  std::stoul(args[1]));
    if (!rx || !node->connect(args[0], ferry::Timeout(ferry::bench::net::k_connect_patience))) {
        return 2;
    }
    report('r');
    return receive_all(std::stoull(args[2]), report, [&](std::uint64_t i) {
        auto view = rx->receive_view();
        if (!view) {
            return -1;
        }
        const auto ds = view->dataset();
        std::uint64_t seq = ~std::uint64_t{0};
        if (ds && ds->size() == 1 && (*ds)[0].bytes().size() >= sizeof seq) {
            std::memcpy(&seq, (*ds)[0].bytes().data(), sizeof seq);
        }
        view->release();
        return seq == i ? 1 : 0;
    });
}

[[maybe_unused]] const bool registered =
    ferry::bench::net::add_role("ferry_rate_sink", &ferry_rate_sink) &&
    ferry::bench::net::add_role("ferry_bulk_sink", &ferry_bulk_sink) &&
    ferry::bench::net::add_role("ferry_dataset_sink", &ferry_dataset_sink);

BENCHMARK_CAPTURE(rate_ferry, one, false)->Name("rate/ferry/64B")->UseManualTime()->Iterations(1);
BENCHMARK_CAPTURE(rate_ferry, batch, true)
    ->Name("rate/ferry_batch/64B")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(rate_ferry, sched_batch, false, ProgressThread::sched_batch)
    ->Name("rate/ferry_sched_batch/64B")
    ->UseManualTime()
    ->Iterations(1);
// `side` is the row's name: bandwidth/<side>/<param>.
#define FERRY_NET_BANDWIDTH(side, param, size, how, progress)                                      \
    BENCHMARK_CAPTURE(bandwidth_ferry, side##_##param, size, how, progress)                        \
        ->Name("bandwidth/" #side "/" #param)                                                      \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

constexpr ProgressThread k_inherited = ProgressThread::inherited;
constexpr ProgressThread k_sched_batch = ProgressThread::sched_batch;
FERRY_NET_BANDWIDTH(ferry, 64KiB, 64 << 10, Bulk::copy, k_inherited);
FERRY_NET_BANDWIDTH(ferry, 4MiB, 4 << 20, Bulk::copy, k_inherited);
FERRY_NET_BANDWIDTH(ferry_loan, 64KiB, 64 << 10, Bulk::loan, k_inherited);
FERRY_NET_BANDWIDTH(ferry_loan, 4MiB, 4 << 20, Bulk::loan, k_inherited);
FERRY_NET_BANDWIDTH(ferry_dataset, 64KiB, 64 << 10, Bulk::dataset, k_inherited);
FERRY_NET_BANDWIDTH(ferry_dataset, 4MiB, 4 << 20, Bulk::dataset, k_inherited);
FERRY_NET_BANDWIDTH(ferry_sched_batch, 64KiB, 64 << 10, Bulk::copy, k_sched_batch);
FERRY_NET_BANDWIDTH(ferry_sched_batch, 4MiB, 4 << 20, Bulk::copy, k_sched_batch);
FERRY_NET_BANDWIDTH(ferry_loan_sched_batch, 64KiB, 64 << 10, Bulk::loan, k_sched_batch);
FERRY_NET_BANDWIDTH(ferry_loan_sched_batch, 4MiB, 4 << 20, Bulk::loan, k_sched_batch);
} // namespace
