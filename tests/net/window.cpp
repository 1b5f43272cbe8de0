// RemoteWindow and ExposedWindow between two nodes of this process over UCX's tcp loopback: the
// remote window covers exactly what the owner exposed, its writes land before the flag that
// follows them and its ring wakes the owner's doorbell; anything outside is refused with nothing
// written; the exposed memory is in the WaitDirectory with its doorbell and a probe that reports
// the writer node's loss.
#include <algorithm>
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/net/window.hpp>
#include "../ipc/support.hpp"
#include "window_support.hpp"
#include <fcntl.h>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

using ferry::Status;
using namespace ferry;

namespace {

constexpr auto k_limit = std::chrono::seconds(10);

struct Pair {
    // Destroyed in reverse: the remote window, the writer, the owner node (whose ring handler
    // holds the exposed doorbell), then the exposed window and the memory.
    std::vector<std::byte> memory;
    std::unique_ptr<net::ExposedWindow> exposed;
    std::unique_ptr<net::Node> owner, writer;
    net::PeerId peer = 0;
    std::unique_ptr<net::RemoteWindow> remote;

    static std::unique_ptr<net::Node> node(const std::string& listen) {
        net::NodeOptions o;
        o.listen = listen;
        o.secret = net::Secret::from_environment().value();
        o.one_sided_rma = net::one_sided_rma_from_environment(); // meson runs both paths
        auto n = net::Node::start(std::move(o));
        REQUIRE(n.has_value());
        return std::move(*n);
    }
    explicit Pair(std::size_t bytes = 4096) : memory(bytes) {
        owner = node("127.0.0.1:0");
        auto e = net::ExposedWindow::expose(*owner, memory);
        REQUIRE(e.has_value());
        exposed = std::move(*e);
        writer = node("");
        auto reached = net_test::reach(*writer, owner->address(), exposed->region(), k_limit);
        peer = reached.peer;
        remote = std::move(reached.remote);
        REQUIRE(remote->one_sided() == net::one_sided_rma_from_environment()); // the path asked
    }
    [[nodiscard]] std::uint64_t base() const { return exposed->owner_base(); }
    [[nodiscard]] std::int32_t flag(std::size_t offset) {
        return std::atomic_ref(*reinterpret_cast<std::int32_t*>(memory.data() + offset))
            .load(std::memory_order_acquire);
    }
    // Parks on the exposed doorbell until the flag at `offset` is `value` (bounded).
    bool wait_flag(std::size_t offset, std::int32_t value) {
        const afd::Doorbell bell = exposed->doorbell();
        const auto deadline = afd::Doorbell::clock::now() + k_limit;
        bell.arm();
        bool seen = false;
        while (!seen && afd::Doorbell::clock::now() < deadline) {
            const std::uint32_t rings = bell.snapshot();
            seen = flag(offset) == value;
            if (!seen) {
                bell.park(rings, deadline);
            }
        }
        bell.disarm();
        return seen;
    }
};

// Waits (bounded) until thread `tid` of this process is in the futex system call: parked.
bool parked(pid_t tid) {
    return ipc_test::in_futex("/proc/self/task/" + std::to_string(tid) + "/syscall", k_limit);
}

const std::array<std::byte, 16> k_payload = [] {
    std::array<std::byte, 16> p{};
    p.fill(std::byte{0xC3});
    return p;
}();

} // namespace

TEST_CASE("net/window: a remote window writes the owner's memory, then the flag, then rings",
          "[net][window]") {
    Pair pair;
    const afd::Window w = pair.remote->window();
    CHECK(w.is_remote());
    CHECK(w.owner_base() == pair.base());
    CHECK(w.size() == pair.memory.size());
    REQUIRE(w.write(pair.base() + 4096 - 16, k_payload) == Status::ok); // up to the last byte
    REQUIRE(w.publish(pair.base() + 64, 1) == Status::ok);
    REQUIRE(w.ring() == Status::ok);
    REQUIRE(pair.wait_flag(64, 1));
    CHECK(std::equal(k_payload.begin(), k_payload.end(), pair.memory.end() - 16));
    CHECK(w.flush(k_limit) == Status::ok);
}

namespace {

// The owner's thread: parked on the exposed doorbell before anything is written, it checks the
// payload (offset 4096 to the end, 0xC3) at the moment it sees the flag at offset 64: a flag
// applied before its data shows here.
struct FlagWatcher {
    explicit FlagWatcher(Pair& pair) : pair_(pair), thread_([this] { watch(); }) {
        while (tid_ == 0) {
            std::this_thread::yield();
        }
    }
    FlagWatcher(const FlagWatcher&) = delete;
    FlagWatcher& operator=(const FlagWatcher&) = delete;
    ~FlagWatcher() {
        if (thread_.joinable()) {
            thread_.join();
        }
    }
    [[nodiscard]] bool is_parked() const { return parked(tid_); }
    void join() { thread_.join(); }

    int parks = 0;
    bool data_ok = false;

private:
    void watch() {
        const afd::Doorbell bell = pair_.exposed->doorbell();
        const auto deadline = afd::Doorbell::clock::now() + k_limit;
        bell.arm();
        tid_ = static_cast<pid_t>(::syscall(SYS_gettid));
        while (afd::Doorbell::clock::now() < deadline) {
            const std::uint32_t rings = bell.snapshot();
            if (pair_.flag(64) == 1) {
                data_ok = std::all_of(pair_.memory.begin() + 4096, pair_.memory.end(),
                                      [](std::byte b) { return b == std::byte{0xC3}; });
                break;
            }
            bell.park(rings, deadline);
            ++parks;
        }
        bell.disarm();
    }

    Pair& pair_;
    std::atomic<pid_t> tid_{0};
    std::thread thread_;
};

constexpr std::size_t k_large = std::size_t{1} << 20; // a rendezvous over tcp

} // namespace

// The writer puts a payload large enough for a rendezvous, the flag and a ring, each put waited
// for by the writer.
TEST_CASE("net/window: a parked owner wakes to the flag, and the data is there when it does",
          "[net][window]") {
    Pair pair(k_large);
    FlagWatcher owner(pair);
    REQUIRE(owner.is_parked());
    const afd::Window w = pair.remote->window();
    const std::vector<std::byte> payload(k_large - 4096, std::byte{0xC3});
    REQUIRE(w.write(pair.base() + 4096, payload) == Status::ok);
    REQUIRE(w.publish(pair.base() + 64, 1) == Status::ok);
    REQUIRE(w.ring() == Status::ok);
    owner.join();
    CHECK(owner.parks >= 1);
    CHECK(owner.data_ok);
    CHECK(pair.owner->refusals() == 0);
}

// From a handler nothing waits: the payload (a rendezvous) and the flag (eager) are on the wire
// together, the flag arriving while the payload still lands. The owner applies one peer's writes
// in the order sent, so it still sees the flag only with the data in place; an owner applying
// each write as it arrives fails here.
TEST_CASE("net/window: data and flag put from a handler, not waited for, land data first",
          "[net][window]") {
    constexpr net::ServiceId k_go = 11;
    Pair pair(k_large);
    const std::vector<std::byte> payload(k_large - 4096, std::byte{0xC3});
    std::promise<std::vector<Status>> issued;
    pair.writer->serve(k_go, [&](net::Delivery&) -> net::Verdict {
        const afd::Window w = pair.remote->window();
        issued.set_value({w.write(pair.base() + 4096, payload), w.publish(pair.base() + 64, 1),
                          w.ring()});
        return nullptr;
    });
    FlagWatcher owner(pair);
    REQUIRE(owner.is_parked());
    REQUIRE(pair.owner->await_peers(1, k_limit) == Status::ok); // the writer's Ready was read
    REQUIRE(pair.owner->send(pair.owner->peers()[0], k_go, {}, {}, k_limit) == Status::ok);
    auto statuses = issued.get_future();
    REQUIRE(statuses.wait_for(k_limit) == std::future_status::ready);
    CHECK(statuses.get() == std::vector<Status>{Status::ok, Status::ok, Status::ok});
    owner.join();
    CHECK(owner.parks >= 1);
    CHECK(owner.data_ok);
    CHECK(pair.owner->refusals() == 0);
}

TEST_CASE("net/window: a remote window refuses what lies outside and writes nothing",
          "[net][window]") {
    Pair pair;
    const afd::Window w = pair.remote->window();
    CHECK(w.write(pair.base() + 4096 - 15, k_payload) == Status::invalid_param);
    CHECK(w.write(pair.base() - 16, k_payload) == Status::invalid_param);
    CHECK(w.publish(pair.base() + 4096, 1) == Status::invalid_param);
    CHECK(w.publish(pair.base() + 2, 1) == Status::invalid_param); // misaligned
    // A forged put past the window, straight to the node, is refused there too.
    CHECK(pair.writer->put(pair.peer, pair.exposed->region(), pair.base() + 4090, k_payload) ==
          Status::invalid_param);
    // A flag that does land proves the refused writes were not merely late.
    REQUIRE(w.publish(pair.base() + 128, 7) == Status::ok);
    REQUIRE(w.ring() == Status::ok);
    REQUIRE(pair.wait_flag(128, 7));
    std::vector<std::byte> rest = pair.memory;
    std::fill_n(rest.begin() + 128, 4, std::byte{0}); // the flag
    CHECK(std::all_of(rest.begin(), rest.end(), [](std::byte b) { return b == std::byte{0}; }));
}

TEST_CASE("net/window: a closed window answers uninitialized and writes nothing; close is "
          "idempotent",
          "[net][window]") {
    Pair pair;
    REQUIRE(pair.remote->is_open());
    CHECK(pair.remote->close().has_value());
    CHECK_FALSE(pair.remote->is_open());
    CHECK(pair.remote->close().has_value()); // again: nothing to do
    const afd::Window w = pair.remote->window();
    CHECK(w.write(pair.base(), k_payload) == Status::uninitialized);
    CHECK(w.publish(pair.base() + 128, 5) == Status::uninitialized);
    CHECK(w.ring() == Status::uninitialized);
    // A second window over the same region still works: its flag landing proves the closed
    // one's writes were refused, not late.
    auto again = net::RemoteWindow::open(*pair.writer, pair.peer, pair.exposed->region());
    REQUIRE(again.has_value());
    REQUIRE((*again)->window().publish(pair.base() + 256, 9) == Status::ok);
    REQUIRE(pair.wait_flag(256, 9));
    CHECK(pair.flag(128) == 0);
    CHECK(std::all_of(pair.memory.begin(), pair.memory.begin() + 16,
                      [](std::byte b) { return b == std::byte{0}; }));

    REQUIRE(pair.exposed->is_open());
    CHECK(pair.exposed->close().has_value());
    CHECK_FALSE(pair.exposed->is_open());
    CHECK(pair.exposed->close().has_value());
}

TEST_CASE("net/window: RemoteWindow::open refuses a region the peer did not expose",
          "[net][window]") {
    Pair pair;
    CHECK(net::RemoteWindow::open(*pair.writer, pair.peer, pair.exposed->region() + 1).status() ==
          Status::not_found);
    CHECK(net::RemoteWindow::open(*pair.writer, pair.peer + 100, 0).status() == Status::peer_lost);
    CHECK(net::ExposedWindow::expose(*pair.owner, pair.memory).status() ==
          Status::invalid_param); // the owner has a peer now: too late to expose
}

TEST_CASE("net/window: the exposed memory's waits drive its Node and see the writer's loss",
          "[net][window]") {
    Pair pair;
    afd::AutoWait wait;
    wait.bind(pair.memory.data());
    CHECK(wait.drives_transport()); // as net::NetWait, rather than parking on the doorbell
    CHECK_FALSE(wait.parks_on_doorbell());
    CHECK(wait.watches_peers());
    const auto entry = afd::WaitDirectory::instance().find(pair.memory.data() + 100);
    REQUIRE(entry.has_value());
    CHECK_FALSE(entry->peers.peer_lost());

    std::mutex m;
    std::condition_variable cv;
    bool lost = false;
    const std::uint64_t token = pair.owner->on_peer_lost([&](net::PeerId) {
        const std::lock_guard lock(m);
        lost = true;
        cv.notify_all();
    });
    pair.remote.reset();
    pair.writer.reset(); // the writer node goes away: the owner loses its peer
    {
        std::unique_lock lock(m);
        REQUIRE(cv.wait_for(lock, k_limit, [&] { return lost; }));
    }
    pair.owner->unwatch(token);
    CHECK(entry->peers.peer_lost());
}
