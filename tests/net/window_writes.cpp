// The owner's side of window writes without UCX (ferry/net/detail/window_writes.hpp): decoding,
// the region check at its edges, the per-peer caps, the order of application, and an empty put
// a peer may send.

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstddef>
#include <ferry/net/detail/window_writes.hpp>
#include <vector>

namespace {

namespace nd = ferry::net::detail;
namespace wire = ferry::net::detail::wire;

template <typename T>
std::vector<std::byte> body_of(const T& value) {
    std::vector<std::byte> out;
    wire::append(out, value);
    return out;
}

nd::Deferred put_at(std::uint32_t region, std::uint64_t offset) {
    const auto w = nd::decode_write(wire::Kind::put, body_of(wire::Put{region, 0, offset}), 0);
    REQUIRE(w.has_value());
    return *w;
}

} // namespace

TEST_CASE("net/window_writes: headers decode only at their exact size and kind") {
    CHECK(nd::decode_write(wire::Kind::put, body_of(wire::Put{1, 0, 8}), 4)->offset == 8);
    CHECK_FALSE(nd::decode_write(wire::Kind::put, body_of(wire::Ring{0, 0}), 4));
    CHECK(nd::decode_write(wire::Kind::ring, body_of(wire::Ring{2, 0}), 0)->region == 2);
    CHECK_FALSE(nd::decode_write(wire::Kind::ring, body_of(wire::Ring{0, 0}), 1)); // a payload
    CHECK(nd::decode_write(wire::Kind::flush, body_of(wire::Flush{9}), 0)->sequence == 9);
    CHECK_FALSE(nd::decode_write(wire::Kind::flush, body_of(wire::Put{}), 0));
    CHECK_FALSE(nd::decode_write(wire::Kind::heartbeat, {}, 0));
}

TEST_CASE("net/window_writes: a put rings only with the ring flag, and no other flag passes") {
    CHECK_FALSE(nd::decode_write(wire::Kind::put, body_of(wire::Put{0, 0, 0}), 4)->rings);
    CHECK(nd::decode_write(wire::Kind::put, body_of(wire::Put{0, wire::k_put_rings, 0}), 4)
              ->rings);
    CHECK_FALSE(nd::decode_write(wire::Kind::put, body_of(wire::Put{0, 2, 0}), 4));
    CHECK_FALSE(
        nd::decode_write(wire::Kind::put, body_of(wire::Put{0, wire::k_put_rings | 4, 0}), 4));
}

TEST_CASE("net/window_writes: a write must lie inside an exposed region") {
    std::array<std::byte, 64> memory{};
    const std::vector<nd::LocalRegion> regions{{std::span(memory), {}, nullptr, {}}};
    CHECK(nd::check_write(regions, put_at(0, 0), 64) == nullptr);
    CHECK(nd::check_write(regions, put_at(0, 60), 4) == nullptr);
    CHECK(nd::check_write(regions, put_at(0, 64), 0) == nullptr);
    CHECK(nd::check_write(regions, put_at(0, 61), 4) != nullptr);
    CHECK(nd::check_write(regions, put_at(0, 65), 0) != nullptr);
    CHECK(nd::check_write(regions, put_at(0, ~std::uint64_t{0} - 2), 4) != nullptr);
    CHECK(nd::check_write(regions, put_at(1, 0), 1) != nullptr);
}

TEST_CASE("net/window_writes: writes behind a landing put wait, in order, within the caps") {
    std::array<std::byte, 64> memory{};
    nd::WriteQueue q;
    int dummy = 0;
    nd::enqueue_write(q, put_at(0, 0), &dummy, 32, true); // a rendezvous: a descriptor
    std::vector<std::uint64_t> applied;
    const auto apply = [&](nd::Deferred& w) {
        applied.push_back(w.offset);
        if (w.descriptor != nullptr) {
            ++q.landing;
        } else {
            nd::store(std::span(memory).subspan(w.offset), w.bytes);
        }
        return true;
    };
    nd::drain_writes(q, apply);
    REQUIRE(q.landing == 1);
    const std::byte flag[4] = {std::byte{1}, {}, {}, {}};
    for (std::size_t i = 0; i + 1 < nd::k_max_deferred; ++i) {
        REQUIRE(nd::admit_write(q, 4, false) == nullptr);
        nd::enqueue_write(q, put_at(0, 32 + i % 8 * 4), flag, 4, false);
        nd::drain_writes(q, apply);
    }
    REQUIRE(nd::admit_write(q, 4, false) == nullptr);
    nd::enqueue_write(q, put_at(0, 60), flag, 4, false);
    CHECK(nd::admit_write(q, 4, false) != nullptr); // 4096 waiting: no more
    CHECK(nd::admit_write(q, 0, true) != nullptr);
    CHECK(applied.size() == 1); // nothing overtook the landing put
    CHECK(std::all_of(memory.begin(), memory.end(), [](std::byte b) { return b == std::byte{0}; }));
    --q.landing; // it landed
    nd::drain_writes(q, apply);
    CHECK(applied.size() == nd::k_max_deferred + 1);
    CHECK(applied.back() == 60);
    CHECK(q.deferred.empty());
    CHECK(q.deferred_bytes == 0);
    CHECK(memory[60] == std::byte{1});
}

// A peer may send a put with no payload (Node::put never does): accepted, it writes nothing —
// and copies from no address (UBSan: a null source for memcpy).
TEST_CASE("net/window_writes: an empty put from a peer writes nothing") {
    std::array<std::byte, 16> memory{};
    const std::vector<nd::LocalRegion> regions{{std::span(memory), {}, nullptr, {}}};
    nd::WriteQueue q;
    for (const std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{16}}) {
        auto w = put_at(0, offset);
        REQUIRE(nd::check_write(regions, w, 0) == nullptr);
        REQUIRE(nd::admit_write(q, 0, false) == nullptr);
        nd::enqueue_write(q, std::move(w), nullptr, 0, false);
    }
    int applied = 0;
    nd::drain_writes(q, [&](nd::Deferred& w) {
        nd::store(std::span(memory).subspan(w.offset), w.bytes);
        ++applied;
        return true;
    });
    CHECK(applied == 2);
    CHECK(std::all_of(memory.begin(), memory.end(), [](std::byte b) { return b == std::byte{0}; }));
}
