// Programs, kernel registration and lookups, and launches by stub, tiling key, name or callable.
#include "support.hpp"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace {
using ferry::DevBinary;
using ferry::KernelContext;
using ferry::Runtime;
using ferry::Status;

const std::array<std::byte, 16> image{};
const DevBinary elf{ferry::k_magic_elf, 1, image.data(), image.size()};

// Stubs: any unique addresses.
const char stub_add = 0;
const char stub_mul = 0;

ferry::HostKernel noop() {
    return [](const KernelContext&) {};
}

Runtime& device_runtime(const char* threads = "4") {
    Runtime& rt = ferry_test::fresh_runtime({{"FERRY_KERNEL_THREADS", threads}});
    REQUIRE(rt.set_device(0) == Status::ok);
    return rt;
}
} // namespace

TEST_CASE("program registration checks the binary", "[runtime][kernel_table]") {
    ferry::KernelTable table;
    for (const std::uint32_t magic :
         {ferry::k_magic_elf, ferry::k_magic_elf_aicpu, ferry::k_magic_elf_aivec,
          ferry::k_magic_elf_aicube, ferry::k_magic_plain, ferry::k_magic_plain_aicpu,
          ferry::k_magic_plain_aivec}) {
        CHECK(table.register_program({magic, 0, image.data(), image.size()}).has_value());
    }
    CHECK(table.register_program({0x12345678, 0, image.data(), image.size()}).status() ==
          Status::rt_param_invalid);
    CHECK(table.register_program({ferry::k_magic_elf, 0, nullptr, 16}).status() ==
          Status::rt_param_invalid);
    CHECK(table.register_program({ferry::k_magic_elf, 0, image.data(), 0}).status() ==
          Status::rt_param_invalid);
    CHECK(table.program_count() == 7);
}

TEST_CASE("the binary's magic decides the program's kind", "[runtime][kernel_table]") {
    ferry::KernelTable table;
    for (const std::uint32_t magic : {ferry::k_magic_elf, ferry::k_magic_elf_aicpu,
                                      ferry::k_magic_elf_aivec, ferry::k_magic_elf_aicube}) {
        CHECK(ferry::program_kind(magic) == ferry::ProgramKind::elf);
        CHECK(table.register_program({magic, 0, image.data(), image.size()}).value()->kind() ==
              ferry::ProgramKind::elf);
    }
    for (const std::uint32_t magic :
         {ferry::k_magic_plain, ferry::k_magic_plain_aicpu, ferry::k_magic_plain_aivec}) {
        CHECK(ferry::program_kind(magic) == ferry::ProgramKind::plain);
        CHECK(table.register_program({magic, 0, image.data(), image.size()}).value()->kind() ==
              ferry::ProgramKind::plain);
    }
    CHECK_FALSE(ferry::program_kind(0x12345678).has_value());
    // The image's own ELF header is not what decides: CANN reads rtDevBinary_t's magic field.
    const std::array<std::byte, 4> elf_header{std::byte{0x7F}, std::byte{'E'}, std::byte{'L'},
                                              std::byte{'F'}};
    CHECK(table
              .register_program({ferry::k_magic_plain, 0, elf_header.data(), elf_header.size()})
              .value()
              ->kind() == ferry::ProgramKind::plain);
    CHECK_FALSE(
        table.register_program({0x464C457F, 0, elf_header.data(), elf_header.size()}).has_value());
}

TEST_CASE("kernels go on ELF programs only, with their extended info", "[runtime][kernel_table]") {
    ferry::KernelTable table;
    const ferry::Program* plain =
        table.register_program({ferry::k_magic_plain, 0, image.data(), image.size()}).value();
    const ferry::Program* program = table.register_program(elf).value();
    CHECK(table.register_kernel(plain, {&stub_add, "add", std::nullopt, noop()}) ==
          Status::rt_param_invalid);
    CHECK(table.kernel_count() == 0);
    REQUIRE(table.register_kernel(program, {&stub_add, "add", std::nullopt, noop()},
                                  "add_kernel_mix_aic") == Status::ok);
    REQUIRE(table.register_kernel(program, {&stub_mul, "mul", std::nullopt, noop()}) == Status::ok);
    CHECK(table.lookup(&stub_add).value()->kernel_info_ext == "add_kernel_mix_aic");
    CHECK(table.lookup(std::string("add")).value()->kernel_info_ext == "add_kernel_mix_aic");
    CHECK(table.lookup(&stub_mul).value()->kernel_info_ext.empty());
    CHECK(table.lookup(&stub_add).value()->program->kind() == ferry::ProgramKind::elf);
}

TEST_CASE("kernels: register, duplicate, look up, unregister", "[runtime][kernel_table]") {
    ferry::KernelTable table;
    const ferry::Program* program = table.register_program(elf).value();
    CHECK(program->image().size() == image.size());
    REQUIRE(table.register_kernel(program, {&stub_add, "add", std::nullopt, noop()}) == Status::ok);
    REQUIRE(table.register_kernel(program, {&stub_mul, "mul", 7, noop()}) == Status::ok);
    REQUIRE(table.register_kernel(program, {&stub_mul, "mul", 9, noop()}) == Status::ok);

    CHECK(table.register_kernel(program, {&stub_add, "add2", std::nullopt, noop()}) ==
          Status::rt_kernel_duplicate); // same stub
    CHECK(table.register_kernel(program, {&stub_mul, "mul", 7, noop()}) ==
          Status::rt_kernel_duplicate); // same (stub, tiling key)
    const char other = 0;
    CHECK(table.register_kernel(program, {&other, "add", std::nullopt, noop()}) ==
          Status::rt_kernel_duplicate); // name taken by another stub
    CHECK(table.register_kernel(program, {nullptr, "x", std::nullopt, noop()}) ==
          Status::rt_param_invalid);
    CHECK(table.register_kernel(program, {&other, "", std::nullopt, noop()}) ==
          Status::rt_param_invalid);
    CHECK(table.register_kernel(program, {&other, "x", std::nullopt, {}}) ==
          Status::rt_param_invalid);
    CHECK(table.register_kernel(nullptr, {&other, "x", std::nullopt, noop()}) ==
          Status::rt_param_invalid);
    CHECK(table.kernel_count() == 3);

    CHECK(table.lookup(&stub_add).value()->name == "add");
    CHECK(table.lookup(&stub_mul).value()->tiling_key == 7); // lowest key when none is unkeyed
    CHECK(table.lookup(&stub_mul, 9).value()->tiling_key == 9);
    CHECK(table.lookup(&stub_mul, 8).status() == Status::rt_kernel_lookup);
    CHECK(table.lookup(&other).status() == Status::rt_kernel_lookup);
    CHECK(table.stub_of("mul").value() == &stub_mul);
    CHECK(table.lookup(std::string("add")).value()->stub == &stub_add);
    CHECK(table.stub_of("nope").status() == Status::rt_kernel_lookup);

    const auto held = table.lookup(&stub_add).value(); // keeps the program alive
    CHECK(table.unregister_program(program) == Status::ok);
    CHECK(table.unregister_program(program) == Status::rt_param_invalid);
    CHECK(table.kernel_count() == 0);
    CHECK(table.lookup(&stub_add).status() == Status::rt_kernel_lookup);
    CHECK(table.stub_of("add").status() == Status::rt_kernel_lookup);
    CHECK(held->program->image().size() == image.size());
}

TEST_CASE("block_dim kernels see every block index exactly once",
          "[runtime][launch][concurrency]") {
    Runtime& rt = device_runtime();
    for (const std::uint32_t block_dim : {1u, 2u, 8u, 100u, 1000u}) {
        std::vector<std::atomic<int>> hits(block_dim);
        std::atomic<int> wrong_dim{0};
        REQUIRE(rt.launch(
                    [&](const KernelContext& k) {
                        hits[k.block_idx].fetch_add(1);
                        if (k.block_dim != block_dim) {
                            wrong_dim.fetch_add(1);
                        }
                    },
                    block_dim, std::vector<std::uint64_t>{}, nullptr) == Status::ok);
        REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
        int exactly_once = 0;
        for (const auto& h : hits) {
            exactly_once += h.load() == 1;
        }
        INFO("block_dim " << block_dim);
        CHECK(exactly_once == static_cast<int>(block_dim));
        CHECK(wrong_dim.load() == 0);
    }
    CHECK(rt.launch(noop(), 0, std::vector<std::uint64_t>{}, nullptr) == Status::rt_param_invalid);
    CHECK(rt.launch(noop(), ferry::k_max_block_dim + 1, std::vector<std::uint64_t>{}, nullptr) ==
          Status::rt_param_invalid);
}

TEST_CASE("launches by stub, tiling key and name receive their slots in stream order",
          "[runtime][launch][concurrency]") {
    Runtime& rt = device_runtime();
    const ferry::Program* program = rt.register_program(elf).value();
    auto* out = static_cast<std::uint64_t*>(rt.malloc(8 * sizeof(std::uint64_t)).value());
    // out[block] = slot0 + slot1 (a device address slot would be read the same way).
    REQUIRE(
        rt.register_kernel(program, {&stub_add, "add", std::nullopt, [](const KernelContext& k) {
                                         auto* dst = k.pointer<std::uint64_t>(2);
                                         dst[k.block_idx] = k.slots[0] + k.slots[1];
                                     }}) == Status::ok);
    REQUIRE(rt.register_kernel(program, {&stub_mul, "mul", 3, [](const KernelContext& k) {
                                             auto* dst = k.pointer<std::uint64_t>(2);
                                             dst[k.block_idx] *= k.slot<std::uint32_t>(0);
                                         }}) == Status::ok);
    const std::vector<std::uint64_t> add_args{5, 6, reinterpret_cast<std::uintptr_t>(out)};
    const std::vector<std::uint64_t> mul_args{10, 0, reinterpret_cast<std::uintptr_t>(out)};
    REQUIRE(rt.launch(&stub_add, 8, add_args, nullptr) == Status::ok);
    REQUIRE(rt.launch(&stub_mul, 3, 8, mul_args, nullptr) == Status::ok);
    REQUIRE(rt.launch_by_name("mul", 4, mul_args, nullptr) == Status::ok); // blocks 0..3 again
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    std::array<std::uint64_t, 8> host{};
    REQUIRE(rt.memcpy(host.data(), sizeof host, out, sizeof host,
                      ferry::MemcpyKind::device_to_host) == Status::ok);
    CHECK(host == std::array<std::uint64_t, 8>{1100, 1100, 1100, 1100, 110, 110, 110, 110});

    CHECK(rt.launch(&stub_mul, 4, 8, mul_args, nullptr) == Status::rt_kernel_lookup);
    CHECK(rt.launch_by_name("div", 1, mul_args, nullptr) == Status::rt_kernel_lookup);
    const char unknown = 0;
    CHECK(rt.launch(&unknown, 1, mul_args, nullptr) == Status::rt_kernel_lookup);
    CHECK(rt.unregister_program(program) == Status::ok);
    CHECK(rt.launch(&stub_add, 1, add_args, nullptr) == Status::rt_kernel_lookup);
}

TEST_CASE("a raw args image keeps its size; the caller may reuse its buffer", "[runtime][launch]") {
    Runtime& rt = device_runtime("1");
    std::vector<std::byte> bytes(12, std::byte{0xAB});
    std::size_t seen_size = 0;
    std::size_t seen_slots = 0;
    std::uint64_t last_slot = 0;
    REQUIRE(rt.launch(
                [&](const KernelContext& k) {
                    seen_size = k.args_size;
                    seen_slots = k.slots.size();
                    last_slot = k.slots[1];
                },
                1, bytes, nullptr, "raw") == Status::ok);
    std::fill(bytes.begin(), bytes.end(), std::byte{0}); // the launch copied the image
    REQUIRE(rt.synchronize_stream(nullptr) == Status::ok);
    CHECK(seen_size == 12);
    CHECK(seen_slots == 2);
    CHECK(last_slot == 0xABABABABu); // zero padded past the 12th byte
}

TEST_CASE("a throwing kernel is reported on synchronize and through the callback",
          "[runtime][launch][concurrency]") {
    Runtime& rt = device_runtime();
    const auto quiet = ferry::set_log_sink([](ferry::LogLevel, std::string_view) {});
    std::mutex mutex;
    std::vector<ferry::TaskFailure> reported;
    rt.set_exception_callback([&](const ferry::TaskFailure& f) {
        std::lock_guard lock(mutex);
        reported.push_back(f);
    });
    std::atomic<int> blocks_run{0};
    REQUIRE(rt.launch(
                [&](const KernelContext& k) {
                    blocks_run.fetch_add(1);
                    if (k.block_idx == 5) {
                        throw std::out_of_range("bad index");
                    }
                },
                8, std::vector<std::uint64_t>{}, nullptr, "faulty") == Status::ok);
    CHECK(rt.synchronize_stream(nullptr) == ferry::k_task_exception_status);
    ferry::set_log_sink(quiet);
    CHECK(blocks_run.load() == 8); // the other blocks still ran
    std::lock_guard lock(mutex);
    REQUIRE(reported.size() == 1);
    CHECK(reported[0].task == "faulty");
    CHECK(reported[0].message == "block 5: bad index");
}
