// CustomDataBlock: its fixed layout and per-block rules
// (docs/cann-contract/kernel-args.md#block-rules), checked without any copy.
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/kernel/custom_data_block.hpp>
#include <limits>

using ferry::ArgsError;
using ferry::CustomDataBlock;

TEST_CASE("CustomDataBlock has CANN's three fields and a fixed size", "[kernel][block]") {
    STATIC_REQUIRE(sizeof(CustomDataBlock) == 24);
    STATIC_REQUIRE(sizeof(CustomDataBlock::reserved) == 8);
    const CustomDataBlock defaulted{};
    CHECK(defaulted.data == nullptr);
    CHECK(defaulted.size == 0);
    for (const std::uint8_t b : defaulted.reserved) {
        CHECK(b == 0);
    }
    const int value = 1;
    const CustomDataBlock two_fields{&value, sizeof value}; // CANN's spelling
    for (const std::uint8_t b : two_fields.reserved) {
        CHECK(b == 0);
    }
}

TEST_CASE("validate: size, data and reserved rules, in order", "[kernel][block]") {
    const char bytes[4] = {1, 2, 3, 4};
    CHECK(ferry::validate({bytes, 4}) == ArgsError::none);
    CHECK(ferry::validate({bytes, 1}) == ArgsError::none);
    CHECK(ferry::validate({bytes, 0}) == ArgsError::block_size_zero);
    CHECK(ferry::validate({nullptr, 4}) == ArgsError::block_data_null);
    CHECK(ferry::validate({nullptr, 0}) == ArgsError::block_size_zero); // size is checked first
    for (std::size_t i = 0; i < 8; ++i) {
        CustomDataBlock block{bytes, 4};
        block.reserved[i] = 1;
        INFO("reserved byte " << i);
        CHECK(ferry::validate(block) == ArgsError::block_reserved_nonzero);
    }
}

TEST_CASE("validate: a block of exactly UINT32_MAX bytes passes, one more fails",
          "[kernel][block]") {
    // Only the size is examined, so no 4 GiB buffer is needed.
    const char byte = 0;
    constexpr std::uint64_t limit = std::numeric_limits<std::uint32_t>::max();
    STATIC_REQUIRE(ferry::k_max_block_size == limit);
    CHECK(ferry::validate({&byte, limit}) == ArgsError::none);
    CHECK(ferry::validate({&byte, limit + 1}) == ArgsError::block_too_large);
    CHECK(ferry::validate({&byte, std::numeric_limits<std::size_t>::max()}) ==
          ArgsError::block_too_large);
    CHECK(ferry::validate({&byte, 65}, 64) == ArgsError::block_too_large);
    CHECK(ferry::validate({&byte, 64}, 64) == ArgsError::none);
}

TEST_CASE("fits_launch: the cumulative per-launch limit", "[kernel][block]") {
    constexpr std::uint64_t limit = std::numeric_limits<std::uint32_t>::max();
    STATIC_REQUIRE(ferry::k_max_launch_block_bytes == limit);
    CHECK(ferry::fits_launch(0, limit));
    CHECK_FALSE(ferry::fits_launch(1, limit));
    CHECK(ferry::fits_launch(limit - 10, 10));
    CHECK_FALSE(ferry::fits_launch(limit - 10, 11));
    CHECK(ferry::fits_launch(limit, 0));
    CHECK_FALSE(ferry::fits_launch(limit + 1, 0));
    CHECK_FALSE(ferry::fits_launch(limit, limit)); // no wrap-around
}

TEST_CASE("every ArgsError has a description", "[kernel][block]") {
    for (int e = 0; e <= static_cast<int>(ArgsError::too_many_workspaces); ++e) {
        INFO("error " << e);
        CHECK(std::string(ferry::describe(static_cast<ArgsError>(e))) != "unknown error");
    }
}
