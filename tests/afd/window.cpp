// Window: owner addresses are translated into the window, and anything not entirely inside it is
// refused with invalid_param and writes nothing; the simulators refuse contexts whose buffers lie
// outside their window.
#include "fixture.hpp"

#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/afd.hpp>
#include <vector>

using namespace afd_test;
using ferry::Status;

namespace {
struct Region {
    alignas(64) std::array<std::byte, 256> bytes{};
    LocalWindow local{bytes};
    [[nodiscard]] std::uint64_t base() const { return address_of(bytes.data()); }
    [[nodiscard]] bool untouched() const {
        return std::all_of(bytes.begin(), bytes.end(),
                           [](std::byte b) { return b == std::byte{0}; });
    }
};
const std::array<std::byte, 16> k_payload = [] {
    std::array<std::byte, 16> p{};
    p.fill(std::byte{0xAB});
    return p;
}();
} // namespace

TEST_CASE("a window writes inside its range, up to its last byte", "[afd][window]") {
    Region r;
    const Window& w = r.local.window();
    CHECK(w.owner_base() == r.base());
    CHECK(w.size() == 256);
    REQUIRE(w.write(r.base() + 240, k_payload) == Status::ok);
    CHECK(r.bytes[240] == std::byte{0xAB});
    CHECK(r.bytes[255] == std::byte{0xAB});
    REQUIRE(w.publish(r.base() + 252, 7) == Status::ok);
    CHECK(*w.flag_at(r.base() + 252) == 7);
    CHECK(w.write(r.base() + 256, {}) == Status::ok); // an empty write at the end touches nothing
}

TEST_CASE("a window refuses ranges outside it and writes nothing", "[afd][window]") {
    Region r;
    const Window& w = r.local.window();
    SECTION("overruns the end by one byte") {
        CHECK(w.write(r.base() + 241, k_payload) == Status::invalid_param);
    }
    SECTION("starts before the window") {
        CHECK(w.write(r.base() - 8, k_payload) == Status::invalid_param);
    }
    SECTION("starts past the end") {
        CHECK(w.write(r.base() + 257, {}) == Status::invalid_param);
    }
    SECTION("address 0") {
        CHECK(w.write(0, k_payload) == Status::invalid_param);
    }
    SECTION("a size that wraps the address space") {
        CHECK(w.translate(r.base() + 8, UINT64_MAX - 4) == nullptr);
    }
    SECTION("a flag past the end") {
        CHECK(w.publish(r.base() + 253, 1) == Status::invalid_param);
    }
    SECTION("a misaligned flag") {
        CHECK(w.publish(r.base() + 2, 1) == Status::invalid_param);
    }
    SECTION("an empty window") {
        CHECK(Window{}.write(r.base(), k_payload) == Status::invalid_param);
    }
    CHECK(r.untouched());
}

TEST_CASE("an unbounded window trusts the process's own addresses", "[afd][window]") {
    Region r;
    const Window w = Window::unbounded();
    REQUIRE(w.write(r.base() + 8, k_payload) == Status::ok);
    CHECK(r.bytes[8] == std::byte{0xAB});
    CHECK(w.write(0, k_payload) == Status::invalid_param);
    w.ring(); // no doorbell: nothing happens
}

TEST_CASE("AttentionToFfn refuses an FFN context whose buffers are outside the window",
          "[afd][window]") {
    // One region: descriptors [0, 192), token data [256, 576) (A = M = BS = 2, K = 5, 8-byte
    // tokens).
    FfnFixture fx(k_upstream, 55, false);
    alignas(64) std::array<std::byte, 576> memory{};
    const std::span<std::byte> all(memory);
    const ScheduleContextView v = fx.view();
    v.set(fields::common::attn_to_ffn_token_size, 8u);
    v.set(fields::ffn::token_info_buf, address_of(memory.data()));
    v.set(fields::ffn::token_data_buf, address_of(memory.data() + 256));
    v.set(fields::ffn::token_data_buf_size, std::uint64_t{320});
    const LocalWindow whole(all);
    const LocalWindow data_short_by_one(all.first(575));
    const LocalWindow no_descriptors(all.subspan(256));
    CHECK(AttentionToFfn::attach(v, whole.window()).has_value());
    CHECK(AttentionToFfn::attach(v, data_short_by_one.window()).status() == Status::invalid_param);
    CHECK(AttentionToFfn::attach(v, no_descriptors.window()).status() == Status::invalid_param);
    CHECK(AttentionToFfn::attach(v).has_value()); // unbounded: trusted as given
}

TEST_CASE("FfnToAttention refuses a session whose buffers are outside its window",
          "[afd][window]") {
    const Geometry g{1, 2, 2, 3};
    ContextImage ctx;
    alignas(64) std::array<std::byte, 1024> memory{};
    const ScheduleContextView v = ctx.view();
    v.set(fields::common::micro_batch_num, 2u);
    v.set(fields::common::micro_batch_size, 2u);
    v.set(fields::common::selected_expert_num, 3u);
    v.set(fields::common::ffn_to_attn_token_size, 32u);
    v.set(fields::common::schedule_mode, k_schedule_mode_attention);
    v.set(fields::attention::token_info_buf, address_of(memory.data()));
    v.set(fields::attention::token_info_buf_size, *attention_token_info_size(g));
    v.set(fields::attention::token_data_buf, address_of(memory.data() + 64));
    v.set(fields::attention::token_data_buf_size, *attention_token_data_size(g, 32));
    const std::array<ScheduleContextView, 1> sessions{v};
    const std::span<std::byte> all(memory);
    const LocalWindow whole(all.first(64 + 12 * 32));
    const LocalWindow short_by_one(all.first(64 + 12 * 32 - 1));
    CHECK(FfnToAttention::attach(sessions, std::array{whole.window()}).has_value());
    CHECK(FfnToAttention::attach(sessions, std::array{short_by_one.window()}).status() ==
          Status::invalid_param);
    CHECK(FfnToAttention::attach(sessions, std::span<const Window>{}).status() ==
          Status::invalid_param);
}
