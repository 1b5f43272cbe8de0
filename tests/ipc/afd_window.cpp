// SharedWindow and the Attention/FFN exchange across processes: a ring in one process wakes a
// waiter parked in another; writers translate the owner's addresses and refuse ranges outside
// the window; the owner's registration makes the registry resolver accept the window's buffers;
// one FFN process and two attention processes (fork + exec of test-ipc-afd-helper) produce
// exactly what the same roles produce as threads over in-process windows; a waiter with the
// default policy ends with peer_lost soon after the process on the other side is killed.
#include "afd_roles.hpp"
#include "support.hpp"

#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ferry/ipc/window.hpp>
#include <memory>
#include <thread>

using ferry::Status;
using ferry::ipc::SharedWindow;
using ipc_test::Child;
using ipc_test::unique_name;

namespace {

void check_across_processes(bool recv) {
    afd_ipc::Config c;
    c.recv = recv;
    const afd_ipc::Reports expected = afd_ipc::run_in_process(c);
    REQUIRE(expected.ffn.errors == 0);
    REQUIRE(expected.ffn.rows == std::uint64_t{c.sessions} * c.steps);

    const std::string prefix = unique_name(recv ? "afd-recv" : "afd-norm");
    Child ffn({"ffn", prefix, recv ? "recv" : "norm"});
    REQUIRE(ffn.read_line() == "ready");
    std::vector<std::unique_ptr<Child>> sessions;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        sessions.push_back(std::make_unique<Child>(
            std::initializer_list<std::string>{"attention", prefix, std::to_string(s)}));
        REQUIRE(sessions.back()->read_line() == "ready");
    }
    ffn.release(); // every attention window exists: the FFN may open them
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        const afd_ipc::Report got = afd_ipc::parse_report(sessions[s]->read_line());
        CHECK(got.errors == 0);
        CHECK(got.rows == expected.sessions[s].rows);
        CHECK(got.digest == expected.sessions[s].digest);
        CHECK(sessions[s]->wait_exit() == 0);
    }
    const afd_ipc::Report served = afd_ipc::parse_report(ffn.read_line());
    CHECK(served.errors == 0);
    CHECK(served.rows == expected.ffn.rows);
    CHECK(served.digest == expected.ffn.digest);
    CHECK(ffn.wait_exit() == 0);
    CHECK(ipc_test::leftovers(prefix).empty()); // owners unlink their windows
}

// Runs `wait` (default policies, 10 s timeout) on a thread over the window `own`, which a child
// process holds open; once the waiter is parked on the doorbell, kills the child. The wait must
// end with `lost` within 100 ms of the kill (the probe runs every 20 ms).
template <typename Wait>
void check_peer_lost(SharedWindow& own, Wait wait) {
    Child peer({"hold", own.name()});
    REQUIRE(peer.read_line() == "opened");
    std::atomic<bool> done{false};
    Status got = Status::ok;
    std::thread waiter([&] {
        got = wait();
        done = true;
    });
    // Observable: the default policy registered as a sleeper on the window's doorbell.
    while (std::atomic_ref(own.doorbell().word()->sleepers).load() == 0 && !done) {
        std::this_thread::yield();
    }
    const auto killed = std::chrono::steady_clock::now();
    peer.kill_leaving_zombie();
    waiter.join();
    const auto took = std::chrono::steady_clock::now() - killed;
    CHECK(got == Status::peer_lost);
    CHECK(took < std::chrono::milliseconds(100));
}

} // namespace

TEST_CASE("a ring in one process wakes a waiter parked on the doorbell in another",
          "[ipc][afd][doorbell]") {
    const std::string name = unique_name("bell");
    auto own = SharedWindow::create(name, 2048);
    REQUIRE(own.has_value());
    ferry::afd::ScheduleContextView(own->data().data()).set_run_flag(1);
    Child waiter({"bell-wait", name});
    REQUIRE(waiter.read_line() == "parking");
    REQUIRE(waiter.wait_blocked_in_futex()); // parked (its park bound is 60 s, its timeout 10 s)
    REQUIRE(own->window().publish(own->owner_base() + 1024, 1) == Status::ok);
    own->window().ring();
    // The park bound is 60 s and the timeout 10 s: only the ring ends the wait well before that.
    unsigned long ms = 0;
    char how[16] = {};
    REQUIRE(std::sscanf(waiter.read_line().c_str(), "%15s %lu", how, &ms) == 2);
    CHECK(std::string(how) == "served");
    CHECK(ms < 5000);
    CHECK(waiter.wait_exit() == 0);
}

TEST_CASE("a peer's window translates the owner's addresses and refuses ranges outside it",
          "[ipc][afd][window]") {
    const std::string name = unique_name("bounds");
    auto own = SharedWindow::create(name, 4096);
    REQUIRE(own.has_value());
    auto peer = SharedWindow::open(name);
    REQUIRE(peer.has_value());
    CHECK(peer->owner_base() == own->owner_base());
    CHECK(peer->data().data() != own->data().data()); // a second mapping
    const ferry::afd::Window& w = peer->window();
    const std::array<std::byte, 8> bytes{std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4},
                                         std::byte{5}, std::byte{6}, std::byte{7}, std::byte{8}};
    REQUIRE(w.write(own->owner_base() + 4088, bytes) == Status::ok);
    CHECK(own->data()[4088] == std::byte{1}); // landed in the owner's memory
    CHECK(own->data()[4095] == std::byte{8});
    CHECK(w.write(own->owner_base() + 4089, bytes) == Status::invalid_param);
    CHECK(w.write(own->owner_base() - 8, bytes) == Status::invalid_param);
    CHECK(w.publish(own->owner_base() + 4096, 1) == Status::invalid_param);
    CHECK(own->data()[0] == std::byte{0});
    CHECK(std::all_of(own->data().begin(), own->data().begin() + 4088,
                      [](std::byte b) { return b == std::byte{0}; }));
    CHECK(SharedWindow::create(unique_name("empty"), 0).status() == Status::invalid_param);
}

TEST_CASE("the owner's registration makes the registry resolver accept the window's buffers",
          "[ipc][afd][window]") {
    const afd_ipc::Config c;
    auto own = SharedWindow::create(unique_name("registered"), afd_ipc::ffn_layout(c).total);
    REQUIRE(own.has_value());
    afd_ipc::init_ffn(own->data(), own->owner_base(), c);
    ferry::AllocationRegistry registry;
    using Scheduler =
        ferry::afd::GroupSyncScheduler<ferry::afd::SpinThenPark<>, ferry::afd::LowestReady,
                                       ferry::afd::SerialExecutor, ferry::afd::RegistryResolver>;
    Scheduler scheduler({}, {}, {}, ferry::afd::RegistryResolver(registry));
    const auto before = scheduler.schedule_once(own->data().data(), 2, 0, ferry::no_wait);
    CHECK(before.status == ferry::afd::KernelStatus::param_invalid);
    CHECK(std::string(before.reason) == "does not point into a live runtime allocation");
    REQUIRE(own->register_in(registry) == Status::ok);
    CHECK(own->register_in(registry) == Status::invalid_param); // once
    const auto after = scheduler.schedule_once(own->data().data(), 2, 0, ferry::no_wait);
    CHECK(after.ok());
    CHECK(after.exit == ferry::afd::ScheduleExit::timed_out); // valid, nothing ready
    auto peer = SharedWindow::open(own->name());
    REQUIRE(peer.has_value());
    CHECK(peer->register_in(registry) ==
          Status::invalid_param); // only the owner's memory is its own
    REQUIRE(own->close());
    CHECK(registry.size() == 0);
}

TEST_CASE("the owner's runtime registration makes the runtime's resolver accept the window",
          "[ipc][afd][window]") {
    // What aclnnInplaceFfnWorkerScheduler does: a RegistryResolver over Runtime::registry().
    ferry::Runtime::shutdown();
    auto booted = ferry::Runtime::instance();
    REQUIRE(booted.has_value());
    ferry::Runtime& rt = **booted;
    const afd_ipc::Config c;
    auto own = SharedWindow::create(unique_name("runtime"), afd_ipc::ffn_layout(c).total);
    REQUIRE(own.has_value());
    afd_ipc::init_ffn(own->data(), own->owner_base(), c);
    using Scheduler =
        ferry::afd::GroupSyncScheduler<ferry::afd::SpinThenPark<>, ferry::afd::LowestReady,
                                       ferry::afd::SerialExecutor, ferry::afd::RegistryResolver>;
    Scheduler scheduler({}, {}, {}, ferry::afd::RegistryResolver(rt.registry()));
    const auto before = scheduler.schedule_once(own->data().data(), 2, 0, ferry::no_wait);
    CHECK(before.status == ferry::afd::KernelStatus::param_invalid);

    REQUIRE(own->register_in(rt) == Status::ok);
    CHECK(own->is_registered());
    CHECK(own->register_in(rt) == Status::invalid_param); // once
    const auto after = scheduler.schedule_once(own->data().data(), 2, 0, ferry::no_wait);
    CHECK(after.ok());
    CHECK(after.exit == ferry::afd::ScheduleExit::timed_out); // accepted, nothing ready
    CHECK(rt.pointer_attributes(own->data().data()).kind == ferry::MemoryKind::device);
    // The runtime never frees it: aclrtFree refuses, a device reset keeps the record.
    CHECK(rt.free(own->data().data()) == Status::rt_memory_free);
    CHECK(rt.memory_used(0) == 0);

    // After close the context's addresses name unmapped memory: a copy of the context is refused
    // before anything is read through them.
    alignas(8) std::array<std::byte, ferry::afd::k_context_size> copy{};
    std::memcpy(copy.data(), own->data().data(), copy.size());
    REQUIRE(own->close());
    CHECK(rt.registry().size() == 0); // the record went with the window
    const auto closed = scheduler.schedule_once(copy.data(), 2, 0, ferry::no_wait);
    CHECK(closed.status == ferry::afd::KernelStatus::param_invalid);
    ferry::Runtime::shutdown();
}

TEST_CASE("the FFN's default wait ends with peer_lost when an attention process dies",
          "[ipc][afd][window][concurrency]") {
    const afd_ipc::Config c;
    auto own = SharedWindow::create(unique_name("lost-ffn"), afd_ipc::ffn_layout(c).total);
    REQUIRE(own.has_value());
    afd_ipc::init_ffn(own->data(), own->owner_base(), c);
    check_peer_lost(*own, [&] {
        ferry::afd::Batch batch;
        return ferry::afd::FfnWorkerBatching::receive(
            ferry::afd::ScheduleContextView(own->data().data()), c.expert_num, batch,
            std::chrono::seconds(10));
    });
    // The scheduler's default wait too (all-sync): the exit says why nothing was served.
    Child again({"hold", own->name()});
    REQUIRE(again.read_line() == "opened");
    again.kill_leaving_zombie();
    ferry::afd::GroupSyncScheduler<> scheduler;
    const auto outcome =
        scheduler.schedule_once(own->data().data(), 1, 0, std::chrono::seconds(10));
    CHECK(outcome.ok());
    CHECK(outcome.exit == ferry::afd::ScheduleExit::peer_lost);
}

TEST_CASE("the attention side's default wait ends with peer_lost when the FFN process dies",
          "[ipc][afd][window][concurrency]") {
    const afd_ipc::Config c;
    auto own = SharedWindow::create(unique_name("lost-att"), afd_ipc::attention_layout(c).total);
    REQUIRE(own.has_value());
    afd_ipc::init_attention(own->data(), own->owner_base(), c);
    check_peer_lost(*own, [&] {
        ferry::afd::AttentionWorkerScheduler<> scheduler;
        const auto outcome = scheduler.schedule_once(own->data().data(), std::chrono::seconds(10));
        return outcome.exit == ferry::afd::ScheduleExit::peer_lost ? Status::peer_lost
                                                                   : Status::internal_error;
    });
}

TEST_CASE("one FFN process and two attention processes match the in-process computation",
          "[ipc][afd][concurrency]") {
    SECTION("scheduler + NORM batching") {
        check_across_processes(false);
    }
    SECTION("RECV batching") {
        check_across_processes(true);
    }
}
