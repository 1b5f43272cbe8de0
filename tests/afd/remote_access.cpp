// RemoteAccess: a Window over memory this process does not map. The Window keeps the bounds
// check, so the access only ever sees in-window ranges; the simulators write through it in the
// order the owner relies on — payload, ids and layer, fence, flag, ring — and stop at the first
// failure without publishing. A fake access records every operation and applies it to a private
// copy of the "owner's" memory at made-up owner addresses.
#include "fixture.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/afd.hpp>
#include <ferry/afd/remote_access.hpp>
#include <optional>
#include <string>
#include <vector>

using namespace afd_test;
using ferry::Status;

namespace {

constexpr std::uint64_t k_base = 0x7f00'0000'1000; // the owner's address of its memory

struct Op {
    enum Kind { write, fence, flag, ring } kind;
    std::uint64_t offset = 0; // from k_base
    std::uint64_t size = 0;
    std::int32_t value = 0;
};

// Records operations; applies writes and flags to `memory`. fail_at: the n-th operation (and
// every later one) answers peer_lost and changes nothing, as a lost node's puts do.
class FakeRemote final : public RemoteAccess {
public:
    explicit FakeRemote(std::size_t size) : memory(size) {}

    Status write(std::uint64_t address, std::span<const std::byte> bytes) noexcept override {
        if (failing()) {
            return Status::peer_lost;
        }
        if (address < k_base || address - k_base + bytes.size() > memory.size()) {
            outside = true; // the Window let an out-of-window range through
            return Status::invalid_param;
        }
        std::copy(bytes.begin(), bytes.end(), memory.begin() + (address - k_base));
        ops.push_back({Op::write, address - k_base, bytes.size(), 0});
        return Status::ok;
    }
    Status publish(std::uint64_t address, std::int32_t value) noexcept override {
        if (failing()) {
            return Status::peer_lost;
        }
        ops.push_back({Op::fence});
        std::memcpy(memory.data() + (address - k_base), &value, sizeof value);
        ops.push_back({Op::flag, address - k_base, sizeof value, value});
        return Status::ok;
    }
    Status ring() noexcept override {
        if (failing()) {
            return Status::peer_lost;
        }
        ops.push_back({Op::ring});
        return Status::ok;
    }
    Status flush(const ferry::Timeout&) noexcept override {
        ++flushes;
        return failing() ? Status::peer_lost : Status::ok;
    }

    [[nodiscard]] Window window() { return {*this, k_base, memory.size()}; }
    [[nodiscard]] std::string kinds() const {
        std::string s;
        for (const Op& op : ops) {
            s += "w|fr"[op.kind];
        }
        return s;
    }

    std::vector<std::byte> memory;
    std::vector<Op> ops;
    std::optional<std::size_t> fail_at;
    bool outside = false;
    std::size_t flushes = 0;

private:
    bool failing() {
        const std::size_t n = calls_++;
        return fail_at && n >= *fail_at;
    }
    std::size_t calls_ = 0;
};

const std::array<std::byte, 16> k_payload = [] {
    std::array<std::byte, 16> p{};
    p.fill(std::byte{0xAB});
    return p;
}();

// An FFN context whose buffers are at the owner's addresses: descriptors at +0, token data after.
constexpr Geometry k_geometry{2, 2, 2, 3};
constexpr std::uint32_t k_token = 8;
struct RemoteFfn {
    ContextImage ctx;
    std::uint64_t info = *ffn_token_info_size(k_geometry);
    std::uint64_t data = *ffn_token_data_size(k_geometry, k_token);
    FakeRemote remote{info + data};
    RemoteFfn() {
        namespace c = fields::common;
        namespace f = fields::ffn;
        const ScheduleContextView v = ctx.view();
        v.set(c::session_num, k_geometry.session_num);
        v.set(c::micro_batch_num, k_geometry.micro_batch_num);
        v.set(c::micro_batch_size, k_geometry.micro_batch_size);
        v.set(c::selected_expert_num, k_geometry.selected_expert_num);
        v.set(c::attn_to_ffn_token_size, k_token);
        v.set(c::schedule_mode, k_schedule_mode_ffn);
        v.set_run_flag(1);
        v.set(f::token_info_buf, k_base);
        v.set(f::token_info_buf_size, info);
        v.set(f::token_data_buf, k_base + info);
        v.set(f::token_data_buf_size, data);
    }
};

} // namespace

TEST_CASE("a remote window has no local bytes and checks ranges itself", "[afd][window][remote]") {
    FakeRemote remote(256);
    const Window w = remote.window();
    CHECK(w.is_remote());
    CHECK(w.owner_base() == k_base);
    CHECK(w.size() == 256);
    CHECK(w.translate(k_base, 4) == nullptr);
    CHECK(w.flag_at(k_base) == nullptr);
    CHECK(w.contains(k_base + 240, 16));
    CHECK_FALSE(w.contains(k_base + 241, 16));
    REQUIRE(w.write(k_base + 240, k_payload) == Status::ok);
    REQUIRE(w.publish(k_base + 252, 7) == Status::ok);
    REQUIRE(w.ring() == Status::ok);
    CHECK(remote.kinds() == "w|fr");
    CHECK(w.flush(ferry::forever) == Status::ok);
    CHECK(remote.flushes == 1);
    CHECK(remote.memory[240] == std::byte{0xAB});
    CHECK(remote.ops[2].offset == 252);
    CHECK(remote.ops[2].value == 7);
}

TEST_CASE("a remote window refuses what is not inside it, and the access sees nothing",
          "[afd][window][remote]") {
    FakeRemote remote(256);
    const Window w = remote.window();
    CHECK(w.write(k_base + 241, k_payload) == Status::invalid_param);
    CHECK(w.write(k_base - 8, k_payload) == Status::invalid_param);
    CHECK(w.write(k_base + 257, {}) == Status::invalid_param);
    CHECK(w.write(0, k_payload) == Status::invalid_param);
    CHECK(w.write(k_base + 8, std::span(k_payload.data(), 0)) == Status::ok); // empty, inside
    CHECK(w.publish(k_base + 254, 1) == Status::invalid_param);               // misaligned
    CHECK(w.publish(k_base + 256, 1) == Status::invalid_param);               // past the end
    CHECK_FALSE(w.reaches(k_base + 2, 4, 4));
    CHECK(remote.ops.size() == 1); // only the empty in-window write
    CHECK_FALSE(remote.outside);
    CHECK(std::all_of(remote.memory.begin(), remote.memory.end(),
                      [](std::byte b) { return b == std::byte{0}; }));
}

TEST_CASE("AttentionToFfn over a remote window: payload, ids, layer, fence, flag, ring",
          "[afd][a2f][remote]") {
    RemoteFfn ffn;
    const auto sender = AttentionToFfn::attach(ffn.ctx.view(), ffn.remote.window());
    REQUIRE(sender.has_value());
    CHECK(sender->slot(0, 0, 0, 0).empty()); // nothing of the FFN's memory is mapped here
    // session 1, mb 0; token 1's last slot masked.
    const std::vector<std::int32_t> ids{4, 5, 6, 7, 8, k_masked_expert_floor};
    std::vector<std::byte> tokens(2 * k_token);
    std::fill_n(tokens.begin() + k_token, k_token, std::byte{0x22});
    REQUIRE(sender->send(1, 0, 9, ids, tokens) == Status::ok);
    CHECK(ffn.remote.kinds() == "wwwwwww|fr"); // 5 payload slots, ids, layer, fence, flag, ring

    const std::uint64_t desc = 1 * 2 * *ffn_desc_size(k_geometry); // (s·M + mb)·per_desc
    const auto& ops = ffn.remote.ops;
    for (std::size_t i = 0; i < 5; ++i) {
        const std::uint64_t slot = ((1 * 2 + 0) * 2 + (i / 3)) * 3 + i % 3;
        CHECK(ops[i].offset == ffn.info + slot * k_token);
    }
    CHECK(ops[5].offset == desc + k_desc_expert_ids_offset);
    CHECK(ops[5].size == 6 * sizeof(std::int32_t));
    CHECK(ops[6].offset == desc + 4);
    CHECK(ops[8].offset == desc);
    CHECK(ops[8].value == 1);
    const FfnDescriptor d = FfnDescriptorTable(ffn.remote.memory.data(), k_geometry).at(1, 0);
    CHECK(d.flag() == 1);
    CHECK(d.layer_id() == 9);
    CHECK(d.expert_id(5) == k_masked_expert_floor);
    CHECK(ffn.remote.memory[ffn.info + ((1 * 2 + 0) * 2 + 1) * 3 * k_token] == std::byte{0x22});
}

TEST_CASE("AttentionToFfn refuses a remote window its buffers do not fit, writing nothing",
          "[afd][a2f][remote]") {
    RemoteFfn ffn;
    const Window short_by_one(ffn.remote, k_base, ffn.info + ffn.data - 1);
    CHECK(AttentionToFfn::attach(ffn.ctx.view(), short_by_one).status() == Status::invalid_param);
    ffn.ctx.view().set(fields::ffn::token_info_buf, k_base + 2); // misaligned descriptors
    CHECK(AttentionToFfn::attach(ffn.ctx.view(), ffn.remote.window()).status() ==
          Status::invalid_param);
    CHECK(ffn.remote.ops.empty());
}

TEST_CASE("AttentionToFfn stops at a failed put and never publishes the flag",
          "[afd][a2f][remote]") {
    RemoteFfn ffn;
    const auto sender = AttentionToFfn::attach(ffn.ctx.view(), ffn.remote.window());
    REQUIRE(sender.has_value());
    const std::vector<std::int32_t> ids{0, 1, 2, 3, 4, 5};
    const std::vector<std::byte> tokens(2 * k_token, std::byte{1});
    SECTION("a payload put fails") {
        ffn.remote.fail_at = 2;
    }
    SECTION("the layer put fails") {
        ffn.remote.fail_at = 6;
    }
    SECTION("the fenced flag fails") {
        ffn.remote.fail_at = 7;
    }
    CHECK(sender->send(0, 1, 3, ids, tokens) == Status::peer_lost);
    CHECK(ffn.remote.kinds().find_first_of("|fr") == std::string::npos);
}

TEST_CASE("AttentionToFfn over a remote window still stops on its context's run_flag",
          "[afd][a2f][remote]") {
    RemoteFfn ffn;
    const auto sender = AttentionToFfn::attach(ffn.ctx.view(), ffn.remote.window());
    REQUIRE(sender.has_value());
    ffn.ctx.view().set_run_flag(0);
    const std::vector<std::int32_t> ids(6, 0);
    const std::vector<std::byte> tokens(2 * k_token);
    CHECK(sender->send(0, 0, 0, ids, tokens) == Status::stopped);
    CHECK(ffn.remote.ops.empty());
}

TEST_CASE("FfnToAttention over remote windows: each result before its flag, one ring per session",
          "[afd][f2a][remote]") {
    constexpr std::uint32_t k_result = 4;
    const Geometry g{2, 2, 2, 5};
    const std::uint64_t flags = *attention_token_info_size(g);
    FakeRemote r0(flags + 2 * 10 * k_result), r1(flags + 2 * 10 * k_result);
    std::array<ContextImage, 2> ctx;
    for (ContextImage& c : ctx) {
        ScheduleContext s{};
        s.common = {2, 2, 2, 5, 8, 8, k_result, k_schedule_mode_attention, {}};
        s.attention.token_info_buf = k_base;
        s.attention.token_info_buf_size = flags;
        s.attention.token_data_buf = k_base + flags;
        s.attention.token_data_buf_size = 2 * 10 * k_result;
        c.view().store(s);
    }
    const std::vector<ScheduleContextView> views{ctx[0].view(), ctx[1].view()};
    const std::vector<Window> windows{r0.window(), r1.window()};
    auto back = FfnToAttention::attach(views, windows);
    REQUIRE(back.has_value());
    Batch batch;
    batch.rows = {{3, 1, 1, 0, 2}, {6, 0, 0, 1, 4}, {7, 1, 0, 1, 1}};
    const std::vector<std::byte> results(3 * k_result, std::byte{0x5A});
    REQUIRE(back->send(batch, results) == Status::ok);
    CHECK(r1.kinds() == "w|fw|fr");
    CHECK(r0.kinds() == "w|fr");
    CHECK(r1.ops[0].offset == flags + 12 * k_result); // mb 1, token 0, k 2
    CHECK(r1.ops[2].offset == 4 * 12);
    CHECK(r0.ops[2].offset == 4 * 9); // mb 0, token 1, k 4

    r1.fail_at = 0; // session 1's node is lost
    CHECK(back->send(batch, results) == Status::peer_lost);
}
