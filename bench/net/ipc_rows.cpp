// Ranks on one host need no network: ferry/ipc beside the UCX rows, in the same shape, so that
// the table shows what going through tcp loopback costs against shared memory:
//   rate/ipc/64B       ferry::ipc::Channel<64-byte message, 4096> from this process to the
//                      peer (created by name here, opened by name there), blocking send and
//                      receive, the same counts and checks as rate/raw_am/64B
//   exchange/ipc/S     an ipc::SharedWindow created here and opened by the peer: per round this
//                      process copies the micro-batch into the window, stores the round as a
//                      flag (release), and spins until the peer's answer flag shows the round;
//                      the peer spins on the flag (acquire), checks the batch's first and last
//                      8 bytes, and stores its answer. The same rounds as exchange/raw_put/S.
#include "../ipc/messages.hpp"
#include "peer.hpp"
#include "shapes.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/cpu_relax.hpp>
#include <ferry/ipc/channel.hpp>
#include <ferry/ipc/window.hpp>
#include <string>
#include <vector>

namespace {
using ferry::bench::Message;
using ferry::bench::message_of;
using ferry::bench::object_name;
using ferry::bench::value_of;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::k_messages;
using ferry::bench::net::k_rounds;
using ferry::bench::net::Reporter;
using ferry::bench::net::Rounds;

constexpr std::size_t k_line = 64;
using RateChannel = ferry::ipc::Channel<Message, 4096>;

void rate_ipc(benchmark::State& state) {
    for (auto _ : state) {
        const auto cpus = ferry::bench::two_cpus();
        const ferry::bench::PinnedToCpu pinned(cpus.first);
        const std::string name = object_name("net-rate");
        auto ch = RateChannel::create(name);
        if (!ch) {
            state.SkipWithError(ch.error().message.c_str());
            break;
        }
        ExecPeer peer(cpus.second, "ipc_sink", {name, std::to_string(k_messages)});
        const auto timed = ferry::bench::net::timed_stream(
            peer, k_messages,
            [&](std::uint64_t i) { return ch->send(message_of(i)) == ferry::Status::ok; },
            [&](char what) { return peer.await(what); });
        if (!ferry::bench::record(state, timed)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_messages) * state.iterations());
}

// argv: name count. Exit 0 when the messages came in order.
int ipc_sink(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 2) {
        return 2;
    }
    auto ch = RateChannel::open(args[0]);
    if (!ch) {
        return 2;
    }
    const std::uint64_t count = std::stoull(args[1]);
    const std::uint64_t warmup = count / 4;
    bool in_order = true;
    report('r');
    for (std::uint64_t i = 0; i < warmup + count; ++i) {
        const auto m = ch->receive();
        in_order = in_order && m.has_value() && value_of(*m) == i;
        if (i + 1 == warmup) {
            report('w');
        }
    }
    report('d');
    return in_order ? 0 : 1;
}

// The window's layout: the micro-batch, then the flag and the answer on lines of their own.
struct Layout {
    std::span<std::byte> data;
    std::size_t size;
    [[nodiscard]] std::atomic_ref<std::uint64_t> at(std::size_t offset) const {
        return std::atomic_ref<std::uint64_t>(
            *reinterpret_cast<std::uint64_t*>(data.data() + offset));
    }
    [[nodiscard]] std::atomic_ref<std::uint64_t> flag() const { return at(size); }
    [[nodiscard]] std::atomic_ref<std::uint64_t> answer() const { return at(size + k_line); }
};

// Spins until `word` holds `value`; false after a minute (the other side died or hung).
bool spin_until(const std::atomic_ref<std::uint64_t>& word, std::uint64_t value) {
    const auto give_up = ferry::bench::clock::now() + std::chrono::minutes(1);
    for (std::uint32_t spins = 1; word.load(std::memory_order_acquire) != value; ++spins) {
        if ((spins & 0xffff) == 0 && ferry::bench::clock::now() > give_up) {
            return false;
        }
        ferry::detail::cpu_relax();
    }
    return true;
}

void exchange_ipc(benchmark::State& state, std::size_t size) {
    for (auto _ : state) {
        const auto cpus = ferry::bench::two_cpus();
        const ferry::bench::PinnedToCpu pinned(cpus.first);
        const std::string name = object_name("net-window");
        auto window = ferry::ipc::SharedWindow::create(name, size + 2 * k_line);
        if (!window) {
            state.SkipWithError(window.error().message.c_str());
            break;
        }
        const Layout shared{window->data(), size};
        std::vector<std::byte> storage;
        std::byte* batch = ferry::bench::page_aligned(storage, size);
        ExecPeer peer(cpus.second, "ipc_ffn",
                      {name, std::to_string(size), std::to_string(k_rounds / 4 + k_rounds)});
        Rounds rounds = ferry::bench::net::timed_rounds(
            peer, k_rounds,
            [&](std::uint64_t r) {
                std::memcpy(batch, &r, sizeof r);
                std::memcpy(batch + size - sizeof r, &r, sizeof r);
                std::memcpy(shared.data.data(), batch, size);
                shared.flag().store(r, std::memory_order_release);
                return spin_until(shared.answer(), r);
            },
            [&](char what) { return peer.await(what); });
        if (!ferry::bench::net::record_rounds(state, rounds)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_rounds) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(k_rounds * size) * state.iterations());
}

// argv: name size rounds. Exit 0 when every batch was whole before its flag.
int ipc_ffn(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 3) {
        return 2;
    }
    auto window = ferry::ipc::SharedWindow::open(args[0]);
    const std::size_t size = std::stoul(args[1]);
    if (!window || window->data().size() < size + 2 * k_line) {
        return 2;
    }
    const Layout shared{window->data(), size};
    const std::uint64_t rounds = std::stoull(args[2]);
    bool whole = true;
    report('r');
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        if (!spin_until(shared.flag(), r)) {
            return 2;
        }
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        std::memcpy(&first, shared.data.data(), sizeof first);
        std::memcpy(&last, shared.data.data() + size - sizeof last, sizeof last);
        whole = whole && first == r && last == r;
        shared.answer().store(r, std::memory_order_release);
    }
    report('d');
    return whole ? 0 : 1;
}

[[maybe_unused]] const bool registered = ferry::bench::net::add_role("ipc_sink", &ipc_sink) &&
                                         ferry::bench::net::add_role("ipc_ffn", &ipc_ffn);

BENCHMARK(rate_ipc)->Name("rate/ipc/64B")->UseManualTime()->Iterations(1);
BENCHMARK_CAPTURE(exchange_ipc, ipc_1KiB, 1 << 10)
    ->Name("exchange/ipc/1KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(exchange_ipc, ipc_56KiB, 8 * 7168)
    ->Name("exchange/ipc/56KiB")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
