// ferry::net::NetWait between two nodes of this process over UCX's tcp loopback: the waiter
// progresses its own Node, so the message and the flag that end its wait are applied on its own
// thread while it sleeps on the worker's fd; its waits end at their deadline and no earlier;
// Node::wake_waiters() ends a sleep; a waiter that keeps the progress thread off the worker
// does not make a live peer look silent. The schedulers' default afd::AutoWait, bound to the
// exposed memory, waits the same way (and ends when the writer node is lost).
#include "window_support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fcntl.h>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/net/wait.hpp>
#include <ferry/net/window.hpp>
#include <memory>
#include <string>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>
#include <vector>

using ferry::Status;
using namespace ferry;
using std::chrono::steady_clock;

namespace {

constexpr auto k_limit = std::chrono::seconds(10);
constexpr net::ServiceId k_probe_service = 0x7e57;

struct Owner {
    std::vector<std::byte> memory = std::vector<std::byte>(4096);
    std::unique_ptr<net::ExposedWindow> exposed;
    std::unique_ptr<net::Node> owner, writer;
    net::PeerId peer = 0;
    std::unique_ptr<net::RemoteWindow> remote;
    std::atomic<pid_t> handler_thread{0}; // who ran the owner's probe service

    static std::unique_ptr<net::Node> node(const std::string& listen,
                                           std::chrono::milliseconds heartbeat,
                                           std::chrono::milliseconds peer_timeout) {
        net::NodeOptions o;
        o.listen = listen;
        o.secret = net::Secret::from_environment().value();
        o.heartbeat = heartbeat;
        o.peer_timeout = peer_timeout;
        o.one_sided_rma = net::one_sided_rma_from_environment(); // meson runs both paths
        auto n = net::Node::start(std::move(o));
        REQUIRE(n.has_value());
        return std::move(*n);
    }
    // Heartbeats rare by default: a sleep that ends early ended for what the test did.
    explicit Owner(std::chrono::milliseconds heartbeat = std::chrono::seconds(5),
                   std::chrono::milliseconds peer_timeout = std::chrono::seconds(30),
                   std::size_t bytes = 4096) {
        memory = std::vector<std::byte>(bytes);
        owner = node("127.0.0.1:0", heartbeat, peer_timeout);
        auto e = net::ExposedWindow::expose(*owner, memory);
        REQUIRE(e.has_value());
        exposed = std::move(*e);
        owner->serve(k_probe_service, [this](net::Delivery&) -> net::Verdict {
            handler_thread.store(static_cast<pid_t>(::syscall(SYS_gettid)));
            return nullptr;
        });
        writer = node("", heartbeat, peer_timeout);
        auto reached = net_test::reach(*writer, owner->address(), exposed->region(), k_limit);
        peer = reached.peer;
        remote = std::move(reached.remote);
        REQUIRE(remote->one_sided() == net::one_sided_rma_from_environment()); // the path asked
    }
    [[nodiscard]] std::int32_t flag() {
        return std::atomic_ref(*reinterpret_cast<std::int32_t*>(memory.data() + 64))
            .load(std::memory_order_acquire);
    }
};

// How one wait went: the loop of afd's wait loop (prepare, check, deadline, pause_until).
struct Waited {
    bool seen = false;
    bool slept_to_deadline = false; // a pause returned only at the deadline
    bool lost = false;              // the policy's peer_lost() ended it
    bool driven = true;             // an AutoWait bound to drive the Node (NetWait always does)
    pid_t thread = 0;
    steady_clock::duration took{};
};

// How the waits of a test wait: net::NetWait, or the schedulers' default afd::AutoWait bound to
// the exposed memory (which should wait as NetWait does).
enum class Policy : std::uint8_t { net_wait, auto_wait };

template <typename P>
Waited wait_flag_with(Owner& o, std::int32_t value, steady_clock::duration limit, P policy);

Waited wait_flag(Owner& o, std::int32_t value, steady_clock::duration limit,
                 std::chrono::microseconds max_sleep, Policy how = Policy::net_wait) {
    if (how == Policy::net_wait) {
        return wait_flag_with(o, value, limit, net::NetWait(*o.exposed, max_sleep));
    }
    afd::AutoWait policy;
    policy.bind(o.memory.data() + 64);
    const bool driven = policy.drives_transport(); // checked by the caller (maybe not this thread)
    Waited w = wait_flag_with(o, value, limit, std::move(policy));
    w.driven = driven;
    return w;
}

template <typename P>
Waited wait_flag_with(Owner& o, std::int32_t value, steady_clock::duration limit, P policy) {
    Waited w;
    w.thread = static_cast<pid_t>(::syscall(SYS_gettid));
    const auto start = steady_clock::now();
    const auto deadline = start + limit;
    for (;;) {
        policy.prepare();
        w.seen = o.flag() == value;
        if (w.seen || steady_clock::now() >= deadline) {
            break;
        }
        if ((w.lost = policy.peer_lost())) {
            break;
        }
        policy.pause_until(deadline);
        w.slept_to_deadline = steady_clock::now() >= deadline;
    }
    policy.finish();
    w.took = steady_clock::now() - start;
    return w;
}

std::vector<std::string> poll_calls() {
    std::vector<std::string> calls;
#ifdef SYS_poll
    calls.push_back(std::to_string(SYS_poll) + " ");
#endif
    calls.push_back(std::to_string(SYS_ppoll) + " ");
    return calls;
}

// Waits (bounded) until thread `tid` of this process is in one of the system calls `calls`.
bool in_syscall(pid_t tid, const std::vector<std::string>& calls) {
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/syscall";
    const auto deadline = steady_clock::now() + k_limit;
    while (steady_clock::now() < deadline) {
        char buf[64] = {};
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        const ssize_t n = fd >= 0 ? ::read(fd, buf, sizeof buf - 1) : -1;
        if (fd >= 0) {
            ::close(fd);
        }
        for (const auto& call : calls) {
            if (n > 0 && std::string(buf).rfind(call, 0) == 0) {
                return true;
            }
        }
        std::this_thread::yield();
    }
    return false;
}

// Waits (bounded) until thread `tid` of this process sleeps in poll (the worker's fd).
bool in_poll(pid_t tid) {
    return in_syscall(tid, poll_calls());
}

} // namespace

namespace {
// Rounds: the waiter sleeps on the worker's fd, then the writer sends a message to the owner's
// probe service and publishes the flag. A progress thread that takes the worker while a waiter
// holds it (now and then, at a slice's end) shows as a foreign handler thread.
void check_applied_on_waiter(Policy how) {
    constexpr std::int32_t k_rounds = 20;
    Owner o;
    std::atomic<pid_t> waiter{0};
    std::atomic<std::int32_t> done{0};
    std::vector<Waited> waits(k_rounds);
    std::vector<pid_t> handlers(k_rounds);
    std::thread t([&] {
        waiter.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        for (std::int32_t r = 1; r <= k_rounds; ++r) {
            waits[r - 1] = wait_flag(o, r, k_limit, std::chrono::seconds(60), how);
            handlers[r - 1] = o.handler_thread.load();
            done.store(r);
        }
    });
    const std::byte note[8] = {};
    const afd::Window win = o.remote->window();
    for (std::int32_t r = 1; r <= k_rounds; ++r) {
        while (done.load() != r - 1 || waiter.load() == 0) {
            std::this_thread::yield();
        }
        REQUIRE(in_poll(waiter.load())); // asleep on the worker's fd before anything is sent
        REQUIRE(o.writer->send(o.peer, k_probe_service, {}, note, k_limit) == Status::ok);
        REQUIRE(win.write(o.exposed->owner_base() + 1024, note) == Status::ok);
        REQUIRE(win.publish(o.exposed->owner_base() + 64, r) == Status::ok);
        REQUIRE(win.ring() == Status::ok);
    }
    t.join();
    for (std::int32_t r = 0; r < k_rounds; ++r) {
        INFO("round " << r + 1);
        CHECK(waits[r].driven);
        CHECK(waits[r].seen);
        CHECK_FALSE(waits[r].slept_to_deadline); // the data woke it, not the deadline
        // The progress thread stayed off: the message before the flag was handled by the waiter.
        CHECK(handlers[r] == waits[r].thread);
    }
}
} // namespace

TEST_CASE("net/wait: what ends a NetWait is applied on the waiter's own thread", "[net][wait]") {
    check_applied_on_waiter(Policy::net_wait);
}

TEST_CASE("net/wait: the default AutoWait over an ExposedWindow waits as NetWait does",
          "[net][wait]") {
    // No policy named: what the schedulers get. It drives the Node (rather than parking on the
    // doorbell) and what ends the wait runs on the waiter's thread.
    check_applied_on_waiter(Policy::auto_wait);
}

TEST_CASE("net/wait: a NetWait's or AutoWait's wait ends at its deadline, never before",
          "[net][wait]") {
    Owner o;
    for (const auto how : {Policy::net_wait, Policy::auto_wait}) {
        for (const auto limit : {std::chrono::milliseconds(20), std::chrono::milliseconds(60)}) {
            const Waited w = wait_flag(o, 1, limit, std::chrono::seconds(60), how);
            CHECK(w.driven);
            CHECK_FALSE(w.seen);
            CHECK_FALSE(w.lost);
            CHECK(w.took >= limit);
        }
    }
}

TEST_CASE("net/wait: the default AutoWait over an ExposedWindow ends when the writer is lost",
          "[net][wait]") {
    Owner o;
    std::atomic<bool> started{false};
    Waited w;
    std::thread t([&] {
        started.store(true);
        w = wait_flag(o, 1, k_limit, std::chrono::seconds(60), Policy::auto_wait);
    });
    while (!started.load()) {
        std::this_thread::yield();
    }
    o.remote.reset();
    o.writer.reset(); // the owner loses its only peer
    t.join();
    CHECK(w.driven);
    CHECK_FALSE(w.seen);
    CHECK(w.lost);
    CHECK(w.took < k_limit);
}

TEST_CASE("net/wait: Node::wake_waiters ends a NetWait's sleep (a stop)", "[net][wait]") {
    Owner o;
    std::atomic<pid_t> waiter{0};
    Waited w;
    std::thread t([&] {
        waiter.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        w = wait_flag(o, 2, k_limit, std::chrono::seconds(60));
    });
    while (waiter.load() == 0) {
        std::this_thread::yield();
    }
    REQUIRE(in_poll(waiter.load()));
    // A flag stored without a ring, as a host stores its stop flag, then the host's wake.
    std::atomic_ref(*reinterpret_cast<std::int32_t*>(o.memory.data() + 64))
        .store(2, std::memory_order_release);
    o.owner->wake_waiters();
    t.join();
    CHECK(w.seen);
    CHECK_FALSE(w.slept_to_deadline);
    CHECK(w.took < std::chrono::seconds(2)); // the wake ended it, not a heartbeat (every 5 s)
}

TEST_CASE("net/wait: a NetWait keeps peers alive while the progress thread is off", "[net][wait]") {
    // Heartbeats every 50 ms, silence judged after 500 ms; the waiter holds the worker for three
    // peer timeouts.
    Owner o(std::chrono::milliseconds(50), std::chrono::milliseconds(500));
    const Waited w = wait_flag(o, 3, std::chrono::milliseconds(1500), std::chrono::seconds(60));
    CHECK_FALSE(w.seen);
    CHECK(o.owner->peers().size() == 1);
    CHECK(o.writer->alive(o.peer));
}

TEST_CASE("net/wait: a put and a flush wait for their completion on the caller's thread",
          "[net][wait]") {
    // A 1 MiB put (a rendezvous) completes, and a flush is answered, only once the owner
    // progresses. The owner's hold service keeps its worker until the writer's probe service has
    // run: a message the owner posts while the writer's thread waits, so the thread that runs the
    // writer's handler is the one progressing the writer's worker for that wait.
    constexpr std::size_t k_bytes = std::size_t{1} << 20;
    constexpr net::ServiceId k_hold_service = 0x7e58;
    Owner o(std::chrono::seconds(5), std::chrono::seconds(30), k_bytes);
    std::atomic<pid_t> writer_handler{0};
    std::atomic<bool> go{false};
    const std::byte note[8] = {};
    o.writer->serve(k_probe_service, [&](net::Delivery&) -> net::Verdict {
        writer_handler.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        return nullptr;
    });
    o.owner->serve(k_hold_service, [&](net::Delivery& d) -> net::Verdict {
        const auto until = steady_clock::now() + k_limit;
        while (!go.load() && steady_clock::now() < until) {
            std::this_thread::yield();
        }
        if (o.owner->post(d.peer(), k_probe_service, {}, note, nullptr) == Status::ok) {
            while (writer_handler.load() == 0 && steady_clock::now() < until) {
                std::this_thread::yield();
            }
        }
        return nullptr;
    });
    REQUIRE(o.writer->send(o.peer, k_hold_service, {}, note, k_limit) == Status::ok);
    const std::vector<std::byte> bytes(k_bytes, std::byte{0x5a});
    std::atomic<pid_t> putter{0};
    Status put = Status::invalid_param;
    Status flushed = Status::invalid_param;
    std::thread t([&] {
        putter.store(static_cast<pid_t>(::syscall(SYS_gettid)));
        put = o.remote->window().write(o.exposed->owner_base(), bytes);
        flushed = o.writer->flush(o.peer, k_limit);
    });
    while (putter.load() == 0) {
        std::this_thread::yield();
    }
    // Asleep waiting for the owner (a sleep on the worker's fd, or on a condition variable).
    auto calls = poll_calls();
    calls.push_back(std::to_string(SYS_futex) + " ");
    REQUIRE(in_syscall(putter.load(), calls));
    go.store(true);
    t.join();
    CHECK(put == Status::ok);
    CHECK(flushed == Status::ok);
    CHECK(writer_handler.load() == putter.load());
    CHECK(o.memory[k_bytes - 1] == std::byte{0x5a});
}
