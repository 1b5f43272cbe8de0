// FfnWorkerBatching: NORM mode (sort by expert with masking, gather token rows, group_list) and
// RECV mode.
#include "fixture.hpp"

#include <catch2/catch.hpp>

using namespace afd_test;
using ferry::Status;

namespace {
constexpr std::uint32_t k_token = 8;

// Upstream geometry; token slot (s, mb, t, k) holds bytes all equal to its slot index.
struct Batching {
    FfnFixture fx{k_upstream, 55, false};
    Batching() {
        fx.view().set(fields::common::attn_to_ffn_token_size, k_token);
        for (std::size_t slot = 0; slot < 40; ++slot) {
            std::fill_n(fx.token_data.begin() + static_cast<std::ptrdiff_t>(slot * k_token),
                        k_token, std::byte(static_cast<std::uint8_t>(slot)));
        }
    }
    // Publishes descriptor (s, mb) with these ids, as AttentionToFFN would.
    void publish(std::uint32_t s, std::uint32_t mb, const std::vector<std::int32_t>& ids) {
        const FfnDescriptor d = fx.table().at(s, mb);
        d.set_expert_ids(ids);
        d.set_flag(1);
    }
};
} // namespace

TEST_CASE("gather sorts by expert, masks invalid ids, copies the token slots", "[afd][batching]") {
    Batching b;
    // session 0 mb 1 and session 1 mb 1: ids [t][k]
    b.publish(0, 1, {4, 2, 0x7F7F7F7F, 2, 1, 3, INT32_MAX, 1'000'000, 999'999 % 8, 0});
    b.publish(1, 1, {2, -5, 4, 4, 4, 1, 1, 1, 1, 0});
    b.fx.view().set_polling_index(1);
    REQUIRE(GroupSyncScheduler<>{}.schedule_once(b.fx.context(), 2, 0).out_num == 2);

    Batch batch;
    REQUIRE(FfnWorkerBatching::gather(b.fx.view(), 8, batch) == Status::ok);
    // valid ids: session 0: 4,2,2,1,3,7,0; session 1: 2,4,4,4,1,1,1,1,0 (-5 masked)
    CHECK(batch.actual_token_num() == 16);
    std::vector<std::int32_t> experts;
    for (const GatheredToken& r : batch.rows) {
        experts.push_back(r.expert_id);
    }
    CHECK(experts == std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 4, 4, 4, 7});
    // stable: the two expert-0 rows are (a=0, t=1, k=4) then (a=1, t=1, k=4)
    CHECK(batch.rows[0] == GatheredToken{0, 0, 1, 1, 4});
    CHECK(batch.rows[1] == GatheredToken{0, 1, 1, 1, 4});
    CHECK(batch.rows[15] == GatheredToken{7, 0, 1, 1, 3});
    // row data: slot index of (s, mb=1, t, k) = ((s*2 + 1)*2 + t)*5 + k
    for (std::size_t i = 0; i < batch.rows.size(); ++i) {
        const GatheredToken& r = batch.rows[i];
        const auto slot =
            static_cast<std::uint8_t>(((r.session * 2 + 1) * 2 + r.token) * 5 + r.expert_offset);
        const auto data = batch.row_data(i);
        CHECK(std::all_of(data.begin(), data.end(),
                          [&](std::byte x) { return x == std::byte(slot); }));
    }
    using Row = std::array<std::int64_t, 2>;
    CHECK(batch.group_list ==
          std::vector<Row>{{0, 2}, {1, 5}, {2, 3}, {3, 1}, {4, 4}, {7, 1}, {0, 0}, {0, 0}});
}

TEST_CASE("gather reads nothing after a call that emitted no rows", "[afd][batching]") {
    Batching b;
    Batch batch;
    REQUIRE(FfnWorkerBatching::gather(b.fx.view(), 4, batch) == Status::ok);
    CHECK(batch.actual_token_num() == 0);
    CHECK(batch.group_list == std::vector<std::array<std::int64_t, 2>>(4, {0, 0}));
}

TEST_CASE("gather refuses what it cannot index, and leaves the batch empty", "[afd][batching]") {
    Batching b;
    b.publish(0, 0, std::vector<std::int32_t>(10, 1));
    b.publish(1, 0, std::vector<std::int32_t>(10, 1));
    REQUIRE(GroupSyncScheduler<>{}.schedule_once(b.fx.context(), 2, 0).out_num == 2);
    Batch batch;
    SECTION("expert id beyond expert_num") {
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 1, batch) == Status::invalid_param);
    }
    SECTION("expert_num 0 or above 8192") {
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 0, batch) == Status::invalid_param);
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 8193, batch) == Status::invalid_param);
    }
    SECTION("out_num above session_num") {
        b.fx.view().set(fields::ffn::out_num, 3u);
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 8, batch) == Status::invalid_param);
    }
    SECTION("a session id out of range") {
        b.fx.session_ids[1] = 2;
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 8, batch) == Status::invalid_param);
    }
    SECTION("token data smaller than the geometry") {
        b.fx.view().set(fields::ffn::token_data_buf_size, std::uint64_t{319});
        CHECK(FfnWorkerBatching::gather(b.fx.view(), 8, batch) == Status::invalid_param);
    }
    CHECK(batch.actual_token_num() == 0);
    CHECK(batch.y.empty());
}

// RECV mode (need_schedule = 1): the batching waits for micro batch polling_index on every session
// itself, gathers from the descriptors and resets them with INT32_MAX ids.
namespace {
std::vector<std::int32_t> recv_ids_s0() {
    return {4, 2, 0x7F7F7F7F, 2, 1, 3, INT32_MAX, 1'000'000, 7, 0};
}
std::vector<std::int32_t> recv_ids_s1() {
    return {2, -5, 4, 4, 4, 1, 1, 1, 1, 0};
}
} // namespace

TEST_CASE(
    "receive gathers what scheduler + gather would, then resets the micro batch with INT32_MAX",
    "[afd][batching][recv]") {
    Batching norm;
    Batching recv;
    for (Batching* b : {&norm, &recv}) {
        b->publish(0, 1, recv_ids_s0());
        b->publish(1, 1, recv_ids_s1());
        b->fx.view().set_polling_index(1);
        b->fx.view().set(fields::ffn::out_num, 77u); // RECV mode neither reads nor writes it
    }
    REQUIRE(GroupSyncScheduler<>{}.schedule_once(norm.fx.context(), 2, 0).out_num == 2);
    Batch expected;
    REQUIRE(FfnWorkerBatching::gather(norm.fx.view(), 8, expected) == Status::ok);
    const auto outputs_before =
        std::make_tuple(recv.fx.layer_ids, recv.fx.session_ids, recv.fx.expert_ids);

    Batch batch;
    REQUIRE(FfnWorkerBatching::receive(recv.fx.view(), 8, batch, ferry::no_wait) == Status::ok);
    CHECK(batch.rows == expected.rows);
    CHECK(batch.y == expected.y);
    CHECK(batch.group_list == expected.group_list);
    for (std::uint32_t s = 0; s < 2; ++s) {
        const FfnDescriptor d = recv.fx.table().at(s, 1);
        CHECK(d.flag() == 0);
        CHECK(d.layer_id() == 55);
        for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
            CHECK(d.expert_id(i) == INT32_MAX);
        }
    }
    CHECK(recv.fx.view().polling_index() == 0); // (1 + 1) % M
    CHECK(recv.fx.out_num() == 77);
    CHECK(std::make_tuple(recv.fx.layer_ids, recv.fx.session_ids, recv.fx.expert_ids) ==
          outputs_before);
}

TEST_CASE("receive waits for micro batch polling_index on every session, in order",
          "[afd][batching][recv]") {
    Batching b;
    Batch batch;
    b.publish(0, 0, recv_ids_s0()); // session 1 not ready for mb 0
    b.publish(0, 1, recv_ids_s0());
    b.publish(1, 1, recv_ids_s1()); // mb 1 ready everywhere, but polling_index is 0
    SECTION("not every session ready") {}
    SECTION("flag 2 is not ready") {
        b.fx.set_ready(1, 0, 2);
    }
    const auto before = b.fx.snapshot();
    CHECK(FfnWorkerBatching::receive(b.fx.view(), 8, batch, std::chrono::milliseconds(5)) ==
          Status::timed_out);
    CHECK(b.fx.snapshot() == before);
    CHECK(batch.actual_token_num() == 0);
}

TEST_CASE("receive returns stopped when run_flag is 0, consuming nothing",
          "[afd][batching][recv]") {
    Batching b;
    b.publish(0, 0, recv_ids_s0());
    b.publish(1, 0, recv_ids_s1());
    b.fx.view().set_run_flag(0);
    const auto before = b.fx.snapshot();
    Batch batch;
    CHECK(FfnWorkerBatching::receive(b.fx.view(), 8, batch) == Status::stopped);
    CHECK(b.fx.snapshot() == before);
}

TEST_CASE("receive refuses what it cannot index and consumes nothing", "[afd][batching][recv]") {
    Batching b;
    b.publish(0, 0, recv_ids_s0());
    b.publish(1, 0, recv_ids_s1());
    Batch batch;
    std::uint32_t expert_num = 8;
    SECTION("an expert id beyond expert_num") {
        expert_num = 5;
    }
    SECTION("polling_index not below M") {
        b.fx.view().set_polling_index(2);
    }
    SECTION("no descriptor table") {
        b.fx.view().set(fields::ffn::token_info_buf, std::uint64_t{0});
    }
    SECTION("descriptor table smaller than A*M*(8+4*BS*K)") {
        b.fx.view().set(fields::ffn::token_info_buf_size, std::uint64_t{191});
    }
    SECTION("token data smaller than the geometry") {
        b.fx.view().set(fields::ffn::token_data_buf_size, std::uint64_t{319});
    }
    const auto before = b.fx.snapshot();
    CHECK(FfnWorkerBatching::receive(b.fx.view(), expert_num, batch, ferry::no_wait) ==
          Status::invalid_param);
    CHECK(b.fx.snapshot() == before);
    CHECK(batch.actual_token_num() == 0);
    CHECK(batch.y.empty());
}
