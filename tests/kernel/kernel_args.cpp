// KernelArgs: the append overloads, the block rules, the limits, the status rules and copy/move
// semantics (docs/cann-contract/kernel-args.md#append-rules, #block-rules).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/kernel/kernel_args.hpp>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

using ferry::ArgDesc;
using ferry::ArgKind;
using ferry::ArgsError;
using ferry::CustomDataBlock;
using ferry::GraphStatus;
using ferry::KernelArgs;

namespace {
constexpr std::uint32_t k_int32_max = std::numeric_limits<std::int32_t>::max();

std::uint64_t address_of(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

std::vector<std::byte> bytes_of(std::span<const std::byte> s) {
    return {s.begin(), s.end()};
}

// Small limits so that the cumulative and per-block limits can be reached with real appends.
struct SmallLimits : ferry::OnlineModel {
    static constexpr std::uint64_t max_block_size = 64;
    static constexpr std::uint64_t max_launch_block_bytes = 100;
    static constexpr std::size_t max_slots = 4;
};
} // namespace

TEST_CASE("each overload appends one slot and one descriptor", "[kernel][args]") {
    const int in = 0;
    int out = 0;
    KernelArgs args;
    CHECK(args.append(ferry::InputAddr{3, &in}) == GraphStatus::success);
    CHECK(args.append(ferry::OutputAddr{4, &out}) == GraphStatus::success);
    CHECK(args.append(ferry::WorkspaceAddr{5, nullptr}) == GraphStatus::success); // null is fine
    CHECK(args.append(std::uint64_t{0xDEADBEEFCAFEULL}) == GraphStatus::success);
    const std::uint32_t block = 7;
    CHECK(args.append(CustomDataBlock{&block, sizeof block}) == GraphStatus::success);
    CHECK(args.status() == GraphStatus::success);
    CHECK(args.error() == ArgsError::none);
    REQUIRE(args.slot_count() == 5);
    CHECK(args.slots()[0] == address_of(&in));
    CHECK(args.slots()[1] == address_of(&out));
    CHECK(args.slots()[2] == 0);
    CHECK(args.slots()[3] == 0xDEADBEEFCAFEULL);
    CHECK(args.slots()[4] == 0); // the block's device address is written at load
    const std::vector<ArgDesc> descs(args.descs().begin(), args.descs().end());
    CHECK(descs == std::vector<ArgDesc>{{ArgKind::input, 3},
                                        {ArgKind::output, 4},
                                        {ArgKind::workspace, 5},
                                        {ArgKind::custom_value, 0},
                                        {ArgKind::data_block, 0}});
    CHECK(args.block_count() == 1);
    CHECK(args.check_launchable() == ArgsError::none);
}

TEST_CASE("address indices up to INT32_MAX pass; above fails and appends nothing",
          "[kernel][args]") {
    KernelArgs args;
    CHECK(args.append(ferry::InputAddr{k_int32_max, nullptr}) == GraphStatus::success);
    CHECK(args.append(ferry::OutputAddr{k_int32_max + 1, nullptr}) == GraphStatus::failed);
    CHECK(args.slot_count() == 1);
    CHECK(args.error() == ArgsError::index_out_of_range);
    KernelArgs ws;
    CHECK(ws.append(ferry::WorkspaceAddr{0xFFFFFFFFu, nullptr}) == GraphStatus::failed);
    CHECK(ws.slot_count() == 0);
}

TEST_CASE("a block is deep-copied: the caller may overwrite or free its buffer at once",
          "[kernel][args][block]") {
    auto buffer = std::make_unique<std::vector<std::byte>>(1000);
    for (std::size_t i = 0; i < buffer->size(); ++i) {
        (*buffer)[i] = static_cast<std::byte>(i * 7);
    }
    const std::vector<std::byte> original = *buffer;
    KernelArgs args;
    REQUIRE(args.append(CustomDataBlock{buffer->data(), buffer->size()}) == GraphStatus::success);
    std::fill(buffer->begin(), buffer->end(), std::byte{0xEE});
    buffer.reset(); // freed
    CHECK(bytes_of(args.block(0)) == original);
}

TEST_CASE("invalid blocks fail with GRAPH_FAILED and append nothing", "[kernel][args][block]") {
    const std::uint64_t data = 42;
    CustomDataBlock reserved{&data, sizeof data};
    reserved.reserved[7] = 1;
    const char byte = 0;
    const std::pair<CustomDataBlock, ArgsError> cases[] = {
        {{&data, 0}, ArgsError::block_size_zero},
        {{nullptr, 8}, ArgsError::block_data_null},
        {reserved, ArgsError::block_reserved_nonzero},
        // Rejected on its size before a byte is read, so the 1-byte buffer is never overrun.
        {{&byte, std::size_t{0xFFFFFFFFu} + 1}, ArgsError::block_too_large},
    };
    for (const auto& [block, why] : cases) {
        KernelArgs args;
        REQUIRE(args.append(std::uint64_t{1}) == GraphStatus::success);
        INFO("expected " << ferry::describe(why));
        CHECK(args.append(block) == GraphStatus::failed);
        CHECK(args.slot_count() == 1);
        CHECK(args.block_count() == 0);
        CHECK(args.error() == why);
        CHECK(args.status() == GraphStatus::failed);
    }
}

TEST_CASE("failure is sticky and a scalar append does not clear it", "[kernel][args]") {
    KernelArgs args;
    REQUIRE(args.append(ferry::InputAddr{0, nullptr}) == GraphStatus::success);
    REQUIRE(args.append(CustomDataBlock{nullptr, 4}) == GraphStatus::failed);
    // CANN's quirk resets the status on a scalar append; ferry keeps the failure.
    CHECK(args.append(std::uint64_t{5}) == GraphStatus::failed);
    CHECK(args.append(ferry::OutputAddr{0, nullptr}) == GraphStatus::failed);
    const std::uint32_t ok = 1;
    CHECK(args.append(CustomDataBlock{&ok, sizeof ok}) == GraphStatus::failed);
    CHECK(args.status() == GraphStatus::failed);
    CHECK(args.error() == ArgsError::block_data_null); // the first failure is kept
    CHECK(args.slot_count() == 1);
    CHECK(args.check_launchable() == ArgsError::block_data_null);
}

TEST_CASE("the variadic constructor appends in order and stops at the first failure",
          "[kernel][args]") {
    const std::uint32_t tiling = 9;
    const KernelArgs good(ferry::InputAddr{0, &tiling}, CustomDataBlock{&tiling, sizeof tiling},
                          std::uint64_t{4}, 5, ferry::OutputAddr{1, nullptr});
    CHECK(good.status() == GraphStatus::success);
    CHECK(good.slot_count() == 5);
    CHECK(good.slots()[3] == 5);

    const KernelArgs bad(ferry::InputAddr{0, nullptr}, ferry::InputAddr{k_int32_max + 1, nullptr},
                         std::uint64_t{4}, CustomDataBlock{&tiling, sizeof tiling});
    CHECK(bad.status() == GraphStatus::failed);
    CHECK(bad.error() == ArgsError::index_out_of_range);
    CHECK(bad.slot_count() == 1);
    CHECK(bad.block_count() == 0);
    STATIC_REQUIRE_FALSE(std::is_convertible_v<ferry::InputAddr, KernelArgs>); // explicit
}

TEST_CASE("8192 slots pass, the 8193rd fails", "[kernel][args][limits]") {
    KernelArgs args;
    for (std::uint64_t i = 0; i < ferry::k_max_launch_slots - 1; ++i) {
        REQUIRE(args.append(i) == GraphStatus::success);
    }
    const std::uint16_t block = 3;
    CHECK(args.append(CustomDataBlock{&block, sizeof block}) == GraphStatus::success); // 8192nd
    CHECK(args.slot_count() == 8192);
    KernelArgs as_value = args;
    KernelArgs as_block = args;
    KernelArgs as_address = args;
    CHECK(as_value.append(std::uint64_t{1}) == GraphStatus::failed);
    CHECK(as_block.append(CustomDataBlock{&block, sizeof block}) == GraphStatus::failed);
    CHECK(as_address.append(ferry::InputAddr{0, nullptr}) == GraphStatus::failed);
    for (const KernelArgs* a : {&as_value, &as_block, &as_address}) {
        CHECK(a->error() == ArgsError::too_many_slots);
        CHECK(a->slot_count() == 8192);
    }
    CHECK(as_block.block_count() == 1);
}

TEST_CASE("per-block and cumulative limits, end to end with small traits",
          "[kernel][args][limits]") {
    using Args = ferry::BasicKernelArgs<SmallLimits>;
    const std::vector<std::byte> bytes(100, std::byte{1});
    SECTION("a block of exactly the limit passes, one byte more fails") {
        Args args;
        CHECK(args.append(CustomDataBlock{bytes.data(), 65}) == GraphStatus::failed);
        CHECK(args.error() == ArgsError::block_too_large);
        Args exact;
        CHECK(exact.append(CustomDataBlock{bytes.data(), 64}) == GraphStatus::success);
    }
    SECTION("the blocks of one launch together") {
        Args args;
        CHECK(args.append(CustomDataBlock{bytes.data(), 64}) == GraphStatus::success);
        CHECK(args.append(CustomDataBlock{bytes.data(), 36}) == GraphStatus::success); // = 100
        Args over = args;
        CHECK(over.append(CustomDataBlock{bytes.data(), 1}) == GraphStatus::failed);
        CHECK(over.error() == ArgsError::launch_blocks_too_large);
        CHECK(over.block_count() == 2);
        CHECK(args.append(std::uint64_t{100}) == GraphStatus::success); // values do not count
    }
    SECTION("the slot limit comes from the traits") {
        Args args(1, 2, 3, 4);
        CHECK(args.status() == GraphStatus::success);
        CHECK(args.append(std::uint64_t{5}) == GraphStatus::failed);
        CHECK(args.error() == ArgsError::too_many_slots);
    }
}

namespace {
template <typename Args>
concept CanAppendBlock = requires(Args a, const CustomDataBlock& b) {
    a.append(b);
};
} // namespace

TEST_CASE("offline-model traits have no block append (a compile-time error)", "[kernel][args]") {
    STATIC_REQUIRE(CanAppendBlock<KernelArgs>);
    STATIC_REQUIRE_FALSE(CanAppendBlock<ferry::BasicKernelArgs<ferry::OmcModel>>);
    STATIC_REQUIRE_FALSE(CanAppendBlock<ferry::BasicKernelArgs<ferry::Om2Model>>);
    STATIC_REQUIRE_FALSE(
        std::is_constructible_v<ferry::BasicKernelArgs<ferry::OmcModel>, CustomDataBlock>);
    ferry::BasicKernelArgs<ferry::OmcModel> omc(ferry::InputAddr{0, nullptr}, 7);
    CHECK(omc.status() == GraphStatus::success);
    CHECK(omc.slot_count() == 2);
}

TEST_CASE("copies are deep and independent", "[kernel][args][copy]") {
    const std::uint32_t value = 0x11223344;
    KernelArgs a(ferry::InputAddr{0, nullptr}, CustomDataBlock{&value, sizeof value});
    KernelArgs b = a;
    REQUIRE(b.append(std::uint64_t{9}) == GraphStatus::success);
    CHECK(a.slot_count() == 2);
    CHECK(b.slot_count() == 3);
    CHECK(b.block(0).data() != a.block(0).data());
    CHECK(bytes_of(b.block(0)) == bytes_of(a.block(0)));
    KernelArgs c;
    c = b;
    CHECK(c.slot_count() == 3);
    const KernelArgs& alias = c;
    c = alias; // self-assignment: a no-op
    CHECK(c.slot_count() == 3);
    CHECK(c.status() == GraphStatus::success);
    // A failed status is copied too.
    KernelArgs failed_args;
    REQUIRE(failed_args.append(CustomDataBlock{nullptr, 1}) == GraphStatus::failed);
    const KernelArgs failed_copy = failed_args;
    CHECK(failed_copy.status() == GraphStatus::failed);
    CHECK(failed_copy.error() == ArgsError::block_data_null);
}

TEST_CASE("moved-from args fail everything; copies of them start failed", "[kernel][args][copy]") {
    KernelArgs a(ferry::InputAddr{0, nullptr});
    KernelArgs b = std::move(a);
    CHECK(b.slot_count() == 1);
    CHECK(b.status() == GraphStatus::success);
    // NOLINTBEGIN(bugprone-use-after-move): the moved-from state is what is tested
    CHECK_FALSE(a.valid());
    CHECK(a.append(std::uint64_t{1}) == GraphStatus::failed);
    CHECK(a.append(ferry::InputAddr{0, nullptr}) == GraphStatus::failed);
    CHECK(a.status() == GraphStatus::failed);
    CHECK(a.error() == ArgsError::moved_from);
    CHECK(a.slot_count() == 0);
    CHECK(a.check_launchable() == ArgsError::moved_from);

    KernelArgs from_moved = a;
    CHECK(from_moved.valid());
    CHECK(from_moved.status() == GraphStatus::failed);
    CHECK(from_moved.error() == ArgsError::moved_from);
    CHECK(from_moved.append(std::uint64_t{1}) == GraphStatus::failed);
    KernelArgs assigned;
    assigned = a;
    CHECK(assigned.status() == GraphStatus::failed);

    a = KernelArgs(std::uint64_t{3}); // a moved-from object can be assigned again
    CHECK(a.status() == GraphStatus::success);
    CHECK(a.slot_count() == 1);
    KernelArgs& self = a;
    a = std::move(self); // self-move: a no-op
    CHECK(a.slot_count() == 1);
    // NOLINTEND(bugprone-use-after-move)
}

TEST_CASE("release hands the content over once", "[kernel][args]") {
    const std::uint8_t block[3] = {1, 2, 3};
    KernelArgs empty;
    CHECK(empty.check_launchable() == ArgsError::empty_args);
    KernelArgs args(ferry::InputAddr{2, nullptr}, CustomDataBlock{block, 3});
    const ferry::ArgsContent content = std::move(args).release();
    CHECK(content.slots.size() == 2);
    CHECK(content.blocks.size() == 1);
    CHECK(content.block_total == 3);
    CHECK(content.block_bytes == std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}});
    CHECK_FALSE(args.valid()); // NOLINT(bugprone-use-after-move)
}
