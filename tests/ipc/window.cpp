// ferry::ipc::SharedWindow's name across crashes and re-creation (docs/processes.md, Creation,
// reclaim and removal). tests/ipc/afd_helper.cpp is the other process.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <ferry/ipc/window.hpp>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

using ferry::ipc::SharedWindow;
using ipc_test::Child;
using ipc_test::ScrubName;
using ipc_test::unique_name;

namespace {

bool exists(const std::string& name) {
    return ::access(ipc_test::shm_path(name).c_str(), F_OK) == 0;
}

} // namespace

TEST_CASE("a window whose owner was killed is removed by its last peer's close", "[ipc]") {
    const auto name = unique_name("window-owner-killed");
    const ScrubName scrub{name};
    Child owner{"own", name};
    REQUIRE(owner.read_line() == "owned");
    auto peer = SharedWindow::open(name);
    REQUIRE(peer);
    auto second = SharedWindow::open(name);
    REQUIRE(second);
    owner.kill(); // SIGKILL: the owner's close never runs
    REQUIRE(peer->close());
    CHECK(exists(name)); // `second` still uses it
    REQUIRE(second->close());
    CHECK_FALSE(exists(name));
}

TEST_CASE("a window name left by killed processes is reclaimed by the next create", "[ipc]") {
    const auto name = unique_name("window-all-killed");
    const ScrubName scrub{name};
    Child owner{"own", name};
    REQUIRE(owner.read_line() == "owned");
    Child peer{"hold", name};
    REQUIRE(peer.read_line() == "opened");
    owner.kill();
    peer.kill();
    REQUIRE(exists(name));
    auto again = SharedWindow::create(name, 4096);
    REQUIRE(again);
    REQUIRE(again->close());
    CHECK_FALSE(exists(name));
}

TEST_CASE("an owner's close leaves a newer window of the same name alone", "[ipc]") {
    const auto name = unique_name("window-replaced");
    const ScrubName scrub{name};
    auto first = SharedWindow::create(name, 4096);
    REQUIRE(first);
    REQUIRE(ferry::ipc::Segment::unlink(first->name()));
    auto second = SharedWindow::create(name, 4096);
    REQUIRE(second);
    REQUIRE(first->close());
    CHECK(exists(name));
    REQUIRE(second->close());
    CHECK_FALSE(exists(name));
}
