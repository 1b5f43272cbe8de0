// GroupSyncScheduler: the upstream kernel unit tests with full expected buffers
// (docs/cann-contract/afd.md#upstream-unit-tests), modes, reset rules and selection policies.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>

#include "fixture.hpp"

using namespace afd_test;

namespace {
using Scheduler = GroupSyncScheduler<>;

// A descriptor CANN has reset: ids all bytes 0x7F, flag 0, layer_id kept
// (docs/cann-contract/afd.md#output-and-reset).
void require_reset(const FfnDescriptor& d, std::int32_t layer) {
    CHECK(d.flag() == 0);
    CHECK(d.layer_id() == layer);
    const auto bytes = d.expert_id_bytes();
    CHECK(std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0x7F}; }));
    for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
        CHECK(d.expert_id(i) == 0x7F7F7F7F);
    }
}
void require_untouched(const FfnDescriptor& d, std::int32_t layer) {
    CHECK(d.flag() == 1);
    CHECK(d.layer_id() == layer);
    for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
        CHECK(d.expert_id(i) == static_cast<std::int32_t>(i));
    }
}
} // namespace

TEST_CASE("upstream INPUT_COMPUTE_ALL_SYNC_SUCCESS: polling_index 1, sgs 2", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    fx.view().set_polling_index(1);
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 2, 0);
    REQUIRE(o.status == KernelStatus::ok);
    REQUIRE(o.exit == ScheduleExit::served);
    CHECK(o.out_num == 2);
    CHECK(fx.out_num() == 2);
    CHECK(fx.layer_ids == std::vector<std::int32_t>{55, 55});
    CHECK(fx.session_ids == std::vector<std::int32_t>{0, 1});
    CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{1, 1});
    CHECK(fx.expert_ids == iota_ids(2, 10));
    CHECK(fx.view().polling_index() == 0);
    require_reset(fx.table().at(0, 1), 55);
    require_reset(fx.table().at(1, 1), 55);
    require_untouched(fx.table().at(0, 0), 55);
    require_untouched(fx.table().at(1, 0), 55);
}

TEST_CASE("upstream INPUT_COMPUTE_SUCCESS: polling_index 0, sgs 1 (grouped)", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 1, 0);
    REQUIRE(o.status == KernelStatus::ok);
    CHECK(fx.out_num() == 2);
    CHECK(fx.layer_ids == std::vector<std::int32_t>{55, 55});
    CHECK(fx.session_ids == std::vector<std::int32_t>{0, 1});
    CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{0, 0});
    CHECK(fx.expert_ids == iota_ids(2, 10));
    CHECK(fx.view().polling_index() == 0);
    require_reset(fx.table().at(0, 0), 55);
    require_reset(fx.table().at(1, 0), 55);
    require_untouched(fx.table().at(0, 1), 55);
    require_untouched(fx.table().at(1, 1), 55);
}

TEST_CASE("golden device output: polling_index 1 ignored in grouped mode", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    fx.view().set_polling_index(1);
    REQUIRE(Scheduler{}.schedule_once(fx.context(), 1, 0).ok());
    CHECK(fx.layer_ids == std::vector<std::int32_t>{55, 55});
    CHECK(fx.session_ids == std::vector<std::int32_t>{0, 1});
    CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{0, 0});
    CHECK(fx.expert_ids == iota_ids(2, 10));
    CHECK(fx.view().polling_index() == 1);
}

TEST_CASE("upstream INPUT_SCHEDULE_MODE_INVALID: nothing modified, out_num kept", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    fx.view().set(fields::common::schedule_mode, 1);
    fx.view().set(fields::ffn::out_num, 7);
    const auto before = fx.snapshot();
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 2, 0);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "common.schedule_mode");
    CHECK(fx.snapshot() == before);
    CHECK(fx.out_num() == 7);
}

TEST_CASE("upstream INPUT_EXCUTE_MODE_INVALID: schedule_mode fails first", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    fx.view().set(fields::common::schedule_mode, 1);
    const auto before = fx.snapshot();
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 2, 2);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(std::string(o.field) == "common.schedule_mode");
    CHECK(fx.snapshot() == before);

    SECTION("isolated: execute_mode 2 and 1 with a valid context") {
        fx.view().set(fields::common::schedule_mode, 0);
        const auto valid = fx.snapshot();
        for (const std::int32_t mode : {2, 1, -1}) {
            const ScheduleOutcome e = Scheduler{}.schedule_once(fx.context(), 2, mode);
            CHECK(e.status == KernelStatus::param_invalid);
            CHECK(std::string(e.field) == "execute_mode");
            CHECK(fx.snapshot() == valid);
        }
    }
}

TEST_CASE("upstream INPUT_DIM_INVALID: rank 2", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    const auto before = fx.snapshot();
    const ScheduleOutcome o = Scheduler{}.schedule_once(ContextTensor{fx.context(), 2048, 2}, 2, 0);
    CHECK(o.status == KernelStatus::param_invalid);
    CHECK(fx.snapshot() == before);
}

TEST_CASE("upstream INPUT_CONTROL_RUN_TERMINAL: run_flag 0", "[afd][upstream]") {
    FfnFixture fx(k_upstream);
    fx.view().set_run_flag(0);
    fx.view().set_polling_index(1);
    fx.view().set(fields::ffn::out_num, 5);
    const auto descriptors = fx.token_info;
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 2, 0);
    CHECK(o.status == KernelStatus::ok);
    CHECK(o.exit == ScheduleExit::stopped);
    CHECK(fx.out_num() == 0);
    CHECK(fx.view().polling_index() == 1);
    CHECK(fx.token_info == descriptors);

    SECTION("grouped mode exits the same way") {
        CHECK(Scheduler{}.schedule_once(fx.context(), 1, 0).exit == ScheduleExit::stopped);
        CHECK(fx.token_info == descriptors);
    }
}

TEST_CASE("all-sync rounds walk the micro batches in strict order", "[afd]") {
    FfnFixture fx(Geometry{3, 3, 1, 2});
    Scheduler scheduler;
    for (std::uint32_t round = 0; round < 6; ++round) {
        const std::uint32_t mb = round % 3;
        REQUIRE(scheduler.schedule_once(fx.context(), 3).ok()); // session_num: one group
        CHECK(fx.out_num() == 3);
        CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{static_cast<int>(mb), static_cast<int>(mb), static_cast<int>(mb)});
        CHECK(fx.view().polling_index() == (mb + 1) % 3);
        for (std::uint32_t s = 0; s < 3; ++s) {
            fx.set_ready(s, mb); // the producer refills the slot
        }
    }
}

// 35 ids (140 bytes) per descriptor, descriptors 148 bytes apart: rows cover every source
// alignment mod 32 the copy meets, and each id names its session, micro batch and index.
TEST_CASE("all-sync copies every row exactly and resets exactly its micro batch", "[afd]") {
    const Geometry g{8, 3, 7, 5};
    FfnFixture fx(g);
    const auto id = [](std::uint32_t s, std::uint32_t mb, std::size_t i) {
        return static_cast<std::int32_t>(s * 10000 + mb * 1000 + i);
    };
    const std::size_t n = fx.table().at(0, 0).expert_id_count();
    for (std::uint32_t s = 0; s < g.session_num; ++s) {
        for (std::uint32_t mb = 0; mb < g.micro_batch_num; ++mb) {
            for (std::size_t i = 0; i < n; ++i) {
                fx.table().at(s, mb).set_expert_id(i, id(s, mb, i));
            }
        }
    }
    fx.view().set_polling_index(2);
    REQUIRE(Scheduler{}.schedule_once(fx.context(), 8).out_num == 8);
    for (std::uint32_t s = 0; s < g.session_num; ++s) {
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(fx.expert_ids[s * n + i] == id(s, 2, i));
        }
        require_reset(fx.table().at(s, 2), 55);
        for (std::uint32_t mb = 0; mb < 2; ++mb) { // the other micro batches keep their ids
            CHECK(fx.table().at(s, mb).flag() == 1);
            for (std::size_t i = 0; i < n; ++i) {
                REQUIRE(fx.table().at(s, mb).expert_id(i) == id(s, mb, i));
            }
        }
    }
}

TEST_CASE("all-sync waits only on polling_index's micro batch", "[afd]") {
    FfnFixture fx(k_upstream, 55, false);
    fx.set_ready(0, 1);
    fx.set_ready(1, 1);
    fx.set_ready(0, 0); // mb 0 (the polling index) is missing session 1
    const auto before = fx.token_info;
    const ScheduleOutcome o = Scheduler{}.schedule_once(fx.context(), 2, 0, std::chrono::milliseconds(5));
    CHECK(o.status == KernelStatus::ok);
    CHECK(o.exit == ScheduleExit::timed_out);
    CHECK(fx.out_num() == 0);
    CHECK(fx.token_info == before);
    CHECK(fx.view().polling_index() == 0);
}

TEST_CASE("grouped mode: some groups ready, others not", "[afd]") {
    FfnFixture fx(Geometry{4, 3, 2, 3}, 9, false);
    Scheduler scheduler;

    SECTION("only group 1 ready, at mb 2 and mb 1: the lower is taken") {
        for (std::uint32_t s : {2u, 3u}) {
            fx.set_ready(s, 2);
            fx.set_ready(s, 1);
        }
        fx.set_ready(0, 0); // group 0 incomplete
        REQUIRE(scheduler.schedule_once(fx.context(), 2, 0).ok());
        CHECK(fx.out_num() == 2);
        CHECK(std::vector(fx.session_ids.begin(), fx.session_ids.begin() + 2) == std::vector<std::int32_t>{2, 3});
        CHECK(std::vector(fx.micro_batch_ids.begin(), fx.micro_batch_ids.begin() + 2) == std::vector<std::int32_t>{1, 1});
        CHECK(fx.table().at(2, 1).flag() == 0);
        CHECK(fx.table().at(2, 2).flag() == 1);
        CHECK(fx.table().at(0, 0).flag() == 1); // not emitted, not reset
    }
    SECTION("groups ready at different micro batches: rows in group order") {
        fx.set_ready(0, 2);
        fx.set_ready(1, 2);
        fx.set_ready(2, 0);
        fx.set_ready(3, 0);
        REQUIRE(scheduler.schedule_once(fx.context(), 2, 0).ok());
        CHECK(fx.out_num() == 4);
        CHECK(fx.session_ids == std::vector<std::int32_t>{0, 1, 2, 3});
        CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{2, 2, 0, 0});
        CHECK(fx.layer_ids == std::vector<std::int32_t>{9, 9, 9, 9});
    }
    SECTION("a flag of 2 is not ready") {
        fx.set_ready(0, 0);
        fx.set_ready(1, 0, 2);
        fx.set_ready(2, 1);
        fx.set_ready(3, 1);
        REQUIRE(scheduler.schedule_once(fx.context(), 2, 0).ok());
        CHECK(fx.out_num() == 2);
        CHECK(fx.session_ids[0] == 2);
        CHECK(fx.table().at(1, 0).flag() == 2);
    }
}

TEST_CASE("out_num counts this call's rows only", "[afd]") {
    FfnFixture fx(k_upstream);
    fx.view().set(fields::ffn::out_num, 100);
    REQUIRE(Scheduler{}.schedule_once(fx.context(), 1, 0).ok());
    CHECK(fx.out_num() == 2);
}

namespace {
// Sustained load: every micro batch of every session is ready again before each call.
template <typename Selection>
std::array<int, 3> served_micro_batches(int calls) {
    FfnFixture fx(Geometry{2, 3, 1, 1});
    GroupSyncScheduler<Spin, Selection> scheduler;
    std::array<int, 3> served{};
    for (int i = 0; i < calls; ++i) {
        for (std::uint32_t s = 0; s < 2; ++s) {
            for (std::uint32_t mb = 0; mb < 3; ++mb) {
                fx.set_ready(s, mb);
            }
        }
        const ScheduleOutcome o = scheduler.schedule_once(fx.context(), 1, 0);
        if (!o.ok() || o.out_num != 2 || fx.micro_batch_ids[0] != fx.micro_batch_ids[1]) {
            return {-1, -1, -1};
        }
        ++served[static_cast<std::size_t>(fx.micro_batch_ids[0])];
    }
    return served;
}
} // namespace

TEST_CASE("selection under sustained load: lowest_ready starves, round_robin is fair", "[afd]") {
    CHECK(served_micro_batches<LowestReady>(30) == std::array{30, 0, 0});
    CHECK(served_micro_batches<RoundRobin>(30) == std::array{10, 10, 10});
}

TEST_CASE("round_robin picks the next ready micro batch after its last choice", "[afd]") {
    FfnFixture fx(Geometry{1, 4, 1, 1}, 1, false);
    fx.set_ready(0, 3);
    fx.set_ready(0, 1);
    RoundRobin rr;
    auto ready = [&](std::uint32_t mb) { return fx.table().at(0, mb).ready(); };
    CHECK(rr.select(0, 4, ready) == std::optional<std::uint32_t>{1});
    CHECK(rr.select(0, 4, ready) == std::optional<std::uint32_t>{3});
    CHECK(rr.select(0, 4, ready) == std::optional<std::uint32_t>{1});
    CHECK(LowestReady{}.select(0, 4, ready) == std::optional<std::uint32_t>{1});
    fx.set_ready(0, 1, 0);
    fx.set_ready(0, 3, 0);
    CHECK(rr.select(0, 4, ready) == std::nullopt);
}

TEST_CASE("the plain entry point runs CANN's defaults over a resolver", "[afd]") {
    FfnFixture fx(k_upstream);
    fx.view().set_polling_index(1);
    TrustingResolver resolver;
    SECTION("absent sync_group_size means the operator's default 1: two groups") {
        const ScheduleOutcome o = schedule_once(fx.context(), std::nullopt, std::nullopt, resolver);
        REQUIRE(o.ok());
        CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{0, 0}); // grouped: lowest ready
        CHECK(fx.view().polling_index() == 1);                     // grouped: not advanced
    }
    SECTION("sync_group_size session_num means one group") {
        const ScheduleOutcome o = schedule_once(fx.context(), 2, 0, resolver);
        REQUIRE(o.ok());
        CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{1, 1});
    }
    SECTION("sync_group_size 1 means two groups") {
        const ScheduleOutcome o = schedule_once(fx.context(), 1, 0, resolver);
        REQUIRE(o.ok());
        CHECK(fx.micro_batch_ids == std::vector<std::int32_t>{0, 0});
    }
    SECTION("the tensor form checks rank and size") {
        const auto before = fx.snapshot();
        CHECK(schedule_once(ContextTensor{fx.context(), 1023, 1}, 1, 0, resolver).status ==
              KernelStatus::param_invalid);
        CHECK(schedule_once(ContextTensor{fx.context(), 1024, 2}, 1, 0, resolver).status ==
              KernelStatus::param_invalid);
        CHECK(schedule_once(ContextTensor{nullptr, 1024, 1}, 1, 0, resolver).status == KernelStatus::param_invalid);
        CHECK(fx.snapshot() == before);
        CHECK(schedule_once(ContextTensor{fx.context(), 4096, 1}, 1, 0, resolver).ok()); // larger is fine
    }
}
