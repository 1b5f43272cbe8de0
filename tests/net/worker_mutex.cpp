// The Node's lock (detail/worker_mutex.hpp): recursive, and says when another thread waits.

#include <atomic>
#include <catch2/catch.hpp>
#include <ferry/net/detail/worker_mutex.hpp>
#include <mutex>
#include <thread>

using ferry::net::detail::WorkerMutex;

TEST_CASE("net/worker_mutex: contended() while, and only while, another thread waits in lock()") {
    WorkerMutex mu;
    CHECK_FALSE(mu.contended());
    mu.lock();
    mu.lock(); // recursive, as the Node's handlers need
    CHECK_FALSE(mu.contended());
    std::atomic<bool> got{false};
    std::thread waiter([&] {
        const std::lock_guard lock(mu);
        got = true;
    });
    while (!mu.contended()) { // the waiter is blocked in lock(): observable, no sleep
        std::this_thread::yield();
    }
    CHECK_FALSE(got.load());
    mu.unlock();
    CHECK(mu.contended()); // still held once
    mu.unlock();
    waiter.join();
    CHECK(got.load());
    CHECK_FALSE(mu.contended());
}

TEST_CASE("net/worker_mutex: try_lock fails while another thread holds it, and does not count") {
    WorkerMutex mu;
    std::atomic<bool> held{false};
    std::atomic<bool> release{false};
    std::thread holder([&] {
        const std::lock_guard lock(mu);
        held = true;
        while (!release.load()) {
            std::this_thread::yield();
        }
    });
    while (!held.load()) {
        std::this_thread::yield();
    }
    CHECK_FALSE(mu.try_lock());
    CHECK_FALSE(mu.contended());
    release = true;
    holder.join();
    CHECK(mu.try_lock());
    mu.unlock();
}
