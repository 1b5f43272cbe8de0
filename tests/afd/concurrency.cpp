// Threaded tests (suite 'concurrency', run under ThreadSanitizer in CI): run_flag wakes blocked
// schedulers, producers race the scheduler with back-pressure and a racing stop, and the pool
// executor produces the serial executor's bytes. Worker threads record; the main thread checks.
#include "fixture.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <map>
#include <thread>

using namespace afd_test;
using ferry::Status;

namespace {
// A wait policy that counts its pauses before delegating: a pause happens only after a poll found
// nothing to do, so a count above zero proves the scheduler is waiting. The test acts then, never
// after a guessed delay.
template <WaitPolicy Inner>
struct Observed {
    std::atomic<std::uint64_t>* pauses = nullptr;
    Inner inner{};
    void pause() noexcept {
        pauses->fetch_add(1, std::memory_order_release);
        inner.pause();
    }
};

void await_pauses(const std::atomic<std::uint64_t>& pauses) {
    while (pauses.load(std::memory_order_acquire) == 0) {
        std::this_thread::yield();
    }
}

template <WaitPolicy Wait>
ScheduleOutcome stopped_while_waiting(FfnFixture& fx, std::optional<std::int32_t> sgs) {
    ScheduleOutcome outcome;
    std::atomic<std::uint64_t> pauses{0};
    std::thread waiter([&] {
        outcome = GroupSyncScheduler<Observed<Wait>>{Observed<Wait>{&pauses}}.schedule_once(
            fx.context(), sgs, 0);
    });
    await_pauses(pauses);
    fx.view().set_run_flag(0);
    waiter.join();
    return outcome;
}
} // namespace

TEMPLATE_TEST_CASE("run_flag 0 releases a waiting FFN scheduler", "[afd][concurrency]", Spin,
                   SpinThenYield<>, SpinThenPark<>) {
    FfnFixture fx(k_upstream, 55, false);
    fx.set_ready(0, 1);
    fx.set_ready(1, 1); // ready, but all-sync waits on polling_index 0
    const auto descriptors = fx.token_info;
    const auto all_sync = static_cast<std::int32_t>(k_upstream.session_num); // one group
    for (const std::int32_t sgs : {all_sync, 1}) {
        fx.view().set_run_flag(1);
        if (sgs == 1) {
            fx.set_ready(0, 1, 0); // grouped: nothing may be ready, or it would be served
            fx.set_ready(1, 1, 0);
        }
        const ScheduleOutcome o = stopped_while_waiting<TestType>(fx, sgs);
        CHECK(o.status == KernelStatus::ok);
        CHECK(o.exit == ScheduleExit::stopped);
        CHECK(fx.out_num() == 0);
    }
    CHECK(fx.view().polling_index() == 0);
}

TEST_CASE("run_flag 0 releases a waiting attention scheduler", "[afd][concurrency]") {
    ContextImage ctx;
    std::vector<std::int32_t> flags(4, 0);
    std::vector<std::byte> data(16);
    ScheduleContext s{};
    s.common = {1, 2, 1, 2, 0, 0, 0, k_schedule_mode_attention, {}};
    s.control.run_flag = 1;
    s.attention = {address_of(flags.data()), 16, address_of(data.data()), 16, 1, {}};
    ctx.view().store(s);
    ScheduleOutcome outcome;
    std::atomic<std::uint64_t> pauses{0};
    using Wait = Observed<SpinThenPark<>>;
    std::thread waiter([&] {
        outcome = AttentionWorkerScheduler<Wait>{Wait{&pauses}}.schedule_once(ctx.bytes.data());
    });
    await_pauses(pauses);
    ctx.view().set_run_flag(0);
    waiter.join();
    CHECK(outcome.exit == ScheduleExit::stopped);
    CHECK(ctx.view().get(fields::attention::micro_batch_id) == 1);
}

namespace {
// Producers publish items (session, seq) into micro batch seq % M with expert ids {seq, session};
// one consumer schedules them. Returns what was consumed and how many each producer published.
struct Traffic {
    std::vector<std::uint32_t> published;
    std::vector<std::pair<std::int32_t, std::int32_t>> consumed; // (session, seq)
    std::uint64_t errors = 0;
};

template <typename Scheduler>
Traffic run_traffic(FfnFixture& fx, Scheduler& scheduler, std::int32_t sgs, std::uint32_t items,
                    bool stop_early) {
    const Geometry g = fx.g;
    Traffic t;
    t.published.assign(g.session_num, 0);
    fx.view().set(fields::common::attn_to_ffn_token_size, 4u);
    const ferry::Result<AttentionToFfn> sender = AttentionToFfn::attach(fx.view());
    REQUIRE(sender.has_value());
    std::vector<std::thread> producers;
    std::atomic<std::uint64_t> producer_errors{0};
    for (std::uint32_t s = 0; s < g.session_num; ++s) {
        producers.emplace_back([&, s] {
            const std::vector<std::byte> payload(std::size_t{g.micro_batch_size} * 4);
            for (std::uint32_t seq = 0; seq < items; ++seq) {
                const std::vector<std::int32_t> ids{static_cast<std::int32_t>(seq),
                                                    static_cast<std::int32_t>(s)};
                const Status st = sender->send(s, seq % g.micro_batch_num, 1, ids, payload);
                if (st == Status::stopped) {
                    return;
                }
                producer_errors += st == Status::ok ? 0 : 1;
                ++t.published[s];
            }
        });
    }
    std::thread consumer([&] {
        while (t.consumed.size() < std::size_t{items} * g.session_num) {
            const ScheduleOutcome o = scheduler.schedule_once(fx.context(), sgs, 0);
            if (o.exit == ScheduleExit::stopped || !o.ok()) {
                t.errors += o.ok() ? 0 : 1;
                return;
            }
            for (std::uint32_t row = 0; row < o.out_num; ++row) {
                t.consumed.emplace_back(fx.expert_ids[2 * row + 1], fx.expert_ids[2 * row]);
                t.errors += fx.session_ids[row] == fx.expert_ids[2 * row + 1] ? 0 : 1;
            }
            if (stop_early && t.consumed.size() >= std::size_t{items} * g.session_num / 3) {
                fx.view().set_run_flag(0); // races the producers' back-pressure waits
            }
        }
    });
    for (std::thread& p : producers) {
        p.join();
    }
    consumer.join();
    t.errors += producer_errors.load();
    return t;
}

// Everything consumed was published, nothing twice; with a stop, every published item was either
// consumed or is still pending (flag 1) in its descriptor.
void require_accounted(FfnFixture& fx, const Traffic& t, bool complete) {
    REQUIRE(t.errors == 0);
    std::map<std::pair<std::int32_t, std::int32_t>, int> seen;
    for (const auto& item : t.consumed) {
        ++seen[item];
    }
    std::size_t pending = 0;
    for (std::uint32_t s = 0; s < fx.g.session_num; ++s) {
        for (std::uint32_t mb = 0; mb < fx.g.micro_batch_num; ++mb) {
            pending += fx.table().at(s, mb).flag() == 1 ? 1 : 0;
        }
    }
    std::size_t published = 0;
    for (std::uint32_t s = 0; s < fx.g.session_num; ++s) {
        published += t.published[s];
    }
    for (const auto& [item, n] : seen) {
        CHECK(n == 1); // nothing duplicated
        REQUIRE(item.first >= 0);
        REQUIRE(static_cast<std::size_t>(item.first) < t.published.size());
        CHECK(item.second <
              static_cast<std::int32_t>(t.published[static_cast<std::size_t>(item.first)]));
    }
    CHECK(t.consumed.size() + pending == published);
    if (complete) {
        CHECK(pending == 0);
    }
}
} // namespace

TEST_CASE("producers and the scheduler: every item consumed exactly once",
          "[afd][concurrency][stress]") {
    const std::uint32_t items = 200;
    SECTION("all-sync, lowest-ready, serial") {
        FfnFixture fx(Geometry{3, 3, 1, 2}, 1, false);
        GroupSyncScheduler<> scheduler;
        require_accounted(fx, run_traffic(fx, scheduler, 3, items, false), true);
    }
    SECTION("grouped, round-robin, pool executor") {
        FfnFixture fx(Geometry{4, 3, 1, 2}, 1, false);
        GroupSyncScheduler<SpinThenYield<>, RoundRobin, PoolExecutor> scheduler(
            SpinThenYield<>{}, RoundRobin{}, PoolExecutor(1));
        require_accounted(fx, run_traffic(fx, scheduler, 1, items, false), true);
    }
    SECTION("grouped with a stop racing the producers") {
        FfnFixture fx(Geometry{4, 2, 1, 2}, 1, false);
        GroupSyncScheduler<> scheduler;
        require_accounted(fx, run_traffic(fx, scheduler, 2, items, true), false);
    }
}

TEST_CASE("the pool executor writes the serial executor's bytes", "[afd][concurrency]") {
    const Geometry g{16, 2, 3, 4};
    FfnFixture serial(g), pooled(g);
    for (std::uint32_t s = 0; s < g.session_num; ++s) {
        for (std::size_t i = 0; i < 12; ++i) {
            serial.table().at(s, 1).set_expert_id(i, static_cast<std::int32_t>(s * 100 + i));
            pooled.table().at(s, 1).set_expert_id(i, static_cast<std::int32_t>(s * 100 + i));
        }
        serial.table().at(s, 1).set_layer_id(static_cast<std::int32_t>(s));
        pooled.table().at(s, 1).set_layer_id(static_cast<std::int32_t>(s));
    }
    serial.view().set_polling_index(1);
    pooled.view().set_polling_index(1);
    GroupSyncScheduler<Spin, LowestReady, PoolExecutor> pool(Spin{}, LowestReady{},
                                                             PoolExecutor(3));
    const auto all_sync = static_cast<std::int32_t>(g.session_num); // one group
    REQUIRE(GroupSyncScheduler<>{}.schedule_once(serial.context(), all_sync).out_num == 16);
    REQUIRE(pool.schedule_once(pooled.context(), all_sync).out_num == 16);
    CHECK(pooled.layer_ids == serial.layer_ids);
    CHECK(pooled.session_ids == serial.session_ids);
    CHECK(pooled.micro_batch_ids == serial.micro_batch_ids);
    CHECK(pooled.expert_ids == serial.expert_ids);
    CHECK(pooled.token_info == serial.token_info);
}
