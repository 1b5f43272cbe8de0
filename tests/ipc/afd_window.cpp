// SharedWindow and the Attention/FFN exchange across processes: a ring in one process wakes a
// waiter parked in another; writers translate the owner's addresses and refuse ranges outside
// the window; the owner's registration makes the registry resolver accept the window's buffers;
// one FFN process and two attention processes (fork + exec of test-ipc-afd-helper) produce
// exactly what the same roles produce as threads over in-process windows.
#include "afd_roles.hpp"
#include "support.hpp"

#include <array>
#include <catch2/catch.hpp>
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
    own->close();
    CHECK(registry.size() == 0);
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
