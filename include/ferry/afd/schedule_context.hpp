#pragma once
// ferry::afd::ScheduleContext — the 1024-byte Attention/FFN schedule protocol, byte for byte.
//
// docs/cann-contract/afd.md#schedulecontext-layout: the whole header is #pragma pack(1); the areas
// are laid out in *member* order common @0, control @128, attention @256, ffn @384, reserve6 @640
// (the sub-struct types are declared in another order upstream; only member order matters). Every
// offset below is checked by a static_assert against that table, so a change of layout cannot
// compile. Integers are little-endian on the target; ferry's hosts are little-endian too
// (asserted).

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ferry::afd {

static_assert(std::endian::native == std::endian::little,
              "the ScheduleContext ABI is little-endian");

inline constexpr std::size_t k_context_size = 1024;
inline constexpr std::int32_t k_valid_flag = 1;         // kValidFlag
inline constexpr std::int32_t k_invalid_flag = 0;       // kInvalidFlag
inline constexpr std::int32_t k_execute_mode_once = 0;  // kExecuteModeOnce
inline constexpr std::int32_t k_execute_mode_loop = 1;  // kExecuteModeLoop (never implemented)
// FfnWorkerScheduler's registered default for an absent sync_group_size attribute.
inline constexpr std::int32_t k_default_sync_group_size = 1;
inline constexpr std::int32_t k_schedule_mode_ffn = 0;  // kScheduleModeFfn
inline constexpr std::int32_t k_schedule_mode_attention = 1; // a literal 1 upstream
inline constexpr std::int32_t k_reset_expert_id = 0x7F7F7F7F; // memset(ids, 0x7F)
inline constexpr std::uint64_t k_buffer_align = 512;    // window and output buffer alignment

#pragma pack(push, 1)
struct CommonArea {
    std::uint32_t session_num{};            // A: attention nodes
    std::uint32_t micro_batch_num{};        // M
    std::uint32_t micro_batch_size{};       // BS: tokens per micro batch
    std::uint32_t selected_expert_num{};    // K: top-k plus shared experts
    std::uint32_t expert_num{};             // experts per layer
    std::uint32_t attn_to_ffn_token_size{}; // bytes per token slot in the FFN window (512-aligned)
    std::uint32_t ffn_to_attn_token_size{}; // bytes per token slot in the attention window
    std::int32_t schedule_mode{};           // 0 = FFN, 1 = attention
    std::int8_t reserve0[96]{};
};

struct ControlArea {
    std::int32_t run_flag{}; // 0 = exit, 1 = running
    std::int8_t reserve2[124]{};
};

struct AttentionArea {
    std::uint64_t token_info_buf{}; // [M][BS*K] int32 flags
    std::uint64_t token_info_buf_size{};
    std::uint64_t token_data_buf{};
    std::uint64_t token_data_buf_size{};
    std::uint32_t micro_batch_id{}; // the micro batch last found ready
    std::int8_t reserve5[92]{};
};

struct FfnArea {
    std::uint64_t token_info_buf{}; // [A][M] FfnDataDesc
    std::uint64_t token_info_buf_size{};
    std::uint64_t token_data_buf{}; // bytes [A][M][BS][K][attn_to_ffn_token_size]
    std::uint64_t token_data_buf_size{};
    std::uint64_t polling_index{}; // all-sync mode: the next micro batch to wait on
    std::int8_t reserve3[88]{};
    std::uint64_t layer_ids_buf{}; // out: int32[A]
    std::uint64_t layer_ids_buf_size{};
    std::uint64_t session_ids_buf{}; // out: int32[A]
    std::uint64_t session_ids_buf_size{};
    std::uint64_t micro_batch_ids_buf{}; // out: int32[A]
    std::uint64_t micro_batch_ids_buf_size{};
    std::uint64_t expert_ids_buf{}; // out: int32[A][BS][K]
    std::uint64_t expert_ids_buf_size{};
    std::uint32_t out_num{}; // session rows written by the last call
    std::int8_t reserve4[60]{};
};

struct ScheduleContext {
    CommonArea common;
    ControlArea control;
    AttentionArea attention;
    FfnArea ffn;
    std::int8_t reserve6[384]{};
};
#pragma pack(pop)

// One typed field of the layout: the view reads and writes it by offset (no type punning).
template <typename T, std::size_t Offset>
struct Field {
    using value_type = T;
    static constexpr std::size_t offset = Offset;
    std::string_view name;
};

// A row of the layout table (docs/afd.md is checked against this table by tests/afd).
enum class FieldKind : unsigned char { u32, i32, u64, i8_array };
struct FieldInfo {
    std::string_view name;
    std::size_t offset;
    std::size_t size;
    FieldKind kind;
};

namespace detail {
template <typename T>
constexpr FieldKind field_kind() noexcept {
    if constexpr (std::is_same_v<T, std::uint32_t>) {
        return FieldKind::u32;
    } else if constexpr (std::is_same_v<T, std::int32_t>) {
        return FieldKind::i32;
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
        return FieldKind::u64;
    } else {
        static_assert(std::is_same_v<std::remove_extent_t<T>, std::int8_t>);
        return FieldKind::i8_array;
    }
}
} // namespace detail

#define FERRY_AFD_OFFSET(Area, area, member)                                                       \
    (offsetof(::ferry::afd::ScheduleContext, area) + offsetof(::ferry::afd::Area, member))
#define FERRY_AFD_FIELD(Area, area, member)                                                        \
    inline constexpr ::ferry::afd::Field<decltype(::ferry::afd::Area::member),                     \
                                         FERRY_AFD_OFFSET(Area, area, member)>                     \
        member{#area "." #member}
#define FERRY_AFD_INFO(Area, area, member)                                                         \
    ::ferry::afd::FieldInfo {                                                                      \
        #area "." #member, FERRY_AFD_OFFSET(Area, area, member),                                   \
            sizeof(::ferry::afd::Area::member),                                                    \
            ::ferry::afd::detail::field_kind<decltype(::ferry::afd::Area::member)>()               \
    }

// Field descriptors, spelled with CANN's member names: fields::ffn::polling_index, ...
namespace fields {
namespace common {
FERRY_AFD_FIELD(CommonArea, common, session_num);
FERRY_AFD_FIELD(CommonArea, common, micro_batch_num);
FERRY_AFD_FIELD(CommonArea, common, micro_batch_size);
FERRY_AFD_FIELD(CommonArea, common, selected_expert_num);
FERRY_AFD_FIELD(CommonArea, common, expert_num);
FERRY_AFD_FIELD(CommonArea, common, attn_to_ffn_token_size);
FERRY_AFD_FIELD(CommonArea, common, ffn_to_attn_token_size);
FERRY_AFD_FIELD(CommonArea, common, schedule_mode);
} // namespace common
namespace control {
FERRY_AFD_FIELD(ControlArea, control, run_flag);
} // namespace control
namespace attention {
FERRY_AFD_FIELD(AttentionArea, attention, token_info_buf);
FERRY_AFD_FIELD(AttentionArea, attention, token_info_buf_size);
FERRY_AFD_FIELD(AttentionArea, attention, token_data_buf);
FERRY_AFD_FIELD(AttentionArea, attention, token_data_buf_size);
FERRY_AFD_FIELD(AttentionArea, attention, micro_batch_id);
} // namespace attention
namespace ffn {
FERRY_AFD_FIELD(FfnArea, ffn, token_info_buf);
FERRY_AFD_FIELD(FfnArea, ffn, token_info_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, token_data_buf);
FERRY_AFD_FIELD(FfnArea, ffn, token_data_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, polling_index);
FERRY_AFD_FIELD(FfnArea, ffn, layer_ids_buf);
FERRY_AFD_FIELD(FfnArea, ffn, layer_ids_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, session_ids_buf);
FERRY_AFD_FIELD(FfnArea, ffn, session_ids_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, micro_batch_ids_buf);
FERRY_AFD_FIELD(FfnArea, ffn, micro_batch_ids_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, expert_ids_buf);
FERRY_AFD_FIELD(FfnArea, ffn, expert_ids_buf_size);
FERRY_AFD_FIELD(FfnArea, ffn, out_num);
} // namespace ffn
} // namespace fields

// Every field and reserve in offset order: the source of the layout table in docs/afd.md.
inline constexpr std::array k_layout = {
    FERRY_AFD_INFO(CommonArea, common, session_num),
    FERRY_AFD_INFO(CommonArea, common, micro_batch_num),
    FERRY_AFD_INFO(CommonArea, common, micro_batch_size),
    FERRY_AFD_INFO(CommonArea, common, selected_expert_num),
    FERRY_AFD_INFO(CommonArea, common, expert_num),
    FERRY_AFD_INFO(CommonArea, common, attn_to_ffn_token_size),
    FERRY_AFD_INFO(CommonArea, common, ffn_to_attn_token_size),
    FERRY_AFD_INFO(CommonArea, common, schedule_mode),
    FERRY_AFD_INFO(CommonArea, common, reserve0),
    FERRY_AFD_INFO(ControlArea, control, run_flag),
    FERRY_AFD_INFO(ControlArea, control, reserve2),
    FERRY_AFD_INFO(AttentionArea, attention, token_info_buf),
    FERRY_AFD_INFO(AttentionArea, attention, token_info_buf_size),
    FERRY_AFD_INFO(AttentionArea, attention, token_data_buf),
    FERRY_AFD_INFO(AttentionArea, attention, token_data_buf_size),
    FERRY_AFD_INFO(AttentionArea, attention, micro_batch_id),
    FERRY_AFD_INFO(AttentionArea, attention, reserve5),
    FERRY_AFD_INFO(FfnArea, ffn, token_info_buf),
    FERRY_AFD_INFO(FfnArea, ffn, token_info_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, token_data_buf),
    FERRY_AFD_INFO(FfnArea, ffn, token_data_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, polling_index),
    FERRY_AFD_INFO(FfnArea, ffn, reserve3),
    FERRY_AFD_INFO(FfnArea, ffn, layer_ids_buf),
    FERRY_AFD_INFO(FfnArea, ffn, layer_ids_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, session_ids_buf),
    FERRY_AFD_INFO(FfnArea, ffn, session_ids_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, micro_batch_ids_buf),
    FERRY_AFD_INFO(FfnArea, ffn, micro_batch_ids_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, expert_ids_buf),
    FERRY_AFD_INFO(FfnArea, ffn, expert_ids_buf_size),
    FERRY_AFD_INFO(FfnArea, ffn, out_num),
    FERRY_AFD_INFO(FfnArea, ffn, reserve4),
    FieldInfo{"reserve6", offsetof(ScheduleContext, reserve6), sizeof(ScheduleContext::reserve6),
              FieldKind::i8_array},
};

#undef FERRY_AFD_INFO
#undef FERRY_AFD_FIELD
#undef FERRY_AFD_OFFSET

// The layout table is contiguous: each row starts where the previous one ends, and the last
// ends at 1024. Together with the literal offsets below this pins the whole ABI.
constexpr bool layout_is_contiguous() noexcept {
    std::size_t next = 0;
    for (const FieldInfo& f : k_layout) {
        if (f.offset != next) {
            return false;
        }
        next = f.offset + f.size;
    }
    return next == k_context_size;
}

// --- docs/cann-contract/afd.md#schedulecontext-layout, one assertion per row of its tables ---
static_assert(sizeof(CommonArea) == 128 && sizeof(ControlArea) == 128);
static_assert(sizeof(AttentionArea) == 128 && sizeof(FfnArea) == 256);
static_assert(sizeof(ScheduleContext) == k_context_size);
static_assert(offsetof(ScheduleContext, common) == 0 && offsetof(ScheduleContext, control) == 128);
static_assert(offsetof(ScheduleContext, attention) == 256 && offsetof(ScheduleContext, ffn) == 384);
static_assert(offsetof(ScheduleContext, reserve6) == 640);
static_assert(fields::common::session_num.offset == 0);
static_assert(fields::common::micro_batch_num.offset == 4);
static_assert(fields::common::micro_batch_size.offset == 8);
static_assert(fields::common::selected_expert_num.offset == 12);
static_assert(fields::common::expert_num.offset == 16);
static_assert(fields::common::attn_to_ffn_token_size.offset == 20);
static_assert(fields::common::ffn_to_attn_token_size.offset == 24);
static_assert(fields::common::schedule_mode.offset == 28);
static_assert(offsetof(CommonArea, reserve0) == 32 && sizeof(CommonArea::reserve0) == 96);
static_assert(fields::control::run_flag.offset == 128);
static_assert(offsetof(ControlArea, reserve2) == 4 && sizeof(ControlArea::reserve2) == 124);
static_assert(fields::attention::token_info_buf.offset == 256);
static_assert(fields::attention::token_info_buf_size.offset == 264);
static_assert(fields::attention::token_data_buf.offset == 272);
static_assert(fields::attention::token_data_buf_size.offset == 280);
static_assert(fields::attention::micro_batch_id.offset == 288);
static_assert(offsetof(AttentionArea, reserve5) == 36 && sizeof(AttentionArea::reserve5) == 92);
static_assert(fields::ffn::token_info_buf.offset == 384);
static_assert(fields::ffn::token_info_buf_size.offset == 392);
static_assert(fields::ffn::token_data_buf.offset == 400);
static_assert(fields::ffn::token_data_buf_size.offset == 408);
static_assert(fields::ffn::polling_index.offset == 416);
static_assert(offsetof(FfnArea, reserve3) == 40 && sizeof(FfnArea::reserve3) == 88);
static_assert(fields::ffn::layer_ids_buf.offset == 512);
static_assert(fields::ffn::layer_ids_buf_size.offset == 520);
static_assert(fields::ffn::session_ids_buf.offset == 528);
static_assert(fields::ffn::session_ids_buf_size.offset == 536);
static_assert(fields::ffn::micro_batch_ids_buf.offset == 544);
static_assert(fields::ffn::micro_batch_ids_buf_size.offset == 552);
static_assert(fields::ffn::expert_ids_buf.offset == 560);
static_assert(fields::ffn::expert_ids_buf_size.offset == 568);
static_assert(fields::ffn::out_num.offset == 576);
static_assert(offsetof(FfnArea, reserve4) == 196 && sizeof(FfnArea::reserve4) == 60);
static_assert(sizeof(ScheduleContext::reserve6) == 384);
static_assert(layout_is_contiguous());
static_assert(k_layout.size() == 34);

// The context as bytes and back, usable in constant expressions.
using ContextBytes = std::array<std::byte, k_context_size>;
[[nodiscard]] constexpr ContextBytes to_bytes(const ScheduleContext& ctx) noexcept {
    return std::bit_cast<ContextBytes>(ctx);
}
[[nodiscard]] constexpr ScheduleContext from_bytes(const ContextBytes& bytes) noexcept {
    return std::bit_cast<ScheduleContext>(bytes);
}

} // namespace ferry::afd
