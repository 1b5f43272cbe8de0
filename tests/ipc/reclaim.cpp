// Creation and reclaim under the segment file's lock (ferry/ipc/detail/reclaim.hpp;
// docs/processes.md, Creation, reclaim and removal). tests/ipc/segment_helper.cpp is the
// other process.
#include "support.hpp"

#include <catch2/catch.hpp>
#include <ferry/ipc/segment.hpp>
#include <string>
#include <sys/stat.h>

using Catch::Contains;
using ferry::Status;
using ferry::ipc::Segment;
using ipc_test::Child;
using ipc_test::k_tag;
using ipc_test::ScrubName;
using ipc_test::unique_name;

namespace {

// The inode /dev/shm/ferry.<name> is now; 0 when there is none.
ino_t inode_of(const std::string& name) {
    struct stat st {};
    return ::stat(ipc_test::shm_path(name).c_str(), &st) == 0 ? st.st_ino : 0;
}

} // namespace

TEST_CASE("a creator stalled before writing its header keeps its name from another create",
          "[ipc]") {
    const auto name = unique_name("stalled");
    const ScrubName scrub{name};
    Child creator{"create-stalled", name, "4096"};
    REQUIRE(creator.read_line() == "stalled"); // its file exists, empty
    const ino_t file = inode_of(name);
    REQUIRE(file != 0);

    // Far longer than the other side's wait: neither an open nor a create may take the file
    // for a dead creator's leftover.
    auto opened = Segment::open(name, k_tag, std::chrono::milliseconds(100));
    CHECK(opened.status() == Status::timed_out);
    auto second = Segment::create(name, 4096, k_tag, std::chrono::milliseconds(100));
    CHECK(second.status() == Status::timed_out);
    CHECK(inode_of(name) == file);

    creator.write_line("go");
    REQUIRE(creator.read_line() == "ready");
    auto seen = Segment::open(name, k_tag);
    REQUIRE(seen);
    CHECK(seen->creator_pid() == creator.pid());
    CHECK(inode_of(name) == file);
    REQUIRE(seen->close());
    creator.release();
    REQUIRE(creator.wait_exit() == 0);
    REQUIRE(Segment::unlink(name));
}

TEST_CASE("a creator killed before writing its header leaves a name the next create reclaims",
          "[ipc]") {
    const auto name = unique_name("stalled-killed");
    const ScrubName scrub{name};
    Child creator{"create-stalled", name, "4096"};
    REQUIRE(creator.read_line() == "stalled");
    creator.kill(); // its lock goes with it
    auto restarted = Segment::create(name, 4096, k_tag, std::chrono::milliseconds(100));
    REQUIRE(restarted);
    REQUIRE(restarted->close());
    REQUIRE(Segment::unlink(name));
}

TEST_CASE("removing a segment leaves a newer segment of the same name alone", "[ipc]") {
    const auto name = unique_name("replaced");
    const ScrubName scrub{name};
    auto first = Segment::create(name, 4096, k_tag);
    REQUIRE(first);
    REQUIRE(Segment::unlink(name));
    auto second = Segment::create(name, 4096, k_tag);
    REQUIRE(second);
    const ino_t newer = inode_of(name);
    REQUIRE(first->close_and_remove_if_last());
    CHECK(inode_of(name) == newer);
    REQUIRE(second->close());
    REQUIRE(Segment::unlink(name));
}
