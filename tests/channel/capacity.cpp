// Capacity bounds (docs/cann-contract/tdt.md#channel-capacity): compile time for a constant
// capacity, run time for ferry::dynamic_capacity; a channel of capacity N holds exactly N items.
#include <catch2/catch.hpp>
#include <cstddef>
#include <ferry/channel/channel.hpp>
#include <string>

namespace {
// True when Channel<int, N, P> is a valid type: the static check seen through a concept, so the
// test can assert that out-of-range capacities are rejected without failing the build.
template <std::size_t N, typename P = ferry::spsc>
concept channel_accepts = requires {
    typename ferry::Channel<int, N, P>;
};

struct not_a_policy {};
struct throwing_move {
    throwing_move() = default;
    throwing_move(throwing_move&&) noexcept(false) {}
};
} // namespace

static_assert(!channel_accepts<0>);
static_assert(!channel_accepts<1>);
static_assert(channel_accepts<2>);
static_assert(channel_accepts<64>);
static_assert(channel_accepts<8192>);
static_assert(!channel_accepts<8193>);
static_assert(channel_accepts<ferry::dynamic_capacity>);
static_assert(channel_accepts<2, ferry::mpmc>);
static_assert(!channel_accepts<8193, ferry::mpmc>);
static_assert(!channel_accepts<64, not_a_policy>);
static_assert(ferry::Sendable<std::string> && !ferry::Sendable<throwing_move> &&
              !ferry::Sendable<const int>);

TEST_CASE("capacity predicate matches the documented range [2, 8192]") {
    CHECK_FALSE(ferry::is_valid_channel_capacity(0));
    CHECK_FALSE(ferry::is_valid_channel_capacity(1));
    CHECK(ferry::is_valid_channel_capacity(2));
    CHECK(ferry::is_valid_channel_capacity(8192));
    CHECK_FALSE(ferry::is_valid_channel_capacity(8193));
    CHECK_FALSE(ferry::is_valid_channel_capacity(ferry::dynamic_capacity));
}

TEMPLATE_TEST_CASE("dynamic capacity is checked at run time", "", ferry::spsc, ferry::mpmc) {
    using channel = ferry::Channel<int, ferry::dynamic_capacity, TestType>;
    for (std::size_t bad :
         {std::size_t{0}, std::size_t{1}, std::size_t{8193}, std::size_t{1} << 40}) {
        auto made = channel::create(bad);
        CHECK(made.status() == ferry::Status::invalid_param);
        CHECK_THROWS_AS(channel(bad), std::invalid_argument);
    }
    for (std::size_t good :
         {std::size_t{2}, std::size_t{3}, std::size_t{1000}, std::size_t{8192}}) {
        auto made = channel::create(good);
        REQUIRE(made.has_value());
        CHECK((*made)->capacity() == good);
    }
}

namespace {
template <typename Channel>
void check_holds_exactly(Channel& ch) {
    const std::size_t n = ch.capacity();
    for (std::size_t i = 0; i < n; ++i) {
        REQUIRE(ch.try_send(static_cast<int>(i)) == ferry::Status::ok);
        CHECK(ch.size() == i + 1);
    }
    CHECK(ch.try_send(-1) == ferry::Status::full);
    CHECK(ch.size() == n);
    REQUIRE(ch.try_receive().value() == 0);
    CHECK(ch.try_send(-2) == ferry::Status::ok); // one freed slot takes exactly one more
    CHECK(ch.try_send(-3) == ferry::Status::full);
}
} // namespace

TEMPLATE_TEST_CASE("a channel of capacity N holds exactly N items", "", ferry::spsc, ferry::mpmc) {
    SECTION("N = 2") {
        ferry::Channel<int, 2, TestType> ch;
        CHECK(ch.capacity() == 2);
        check_holds_exactly(ch);
    }
    SECTION("N = 64") {
        ferry::Channel<int, 64, TestType> ch;
        check_holds_exactly(ch);
    }
    SECTION("N = 8192") {
        ferry::Channel<int, 8192, TestType> ch;
        check_holds_exactly(ch);
    }
    SECTION("dynamic N = 3 (not a power of two)") {
        ferry::Channel<int, ferry::dynamic_capacity, TestType> ch(3);
        check_holds_exactly(ch);
    }
}
