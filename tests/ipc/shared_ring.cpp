// ferry::ipc::detail::SharedRing (the mpmc channel's ring; the spsc one is in
// shared_ring_spsc.cpp) against a peer that rewrites the ring's words in shared memory
// (docs/processes.md, Reading shared memory). The peer is a second mapping of the segment file in
// this process, written between the survivor's calls: every call must answer a status, keep to
// the survivor's own geometry, and end by its deadline.
#include "channel_support.hpp"

#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <sys/mman.h>

using ferry::Status;
using ipc_test::make_message;
using ipc_test::SmallShared;
using ipc_test::unique_name;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace detail = ferry::ipc::detail;

namespace {

// Where the ring's words lie in the segment file: the ring is the payload.
constexpr std::size_t k_ring = detail::k_payload_offset;
constexpr std::size_t k_capacity = k_ring + offsetof(detail::RingControl, capacity);
constexpr std::size_t k_cell_bytes = k_ring + offsetof(detail::RingControl, cell_bytes);
constexpr std::size_t k_stride = k_ring + offsetof(detail::RingControl, stride);
constexpr std::size_t k_tail = k_ring + offsetof(detail::RingControl, tail);
constexpr std::size_t k_head = k_ring + offsetof(detail::RingControl, head);
constexpr std::size_t k_first_turn = k_ring + sizeof(detail::RingControl);

// The peer writes a word of the segment file through its own mapping.
template <typename Word>
void write_word(ipc_test::SegmentFile& peer, std::size_t offset, Word value) {
    REQUIRE(offset + sizeof value <= peer.bytes());
    std::memcpy(peer.base() + offset, &value, sizeof value);
}

} // namespace

TEST_CASE("ipc ring: geometry a peer rewrites after attach is not used; calls go on working",
          "[ipc]") {
    const auto name = unique_name("ring-geometry");
    auto channel = SmallShared::create(name);
    REQUIRE(channel);
    ipc_test::SegmentFile peer(name);
    REQUIRE(peer.mapped());
    REQUIRE(channel->try_send(make_message(1, 0)) == Status::ok);
    write_word(peer, k_capacity,
               std::uint32_t{0}); // a division by zero for a ring that re-reads it
    write_word(peer, k_stride, std::uint64_t{1} << 40);
    write_word(peer, k_cell_bytes, std::uint32_t{UINT32_MAX});
    CHECK(channel->try_send(make_message(2, 0)) == Status::ok);
    auto first = channel->try_receive();
    REQUIRE(first);
    CHECK(first->sequence == 1);
    write_word(peer, k_capacity, std::uint32_t{UINT32_MAX}); // cells far beyond the segment
    auto second = channel->try_receive();
    REQUIRE(second);
    CHECK(second->sequence == 2);
    for (std::size_t i = 0; i < ipc_test::k_small; ++i) {
        CHECK(channel->try_send(make_message(i, 0)) == Status::ok);
    }
    CHECK(channel->try_send(make_message(9, 0)) == Status::full); // the private capacity
    CHECK(channel->size() == ipc_test::k_small);
    CHECK(channel->clear() == ipc_test::k_small);
    // A process opening now compares the ring with its own geometry and refuses it.
    auto late = SmallShared::open(name, 1s);
    REQUIRE_FALSE(late);
    CHECK(late.status() == Status::invalid_file);
}

TEST_CASE("ipc ring: counters and turns a peer rewrites give statuses, and waits end in time",
          "[ipc]") {
    const auto name = unique_name("ring-counters");
    auto channel = SmallShared::create(name);
    REQUIRE(channel);
    ipc_test::SegmentFile peer(name);
    REQUIRE(peer.mapped());
    // Huge positions: reduced by the private capacity, they name the ring's own cells.
    write_word(peer, k_tail, std::uint64_t{UINT64_MAX - 3});
    write_word(peer, k_head, std::uint64_t{UINT64_MAX - 3});
    CHECK(channel->try_send(make_message(1, 0)) == Status::full); // turns of another lap
    CHECK(channel->try_receive().status() == Status::empty);
    // A tail ahead of the head: the head looks claimed and never published. A no-wait and a
    // timed receive wait for it a little (k_pending_grace) and then answer, never hang.
    write_word(peer, k_tail, std::uint64_t{1});
    write_word(peer, k_head, std::uint64_t{0});
    auto start = Clock::now();
    CHECK(channel->try_receive().status() == Status::timed_out);
    CHECK(Clock::now() - start >= detail::k_pending_grace);
    CHECK(Clock::now() - start < 5s);
    start = Clock::now();
    CHECK(channel->receive_for(30ms).status() == Status::timed_out);
    CHECK(Clock::now() - start >= 30ms);
    CHECK(Clock::now() - start < 5s);
    // A turn ahead of a tail that did not move is written by no sender: the ring is lost.
    write_word(peer, k_tail, std::uint64_t{0});
    write_word(peer, k_first_turn, std::uint64_t{7});
    CHECK(channel->try_send(make_message(2, 0)) == Status::peer_lost);
    CHECK(channel->lost());
    CHECK(channel->try_receive().status() == Status::peer_lost);
}

// The no-wait peer check's rate limit is a timestamp in shared memory: a peer that writes a time
// far in the future must not switch the survivor's no-wait checks off (docs/processes.md,
// Reading shared memory). A due time more than one slice ahead is taken as due now.
TEST_CASE("ipc ring: a rate-limit timestamp a peer pushes into the future does not silence the "
          "no-wait peer check",
          "[ipc]") {
    const std::int64_t slice = std::chrono::nanoseconds(detail::k_watch_slice).count();
    for (const std::int64_t scribbled :
         {std::numeric_limits<std::int64_t>::max(), detail::ring_coarse_now_ns() + 10 * slice}) {
        std::int64_t next = scribbled;
        CHECK(detail::ring_watch_due(next));
        CHECK(next <= detail::ring_coarse_now_ns() + slice); // back within the survivor's slice
        CHECK_FALSE(detail::ring_watch_due(next));           // and the rate limit holds again
    }
}

// Cells of at most 56 bytes are packed next to their turns, larger ones keep a line of their own
// (docs/processes.md, The ring underneath): at every size around that boundary, each cell holds
// all its bytes without touching a neighbour's turn, over laps, and the bytes of a large cell are
// 64-byte aligned (MessageChannel lends them out).
TEST_CASE("ipc ring: cells just under and over a line keep their bytes and their neighbours' turns",
          "[ipc]") {
    constexpr std::size_t capacity = 5; // not a power of two: positions wrap by division
    for (const std::size_t cell_bytes : {1, 8, 24, 40, 56, 57, 64, 120}) {
        CAPTURE(cell_bytes);
        const bool packed = cell_bytes <= 56;
        const std::size_t stride =
            packed ? std::bit_ceil(cell_bytes + 8) : 64 + (cell_bytes + 63) / 64 * 64;
        const std::size_t bytes = detail::SharedRing::bytes_for(capacity, cell_bytes);
        CHECK(bytes == sizeof(detail::RingControl) + capacity * stride);
        void* memory =
            ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        REQUIRE(memory != MAP_FAILED);
        const std::span<std::byte> span(static_cast<std::byte*>(memory), bytes);
        auto sender =
            detail::SharedRing::create(span, capacity, cell_bytes, detail::RingPolicy::mpmc);
        std::string why;
        auto receiver =
            detail::SharedRing::attach(span, capacity, cell_bytes, detail::RingPolicy::mpmc, &why);
        REQUIRE(sender.attached());
        REQUIRE(receiver.attached());
        const auto never = Clock::time_point::max();
        detail::SharedRing::Claim c;
        for (unsigned lap = 0; lap < 3; ++lap) {
            for (unsigned i = 0; i < capacity; ++i) {
                REQUIRE(sender.claim(c, never, false, nullptr) == Status::ok);
                CHECK(reinterpret_cast<std::uintptr_t>(c.cell) % (packed ? 8 : 64) == 0);
                std::memset(c.cell, static_cast<int>(lap * capacity + i + 1), cell_bytes);
                sender.publish(c);
            }
            CHECK(sender.claim(c, never, false, nullptr) == Status::full);
            for (unsigned i = 0; i < capacity; ++i) {
                REQUIRE(receiver.acquire(c, never, false, nullptr) == Status::ok);
                const auto expected = static_cast<std::byte>(lap * capacity + i + 1);
                CHECK(std::count(c.cell, c.cell + cell_bytes, expected) ==
                      static_cast<std::ptrdiff_t>(cell_bytes));
                receiver.release(c);
            }
            CHECK(receiver.acquire(c, never, false, nullptr) == Status::empty);
        }
        CHECK_FALSE(sender.lost());
        ::munmap(memory, bytes);
    }
}
