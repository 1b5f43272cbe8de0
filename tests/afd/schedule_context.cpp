// ScheduleContext layout and ScheduleContextView: offsets, constexpr access, atomics, and the
// layout table in docs/afd.md checked against the code.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <ferry/afd.hpp>

using namespace ferry::afd;

namespace {
// Build an image in a constant expression: set through the view, read back through the struct.
constexpr ScheduleContext built_at_compile_time() {
    ContextBytes bytes{};
    const ScheduleContextView v{std::span(bytes)};
    v.set(fields::common::session_num, 2u);
    v.set(fields::common::schedule_mode, -7);
    v.set(fields::ffn::polling_index, std::uint64_t{0x0102030405060708});
    v.set(fields::ffn::out_num, 0xA1B2C3D4u);
    return v.load();
}
constexpr ScheduleContext compile_time = built_at_compile_time();
static_assert(compile_time.common.session_num == 2);
static_assert(compile_time.common.schedule_mode == -7);
static_assert(compile_time.ffn.polling_index == 0x0102030405060708);
static_assert(compile_time.ffn.out_num == 0xA1B2C3D4u);

constexpr bool little_endian_bytes() {
    ScheduleContext ctx{};
    ctx.control.run_flag = 0x11223344;
    const ContextBytes b = to_bytes(ctx);
    return b[128] == std::byte{0x44} && b[131] == std::byte{0x11} && from_bytes(b).control.run_flag == 0x11223344;
}
static_assert(little_endian_bytes());
} // namespace

TEST_CASE("view reads what the struct wrote, at the documented offsets", "[afd][layout]") {
    ScheduleContext ctx{};
    ctx.common.micro_batch_size = 256;
    ctx.attention.micro_batch_id = 3;
    ctx.ffn.expert_ids_buf = 0xDEADBEEF00112233;
    ctx.ffn.out_num = 64;
    ContextImage image;
    std::memcpy(image.bytes.data(), &ctx, sizeof ctx);
    const ConstScheduleContextView v = std::as_const(image).view();
    CHECK(v.get(fields::common::micro_batch_size) == 256);
    CHECK(v.get(fields::attention::micro_batch_id) == 3);
    CHECK(v.get(fields::ffn::expert_ids_buf) == 0xDEADBEEF00112233);
    CHECK(v.get(fields::ffn::out_num) == 64);
    std::uint32_t raw = 0;
    std::memcpy(&raw, image.bytes.data() + 576, 4);
    CHECK(raw == 64);
}

TEST_CASE("run_flag and polling_index are atomic on an aligned image", "[afd][layout]") {
    ContextImage image;
    const ScheduleContextView v = image.view();
    REQUIRE(v.atomics_usable());
    v.set_run_flag(1);
    v.set_polling_index(2);
    CHECK(v.get(fields::control::run_flag) == 1);
    CHECK(v.get(fields::ffn::polling_index) == 2);
    v.set(fields::control::run_flag, 0);
    CHECK(v.run_flag() == 0);
    const ScheduleContextView misaligned(image.bytes.data() + 4);
    CHECK_FALSE(misaligned.atomics_usable());
}

TEST_CASE("store and load round-trip the whole image", "[afd][layout]") {
    ScheduleContext ctx{};
    ctx.common.expert_num = 9;
    ctx.reserve6[383] = 5;
    ContextImage image;
    image.view().store(ctx);
    CHECK(image.bytes[1023] == std::byte{5});
    CHECK(image.view().load().common.expert_num == 9);
}

namespace {
std::string type_of(const FieldInfo& f) {
    switch (f.kind) {
    case FieldKind::u32: return "uint32_t";
    case FieldKind::i32: return "int32_t";
    case FieldKind::u64: return "uint64_t";
    case FieldKind::i8_array: return "int8_t[" + std::to_string(f.size) + "]";
    }
    return "?";
}

std::string trim(std::string s) {
    const auto b = s.find_first_not_of(" `");
    const auto e = s.find_last_not_of(" `");
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Rows "| offset | field | type | ..." of the table under "## Layout" in docs/afd.md.
std::vector<std::vector<std::string>> layout_rows(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    std::string line;
    bool in_section = false;
    while (std::getline(in, line)) {
        if (line.rfind("## ", 0) == 0) {
            in_section = line.rfind("## Layout", 0) == 0;
            continue;
        }
        if (!in_section || line.rfind("| ", 0) != 0 || line.find("---") != std::string::npos) {
            continue;
        }
        std::vector<std::string> cells;
        std::stringstream ss(line.substr(1));
        std::string cell;
        while (std::getline(ss, cell, '|')) {
            cells.push_back(trim(cell));
        }
        if (!cells.empty() && cells[0] != "offset") {
            rows.push_back(cells);
        }
    }
    return rows;
}
} // namespace

TEST_CASE("docs/afd.md's layout table matches the code", "[afd][layout][docs]") {
    const char* path = std::getenv("FERRY_AFD_DOC");
    REQUIRE(path != nullptr);
    const auto rows = layout_rows(path);
    REQUIRE(rows.size() == k_layout.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        INFO("row " << i);
        REQUIRE(rows[i].size() >= 3);
        CHECK(rows[i][0] == std::to_string(k_layout[i].offset));
        CHECK(rows[i][1] == k_layout[i].name);
        CHECK(rows[i][2] == type_of(k_layout[i]));
    }
}
