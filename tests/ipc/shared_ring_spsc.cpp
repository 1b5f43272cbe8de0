// ferry::ipc::detail::SpscSharedRing, the ring of an spsc ipc::Channel: exact capacity,
// wrap-around, a parked call woken by the other side, and counters a peer rewrites
// (docs/processes.md, Reading shared memory). Each side has its own handle on one shared
// mapping, as two processes would (the handles keep private copies of the counters).
#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/ipc/detail/shared_ring_spsc.hpp>
#include <string>
#include <sys/mman.h>
#include <thread>

using ferry::Status;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
namespace detail = ferry::ipc::detail;
using Ring = detail::SpscSharedRing;

namespace {

constexpr auto k_never = Clock::time_point::max();

// A shared anonymous mapping holding one ring, a sender handle and a receiver handle.
class Fixture {
public:
    explicit Fixture(std::size_t capacity, std::size_t cell_bytes = sizeof(std::uint64_t))
        : bytes_(Ring::bytes_for(capacity, cell_bytes)), capacity_(capacity) {
        REQUIRE(bytes_ > 0);
        memory_ =
            ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        REQUIRE(memory_ != MAP_FAILED);
        sender = Ring::create(span(), capacity, cell_bytes, detail::RingPolicy::spsc);
        std::string why;
        receiver = Ring::attach(span(), capacity, cell_bytes, detail::RingPolicy::spsc, &why);
        REQUIRE(sender.attached());
        REQUIRE(receiver.attached());
    }
    ~Fixture() { ::munmap(memory_, bytes_); }
    Fixture(const Fixture&) = delete;
    Fixture& operator=(const Fixture&) = delete;

    std::span<std::byte> span() const { return {static_cast<std::byte*>(memory_), bytes_}; }
    detail::SpscControl& words() const { return *static_cast<detail::SpscControl*>(memory_); }
    // The turn of cell `index`: each cell's first word, the cells after the control block.
    std::uint64_t& turn(std::size_t index) const {
        const std::size_t stride = (bytes_ - sizeof(detail::SpscControl)) / capacity_;
        return *reinterpret_cast<std::uint64_t*>(static_cast<std::byte*>(memory_) +
                                                 sizeof(detail::SpscControl) + index * stride);
    }

    Ring sender;
    Ring receiver;

private:
    std::size_t bytes_;
    std::size_t capacity_;
    void* memory_ = nullptr;
};

Status send(Ring& ring, std::uint64_t value, Clock::time_point deadline = k_never,
            bool may_wait = false) {
    Ring::Claim c;
    const Status s = ring.claim(c, deadline, may_wait, nullptr);
    if (s == Status::ok) {
        std::memcpy(c.cell, &value, sizeof value);
        ring.publish(c);
    }
    return s;
}

Status receive(Ring& ring, std::uint64_t& out, Clock::time_point deadline = k_never,
               bool may_wait = false) {
    Ring::Claim c;
    const Status s = ring.acquire(c, deadline, may_wait, nullptr);
    if (s == Status::ok) {
        std::memcpy(&out, c.cell, sizeof out);
        ring.release(c);
    }
    return s;
}

template <typename Word>
void scribble(Word& word, Word value) {
    std::atomic_ref<Word>(word).store(value, std::memory_order_relaxed);
}

} // namespace

TEST_CASE("ipc spsc ring: holds exactly its capacity, also when it is not a power of two",
          "[ipc]") {
    for (const std::size_t capacity : {std::size_t{2}, std::size_t{5}, std::size_t{8}}) {
        Fixture f(capacity);
        for (std::size_t i = 0; i < capacity; ++i) {
            REQUIRE(send(f.sender, i) == Status::ok);
        }
        CHECK(send(f.sender, 99) == Status::full);
        CHECK(f.receiver.size() == capacity);
        // A cell acquired and not yet released still occupies the ring.
        Ring::Claim held;
        REQUIRE(f.receiver.acquire(held, k_never, false, nullptr) == Status::ok);
        CHECK(send(f.sender, 99) == Status::full);
        f.receiver.release(held);
        CHECK(send(f.sender, 100) == Status::ok);
        CHECK(send(f.sender, 101) == Status::full);
    }
}

TEST_CASE("ipc spsc ring: wraps around many times in order, sizes exact when quiet", "[ipc]") {
    Fixture f(5);
    std::uint64_t next_sent = 0;
    std::uint64_t next_received = 0;
    for (int round = 0; round < 400; ++round) { // uneven bursts: every cell, every phase
        const std::uint64_t room = 5 - (next_sent - next_received);
        const std::uint64_t burst = std::min<std::uint64_t>(1 + round % 5, room);
        for (std::uint64_t i = 0; i < burst; ++i) {
            REQUIRE(send(f.sender, next_sent++) == Status::ok);
        }
        const std::uint64_t queued = next_sent - next_received; // at least 1
        CHECK(f.receiver.size() == queued);
        const std::uint64_t take = 1 + (static_cast<std::uint64_t>(round) * 7) % queued;
        for (std::uint64_t i = 0; i < take; ++i) {
            std::uint64_t got = 0;
            REQUIRE(receive(f.receiver, got) == Status::ok);
            REQUIRE(got == next_received++);
        }
    }
    while (next_received < next_sent) {
        std::uint64_t got = 0;
        REQUIRE(receive(f.receiver, got) == Status::ok);
        REQUIRE(got == next_received++);
    }
    std::uint64_t got = 0;
    CHECK(receive(f.receiver, got) == Status::empty);
    CHECK(f.sender.size() == 0);
    // A handle that attaches late starts from the shared counters, not from zero.
    std::string why;
    auto late = Ring::attach(f.span(), 5, sizeof(std::uint64_t), detail::RingPolicy::spsc, &why);
    REQUIRE(late.attached());
    REQUIRE(send(late, 7777) == Status::ok);
    REQUIRE(receive(f.receiver, got) == Status::ok);
    CHECK(got == 7777);
}

TEST_CASE("ipc spsc ring: a parked receiver and a parked sender are woken by the other side",
          "[ipc]") {
    Fixture f(2);
    SECTION("receiver") {
        std::uint64_t got = 0;
        Status status = Status::internal_error;
        std::thread receiver([&] { status = receive(f.receiver, got, Clock::now() + 10s, true); });
        while (f.sender.blocked() == 0) { // parked: past its spin phase, on the futex
            std::this_thread::yield();
        }
        const auto sent = Clock::now();
        REQUIRE(send(f.sender, 42) == Status::ok);
        receiver.join();
        CHECK(status == Status::ok);
        CHECK(got == 42);
        CHECK(Clock::now() - sent < 5s); // woken, not timed out
    }
    SECTION("sender") {
        REQUIRE(send(f.sender, 1) == Status::ok);
        REQUIRE(send(f.sender, 2) == Status::ok);
        Status status = Status::internal_error;
        std::thread sender([&] { status = send(f.sender, 3, Clock::now() + 10s, true); });
        while (f.receiver.blocked() == 0) {
            std::this_thread::yield();
        }
        std::uint64_t got = 0;
        REQUIRE(receive(f.receiver, got) == Status::ok);
        sender.join();
        CHECK(status == Status::ok);
        CHECK(f.receiver.size() == 2);
    }
}

TEST_CASE("ipc spsc ring: blocking calls on a ring of two lose no wake over many hand-overs",
          "[ipc]") {
    // Every call parks often (two cells, two threads); a lost wake would leave one side asleep
    // until its 10 s deadline and answer timed_out.
    Fixture f(2);
    constexpr std::uint64_t k_items = 20'000;
    Status sender_status = Status::ok;
    std::thread sender([&] {
        for (std::uint64_t i = 0; i < k_items && sender_status == Status::ok; ++i) {
            sender_status = send(f.sender, i, Clock::now() + 10s, true);
        }
    });
    std::uint64_t mismatches = 0;
    Status status = Status::ok;
    for (std::uint64_t i = 0; i < k_items && status == Status::ok; ++i) {
        std::uint64_t got = 0;
        status = receive(f.receiver, got, Clock::now() + 10s, true);
        mismatches += status == Status::ok && got != i ? 1 : 0;
    }
    sender.join();
    CHECK(sender_status == Status::ok);
    CHECK(status == Status::ok);
    CHECK(mismatches == 0);
}

TEST_CASE("ipc spsc ring: counters a peer rewrites make the ring lost or keep it in bounds; "
          "waits end in time",
          "[ipc]") {
    Fixture f(4);
    auto& words = f.words();
    std::uint64_t got = 0;
    SECTION("a tail more than capacity ahead of the head: the sender finds it") {
        scribble(words.tail, std::uint64_t{1000});
        CHECK(send(f.sender, 1) == Status::peer_lost);
        CHECK(f.receiver.lost());
        CHECK(receive(f.receiver, got) == Status::peer_lost);
    }
    SECTION("a tail more than capacity ahead of the head: a receive about to park finds it") {
        scribble(words.tail, std::uint64_t{1000});
        // A receive that does not wait looks at the head's cell only (never at the tail, the
        // sender's line): nothing there, and nothing changed.
        CHECK(receive(f.receiver, got) == Status::empty);
        CHECK_FALSE(f.receiver.lost());
        CHECK(receive(f.receiver, got, Clock::now() + 5s, true) == Status::peer_lost);
        CHECK(f.sender.lost());
        CHECK(send(f.sender, 1) == Status::peer_lost);
    }
    SECTION("a tail rolled back behind the head: a receive about to park finds it") {
        REQUIRE(send(f.sender, 5) == Status::ok);
        scribble(words.tail, std::uint64_t{0});
        // The item's turn says it is there: it is delivered (the tail is not the receiver's).
        REQUIRE(receive(f.receiver, got) == Status::ok);
        CHECK(got == 5);
        CHECK(receive(f.receiver, got, Clock::now() + 5s, true) == Status::peer_lost);
        CHECK(f.sender.lost());
    }
    SECTION("a head ahead of the tail") {
        scribble(words.head, std::uint64_t{100});
        // The sender's copy of the head (0) is stale: it reloads the head only when its copy
        // says full, so it fills the cells it believes free, then finds the pair inconsistent.
        Status s = Status::ok;
        for (int i = 0; i < 8 && s == Status::ok; ++i) {
            s = send(f.sender, 1);
        }
        CHECK(s == Status::peer_lost);
        CHECK(f.receiver.lost());
    }
    SECTION("huge positions, consistent: cells of the private capacity, across 2^64") {
        scribble(words.tail, std::uint64_t{UINT64_MAX - 2});
        scribble(words.head, std::uint64_t{UINT64_MAX - 2});
        for (std::uint64_t i = 0; i < 4; ++i) {
            REQUIRE(send(f.sender, i) == Status::ok);
        }
        CHECK(send(f.sender, 9) == Status::full);
        for (std::uint64_t i = 0; i < 4; ++i) {
            REQUIRE(receive(f.receiver, got) == Status::ok);
        }
        CHECK(receive(f.receiver, got) == Status::empty);
    }
    SECTION("geometry rewritten after attach is never used") {
        scribble(words.geometry.capacity, std::uint32_t{0});
        scribble(words.geometry.stride, std::uint64_t{1} << 40);
        for (std::uint64_t i = 0; i < 4; ++i) {
            REQUIRE(send(f.sender, i) == Status::ok);
        }
        CHECK(send(f.sender, 9) == Status::full);
        for (std::uint64_t i = 0; i < 4; ++i) {
            REQUIRE(receive(f.receiver, got) == Status::ok);
            CHECK(got == i);
        }
    }
    SECTION("a turn rolled back: the receiver sees nothing and its timed wait ends on time") {
        REQUIRE(send(f.sender, 5) == Status::ok);
        scribble(f.turn(0), std::uint64_t{0});
        std::string why;
        auto fresh =
            Ring::attach(f.span(), 4, sizeof(std::uint64_t), detail::RingPolicy::spsc, &why);
        REQUIRE(fresh.attached());
        const auto start = Clock::now();
        CHECK(receive(fresh, got, start + 30ms, true) == Status::timed_out);
        CHECK(Clock::now() - start >= 30ms);
        CHECK(Clock::now() - start < 5s);
    }
}

TEST_CASE("ipc spsc ring: attach refuses another geometry, policy or ring kind", "[ipc]") {
    Fixture f(4);
    std::string why;
    CHECK_FALSE(Ring::attach(f.span(), 3, 8, detail::RingPolicy::spsc, &why).attached());
    CHECK(why == "the ring has another capacity or cell size");
    CHECK_FALSE(Ring::attach(f.span(), 4, 8, detail::RingPolicy::mpmc, &why).attached());
    CHECK(why == "the ring has another policy (spsc / mpmc)");
    why.clear();
    CHECK_FALSE(detail::SharedRing::attach(f.span(), 4, 8, detail::RingPolicy::spsc, &why)
                    .attached()); // Vyukov's ring: another magic (and more bytes)
    CHECK_FALSE(why.empty());
    CHECK_FALSE(Ring::create(f.span(), 4, 8, detail::RingPolicy::mpmc).attached());
}
