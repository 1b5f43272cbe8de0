// AttentionToFfn: attach checks, payload/ids/flag publication, masking, back-pressure.
#include <catch2/catch.hpp>

#include <chrono>

#include "fixture.hpp"

using namespace afd_test;
using ferry::Status;

namespace {
constexpr std::uint32_t k_token = 8; // attn_to_ffn_token_size for the fixture's 512-byte data area

struct Producer {
    FfnFixture fx{k_upstream, 0, false};
    Producer() { fx.view().set(fields::common::attn_to_ffn_token_size, k_token); }
    AttentionToFfn attach() {
        auto r = AttentionToFfn::attach(fx.view());
        REQUIRE(r.has_value());
        return *r;
    }
};
std::vector<std::byte> tokens(std::uint8_t base) {
    std::vector<std::byte> t(2 * k_token);
    for (std::size_t i = 0; i < t.size(); ++i) {
        t[i] = std::byte(static_cast<std::uint8_t>(base + i));
    }
    return t;
}
} // namespace

TEST_CASE("send publishes payload, expert ids, layer and flag", "[afd][a2f]") {
    Producer p;
    const AttentionToFfn sender = p.attach();
    const std::vector<std::int32_t> ids{3, 1, 4, 1, 5, 9, 2, 6, 5, k_masked_expert_floor};
    const auto data = tokens(10);
    std::vector<std::int32_t> own(2 * 10, 0);
    const AttentionFlagTable own_flags(reinterpret_cast<std::byte*>(own.data()), k_upstream);
    REQUIRE(sender.send(1, 1, 77, ids, data, ferry::forever, &own_flags) == Status::ok);

    const FfnDescriptor d = p.fx.table().at(1, 1);
    CHECK(d.flag() == 1);
    CHECK(d.layer_id() == 77);
    for (std::size_t i = 0; i < ids.size(); ++i) {
        CHECK(d.expert_id(i) == ids[i]);
    }
    // token t's payload sits in each non-masked slot (1, 1, t, k)
    for (std::uint32_t t = 0; t < 2; ++t) {
        for (std::uint32_t k = 0; k < 5; ++k) {
            const auto slot = sender.slot(1, 1, t, k);
            const bool masked = t == 1 && k == 4;
            CHECK(std::equal(slot.begin(), slot.end(), data.begin() + t * k_token) == !masked);
        }
    }
    // only the masked slot's own attention flag is pre-set
    CHECK(own[10 + 9] == 1);
    CHECK(std::count(own.begin(), own.end(), 1) == 1);
    CHECK(p.fx.table().at(0, 1).flag() == 0);
}

TEST_CASE("send refuses bad input and changes nothing", "[afd][a2f]") {
    Producer p;
    const AttentionToFfn sender = p.attach();
    const std::vector<std::int32_t> ids(10, 1);
    const auto data = tokens(0);
    const auto before = p.fx.snapshot();
    const auto payload = p.fx.token_data;
    CHECK(sender.send(2, 0, 1, ids, data) == Status::invalid_param);
    CHECK(sender.send(0, 2, 1, ids, data) == Status::invalid_param);
    CHECK(sender.send(0, 0, 1, std::span(ids).first(9), data) == Status::invalid_param);
    CHECK(sender.send(0, 0, 1, ids, std::span(data).first(15)) == Status::invalid_param);
    CHECK(p.fx.snapshot() == before);
    CHECK(p.fx.token_data == payload);
}

TEST_CASE("back-pressure: a slot still holding flag 1 is not overwritten", "[afd][a2f]") {
    Producer p;
    const AttentionToFfn sender = p.attach();
    const std::vector<std::int32_t> ids(10, 2);
    REQUIRE(sender.send(0, 0, 5, ids, tokens(0)) == Status::ok);
    const auto descriptors = p.fx.token_info;
    const auto payload = p.fx.token_data;
    CHECK(sender.send(0, 0, 6, ids, tokens(1), std::chrono::milliseconds(2)) == Status::timed_out);
    CHECK((p.fx.token_info == descriptors && p.fx.token_data == payload));
    p.fx.view().set_run_flag(0);
    CHECK(sender.send(0, 0, 6, ids, tokens(1)) == Status::stopped);
    CHECK((p.fx.token_info == descriptors && p.fx.token_data == payload));
    p.fx.view().set_run_flag(1);
    p.fx.set_ready(0, 0, 0); // the scheduler consumed it
    CHECK(sender.send(0, 0, 6, ids, tokens(1), std::chrono::milliseconds(0)) == Status::ok);
    CHECK(p.fx.table().at(0, 0).layer_id() == 6);
}

TEST_CASE("attach refuses contexts it cannot write through", "[afd][a2f]") {
    Producer p;
    SECTION("attention mode") { p.fx.view().set(fields::common::schedule_mode, 1); }
    SECTION("no token size") { p.fx.view().set(fields::common::attn_to_ffn_token_size, 0u); }
    SECTION("token data too small") { p.fx.view().set(fields::common::attn_to_ffn_token_size, 16u); }
    SECTION("descriptor table too small") { p.fx.view().set(fields::ffn::token_info_buf_size, std::uint64_t{191}); }
    SECTION("null token data") { p.fx.view().set(fields::ffn::token_data_buf, std::uint64_t{0}); }
    CHECK(AttentionToFfn::attach(p.fx.view()).status() == Status::invalid_param);
}
