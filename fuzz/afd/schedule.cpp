// libFuzzer: the ScheduleContext validator and both schedulers over random contexts and buffers.
//
// Input: [1024-byte context image][control bytes][buffer sizes]. Half the inputs are "shaped":
// the control bytes pick a small geometry, schedule_mode, exact or off-by-some size fields and
// pointers into (or just outside) six buffers registered in an AllocationRegistry, so the
// fuzzer reaches the scheduling code, not only the first checks. The scheduler runs over the
// RegistryResolver, so a pointer the context invents is refused, never dereferenced, and with
// Timeout 0 (ferry's extension), so a call never blocks. Invariants checked (abort on failure):
//  - a rejected call changes nothing, neither the context nor any buffer;
//  - a call that waited and served nothing leaves the buffers alone and out_num = 0;
//  - a served call writes out_num <= A rows whose session ids are in range and whose
//    descriptors are reset (flag 0, ids 0x7F7F7F7F).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ferry/afd.hpp>
#include <ferry/afd/registry_resolver.hpp>

using namespace ferry::afd;

namespace {

struct Reader {
    const std::uint8_t* p;
    std::size_t n;
    std::uint8_t byte() {
        if (n == 0) {
            return 0;
        }
        --n;
        return *p++;
    }
    std::uint32_t u16() { return static_cast<std::uint32_t>(byte()) | static_cast<std::uint32_t>(byte()) << 8; }
};

void check(bool ok) {
    if (!ok) {
        std::abort();
    }
}

constexpr std::size_t k_buffers = 6;

struct Arena {
    std::vector<std::vector<std::byte>> buffers;
    ferry::AllocationRegistry registry;
    explicit Arena(Reader& in) {
        for (std::size_t i = 0; i < k_buffers; ++i) {
            buffers.emplace_back(1 + in.u16() % 4096);
            for (std::byte& b : buffers.back()) {
                b = std::byte(in.byte());
            }
            const auto base = reinterpret_cast<std::uintptr_t>(buffers.back().data());
            const std::size_t size = buffers.back().size();
            (void)registry.insert(ferry::Allocation{base, size, size, 0, ferry::AllocationKind::device});
        }
    }
    // An address in buffer i: inside it, at its end, or before it, by the control byte.
    std::uint64_t address(std::size_t i, std::uint8_t how) const {
        const auto base = reinterpret_cast<std::uintptr_t>(buffers[i].data());
        switch (how % 8) {
        case 0: return base + buffers[i].size();
        case 1: return base - 4;
        case 2: return base + (how / 8) % buffers[i].size();
        default: return base;
        }
    }
};

// Rewrites the image into a mostly well-formed FFN (or attention) context over the arena.
void shape(ScheduleContextView v, Reader& in, const Arena& arena) {
    namespace c = fields::common;
    namespace f = fields::ffn;
    namespace a = fields::attention;
    const Geometry g{1u + in.byte() % 6, 1u + in.byte() % 4, 1u + in.byte() % 4, 1u + in.byte() % 6};
    v.set(c::session_num, g.session_num);
    v.set(c::micro_batch_num, g.micro_batch_num);
    v.set(c::micro_batch_size, g.micro_batch_size);
    v.set(c::selected_expert_num, g.selected_expert_num);
    v.set(c::schedule_mode, static_cast<std::int32_t>(in.byte() % 3 == 0 ? 1 : 0));
    v.set_run_flag(in.byte() % 8 == 0 ? 0 : 1);
    v.set_polling_index(in.byte() % (g.micro_batch_num + 1));
    const std::int64_t slack = static_cast<std::int64_t>(in.byte() % 3) - 1; // -1, 0, +1 bytes
    const auto sized = [&](Size s) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(*s) + slack); };
    v.set(f::token_info_buf, arena.address(0, in.byte()));
    v.set(f::token_info_buf_size, sized(ffn_token_info_size(g)));
    v.set(f::token_data_buf, arena.address(1, in.byte()));
    v.set(f::layer_ids_buf, arena.address(2, in.byte()));
    v.set(f::layer_ids_buf_size, sized(id_buffer_size(g)));
    v.set(f::session_ids_buf, arena.address(3, in.byte()));
    v.set(f::session_ids_buf_size, sized(id_buffer_size(g)));
    v.set(f::micro_batch_ids_buf, arena.address(4, in.byte()));
    v.set(f::micro_batch_ids_buf_size, sized(id_buffer_size(g)));
    v.set(f::expert_ids_buf, arena.address(5, in.byte()));
    v.set(f::expert_ids_buf_size, sized(expert_ids_buffer_size(g)));
    v.set(a::token_info_buf, arena.address(0, in.byte()));
    v.set(a::token_info_buf_size, sized(attention_token_info_size(g)));
    v.set(a::token_data_buf, arena.address(1, in.byte()));
    v.set(a::micro_batch_id, in.byte() % (g.micro_batch_num + 1));
}

void check_served(ConstScheduleContextView v, const ScheduleOutcome& o) {
    const Geometry g{v.get(fields::common::session_num), v.get(fields::common::micro_batch_num),
                     v.get(fields::common::micro_batch_size), v.get(fields::common::selected_expert_num)};
    check(o.out_num == v.get(fields::ffn::out_num) && o.out_num <= g.session_num);
    const auto* session_ids = reinterpret_cast<const std::byte*>(v.get(fields::ffn::session_ids_buf));
    const auto* mb_ids = reinterpret_cast<const std::byte*>(v.get(fields::ffn::micro_batch_ids_buf));
    auto* info = reinterpret_cast<std::byte*>(v.get(fields::ffn::token_info_buf));
    const FfnDescriptorTable table(info, g);
    for (std::uint32_t row = 0; row < o.out_num; ++row) {
        const std::int32_t s = detail::load_i32(session_ids + 4 * row);
        const std::int32_t mb = detail::load_i32(mb_ids + 4 * row);
        check(s >= 0 && static_cast<std::uint32_t>(s) < g.session_num && mb >= 0 &&
              static_cast<std::uint32_t>(mb) < g.micro_batch_num);
        const FfnDescriptor d = table.at(static_cast<std::uint32_t>(s), static_cast<std::uint32_t>(mb));
        check(d.flag() == 0);
        for (std::size_t i = 0; i < d.expert_id_count(); ++i) {
            check(d.expert_id(i) == k_reset_expert_id);
        }
    }
}

// Sets flag 1 on the descriptors the input's bits choose, when the table lies inside buffer 0.
void make_ready(ScheduleContextView v, Reader& in, const Arena& arena) {
    const Geometry g{v.get(fields::common::session_num), v.get(fields::common::micro_batch_num),
                     v.get(fields::common::micro_batch_size), v.get(fields::common::selected_expert_num)};
    const Size bytes = ffn_token_info_size(g);
    auto* info = reinterpret_cast<std::byte*>(v.get(fields::ffn::token_info_buf));
    if (!bytes || !arena.registry.find(info, *bytes) || !detail::is_aligned(info, 4)) {
        return;
    }
    const FfnDescriptorTable table(info, g);
    std::uint8_t bits = 0;
    for (std::uint32_t s = 0; s < g.session_num; ++s) {
        for (std::uint32_t mb = 0; mb < g.micro_batch_num; ++mb) {
            const std::uint32_t i = s * g.micro_batch_num + mb;
            bits = i % 8 == 0 ? in.byte() : bits;
            table.at(s, mb).set_flag((bits >> (i % 8)) & 1 ? 1 : 0);
        }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size < k_context_size + 1) {
        return 0;
    }
    ContextImage image;
    std::memcpy(image.bytes.data(), data, k_context_size);
    Reader in{data + k_context_size, size - k_context_size};
    const std::uint8_t mode = in.byte();
    Arena arena(in);
    if (mode & 1) {
        shape(image.view(), in, arena);
        if (mode & 8) {
            make_ready(image.view(), in, arena);
        }
    }
    const std::optional<std::int32_t> sgs =
        (mode & 2) ? std::optional<std::int32_t>(static_cast<std::int32_t>(in.u16() % 8) - 1) : std::nullopt;
    const std::optional<std::int32_t> exec = (mode & 4) ? std::optional<std::int32_t>(in.byte() % 3) : std::nullopt;
    const ContextBytes context_before = image.bytes;
    const std::vector<std::vector<std::byte>> buffers_before = arena.buffers;
    RegistryResolver resolver(arena.registry);
    ScheduleOutcome o;
    if (image.view().get(fields::common::schedule_mode) == k_schedule_mode_attention) {
        AttentionWorkerScheduler<Spin, RegistryResolver> attention(Spin{}, resolver);
        o = attention.schedule_once(image.bytes.data(), ferry::no_wait);
    } else {
        GroupSyncScheduler<Spin, LowestReady, SerialExecutor, RegistryResolver> ffn(Spin{}, LowestReady{},
                                                                                    SerialExecutor{}, resolver);
        o = ffn.schedule_once(ContextTensor{image.bytes.data(), k_context_size, 1}, sgs, exec, ferry::no_wait);
        if (o.ok() && o.exit == ScheduleExit::served) {
            check_served(image.view(), o);
        }
    }
    if (!o.ok()) {
        check(image.bytes == context_before && arena.buffers == buffers_before);
    } else if (o.exit != ScheduleExit::served) {
        check(arena.buffers == buffers_before);
    }
    return 0;
}
