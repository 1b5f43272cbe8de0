// FfnToAttention: results land in the right attention slot and set exactly its flag.
#include "fixture.hpp"

#include <catch2/catch.hpp>

using namespace afd_test;
using ferry::Status;

namespace {
constexpr std::uint32_t k_result = 4;
struct SessionWindow {
    ContextImage ctx;
    std::vector<std::int32_t> flags = std::vector<std::int32_t>(2 * 10, 0);
    std::vector<std::byte> data = std::vector<std::byte>(2 * 10 * k_result);
    SessionWindow() {
        ScheduleContext s{};
        s.common = {2, 2, 2, 5, 8, 8, k_result, k_schedule_mode_attention, {}};
        s.attention.token_info_buf = address_of(flags.data());
        s.attention.token_info_buf_size = 4 * flags.size();
        s.attention.token_data_buf = address_of(data.data());
        s.attention.token_data_buf_size = data.size();
        ctx.view().store(s);
    }
};
} // namespace

TEST_CASE("send writes each row to its session's slot, then its flag", "[afd][f2a]") {
    SessionWindow w0, w1;
    const std::vector<ScheduleContextView> views{w0.ctx.view(), w1.ctx.view()};
    auto back = FfnToAttention::attach(views);
    REQUIRE(back.has_value());
    Batch batch;
    batch.rows = {{3, 1, 1, 0, 2}, {6, 0, 0, 1, 4}};
    std::vector<std::byte> results(2 * k_result);
    std::fill_n(results.begin(), k_result, std::byte{0xAA});
    std::fill_n(results.begin() + k_result, k_result, std::byte{0xBB});
    REQUIRE(back->send(batch, results) == Status::ok);
    // session 1, mb 1, token 0, k 2 -> index 1*10 + 0*5 + 2 = 12
    CHECK(w1.flags[12] == 1);
    CHECK(std::count(w1.flags.begin(), w1.flags.end(), 1) == 1);
    CHECK(w1.data[12 * k_result] == std::byte{0xAA});
    // session 0, mb 0, token 1, k 4 -> index 9
    CHECK(w0.flags[9] == 1);
    CHECK(std::count(w0.flags.begin(), w0.flags.end(), 1) == 1);
    CHECK(w0.data[9 * k_result + 3] == std::byte{0xBB});
}

TEST_CASE("send refuses rows it cannot place and writes nothing", "[afd][f2a]") {
    SessionWindow w0, w1;
    const std::vector<ScheduleContextView> views{w0.ctx.view(), w1.ctx.view()};
    auto back = FfnToAttention::attach(views);
    REQUIRE(back.has_value());
    Batch batch;
    batch.rows = {{3, 1, 1, 0, 2}, {6, 2, 0, 1, 4}}; // session 2 does not exist
    const std::vector<std::byte> results(2 * k_result, std::byte{1});
    CHECK(back->send(batch, results) == Status::invalid_param);
    batch.rows[1].session = 0;
    CHECK(back->send(batch, std::span(results).first(7)) == Status::invalid_param);
    CHECK(w0.flags == std::vector<std::int32_t>(20, 0));
    CHECK(w1.flags == std::vector<std::int32_t>(20, 0));
}

TEST_CASE("attach refuses mismatched or unusable windows", "[afd][f2a]") {
    SessionWindow w0, w1;
    SECTION("different micro batch size") {
        w1.ctx.view().set(fields::common::micro_batch_size, 3u);
    }
    SECTION("FFN mode") {
        w1.ctx.view().set(fields::common::schedule_mode, 0);
    }
    SECTION("flag table too small") {
        w0.ctx.view().set(fields::attention::token_info_buf_size, std::uint64_t{79});
    }
    SECTION("data too small") {
        w0.ctx.view().set(fields::attention::token_data_buf_size, std::uint64_t{79});
    }
    const std::vector<ScheduleContextView> views{w0.ctx.view(), w1.ctx.view()};
    CHECK(FfnToAttention::attach(views).status() == Status::invalid_param);
    CHECK(FfnToAttention::attach(std::span<const ScheduleContextView>{}).status() ==
          Status::invalid_param);
}
