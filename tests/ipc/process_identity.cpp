// Liveness of a segment's participants (ferry/ipc/detail/process_identity.hpp and the participant
// table of segment_header.hpp; docs/processes.md, Liveness). tests/ipc/segment_helper.cpp is
// the other process.
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <ferry/ipc/segment.hpp>
#include <string>
#include <unistd.h>

using Catch::Contains;
using ferry::Status;
using ferry::ipc::Segment;
using ipc_test::Child;
using ipc_test::HeaderView;
using ipc_test::k_tag;
using ipc_test::ScrubName;
using ipc_test::unique_name;
namespace detail = ferry::ipc::detail;

TEST_CASE("a process whose main thread has exited while another holds the segment is alive",
          "[ipc]") {
    const auto name = unique_name("leaderless");
    const ScrubName scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    Child holder{"open-hold-leaderless", name};
    REQUIRE(holder.read_line() == "ready");
    // What fooled the state check: the thread-group leader is a zombie, the process is not.
    REQUIRE(ipc_test::wait_for_state(holder.pid(), 'Z'));

    CHECK_FALSE(segment->lost_participant());
    CHECK(detail::is_alive(holder.pid(), detail::read_process_stat(holder.pid())->start_time));
    REQUIRE(segment->close()); // only the holder is registered now: a create must not reclaim the name
    auto second = Segment::create(name, 4096, k_tag, std::chrono::milliseconds(100));
    REQUIRE(second.status() == Status::failure);
    CHECK_THAT(second.error().message, Contains("in use by pid " + std::to_string(holder.pid())));

    holder.release(); // its remaining thread closes the segment and exits the process
    REQUIRE(holder.wait_exit() == 0);
    REQUIRE(Segment::unlink(name));
}

TEST_CASE("a dead registration under this process's own pid is a lost participant", "[ipc]") {
    const auto name = unique_name("own-pid");
    const ScrubName scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    auto again = Segment::open(name, k_tag); // this process, registered twice: both alive
    REQUIRE(again);
    CHECK_FALSE(segment->lost_participant());

    // An earlier process that had this pid, registered and died without closing.
    const auto self = detail::self_identity();
    REQUIRE(self);
    const HeaderView view(name);
    REQUIRE(view.mapped());
    REQUIRE(detail::claim_slot(view.slot(5), 0, {self->pid, self->start_time + 1}));
    CHECK(segment->lost_participant() == self->pid);
    CHECK(again->lost_participant() == self->pid);
    REQUIRE(again->close());
    REQUIRE(segment->close());
    REQUIRE(Segment::unlink(name));
}

TEST_CASE("a slot naming a pid without that process's start time does not keep the segment "
          "alive",
          "[ipc]") {
    const auto name = unique_name("half-written");
    const ScrubName scrub{name};
    auto segment = Segment::create(name, 4096, k_tag);
    REQUIRE(segment);
    // What a process that died between claiming a slot and recording its start time would
    // leave, once its pid belongs to someone else: here the live process that started this test.
    const auto stranger = static_cast<std::int32_t>(::getppid());
    const HeaderView view(name);
    REQUIRE(view.mapped());
    std::atomic_ref<std::uint64_t>(view.slot(7).word).store(static_cast<std::uint32_t>(stranger));
    CHECK(segment->lost_participant() == stranger);

    REQUIRE(segment->close()); // the forged slot is all that is left: the next create reclaims the name
    auto restarted = Segment::create(name, 4096, k_tag, std::chrono::milliseconds(100));
    REQUIRE(restarted);
    REQUIRE(restarted->close());
    REQUIRE(Segment::unlink(name));
}
