// ferry::ipc::MessageChannel with a peer that scribbles over the messages while the survivor
// sends, receives and parses them (docs/processes.md, Reading shared memory). The peer is a
// thread of this process writing through its own mapping of the segment file, concurrently, as
// another program could: it rewrites item headers (the version that makes an item a name, the
// counts, dims, lengths) and cell headers of every cell. Wrong contents and error statuses are
// expected; an out-of-bounds access (ASan), a crash or a hang is the failure.
//
// The races here are intended data races between "processes": the test is not in the
// 'concurrency' suite, which runs under ThreadSanitizer.
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <ferry/ipc/message_channel.hpp>
#include <random>
#include <thread>
#include <vector>

using ferry::Status;
using ipc_test::unique_name;
namespace detail = ferry::ipc::detail;

namespace {

constexpr std::size_t k_capacity = 4;
constexpr std::size_t k_max_message = 1024;
constexpr int k_rounds = 3000;
constexpr int k_parses = 16; // in-place parses of each view, while the peer scribbles

using Channel = ferry::ipc::MessageChannel<ferry::mpmc>;

ferry::Dataset named_sample() {
    ferry::Dataset ds;
    REQUIRE(ds.set_name("scribbled") == Status::ok);
    REQUIRE(ds.add(*ferry::DataItem::from(std::vector<std::int32_t>{1, 2, 3, 4}, {2, 2})) ==
            Status::ok);
    REQUIRE(ds.add(*ferry::DataItem::from(std::vector<std::int8_t>{5, 6, 7}, {3})) == Status::ok);
    return ds;
}

// Where message `cell` starts in the segment file: the ring's words, then per cell a turn line,
// the cell header and the message.
std::size_t message_at(std::size_t cell) {
    const std::size_t stride = detail::k_ring_line + detail::cell_bytes_for(k_max_message);
    return detail::k_payload_offset + sizeof(detail::RingControl) + cell * stride +
           detail::k_ring_line + detail::k_cell_header_bytes;
}

// Where each item header of `message` starts (a header follows the previous payload).
std::vector<std::size_t> item_offsets(const ferry::MessageBuffer& message) {
    std::vector<std::size_t> offsets{0};
    const Status s = ferry::detail::walk_message(message, [&](const ferry::detail::WireItem& w) {
        offsets.push_back(static_cast<std::size_t>(w.payload.data() - message.data()) +
                          w.payload.size());
        return Status::ok;
    });
    REQUIRE(s == Status::ok);
    offsets.pop_back(); // the end of the message
    return offsets;
}

// The peer: until `stop`, writes small values over item-header fields and over the cell
// headers, byte by byte (relaxed atomic stores: torn values are part of the test). The version
// field, which turns the name item into a tensor item and back, is the most frequent target.
void scribble(ipc_test::SegmentFile& peer, const std::vector<std::size_t>& items,
              const std::atomic<bool>& stop) {
    std::minstd_rand random(12345);
    constexpr std::size_t k_fields[] = {0, 0, 0, 8, 12, 20, 24, 56}; // version, counts, dims, len
    const std::uint64_t values[] = {0, 1, 2, 3, 64, 4096, UINT64_MAX};
    while (!stop.load(std::memory_order_relaxed)) {
        const std::size_t cell = random() % k_capacity;
        if (random() % 4 != 0) { // the name item's version, every cell: name <-> tensor item
            const auto version = static_cast<std::byte>(random() % 2);
            for (std::size_t c = 0; c < k_capacity; ++c) {
                std::atomic_ref<std::byte>(peer.base()[message_at(c)])
                    .store(version, std::memory_order_relaxed);
            }
            continue;
        }
        const std::size_t item = items[random() % items.size()];
        std::size_t at = message_at(cell) + item + k_fields[random() % std::size(k_fields)];
        if (random() % 8 == 0) {
            at = message_at(cell) - detail::k_cell_header_bytes; // the cell header's length
        }
        const std::uint64_t value = values[random() % std::size(values)];
        const std::size_t width = random() % 2 == 0 ? 4 : 8;
        for (std::size_t i = 0; i < width && at + i < peer.bytes(); ++i) {
            std::atomic_ref<std::byte>(peer.base()[at + i])
                .store(static_cast<std::byte>(value >> (8 * i)), std::memory_order_relaxed);
        }
    }
}

// One round of the survivor: every call answers a status; a message it gets is within limits.
void survive_round(Channel& channel, const ferry::Dataset& sample, ferry::Dataset& into) {
    static_cast<void>(channel.send(sample, ferry::no_wait));
    static_cast<void>(channel.send(sample, ferry::no_wait));
    if (auto view = channel.receive_view(ferry::no_wait)) {
        REQUIRE(view->bytes().size() <= k_max_message);
        for (int i = 0; i < k_parses; ++i) {
            static_cast<void>(view->dataset());
        }
    }
    static_cast<void>(channel.receive(ferry::no_wait));
    into.clear();
    static_cast<void>(channel.receive(into, ferry::no_wait));
}

} // namespace

TEST_CASE("ipc message channel: a peer scribbling over messages as they are parsed causes "
          "errors, never an out-of-bounds access",
          "[ipc]") {
    const auto name = unique_name("scribbled");
    auto channel = Channel::create(name, k_capacity, k_max_message);
    REQUIRE(channel);
    ipc_test::SegmentFile peer(name);
    REQUIRE(peer.mapped());
    const ferry::Dataset sample = named_sample();
    ferry::Dataset into;
    std::atomic<bool> stop{false};
    const auto items = item_offsets(*ferry::serialize(sample));
    std::thread scribbler([&] { scribble(peer, items, stop); });
    for (int round = 0; round < k_rounds && !channel->lost(); ++round) {
        survive_round(*channel, sample, into);
    }
    stop.store(true);
    scribbler.join();
    // The ring's words were left alone: the channel is still usable, and holds what it says.
    CHECK_FALSE(channel->lost());
    CHECK(channel->size() <= k_capacity);
    channel->clear();
    CHECK(channel->send(sample, ferry::no_wait) == Status::ok);
}
