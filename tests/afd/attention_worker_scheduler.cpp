// AttentionWorkerScheduler: the upstream kernel unit tests
// (docs/cann-contract/afd.md#attentionworkerscheduler-unit-tests) with the full expected state, and
// every validation rule of docs/cann-contract/afd.md#attentionworkerscheduler.
#include <catch2/catch.hpp>

#include <chrono>
#include <limits>
#include <string>

#include "fixture.hpp"

using namespace afd_test;

namespace {
// M = 2, BS = 6, K = 2 (the upstream fixture): 12 flags per micro batch.
struct AttentionFixture {
    ContextImage ctx;
    std::vector<std::int32_t> flags = std::vector<std::int32_t>(24, 0);
    std::vector<std::byte> data = std::vector<std::byte>(64);

    AttentionFixture() {
        ScheduleContext s{};
        s.common = {0, 2, 6, 2, 0, 0, 0, k_schedule_mode_attention, {}};
        s.control.run_flag = 1;
        s.attention.token_info_buf = address_of(flags.data());
        s.attention.token_info_buf_size = 4 * flags.size();
        s.attention.token_data_buf = address_of(data.data());
        s.attention.token_data_buf_size = data.size();
        s.attention.micro_batch_id = 1;
        ctx.view().store(s);
        std::fill(flags.begin(), flags.begin() + 12, 1); // every mb 0 flag is 1
    }
    ScheduleOutcome run(const ferry::Timeout& t = std::chrono::milliseconds(0)) {
        return AttentionWorkerScheduler<>{}.schedule_once(ctx.bytes.data(), t);
    }
};
} // namespace

TEST_CASE("upstream INPUT_ALL_FLAG_SUCC", "[afd][attention][upstream]") {
    AttentionFixture fx;
    const ScheduleOutcome o = fx.run();
    REQUIRE(o.ok());
    CHECK(o.exit == ScheduleExit::served);
    CHECK(fx.ctx.view().get(fields::attention::micro_batch_id) == 0); // in the input context
    CHECK(std::all_of(fx.flags.begin(), fx.flags.begin() + 12, [](std::int32_t f) { return f == 0; }));
    CHECK(std::all_of(fx.flags.begin() + 12, fx.flags.end(), [](std::int32_t f) { return f == 0; }));

    SECTION("the next call waits on micro batch 1") {
        std::fill(fx.flags.begin() + 12, fx.flags.end(), 1);
        REQUIRE(fx.run().exit == ScheduleExit::served);
        CHECK(fx.ctx.view().get(fields::attention::micro_batch_id) == 1);
        CHECK(fx.flags == std::vector<std::int32_t>(24, 0));
    }
}

TEST_CASE("upstream INPUT_SCHEDULE_MODE_INVALID, INPUT_DIM_INVALID", "[afd][attention][upstream]") {
    AttentionFixture fx;
    const auto flags = fx.flags;
    const ContextBytes image = fx.ctx.bytes;
    fx.ctx.view().set(fields::common::schedule_mode, 2);
    CHECK(fx.run().status == KernelStatus::param_invalid);
    fx.ctx.view().set(fields::common::schedule_mode, 1);
    CHECK(AttentionWorkerScheduler<>{}.schedule_once(ContextTensor{fx.ctx.bytes.data(), 2048, 2}).status ==
          KernelStatus::param_invalid);
    CHECK(fx.flags == flags);
    CHECK(fx.ctx.bytes == image);
}

TEST_CASE("upstream INPUT_RUN_FLAG_PROCESS_TERMINATE", "[afd][attention][upstream]") {
    AttentionFixture fx;
    fx.ctx.view().set_run_flag(0);
    const auto flags = fx.flags;
    const ScheduleOutcome o = fx.run(ferry::forever);
    CHECK(o.ok());
    CHECK(o.exit == ScheduleExit::stopped);
    CHECK(fx.flags == flags);
    CHECK(fx.ctx.view().get(fields::attention::micro_batch_id) == 1);
}

TEST_CASE("attention validation rules, each rejected with nothing changed", "[afd][attention]") {
    namespace c = fields::common;
    namespace a = fields::attention;
    const std::uint32_t big = std::numeric_limits<std::uint32_t>::max();
    struct Case {
        const char* field;
        KernelStatus status;
        std::function<void(ScheduleContextView)> apply;
    };
    const std::vector<Case> cases = {
        {"common.micro_batch_num", KernelStatus::param_invalid, [](auto v) { v.set(c::micro_batch_num, 0u); }},
        {"common.micro_batch_size", KernelStatus::param_invalid, [](auto v) { v.set(c::micro_batch_size, 0u); }},
        {"common.selected_expert_num", KernelStatus::param_invalid,
         [](auto v) { v.set(c::selected_expert_num, 0u); }},
        {"attention.token_info_buf", KernelStatus::param_invalid,
         [](auto v) { v.set(a::token_info_buf, std::uint64_t{0}); }},
        {"attention.token_data_buf", KernelStatus::param_invalid,
         [](auto v) { v.set(a::token_data_buf, std::uint64_t{0}); }},
        {"common.micro_batch_num", KernelStatus::inner_error,
         [big](auto v) {
             v.set(c::micro_batch_num, big);
             v.set(c::micro_batch_size, big);
             v.set(c::selected_expert_num, big);
         }},
        {"attention.token_info_buf_size", KernelStatus::param_invalid,
         [](auto v) { v.set(a::token_info_buf_size, std::uint64_t{95}); }},
        {"attention.micro_batch_id", KernelStatus::param_invalid, [](auto v) { v.set(a::micro_batch_id, 2u); }},
    };
    for (const Case& k : cases) {
        INFO(k.field);
        AttentionFixture fx;
        k.apply(fx.ctx.view());
        const auto flags = fx.flags;
        const ContextBytes image = fx.ctx.bytes;
        const ScheduleOutcome o = fx.run();
        CHECK(o.status == k.status);
        CHECK(std::string(o.field) == k.field);
        CHECK(fx.flags == flags);
        CHECK(fx.ctx.bytes == image);
    }
}

TEST_CASE("session_num is not checked on the attention side", "[afd][attention]") {
    AttentionFixture fx; // session_num is 0 in the fixture
    CHECK(fx.run().exit == ScheduleExit::served);
}

TEST_CASE("attention waits for every flag to be exactly 1", "[afd][attention]") {
    AttentionFixture fx;
    fx.flags[11] = 2;
    const auto flags = fx.flags;
    const ScheduleOutcome o = fx.run(std::chrono::milliseconds(2));
    CHECK(o.ok());
    CHECK(o.exit == ScheduleExit::timed_out);
    CHECK(fx.flags == flags);
    CHECK(fx.ctx.view().get(fields::attention::micro_batch_id) == 1);
}
