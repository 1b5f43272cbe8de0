#pragma once
// The worker pool that runs a kernel's blocks in parallel: launching with block_dim = N runs
// the kernel body N times, in parallel on a pool
// (docs/cann-contract/runtime.md#programs-and-kernels).
//
// The launching stream thread always takes part, claiming block indices from the same counter as
// the pool's workers, so a launch makes progress even when every worker is busy with another
// stream's kernel: no launch can deadlock on the pool, and a one-block kernel never leaves its
// stream thread.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace ferry::detail {

class BlockPool {
public:
    explicit BlockPool(unsigned workers) {
        threads_.reserve(workers);
        for (unsigned i = 0; i < workers; ++i) {
            threads_.emplace_back([this] { work(); });
        }
    }
    BlockPool(const BlockPool&) = delete;
    BlockPool& operator=(const BlockPool&) = delete;
    ~BlockPool() { shutdown(); }

    // Runs body(i) once for every i in [0, n) and returns when all have returned. `body` must not
    // throw (the caller wraps the kernel and records its failure).
    void run(std::uint32_t n, const std::function<void(std::uint32_t)>& body) {
        if (n == 1 || threads_.empty()) { // nothing to share: no job, no locks
            for (std::uint32_t i = 0; i < n; ++i) {
                body(i);
            }
            return;
        }
        auto job = std::make_shared<Job>(n, &body);
        const std::size_t helpers = std::min<std::size_t>(n - 1, threads_.size());
        if (helpers > 0) {
            std::lock_guard lock(mutex_);
            for (std::size_t i = 0; i < helpers; ++i) {
                queue_.push_back(job);
            }
        }
        if (helpers == 1) {
            ready_.notify_one();
        } else if (helpers > 1) {
            ready_.notify_all();
        }
        job->execute();
        std::unique_lock lock(job->mutex);
        job->finished.wait(lock, [&] { return job->done == job->n; });
    }

    // Stops and joins the workers; queued helper tokens are dropped (their launches finish on
    // the launching thread). With a deadline (process exit), workers still running a block then
    // are detached instead: they end with the process. Idempotent; must not be called from a
    // worker.
    void shutdown(std::chrono::steady_clock::time_point deadline =
                      std::chrono::steady_clock::time_point::max()) {
        std::unique_lock lock(mutex_);
        if (stopping_) {
            return;
        }
        stopping_ = true;
        queue_.clear();
        ready_.notify_all();
        if (deadline != std::chrono::steady_clock::time_point::max() &&
            !gone_.wait_until(lock, deadline, [&] { return exited_ == threads_.size(); })) {
            lock.unlock();
            for (auto& thread : threads_) {
                thread.detach(); // the pool outlives them: the runtime is never destroyed
            }
            return;
        }
        lock.unlock();
        for (auto& thread : threads_) {
            if (thread.joinable() && thread.get_id() != std::this_thread::get_id()) {
                thread.join();
            }
        }
    }

    [[nodiscard]] std::size_t workers() const noexcept { return threads_.size(); }

private:
    struct Job {
        Job(std::uint32_t count, const std::function<void(std::uint32_t)>* fn)
            : n(count), body(fn) {}
        const std::uint32_t n;
        const std::function<void(std::uint32_t)>* body; // valid while any index is unclaimed
        std::atomic<std::uint32_t> next{0};
        std::mutex mutex;
        std::condition_variable finished;
        std::uint32_t done = 0; // guarded by mutex

        void execute() {
            std::uint32_t ran = 0;
            for (std::uint32_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
                (*body)(i);
                ++ran;
            }
            if (ran == 0) {
                return;
            }
            std::lock_guard lock(mutex);
            done += ran;
            if (done == n) {
                finished.notify_all();
            }
        }
    };

    void work() {
        for (;;) {
            std::shared_ptr<Job> job;
            {
                std::unique_lock lock(mutex_);
                ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
                if (stopping_) {
                    ++exited_;
                    gone_.notify_all();
                    return;
                }
                job = std::move(queue_.front());
                queue_.pop_front();
            }
            job->execute();
        }
    }

    std::mutex mutex_;
    std::condition_variable ready_;
    std::condition_variable gone_; // a worker left its loop
    std::deque<std::shared_ptr<Job>> queue_;
    bool stopping_ = false;
    std::size_t exited_ = 0; // workers that left their loop
    std::vector<std::thread> threads_;
};

} // namespace ferry::detail
