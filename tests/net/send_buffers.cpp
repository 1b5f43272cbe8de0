// A message sender's reused buffers (net/detail/send_buffers.hpp), without UCX.
#include <catch2/catch.hpp>
#include <cstddef>
#include <ferry/net/detail/send_buffers.hpp>
#include <memory>
#include <thread>

using ferry::net::detail::SendBuffers;

TEST_CASE("net send buffers: a buffer dropped by its last owner is taken again", "[net]") {
    auto pool = std::make_shared<SendBuffers>(2);
    std::byte* first = nullptr;
    {
        auto b = pool->take(4096);
        first = b.get();
        auto in_flight = b; // as UCX's completion holds it
        b.reset();
        CHECK(pool->idle() == 0); // still held by the send in flight
    }
    CHECK(pool->idle() == 1);
    auto again = pool->take(1000); // smaller: the idle 4096-byte buffer fits
    CHECK(again.get() == first);
    CHECK(pool->idle() == 0);
    auto bigger = pool->take(8192); // nothing idle fits: a new one
    CHECK(bigger.get() != first);
}

TEST_CASE("net send buffers: at most `keep` idle; a buffer outliving its pool is freed", "[net]") {
    auto pool = std::make_shared<SendBuffers>(2);
    {
        auto a = pool->take(64);
        auto b = pool->take(64);
        auto c = pool->take(64);
    }
    CHECK(pool->idle() == 2);
    auto survivor = pool->take(64);
    pool.reset();     // the sender closed while a send was in flight: the buffer is freed later
    survivor.reset(); // (ASan would see a leak or a use after free here)
}

TEST_CASE("net send buffers: buffers come back from another thread", "[net][concurrency]") {
    auto pool = std::make_shared<SendBuffers>(4);
    for (int round = 0; round < 200; ++round) {
        auto b = pool->take(256);
        std::thread completes([owned = std::move(b)]() mutable { owned.reset(); });
        auto other = pool->take(256); // may or may not find the one coming back
        completes.join();
        CHECK(other != nullptr);
    }
    CHECK(pool->idle() == 2); // the last round's two, both back
}
