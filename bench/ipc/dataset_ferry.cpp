// ferry's data-set rows of dataset.cpp, between this process and a forked peer (harness.hpp):
//   dataset/ferry_copy/S  MessageChannel send (serialize_into the shared cell: one copy of the
//                         payload) -> receive(Dataset&) (parse_into: a second copy, out of it)
//   dataset/ferry_loan/S  loan -> serialize_into(loan bytes) -> publish, then receive_view ->
//                         dataset() (items borrow the cell: no second copy) -> release
// One tensor item of S bytes per message, from a page-aligned buffer; its first 8 bytes carry
// the sequence number, which the peer sums (a lost or repeated message voids the run).
// Built only where <ferry/ipc/message_channel.hpp> exists (bench/ipc/meson.build).
#include "messages.hpp"

#include <array>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <memory>
#include <string>
#include <vector>

namespace {
using ferry::Dataset;
using ferry::Status;
using ferry::bench::object_name;
using ferry::bench::page_aligned;
using ferry::bench::record;
using ferry::bench::transfer_across;
using Channel = ferry::ipc::MessageChannel<>;

// Messages a channel holds: the segment reserves capacity x S (16 MiB at 4 MiB) in /dev/shm.
constexpr std::size_t k_capacity = 4;

// A dataset of one uint8 tensor of `bytes` bytes borrowed from a page-aligned buffer.
struct Source {
    std::vector<std::byte> storage;
    std::byte* payload;
    std::array<std::int64_t, 1> dims;
    Dataset ds;
    std::size_t message_bytes = 0;

    explicit Source(std::size_t bytes)
        : payload(page_aligned(storage, bytes)), dims{static_cast<std::int64_t>(bytes)} {
        auto item = ferry::DataItem::borrow(ferry::TensorKind::tensor, dims.data(), dims.size(),
                                            ferry::DType::uint8, payload, bytes);
        if (!item || ds.add(std::move(*item)) != Status::ok) {
            throw std::runtime_error("cannot make the benchmark dataset");
        }
        message_bytes = ferry::serialized_size(ds).value_or(0);
    }
    // The dataset carrying sequence number i.
    const Dataset& stamped(std::uint64_t i) noexcept {
        std::memcpy(payload, &i, sizeof i);
        return ds;
    }
};

std::uint64_t sequence_of(const Dataset& ds) noexcept {
    std::uint64_t i = 0;
    if (ds.size() == 1 && ds[0].bytes().size() >= sizeof i) {
        std::memcpy(&i, ds[0].bytes().data(), sizeof i);
    }
    return i;
}

std::shared_ptr<Channel> open_peer(const std::string& name, const Source& source) {
    auto opened = Channel::open(name, k_capacity, source.message_bytes);
    if (!opened) {
        throw std::runtime_error(opened.error().message);
    }
    return std::make_shared<Channel>(std::move(*opened));
}

// One repetition: `messages` messages of `bytes`, sent by `send` and taken by the peer's
// `receive_with(channel)`.
template <typename Send, typename ReceiveWith>
void run(benchmark::State& state, std::size_t bytes, Send send, ReceiveWith receive_with) {
    const std::uint64_t messages = ferry::bench::k_dataset_bytes / bytes;
    for (auto _ : state) {
        Source source(bytes);
        const std::string name = object_name("ds");
        auto ch = Channel::create(name, k_capacity, source.message_bytes);
        if (!ch) {
            state.SkipWithError(ch.error().message.c_str());
            break;
        }
        const auto timed = transfer_across(
            messages, [&](std::uint64_t i) { send(*ch, source, i); },
            [&] {
                return
                    [peer = open_peer(name, source), receive_with] { return receive_with(*peer); };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(messages * bytes) * state.iterations());
}

template <std::size_t S>
void dataset_ferry_copy(benchmark::State& state) {
    run(
        state, S,
        [](Channel& ch, Source& source, std::uint64_t i) { (void)ch.send(source.stamped(i)); },
        [received = std::make_shared<Dataset>()](Channel& ch) {
            return ch.receive(*received) == Status::ok ? sequence_of(*received) : 0;
        });
}

template <std::size_t S>
void dataset_ferry_loan(benchmark::State& state) {
    run(
        state, S,
        [](Channel& ch, Source& source, std::uint64_t i) {
            auto loan = ch.loan(source.message_bytes);
            if (loan && ferry::serialize_into(source.stamped(i), loan->bytes())) {
                (void)loan->publish(source.message_bytes);
            }
        },
        [](Channel& ch) {
            auto view = ch.receive_view();
            if (!view) {
                return std::uint64_t{0};
            }
            const auto ds = view->dataset();
            return ds ? sequence_of(*ds) : 0;
        });
}

#define FERRY_IPC_DATASET(function, side, bytes, label)                                            \
    BENCHMARK_TEMPLATE(function, bytes)                                                            \
        ->Name("dataset/" side "/" label)                                                          \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_IPC_DATASET(dataset_ferry_copy, "ferry_copy", 64 * 1024, "64KiB");
FERRY_IPC_DATASET(dataset_ferry_copy, "ferry_copy", 4 * 1024 * 1024, "4MiB");
FERRY_IPC_DATASET(dataset_ferry_loan, "ferry_loan", 64 * 1024, "64KiB");
FERRY_IPC_DATASET(dataset_ferry_loan, "ferry_loan", 4 * 1024 * 1024, "4MiB");
} // namespace
