// Wait policies: the documented progression spin -> yield -> capped exponential sleep.
#include <catch2/catch.hpp>

#include <ferry/afd/wait_policy.hpp>

using namespace ferry::afd;

TEST_CASE("spin_then_park spins, yields, then backs off up to its cap", "[afd][wait]") {
    SpinThenPark<3, 2, 1, 8> w;
    for (int i = 0; i < 5; ++i) {
        CHECK(w.sleep_us == 1);
        w.pause(); // 3 spins, 2 yields
    }
    CHECK(w.polls == 5);
    std::vector<std::uint32_t> sleeps;
    for (int i = 0; i < 6; ++i) {
        sleeps.push_back(w.sleep_us);
        w.pause();
    }
    CHECK(sleeps == std::vector<std::uint32_t>{1, 2, 4, 8, 8, 8});
    CHECK(w.polls == 5);
}

TEST_CASE("spin_then_yield counts its spins, then only yields", "[afd][wait]") {
    SpinThenYield<2> w;
    for (int i = 0; i < 5; ++i) {
        w.pause();
    }
    CHECK(w.polls == 2);
    SpinThenYield<2> copy; // each wait starts from a fresh copy of the prototype
    CHECK(copy.polls == 0);
}

TEST_CASE("every policy satisfies the concept", "[afd][wait]") {
    STATIC_REQUIRE(WaitPolicy<Spin>);
    STATIC_REQUIRE(WaitPolicy<SpinThenYield<>>);
    STATIC_REQUIRE(WaitPolicy<SpinThenPark<>>);
    STATIC_REQUIRE_FALSE(WaitPolicy<int>);
}
