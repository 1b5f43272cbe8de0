#pragma once
// What the ipc benchmarks exchange, and how a timed run is recorded in Google Benchmark.

#include "harness.hpp"

#include <array>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ferry::bench {

// The 64-byte message of the round-trip benchmarks; its first 8 bytes carry a sequence number.
using Message = std::array<std::byte, 64>;

inline Message message_of(std::uint64_t i) noexcept {
    Message m{};
    std::memcpy(m.data(), &i, sizeof i);
    return m;
}

inline std::uint64_t value_of(const Message& m) noexcept {
    std::uint64_t i = 0;
    std::memcpy(&i, m.data(), sizeof i);
    return i;
}

// Bytes moved per repetition of a data-set benchmark, at every message size.
inline constexpr std::size_t k_dataset_bytes = std::size_t{1} << 30;

// `bytes` bytes starting on a page boundary, inside `storage` (see dataset.cpp: an unaligned
// memcpy baseline runs 20x slower on the bench VM).
inline std::byte* page_aligned(std::vector<std::byte>& storage, std::size_t bytes) {
    constexpr std::size_t page = 4096;
    storage.assign(bytes + page, std::byte{1});
    void* at = storage.data();
    std::size_t space = storage.size();
    return static_cast<std::byte*>(std::align(page, bytes, at, space));
}

// Records a timed run as the iteration's manual time; a void run becomes SkipWithError (the
// plot script refuses a file holding one), and the caller stops iterating.
inline bool record(benchmark::State& state, const Timed& timed) {
    if (!timed.error.empty()) {
        state.SkipWithError(timed.error.c_str());
        return false;
    }
    state.SetIterationTime(timed.seconds);
    record_placement(state, timed.placement);
    return true;
}

// The peer's own handle on a channel this process created, opened by name as an unrelated
// process would; shared so that the callable holding it can be copied. Throws when the open
// fails (the peer then exits with status 2 before reporting ready, which voids the run).
template <typename Channel>
std::shared_ptr<Channel> open_channel(const std::string& name) {
    auto opened = Channel::open(name);
    if (!opened) {
        throw std::runtime_error(opened.error().message);
    }
    return std::make_shared<Channel>(std::move(*opened));
}

// Throughput of 64-bit items (`items` per run, blocking send / receive) from this process to a
// forked peer through an ItemChannel (an ipc::Channel<std::uint64_t, ...>) of a fresh name.
template <typename ItemChannel>
void items_across_processes(benchmark::State& state, std::uint64_t items) {
    for (auto _ : state) {
        const std::string name = object_name("tp");
        auto ch = ItemChannel::create(name);
        if (!ch) {
            state.SkipWithError(ch.error().message.c_str());
            break;
        }
        const auto timed = transfer_across(
            items, [&](std::uint64_t v) { (void)ch->send(v); },
            [&] {
                return [peer = open_channel<ItemChannel>(name)] {
                    return peer->receive().value_or(0);
                };
            });
        if (!record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(items) * state.iterations());
}

} // namespace ferry::bench
