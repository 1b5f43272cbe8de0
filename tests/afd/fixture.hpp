#pragma once
// Test fixture: an FFN ScheduleContext with its buffers, laid out like CANN's kernel unit tests
// (docs/cann-contract/afd.md#kernel-unit-tests, InitFfn): every descriptor flag 1, layer_id 55,
// expert ids 0..BS·K-1; output buffers of exactly the required sizes.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include <ferry/afd.hpp>

namespace afd_test {

using namespace ferry::afd;

inline std::uint64_t address_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

struct FfnFixture {
    Geometry g;
    ContextImage ctx;
    std::vector<std::int32_t> token_info; // descriptors (int32 words)
    std::vector<std::byte> token_data;
    std::vector<std::int32_t> layer_ids, session_ids, micro_batch_ids, expert_ids;

    explicit FfnFixture(Geometry geometry, std::int32_t layer = 55, bool all_ready = true)
        : g(geometry), token_info(*ffn_token_info_size(g) / 4), token_data(512),
          layer_ids(g.session_num), session_ids(g.session_num), micro_batch_ids(g.session_num),
          expert_ids(*expert_ids_buffer_size(g) / 4) {
        namespace c = fields::common;
        namespace f = fields::ffn;
        const ScheduleContextView v = ctx.view();
        v.set(c::session_num, g.session_num);
        v.set(c::micro_batch_num, g.micro_batch_num);
        v.set(c::micro_batch_size, g.micro_batch_size);
        v.set(c::selected_expert_num, g.selected_expert_num);
        v.set(c::schedule_mode, k_schedule_mode_ffn);
        v.set_run_flag(1);
        v.set(f::token_info_buf, address_of(token_info.data()));
        v.set(f::token_info_buf_size, *ffn_token_info_size(g));
        v.set(f::token_data_buf, address_of(token_data.data()));
        v.set(f::token_data_buf_size, token_data.size());
        v.set(f::layer_ids_buf, address_of(layer_ids.data()));
        v.set(f::layer_ids_buf_size, 4 * layer_ids.size());
        v.set(f::session_ids_buf, address_of(session_ids.data()));
        v.set(f::session_ids_buf_size, 4 * session_ids.size());
        v.set(f::micro_batch_ids_buf, address_of(micro_batch_ids.data()));
        v.set(f::micro_batch_ids_buf_size, 4 * micro_batch_ids.size());
        v.set(f::expert_ids_buf, address_of(expert_ids.data()));
        v.set(f::expert_ids_buf_size, 4 * expert_ids.size());
        for (std::uint32_t s = 0; s < g.session_num; ++s) {
            for (std::uint32_t mb = 0; mb < g.micro_batch_num; ++mb) {
                const FfnDescriptor d = table().at(s, mb);
                d.set_layer_id(layer);
                for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
                    d.set_expert_id(i, static_cast<std::int32_t>(i));
                }
                d.set_flag(all_ready ? 1 : 0);
            }
        }
    }
    FfnFixture(const FfnFixture&) = delete;
    FfnFixture& operator=(const FfnFixture&) = delete;

    [[nodiscard]] ScheduleContextView view() { return ctx.view(); }
    [[nodiscard]] std::byte* context() { return ctx.bytes.data(); }
    [[nodiscard]] FfnDescriptorTable table() {
        return {reinterpret_cast<std::byte*>(token_info.data()), g};
    }
    [[nodiscard]] std::uint32_t out_num() { return view().get(fields::ffn::out_num); }
    void set_ready(std::uint32_t s, std::uint32_t mb, std::int32_t flag = 1) { table().at(s, mb).set_flag(flag); }

    // Everything a call may modify, for "changes nothing" checks.
    struct Snapshot {
        ContextBytes context;
        std::vector<std::int32_t> token_info, layer_ids, session_ids, micro_batch_ids, expert_ids;
        friend bool operator==(const Snapshot&, const Snapshot&) = default;
    };
    [[nodiscard]] Snapshot snapshot() const {
        return {ctx.bytes, token_info, layer_ids, session_ids, micro_batch_ids, expert_ids};
    }
};

// A = M = BS = 2, K = 5: the upstream kernel unit-test configuration.
inline constexpr Geometry k_upstream{2, 2, 2, 5};

inline std::vector<std::int32_t> iota_ids(std::size_t rows, std::size_t per_row) {
    std::vector<std::int32_t> ids;
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < per_row; ++i) {
            ids.push_back(static_cast<std::int32_t>(i));
        }
    }
    return ids;
}

} // namespace afd_test
