// ferry::ipc::Channel when a peer process dies (docs/processes.md, Channels, "A peer that
// dies"): the survivor gets peer_lost within 100 ms, never a hang, and no segment stays behind.
// tests/ipc/channel_helper.cpp is the process that dies. Every blocking call is bounded: a hang
// fails as timed_out.
#include "channel_support.hpp"

#include <catch2/catch.hpp>
#include <csignal>
#include <string>
#include <unistd.h>

using ferry::Status;
using ipc_test::Child;
using ipc_test::make_message;
using ipc_test::Small;
using ipc_test::unique_name;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto k_bound = 5s;
constexpr std::int64_t k_lost_ms = 100;
constexpr int k_killed = 128 + SIGKILL;

Child helper(std::initializer_list<std::string> args) {
    return Child(ipc_test::channel_helper(), args);
}
bool exists(const std::string& name) {
    return ::access(ipc_test::shm_path(name).c_str(), F_OK) == 0;
}
std::int64_t ms_since_ns(std::int64_t stamp_ns) {
    return (ipc_test::now_ns() - stamp_ns) / 1000000;
}
std::int64_t ms_since(const std::string& stamp_ns) {
    return ms_since_ns(std::stoll(stamp_ns));
}
// A receive on `channel` (parked before the helper dies, or called after) answers peer_lost
// within k_lost_ms of the time the helper printed just before its death, and the helper was
// killed.
template <typename ChannelType>
void receive_sees_death(ChannelType& channel, Child& child) {
    CHECK(channel.receive_for(k_bound).status() == Status::peer_lost);
    CHECK(ms_since(child.read_line()) < k_lost_ms);
    CHECK(child.wait_exit() == k_killed);
}

} // namespace

TEST_CASE("ipc channel: a receive blocked on an empty channel answers peer_lost when the peer "
          "dies",
          "[ipc]") {
    const auto name = unique_name("die-recv");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"die-when-blocked", name}); // kills itself once we are parked
    receive_sees_death(*channel, child);
    CHECK(channel->lost());
    CHECK(channel->try_send(make_message(0, 0)) == Status::peer_lost); // sticky
    REQUIRE(channel->close());
    CHECK(!exists(name)); // the dead peer does not keep the name alive

    // The survivor goes on with a new channel under the same name and a new peer.
    auto fresh = Small::create(name);
    REQUIRE(fresh);
    Child next = helper({"receive", name});
    REQUIRE(next.read_line() == "ready");
    CHECK(fresh->send_for(make_message(1, 0), k_bound) == Status::ok);
    CHECK(next.read_line() == std::to_string(static_cast<int>(Status::ok)));
    CHECK(next.wait_exit() == 0);
    REQUIRE(fresh->close());
    CHECK(!exists(name));
}

TEST_CASE("ipc channel: a send blocked on a full channel answers peer_lost when the peer dies",
          "[ipc]") {
    const auto name = unique_name("die-send");
    auto channel = Small::create(name);
    REQUIRE(channel);
    for (std::uint64_t i = 0; i < ipc_test::k_small; ++i) {
        REQUIRE(channel->try_send(make_message(i, 0)) == Status::ok);
    }
    Child child = helper({"die-when-blocked", name});
    CHECK(channel->send_for(make_message(99, 0), k_bound) == Status::peer_lost);
    CHECK(ms_since(child.read_line()) < k_lost_ms);
    CHECK(child.wait_exit() == k_killed);
    CHECK(channel->receive().status() == Status::peer_lost); // lost beats draining
}

TEST_CASE("ipc channel: a peer killed by this process is answered as peer_lost by the next call",
          "[ipc]") {
    const auto name = unique_name("kill");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"receive", name});
    REQUIRE(child.read_line() == "ready");
    REQUIRE(ipc_test::poll_for([&] { return channel->blocked() >= 1; })); // it is parked
    const auto killed = ipc_test::now_ns();
    child.kill_leaving_zombie(); // a zombie holds no memory: it counts as dead
    SECTION("a blocking receive") {
        CHECK(channel->receive_for(k_bound).status() == Status::peer_lost);
    }
    SECTION("a no-wait receive polled until it learns") {
        Status s = Status::empty;
        while (s == Status::empty && ms_since_ns(killed) < 1000) {
            s = channel->try_receive().status();
        }
        CHECK(s == Status::peer_lost);
    }
    CHECK(ms_since_ns(killed) < k_lost_ms);
}

// The no-wait check is rate limited by a shared timestamp on the coarse monotonic clock: a
// caller that has been polling for several slices (each due check moves the timestamp on) must
// still learn of a death within the bound, not only the first caller to look.
TEST_CASE("ipc channel: a no-wait send polling across the peer's death learns of it in time",
          "[ipc]") {
    const auto name = unique_name("poll");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"fill", name}); // fills the channel, then holds it open
    REQUIRE(child.read_line() == std::to_string(ipc_test::k_small));
    const auto polling = ipc_test::now_ns();
    bool full = true;
    while (full && ms_since_ns(polling) < 3 * 20) { // three watch slices of failed tries
        full = channel->try_send(make_message(0, 0)) == Status::full;
    }
    REQUIRE(full);
    const auto killed = ipc_test::now_ns();
    child.kill_leaving_zombie();
    Status s = Status::full;
    while (s == Status::full && ms_since_ns(killed) < 1000) {
        s = channel->try_send(make_message(0, 0));
    }
    CHECK(s == Status::peer_lost);
    CHECK(ms_since_ns(killed) < k_lost_ms);
}

TEST_CASE("ipc channel: a sender killed between claim and publish does not hang the receiver",
          "[ipc]") {
    const auto name = unique_name("claim");
    auto channel = ipc_test::SmallShared::create(name);
    REQUIRE(channel);
    SECTION("the receiver was already parked") {
        Child child = helper({"claim-die", name, "1"});
        receive_sees_death(*channel, child);
    }
    SECTION("the receiver comes later, and does not call the claimed head empty") {
        Child child = helper({"claim-die", name, "0"});
        const std::string stamp = child.read_line();
        REQUIRE(child.wait_exit() == k_killed);
        CHECK(channel->size() == 1); // claimed, never published
        CHECK(channel->try_receive().status() == Status::peer_lost);
        CHECK(ms_since(stamp) < k_lost_ms + 50); // + the reaping above
    }
}

TEST_CASE("ipc channel: an spsc sender killed before it stores its cell's turn delivers nothing "
          "and is seen lost",
          "[ipc]") {
    // The receiver takes a cell by its turn, never by the published counter: parked first, it
    // has nothing to take and learns of the death from the peers it watches.
    const auto name = unique_name("die-spsc");
    auto channel = Small::create(name);
    REQUIRE(channel);
    SECTION("between claim and publish: nothing queued") {
        Child child = helper({"claim-die-spsc", name, "1"});
        receive_sees_death(*channel, child);
        CHECK(channel->size() == 0);
    }
    SECTION("inside publish: the published counter stored, the turn not") {
        Child child = helper({"publish-die-spsc", name});
        receive_sees_death(*channel, child);
    }
}

TEST_CASE("ipc channel: a process killed holding the segment's lock blocks nobody", "[ipc]") {
    // The ring itself takes no lock. The segment file's flock (taken by open, and by the last
    // close to remove the name) is dropped by the kernel when its holder dies.
    const auto name = unique_name("lock");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"lock-hold", name});
    REQUIRE(child.read_line() == "ready");
    CHECK(Small::open(name, 50ms).status() == Status::timed_out); // the lock is real
    child.kill_leaving_zombie();
    auto second = Small::open(name, k_bound);
    CHECK(second);
    REQUIRE(channel->close());
    CHECK(exists(name)); // `second` is live
    if (second) {
        REQUIRE(second->close());
    }
    CHECK(!exists(name));
}

TEST_CASE("ipc channel: a name left by a crashed creator is created afresh", "[ipc]") {
    const auto name = unique_name("restart");
    Child child = helper({"create-hold", name});
    REQUIRE(child.read_line() == "ready");
    CHECK(Small::create(name).status() == Status::failure); // in use by a live process
    child.kill();
    CHECK(exists(name)); // the crash left it
    auto again = Small::create(name);
    REQUIRE(again);
    CHECK(again->try_send(make_message(1, 0)) == Status::ok);
    CHECK(again->size() == 1);
    REQUIRE(again->close());
    CHECK(!exists(name));
}

TEST_CASE("ipc channel: the last live participant to close removes the name", "[ipc]") {
    const auto name = unique_name("last");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"fill", name});
    REQUIRE(child.read_line() == std::to_string(ipc_test::k_small));
    REQUIRE(channel->close());
    CHECK(exists(name)); // the child still has it open
    child.release();     // the child closes and exits
    CHECK(child.wait_exit() == 0);
    CHECK(!exists(name));
}

TEST_CASE("ipc channel: a peer whose main thread has exited while another thread holds the "
          "channel is not lost",
          "[ipc]") {
    const auto name = unique_name("leaderless");
    auto channel = Small::create(name);
    REQUIRE(channel);
    Child child = helper({"hold-leaderless", name});
    REQUIRE(child.read_line() == "ready");
    REQUIRE(ipc_test::wait_for_state(child.pid(), 'Z')); // its leader is a zombie now
    // A parked receive looks at the participants every 20 ms: ten looks, none may call it lost.
    CHECK(channel->receive_for(200ms).status() == Status::timed_out);
    CHECK(channel->try_send(make_message(1, 0)) == Status::ok);
    child.release();
    CHECK(child.wait_exit() == 0);
    REQUIRE(channel->close());
    CHECK(!exists(name));
}

// The contract (docs/processes.md, A peer that dies): items a process published before it died
// are complete, and an opener gets them; then the channel answers peer_lost.
TEST_CASE("ipc channel: opening a channel whose only participant died hands out its items, then "
          "peer_lost",
          "[ipc]") {
    const auto name = unique_name("orphan");
    auto creator = Small::create(name);
    REQUIRE(creator);
    Child child = helper({"fill", name});
    REQUIRE(child.read_line() == std::to_string(ipc_test::k_small));
    REQUIRE(creator->close()); // the child is the only participant now
    child.kill();

    auto late = Small::open(name);
    REQUIRE(late);
    for (std::uint64_t i = 0; i < ipc_test::k_small; ++i) {
        const auto item = late->receive_for(k_bound);
        REQUIRE(item);
        CHECK(item->sequence == i);
    }
    CHECK(late->receive_for(k_bound).status() == Status::peer_lost);
    CHECK(late->try_send(make_message(1, 0)) == Status::peer_lost);
    REQUIRE(late->close());
    CHECK(!exists(name)); // the last live participant removed it
}

TEST_CASE("ipc channel: no segment of this run is left in /dev/shm", "[ipc]") {
    CHECK(ipc_test::leftovers(ipc_test::name_prefix()).empty());
}
