// FFN scheduler validation: every rule of docs/cann-contract/afd.md#validation-order (and
// docs/cann-contract/afd.md#derived-cases), in CANN's order, each failing alone and each winning
// over every later rule; a failed call changes nothing.
#include <catch2/catch.hpp>

#include <functional>
#include <limits>
#include <string>

#include "fixture.hpp"

using namespace afd_test;

namespace {
struct Call {
    ContextTensor tensor;
    std::optional<std::int32_t> sync_group_size = 2;
    std::optional<std::int32_t> execute_mode = 0;
};
struct Rule {
    const char* what;
    KernelStatus status;
    const char* field;
    std::function<void(FfnFixture&, Call&)> apply;
};

template <typename T, std::size_t O>
std::function<void(FfnFixture&, Call&)> set_field(Field<T, O> f, T value) {
    return [f, value](FfnFixture& fx, Call&) { fx.view().set(f, value); };
}

constexpr std::uint32_t k_u32_max = std::numeric_limits<std::uint32_t>::max();
const KernelStatus invalid = KernelStatus::param_invalid;
const KernelStatus inner = KernelStatus::inner_error;

// In CANN's order. The fixture is k_upstream: A = M = BS = 2, K = 5.
std::vector<Rule> rules_in_order() {
    namespace c = fields::common;
    namespace f = fields::ffn;
    return {
        {"null context", invalid, "context", [](FfnFixture&, Call& call) { call.tensor.data = nullptr; }},
        {"rank 2", invalid, "context", [](FfnFixture&, Call& call) { call.tensor.rank = 2; }},
        {"1023 bytes", invalid, "context", [](FfnFixture&, Call& call) { call.tensor.size_bytes = 1023; }},
        {"misaligned (ferry)", invalid, "context", [](FfnFixture&, Call& call) {
             if (call.tensor.data != nullptr) {
                 call.tensor.data += 4;
             }
         }},
        {"schedule_mode 1", invalid, "common.schedule_mode", set_field(c::schedule_mode, 1)},
        {"session_num 0", invalid, "common.session_num", set_field(c::session_num, 0u)},
        {"micro_batch_num 0", invalid, "common.micro_batch_num", set_field(c::micro_batch_num, 0u)},
        {"micro_batch_size 0", invalid, "common.micro_batch_size", set_field(c::micro_batch_size, 0u)},
        {"selected_expert_num 0", invalid, "common.selected_expert_num", set_field(c::selected_expert_num, 0u)},
        {"null token_info_buf", invalid, "ffn.token_info_buf", set_field(f::token_info_buf, std::uint64_t{0})},
        {"null token_data_buf", invalid, "ffn.token_data_buf", set_field(f::token_data_buf, std::uint64_t{0})},
        {"null layer_ids_buf", invalid, "ffn.layer_ids_buf", set_field(f::layer_ids_buf, std::uint64_t{0})},
        {"null session_ids_buf", invalid, "ffn.session_ids_buf", set_field(f::session_ids_buf, std::uint64_t{0})},
        {"null micro_batch_ids_buf", invalid, "ffn.micro_batch_ids_buf",
         set_field(f::micro_batch_ids_buf, std::uint64_t{0})},
        {"null expert_ids_buf", invalid, "ffn.expert_ids_buf", set_field(f::expert_ids_buf, std::uint64_t{0})},
        {"4*BS*K overflows", inner, "common.micro_batch_size",
         [](FfnFixture& fx, Call&) {
             fx.view().set(fields::common::micro_batch_size, k_u32_max);
             fx.view().set(fields::common::selected_expert_num, k_u32_max);
         }},
        {"A*M*per_desc overflows", inner, "common.session_num",
         [](FfnFixture& fx, Call&) {
             fx.view().set(fields::common::session_num, k_u32_max);
             fx.view().set(fields::common::micro_batch_num, k_u32_max);
         }},
        {"token_info_buf_size = A*M*per_desc - 1", invalid, "ffn.token_info_buf_size",
         set_field(f::token_info_buf_size, std::uint64_t{191})},
        {"layer_ids_buf_size 7", invalid, "ffn.layer_ids_buf_size", set_field(f::layer_ids_buf_size, std::uint64_t{7})},
        {"session_ids_buf_size 7", invalid, "ffn.session_ids_buf_size",
         set_field(f::session_ids_buf_size, std::uint64_t{7})},
        {"micro_batch_ids_buf_size 7", invalid, "ffn.micro_batch_ids_buf_size",
         set_field(f::micro_batch_ids_buf_size, std::uint64_t{7})},
        {"expert_ids_buf_size = 4*A*BS*K - 1", invalid, "ffn.expert_ids_buf_size",
         set_field(f::expert_ids_buf_size, std::uint64_t{79})},
        {"polling_index = M", invalid, "ffn.polling_index",
         [](FfnFixture& fx, Call&) { fx.view().set_polling_index(2); }},
        {"sync_group_size 0", invalid, "sync_group_size", [](FfnFixture&, Call& call) { call.sync_group_size = 0; }},
        {"execute_mode 1", invalid, "execute_mode", [](FfnFixture&, Call& call) { call.execute_mode = 1; }},
    };
}

ScheduleOutcome run(FfnFixture& fx, const std::vector<Rule>& rules, std::size_t first) {
    Call call{ContextTensor{fx.context(), k_context_size, 1}};
    // Last rule first, so that rules[first] is applied last and wins where two edit one field.
    for (std::size_t i = rules.size(); i-- > first;) {
        rules[i].apply(fx, call);
    }
    return GroupSyncScheduler<>{}.schedule_once(call.tensor, call.sync_group_size, call.execute_mode,
                                                std::chrono::milliseconds(0));
}
} // namespace

TEST_CASE("each rule fails alone, and before every later rule", "[afd][validation]") {
    const std::vector<Rule> rules = rules_in_order();
    for (std::size_t i = 0; i < rules.size(); ++i) {
        for (const bool with_later : {false, true}) {
            INFO(rules[i].what << (with_later ? " + every later rule" : " alone"));
            FfnFixture fx(k_upstream);
            fx.view().set(fields::ffn::out_num, 3);
            std::vector<Rule> applied{rules[i]};
            if (with_later) {
                applied.assign(rules.begin() + static_cast<std::ptrdiff_t>(i), rules.end());
            }
            const auto before = fx.snapshot();
            const ScheduleOutcome o = run(fx, applied, 0);
            CHECK(o.status == rules[i].status);
            CHECK(o.exit == ScheduleExit::rejected);
            CHECK(std::string(o.field) == rules[i].field);
            // The rules themselves edit the context image; the buffers and out_num must be as before.
            CHECK(fx.token_info == before.token_info);
            CHECK(fx.layer_ids == before.layer_ids);
            CHECK(fx.expert_ids == before.expert_ids);
            CHECK(fx.out_num() == 3);
        }
    }
}

TEST_CASE("the valid fixture passes every check", "[afd][validation]") {
    FfnFixture fx(k_upstream);
    const ScheduleOutcome o = run(fx, {}, 0);
    CHECK(o.ok());
    CHECK(o.exit == ScheduleExit::served);
}

TEST_CASE("sync_group_size must lie in [1, session_num] and divide it", "[afd][validation]") {
    FfnFixture fx(Geometry{6, 2, 1, 1});
    const auto before = fx.snapshot();
    for (const std::int32_t sgs : {0, -1, 4, 5, 7, std::numeric_limits<std::int32_t>::min()}) {
        INFO("sync_group_size " << sgs);
        const ScheduleOutcome o = GroupSyncScheduler<>{}.schedule_once(fx.context(), sgs, 0);
        CHECK(o.status == KernelStatus::param_invalid);
        CHECK(std::string(o.field) == "sync_group_size");
        CHECK(fx.snapshot() == before);
    }
    for (const std::int32_t sgs : {1, 2, 3, 6}) {
        FfnFixture ok(Geometry{6, 2, 1, 1});
        CHECK(GroupSyncScheduler<>{}.schedule_once(ok.context(), sgs, 0).out_num == 6);
    }
}

TEST_CASE("polling_index >= M is rejected in grouped mode too", "[afd][validation]") {
    FfnFixture fx(k_upstream);
    fx.view().set_polling_index(5);
    const ScheduleOutcome o = GroupSyncScheduler<>{}.schedule_once(fx.context(), 1, 0);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "ffn.polling_index");
}

TEST_CASE("A*M wrapping in 32 bits: CANN would accept a tiny buffer, ferry refuses", "[afd][validation]") {
    // A = M = 65536, BS = K = 1: per_desc = 12. CANN forms A*M in uint32
    // (docs/cann-contract/afd.md#known-quirks) — it wraps to 0, so its required token_info size is
    // 0 and a 12-byte buffer passes, then gets overrun.
    const std::uint32_t a = 65536;
    const std::uint32_t m = 65536;
    const std::uint32_t cann_sessions_times_batches = a * m; // the kernel's uint32 product
    REQUIRE(cann_sessions_times_batches == 0);
    REQUIRE(std::uint64_t{cann_sessions_times_batches} * 12 == 0);
    // ferry: 2^32 descriptors of 12 bytes = 48 GiB, computed exactly.
    CHECK(ffn_token_info_size(Geometry{a, m, 1, 1}) == std::uint64_t{12} << 32);

    FfnFixture fx(Geometry{1, 1, 1, 1});
    fx.view().set(fields::common::session_num, a);
    fx.view().set(fields::common::micro_batch_num, m);
    fx.view().set(fields::ffn::token_info_buf_size, std::uint64_t{12});
    const auto before = fx.snapshot();
    const ScheduleOutcome o = GroupSyncScheduler<>{}.schedule_once(fx.context(), 1, 0);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "ffn.token_info_buf_size");
    CHECK(fx.snapshot() == before);
}

TEST_CASE("describe() names the status, the field and the reason", "[afd][validation]") {
    FfnFixture fx(k_upstream);
    fx.view().set(fields::ffn::expert_ids_buf_size, std::uint64_t{79});
    const ScheduleOutcome o = GroupSyncScheduler<>{}.schedule_once(fx.context(), 1, 0);
    CHECK(o.describe() == "KERNEL_STATUS_PARAM_INVALID (rejected: ffn.expert_ids_buf_size is below 4*A*BS*K)");
    CHECK(to_status(o.status) == ferry::Status::invalid_param);
    CHECK(to_status(KernelStatus::inner_error) == ferry::Status::internal_error);
}
