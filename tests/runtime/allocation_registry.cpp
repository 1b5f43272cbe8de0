#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstddef>
#include <ferry/runtime/allocation_registry.hpp>
#include <thread>
#include <vector>

namespace {
using ferry::Allocation;
using ferry::AllocationKind;
using ferry::AllocationRegistry;

// Real storage so the addresses are genuine; the registry never dereferences them.
alignas(64) std::array<std::byte, 4096> arena{};

Allocation at(std::size_t offset, std::size_t size, std::int32_t device = 0,
              AllocationKind kind = AllocationKind::device) {
    return {reinterpret_cast<std::uintptr_t>(arena.data() + offset), size, size, device, kind};
}
} // namespace

TEST_CASE("interior, boundary and foreign lookups", "[runtime][allocation_registry]") {
    AllocationRegistry registry;
    const Allocation a = at(0, 100);
    const Allocation b = at(100, 50, 1); // adjacent: a's one-past-end is b's base
    const Allocation c = at(512, 64, 0, AllocationKind::host);
    REQUIRE(registry.insert(a) == ferry::Status::ok);
    REQUIRE(registry.insert(b) == ferry::Status::ok);
    REQUIRE(registry.insert(c) == ferry::Status::ok);
    CHECK(registry.size() == 3);

    SECTION("base and interior addresses find their allocation") {
        CHECK(registry.find(arena.data()) == a);
        CHECK(registry.find(arena.data() + 99) == a);
        CHECK(registry.find(arena.data() + 130) == b);
        CHECK(registry.find(arena.data() + 512 + 63) == c);
        CHECK(registry.find(arena.data() + 512)->kind == AllocationKind::host);
    }
    SECTION("one past the end belongs to the next allocation or to none") {
        CHECK(registry.find(arena.data() + 100) == b); // a.end() == b.base
        CHECK_FALSE(registry.find(arena.data() + 150).has_value());
        CHECK_FALSE(registry.find(arena.data() + 512 + 64).has_value());
    }
    SECTION("foreign addresses are not found") {
        int local = 0;
        CHECK_FALSE(registry.find(&local).has_value());
        CHECK_FALSE(registry.find(arena.data() + 300).has_value());
        CHECK_FALSE(registry.find(nullptr).has_value());
    }
    SECTION("range lookups require the whole range inside one allocation") {
        CHECK(registry.find(arena.data() + 10, 90) == a);
        CHECK_FALSE(registry.find(arena.data() + 10, 91).has_value()); // spills into b
        CHECK(registry.find(arena.data() + 100, 50) == b);
        CHECK_FALSE(registry.find(arena.data() + 100, 51).has_value());
        CHECK(a.contains(arena.data() + 99, 1));
        CHECK_FALSE(a.contains(arena.data() + 99, 2));
        CHECK(a.offset_of(arena.data() + 42) == 42);
    }
    SECTION("reserved bytes are summed per device and kind") {
        CHECK(registry.reserved_bytes(0, AllocationKind::device) == 100);
        CHECK(registry.reserved_bytes(1, AllocationKind::device) == 50);
        CHECK(registry.reserved_bytes(0, AllocationKind::host) == 64);
    }
}

TEST_CASE("bad inserts are rejected and change nothing", "[runtime][allocation_registry]") {
    AllocationRegistry registry;
    REQUIRE(registry.insert(at(100, 100)) == ferry::Status::ok);
    CHECK(registry.insert(at(150, 10)) == ferry::Status::rt_param_invalid); // inside
    CHECK(registry.insert(at(50, 51)) == ferry::Status::rt_param_invalid);  // overlaps the start
    CHECK(registry.insert(at(199, 10)) == ferry::Status::rt_param_invalid); // overlaps the end
    CHECK(registry.insert(at(50, 500)) == ferry::Status::rt_param_invalid); // covers it
    CHECK(registry.insert(at(300, 0)) == ferry::Status::rt_param_invalid);  // empty
    Allocation short_reserve = at(400, 10);
    short_reserve.reserved = 5;
    CHECK(registry.insert(short_reserve) == ferry::Status::rt_param_invalid);
    Allocation wrapping{~std::uintptr_t{0} - 4, 16, 16, 0, AllocationKind::device};
    CHECK(registry.insert(wrapping) == ferry::Status::rt_param_invalid);
    CHECK(registry.size() == 1);
    CHECK(registry.insert(at(50, 50)) == ferry::Status::ok);  // touches, does not overlap
    CHECK(registry.insert(at(200, 50)) == ferry::Status::ok); // touches, does not overlap
    CHECK(registry.size() == 3);
}

TEST_CASE("erase takes exact bases only; twice or foreign fails",
          "[runtime][allocation_registry]") {
    AllocationRegistry registry;
    const Allocation a = at(0, 64);
    const Allocation h = at(128, 64, ferry::k_no_device, AllocationKind::host);
    REQUIRE(registry.insert(a) == ferry::Status::ok);
    REQUIRE(registry.insert(h) == ferry::Status::ok);
    int local = 0;
    CHECK_FALSE(registry.erase(&local).has_value());
    CHECK_FALSE(registry.erase(arena.data() + 1).has_value()); // interior, not a base
    CHECK_FALSE(registry.erase(h.data(), AllocationKind::device).has_value()); // wrong kind
    CHECK(registry.size() == 2);
    CHECK(registry.erase(a.data(), AllocationKind::device) == a);
    CHECK_FALSE(registry.erase(a.data()).has_value()); // double free
    CHECK_FALSE(registry.find(a.data()).has_value());
    CHECK(registry.erase(h.data()) == h);
    CHECK(registry.size() == 0);
}

TEST_CASE("erase_if removes a device's allocations only", "[runtime][allocation_registry]") {
    AllocationRegistry registry;
    REQUIRE(registry.insert(at(0, 10, 0)) == ferry::Status::ok);
    REQUIRE(registry.insert(at(64, 10, 1)) == ferry::Status::ok);
    REQUIRE(registry.insert(at(128, 10, 1)) == ferry::Status::ok);
    const auto removed = registry.erase_if([](const Allocation& a) { return a.device == 1; });
    CHECK(removed.size() == 2);
    CHECK(registry.size() == 1);
    CHECK(registry.snapshot().front() == at(0, 10, 0));
}

TEST_CASE("concurrent inserts, lookups and erases stay consistent",
          "[runtime][allocation_registry][concurrency]") {
    AllocationRegistry registry;
    constexpr int k_threads = 4;
    constexpr std::size_t k_slot = 4096 / k_threads; // each thread owns its own slice of the arena
    std::atomic<int> wrong{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < k_threads; ++t) {
        threads.emplace_back([&, t] {
            const std::size_t first = static_cast<std::size_t>(t) * k_slot;
            for (int round = 0; round < 500; ++round) {
                const Allocation mine = at(first + 8, 32, t);
                if (registry.insert(mine) != ferry::Status::ok ||
                    registry.find(mine.data()) != mine ||
                    registry.find(arena.data() + first + 39) != mine ||
                    registry.find(arena.data() + first + 40).has_value() ||
                    registry.erase(mine.data()) != mine) {
                    wrong.fetch_add(1);
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    CHECK(wrong.load() == 0);
    CHECK(registry.size() == 0);
}

TEST_CASE("an external record is found like an allocation but removed only by its handle",
          "[runtime][allocation_registry]") {
    AllocationRegistry registry;
    const Allocation window = at(1024, 256);
    auto record = registry.insert_external(window);
    REQUIRE(record.has_value());
    CHECK(registry.find(arena.data() + 1100, 16) == window);
    CHECK(registry.insert(at(1200, 8)) == ferry::Status::rt_param_invalid); // overlaps it
    CHECK(registry.insert_external(at(1024, 8)).status() == ferry::Status::rt_param_invalid);
    CHECK_FALSE(registry.erase(window.data()).has_value()); // aclrtFree refuses it
    CHECK(registry.erase_if([](const Allocation&) { return true; }).empty()); // reset, shutdown
    CHECK(registry.reserved_bytes(0, AllocationKind::device) == 0); // not the runtime's memory
    CHECK(registry.size() == 1);

    ferry::ExternalRecord moved = std::move(record.value());
    record.value().reset(); // the moved-from handle owns nothing
    CHECK(registry.size() == 1);
    moved.reset();
    CHECK(registry.size() == 0);
}
