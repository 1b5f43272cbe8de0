// The acltdt* data path against its baselines, all in one binary and run
// (docs/cann-contract/quality.md#measuring):
//   large/memcpy/64MiB          one memcpy of 64 MiB between two warm buffers (the baseline)
//   large/c_api/64MiB           acltdtSendTensor + acltdtReceiveTensor of one 64 MiB tensor
//                               (target: >= 0.9x the memcpy's throughput: one copy in total)
//   small/cpp_channel/16B       ferry::Channel<std::array<float, 4>, 64> send + receive
//   small/cpp_channel_dataset/16B  ferry::Channel<ferry::Dataset, dynamic, mpmc> (what the shim
//                               uses underneath, carrying the typed value instead of a message)
//   small/c_api/16B             the same 16-byte tensor through the C API (send + receive)
// Names are <measure>/<side>/<case>: tools/bench_report.py pairs repetition i of a side with
// repetition i of its baseline (run with --benchmark_repetitions=10
// --benchmark_enable_random_interleaving=true).
// Each iteration is one send followed by one receive on the same thread: the cost of the path
// itself, without the scheduler noise of a two-thread hand-off on a shared 2-core machine.
#include "acl/acl_tdt.h"

#include <array>
#include <benchmark/benchmark.h>
#include <cstdint>
#include <cstring>
#include <ferry/channel/channel.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <vector>

namespace {

constexpr std::size_t k_large = std::size_t{64} << 20;

void memcpy_64MiB(benchmark::State& state) {
    std::vector<std::byte> src(k_large, std::byte{1});
    std::vector<std::byte> dst(k_large, std::byte{0}); // faulted in, as the shim's pooled buffers
    for (auto _ : state) {
        std::memcpy(dst.data(), src.data(), k_large);
        benchmark::DoNotOptimize(dst.data());
        benchmark::ClobberMemory();
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * k_large));
}

// A dataset of one uint8 tensor over `bytes` (borrowed); destroyed with its item.
struct CDataset {
    explicit CDataset(std::vector<std::byte>& bytes) {
        const std::int64_t dims[1] = {static_cast<std::int64_t>(bytes.size())};
        item = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_UINT8, bytes.data(),
                                    bytes.size());
        acltdtAddDataItem(dataset, item);
    }
    ~CDataset() {
        acltdtDestroyDataset(dataset);
        acltdtDestroyDataItem(item);
    }
    acltdtDataItem* item = nullptr;
    acltdtDataset* dataset = acltdtCreateDataset();
};

// send + receive through a capacity-2 queue channel, `bytes` per message.
void c_api_round(benchmark::State& state, std::size_t bytes) {
    std::vector<std::byte> payload(bytes, std::byte{1});
    CDataset sent(payload);
    acltdtDataset* received = acltdtCreateDataset();
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "bench", 2);
    for (int i = 0; i < 2; ++i) { // warm-up: the pool and the dataset get their buffers
        acltdtSendTensor(channel, sent.dataset, -1);
        acltdtReceiveTensor(channel, received, -1);
    }
    for (auto _ : state) {
        if (acltdtSendTensor(channel, sent.dataset, -1) != ACL_SUCCESS ||
            acltdtReceiveTensor(channel, received, -1) != ACL_SUCCESS) {
            state.SkipWithError("send/receive failed");
            break;
        }
        benchmark::DoNotOptimize(acltdtGetDataAddrFromItem(acltdtGetDataItem(received, 0)));
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
    state.SetItemsProcessed(state.iterations());
    acltdtDestroyChannel(channel);
    acltdtDestroyDataset(received);
}

void c_api_64MiB(benchmark::State& state) {
    c_api_round(state, k_large);
}
void c_api_small(benchmark::State& state) {
    c_api_round(state, 16);
}

void cpp_channel_small(benchmark::State& state) {
    ferry::Channel<std::array<float, 4>, 64> channel;
    std::array<float, 4> value{1, 2, 3, 4};
    for (auto _ : state) {
        if (channel.try_send(value) != ferry::Status::ok) {
            state.SkipWithError("send failed");
            break;
        }
        auto got = channel.try_receive();
        benchmark::DoNotOptimize(got);
    }
    state.SetItemsProcessed(state.iterations());
}

void cpp_channel_dataset_small(benchmark::State& state) {
    ferry::Channel<ferry::Dataset, ferry::dynamic_capacity, ferry::mpmc> channel(2);
    const std::array<float, 4> values{1, 2, 3, 4};
    ferry::Dataset dataset;
    if (ferry::failed(dataset.add(ferry::DataItem::from(values, {1, 4}).value()))) {
        state.SkipWithError("dataset");
        return;
    }
    ferry::Dataset out;
    for (auto _ : state) {
        // A typed value moves through in O(1); the sender keeps nothing, so it is moved back.
        if (channel.send(std::move(dataset), ferry::no_wait) != ferry::Status::ok ||
            channel.receive(out, ferry::no_wait) != ferry::Status::ok) {
            state.SkipWithError("send/receive failed");
            break;
        }
        dataset = std::move(out);
        benchmark::DoNotOptimize(dataset);
    }
    state.SetItemsProcessed(state.iterations());
}

} // namespace

BENCHMARK(memcpy_64MiB)->Name("large/memcpy/64MiB")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(c_api_64MiB)->Name("large/c_api/64MiB")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(cpp_channel_small)->Name("small/cpp_channel/16B");
BENCHMARK(cpp_channel_dataset_small)->Name("small/cpp_channel_dataset/16B");
BENCHMARK(c_api_small)->Name("small/c_api/16B");

BENCHMARK_MAIN();
