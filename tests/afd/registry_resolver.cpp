// RegistryResolver: the scheduler refuses buffers that are not inside one live allocation of the
// size it needs, with PARAM_INVALID and a message, and changes nothing.
#include <catch2/catch.hpp>

#include <string>

#include <ferry/afd/registry_resolver.hpp>

#include "fixture.hpp"

using namespace afd_test;
using ferry::Allocation;
using ferry::AllocationRegistry;

namespace {
template <typename T>
void record(AllocationRegistry& registry, const std::vector<T>& buffer, std::size_t bytes) {
    const Allocation a{address_of(buffer.data()), bytes, bytes, 0, ferry::AllocationKind::device};
    REQUIRE(registry.insert(a) == ferry::Status::ok);
}
void record_all(AllocationRegistry& registry, FfnFixture& fx, std::size_t expert_ids_bytes) {
    record(registry, fx.token_info, 4 * fx.token_info.size());
    record(registry, fx.token_data, fx.token_data.size());
    record(registry, fx.layer_ids, 4 * fx.layer_ids.size());
    record(registry, fx.session_ids, 4 * fx.session_ids.size());
    record(registry, fx.micro_batch_ids, 4 * fx.micro_batch_ids.size());
    record(registry, fx.expert_ids, expert_ids_bytes);
}
using RegistryScheduler = GroupSyncScheduler<SpinThenPark<>, LowestReady, SerialExecutor, RegistryResolver>;
} // namespace

TEST_CASE("registry resolver accepts buffers inside live allocations", "[afd][registry]") {
    FfnFixture fx(k_upstream);
    AllocationRegistry registry;
    record_all(registry, fx, 80);
    RegistryScheduler scheduler(SpinThenPark<>{}, LowestReady{}, SerialExecutor{}, RegistryResolver(registry));
    const ScheduleOutcome o = scheduler.schedule_once(fx.context(), 1, 0);
    REQUIRE(o.ok());
    CHECK(fx.session_ids == std::vector<std::int32_t>{0, 1});
    CHECK(fx.expert_ids == iota_ids(2, 10));
}

TEST_CASE("registry resolver rejects a buffer that overruns its allocation", "[afd][registry]") {
    FfnFixture fx(k_upstream);
    AllocationRegistry registry;
    record_all(registry, fx, 79); // the context says 80 bytes, the allocation holds 79
    const auto before = fx.snapshot();
    RegistryResolver resolver(registry);
    const ScheduleOutcome o = schedule_once(fx.context(), 1, 0, resolver);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "ffn.expert_ids_buf");
    CHECK(std::string(o.reason).find("overruns its allocation") != std::string::npos);
    CHECK(fx.snapshot() == before);
    CHECK(o.describe().find("ffn.expert_ids_buf overruns") != std::string::npos);
}

TEST_CASE("registry resolver rejects foreign and interior-overrunning pointers", "[afd][registry]") {
    FfnFixture fx(k_upstream);
    AllocationRegistry registry;
    RegistryResolver resolver(registry);
    const auto before = fx.snapshot();

    SECTION("nothing registered: the first buffer is foreign") {
        const ScheduleOutcome o = schedule_once(fx.context(), 1, 0, resolver);
        CHECK(o.status == KernelStatus::param_invalid);
        CHECK(std::string(o.field) == "ffn.token_info_buf");
        CHECK(std::string(o.reason) == "does not point into a live runtime allocation");
    }
    SECTION("a descriptor table pointer moved 4 bytes into its allocation") {
        record_all(registry, fx, 80);
        fx.view().set(fields::ffn::token_info_buf, address_of(fx.token_info.data()) + 4);
        const auto moved = fx.snapshot();
        const ScheduleOutcome o = schedule_once(fx.context(), 1, 0, resolver);
        CHECK(o.status == KernelStatus::param_invalid);
        CHECK(std::string(o.field) == "ffn.token_info_buf");
        CHECK(fx.snapshot() == moved);
    }
    CHECK(fx.token_info == before.token_info);
}

TEST_CASE("attention scheduler uses the registry too", "[afd][registry]") {
    ContextImage ctx;
    std::vector<std::int32_t> flags(2 * 6 * 2, 1);
    std::vector<std::byte> data(64);
    ScheduleContext s{};
    s.common.micro_batch_num = 2;
    s.common.micro_batch_size = 6;
    s.common.selected_expert_num = 2;
    s.common.schedule_mode = 1;
    s.control.run_flag = 1;
    s.attention.token_info_buf = address_of(flags.data());
    s.attention.token_info_buf_size = 4 * flags.size();
    s.attention.token_data_buf = address_of(data.data());
    s.attention.micro_batch_id = 1;
    ctx.view().store(s);
    AllocationRegistry registry;
    record(registry, flags, 4 * flags.size() - 4);
    record(registry, data, data.size());
    AttentionWorkerScheduler<Spin, RegistryResolver> scheduler(Spin{}, RegistryResolver(registry));
    const ScheduleOutcome o = scheduler.schedule_once(ctx.bytes.data());
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "attention.token_info_buf");
    CHECK(flags == std::vector<std::int32_t>(24, 1));
}
