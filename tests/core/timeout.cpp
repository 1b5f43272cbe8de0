#include <ferry/core/timeout.hpp>

#include <catch2/catch.hpp>

#include <chrono>

using namespace std::chrono_literals;
using ferry::Timeout;

TEST_CASE("Timeout encodes forever, no_wait and durations", "[core][timeout]") {
    CHECK(ferry::forever.is_forever());
    CHECK_FALSE(ferry::forever.is_no_wait());
    CHECK(ferry::no_wait.is_no_wait());
    const Timeout t = 15ms;
    CHECK_FALSE(t.is_forever());
    CHECK(t.duration() == 15ms);
    const Timeout negative = -3s;
    CHECK(negative.is_no_wait());
    const Timeout fractional = std::chrono::duration<double, std::milli>(0.5);
    CHECK(fractional.duration() == 500us);
}

TEST_CASE("Timeout::from_milliseconds follows the C API's encoding", "[core][timeout]") {
    CHECK(Timeout::from_milliseconds(-1) == ferry::forever);
    CHECK(Timeout::from_milliseconds(0) == ferry::no_wait);
    CHECK(Timeout::from_milliseconds(1000)->duration() == 1s);
    CHECK_FALSE(Timeout::from_milliseconds(-2).has_value());
}

TEST_CASE("deadlines never overflow", "[core][timeout]") {
    const auto now = Timeout::clock::now();
    CHECK(ferry::forever.deadline_from(now) == Timeout::clock::time_point::max());
    CHECK(ferry::no_wait.deadline_from(now) == now);
    CHECK(Timeout(10ms).deadline_from(now) == now + 10ms);
    const Timeout huge = std::chrono::hours(24 * 365 * 1000);
    CHECK(huge.deadline_from(Timeout::clock::time_point::max() - 1h) ==
          Timeout::clock::time_point::max());
}
