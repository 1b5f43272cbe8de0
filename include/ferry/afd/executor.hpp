#pragma once
// Executors: how a scheduler runs the per-session output copies of one call.
//
// docs/cann-contract/afd.md#output-and-reset: CANN splits the sessions of a ready group over
// CpuKernelUtils::ParallelFor; each shard [begin, end) writes its own output rows, so the result
// is the same whatever the split. SerialExecutor runs the one shard inline; PoolExecutor splits
// the range over a small persistent thread pool plus the calling thread and waits for every shard.

#include <algorithm>
#include <concepts>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <latch>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <ferry/core/contract.hpp>

namespace ferry::afd {

namespace detail {
struct ShardProbe {
    void operator()(std::size_t, std::size_t) const noexcept {}
};
} // namespace detail

// for_each_shard(n, shard) calls shard(begin, end) on disjoint ranges covering [0, n) and returns
// after all of them have returned.
template <typename E>
concept Executor = requires(E& e, std::size_t n, detail::ShardProbe shard) {
    e.for_each_shard(n, shard);
};

struct SerialExecutor {
    template <std::invocable<std::size_t, std::size_t> Shard>
    void for_each_shard(std::size_t n, Shard&& shard) const {
        if (n != 0) {
            shard(std::size_t{0}, n);
        }
    }
};

// A persistent pool: `helpers` threads wait on a condition variable for the next job; the caller
// runs shard 0 itself and waits on a latch for the others. (Not Boost.Asio's thread_pool: its
// fences are invisible to ThreadSanitizer, which CI runs the concurrency suite under.) One caller
// at a time: a scheduler owns its executor.
class PoolExecutor {
public:
    // `helpers` pool threads join the calling thread; 0 makes it serial.
    explicit PoolExecutor(std::size_t helpers = 1) : state_(std::make_unique<State>()) {
        for (std::size_t i = 0; i < helpers; ++i) {
            workers_.emplace_back([s = state_.get(), i] { work(*s, i); });
        }
    }
    PoolExecutor(PoolExecutor&&) noexcept = default;
    PoolExecutor& operator=(PoolExecutor&&) = delete;
    ~PoolExecutor() {
        if (state_) {
            {
                const std::lock_guard lock(state_->mutex);
                state_->stop = true;
            }
            state_->wake.notify_all();
        }
        workers_.clear(); // joins, before state_ goes
    }

    template <std::invocable<std::size_t, std::size_t> Shard>
    void for_each_shard(std::size_t n, Shard&& shard) {
        const std::size_t shards = std::min(n, workers_.size() + 1);
        if (shards <= 1) {
            SerialExecutor{}.for_each_shard(n, shard);
            return;
        }
        const std::size_t step = (n + shards - 1) / shards;
        std::latch done(static_cast<std::ptrdiff_t>(shards - 1));
        {
            const std::lock_guard lock(state_->mutex);
            state_->task = [&shard, step, n](std::size_t worker) {
                const std::size_t begin = std::min(n, (worker + 1) * step);
                const std::size_t end = std::min(n, begin + step);
                if (begin < end) {
                    shard(begin, end);
                }
            };
            state_->done = &done;
            state_->active = shards - 1;
            ++state_->generation;
        }
        state_->wake.notify_all();
        shard(std::size_t{0}, std::min(n, step));
        done.wait();
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable wake;
        std::function<void(std::size_t)> task;
        std::latch* done = nullptr;
        std::size_t active = 0;
        std::uint64_t generation = 0;
        bool stop = false;
    };

    static void work(State& s, std::size_t index) {
        std::uint64_t seen = 0;
        for (;;) {
            std::function<void(std::size_t)> task;
            std::latch* done = nullptr;
            {
                std::unique_lock lock(s.mutex);
                s.wake.wait(lock, [&] { return s.stop || s.generation != seen; });
                if (s.stop) {
                    return;
                }
                seen = s.generation;
                if (index >= s.active) {
                    continue; // this job has fewer shards than there are helpers
                }
                task = s.task;
                done = s.done;
            }
            task(index);
            done->count_down();
        }
    }

    std::unique_ptr<State> state_;
    std::vector<std::jthread> workers_;
};

static_assert(Executor<SerialExecutor> && Executor<PoolExecutor>);

} // namespace ferry::afd
