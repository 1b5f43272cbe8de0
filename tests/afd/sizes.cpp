// Size calculators: the worked numbers of docs/cann-contract/afd.md#size-formulas, 64-bit products,
// overflow, window splits.
#include <catch2/catch.hpp>

#include <limits>

#include <ferry/afd/sizes.hpp>

using namespace ferry::afd;

namespace {
constexpr Geometry upstream{2, 2, 2, 5};
constexpr Geometry large{64, 3, 256, 9};
constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();
} // namespace

// The upstream unit-test configuration: per_desc 48, token_info 192, ids 8, expert ids 80.
static_assert(ffn_desc_size(upstream) == 48);
static_assert(ffn_token_info_size(upstream) == 192);
static_assert(id_buffer_size(upstream) == 8);
static_assert(expert_ids_buffer_size(upstream) == 80);
static_assert(ffn_window_split(upstream, 1024) == WindowSplit{192, 512, 512});

TEST_CASE("sizes of the benchmark configuration", "[afd][sizes]") {
    CHECK(ffn_desc_size(large) == 8 + 4 * 256 * 9);
    CHECK(ffn_token_info_size(large) == std::uint64_t{64} * 3 * (8 + 4 * 256 * 9));
    CHECK(expert_ids_buffer_size(large) == std::uint64_t{4} * 64 * 256 * 9);
    CHECK(attention_token_info_size(large) == std::uint64_t{4} * 3 * 256 * 9);
    CHECK(ffn_token_data_size(large, 512) == std::uint64_t{64} * 3 * 256 * 9 * 512);
    CHECK(attention_token_data_size(large, 512) == std::uint64_t{3} * 256 * 9 * 512);
}

TEST_CASE("products are exact in 64 bits and overflow is reported", "[afd][sizes]") {
    const Geometry wide{u32_max, u32_max, 1, 1};
    CHECK(checked_mul(u32_max, u32_max) == std::uint64_t{u32_max} * u32_max);
    CHECK(id_buffer_size(wide) == std::uint64_t{4} * u32_max);
    CHECK_FALSE(ffn_token_info_size(wide).has_value()); // (2^32-1)^2 * 12 > 2^64
    CHECK_FALSE(ffn_desc_size(Geometry{1, 1, u32_max, u32_max}).has_value());
    CHECK_FALSE(checked_add(std::numeric_limits<std::uint64_t>::max(), 1).has_value());
    CHECK_FALSE(checked_mul(std::nullopt, 1).has_value());
}

TEST_CASE("align_up and window splits", "[afd][sizes]") {
    CHECK(align_up(0, 512) == 0);
    CHECK(align_up(1, 512) == 512);
    CHECK(align_up(512, 512) == 512);
    CHECK_FALSE(align_up(std::numeric_limits<std::uint64_t>::max(), 512).has_value());
    CHECK_FALSE(align_up(5, 0).has_value());
    // torch_npu's CheckParams: the window must be larger than the aligned info size.
    CHECK_FALSE(ffn_window_split(upstream, 512).has_value());
    CHECK(ffn_window_split(upstream, 513) == WindowSplit{192, 512, 1});
    CHECK(attention_window_split(upstream, 4096) == WindowSplit{80, 512, 3584});
    CHECK_FALSE(ffn_window_split(Geometry{u32_max, u32_max, 1, 1}, 4096).has_value());
}
