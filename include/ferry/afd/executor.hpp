#pragma once
// Executors: how a scheduler runs the per-session output copies of one call.
//
// ffn_scheduler_facts.md §2.6: CANN splits the sessions of a ready group over
// CpuKernelUtils::ParallelFor; each shard [begin, end) writes its own output rows, so the result
// is the same whatever the split. SerialExecutor runs the one shard inline; PoolExecutor splits
// the range over a Boost.Asio thread pool plus the calling thread and waits for every shard.

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <latch>
#include <memory>

#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>

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

class PoolExecutor {
public:
    // `helpers` pool threads join the calling thread; 0 makes it serial.
    explicit PoolExecutor(std::size_t helpers = 1)
        : helpers_(helpers),
          pool_(helpers == 0 ? nullptr : std::make_unique<boost::asio::thread_pool>(helpers)) {}
    PoolExecutor(PoolExecutor&&) noexcept = default;
    PoolExecutor& operator=(PoolExecutor&&) noexcept = default;
    ~PoolExecutor() {
        if (pool_) {
            pool_->join();
        }
    }

    template <std::invocable<std::size_t, std::size_t> Shard>
    void for_each_shard(std::size_t n, Shard&& shard) {
        const std::size_t shards = std::min(n, helpers_ + 1);
        if (shards <= 1) {
            SerialExecutor{}.for_each_shard(n, shard);
            return;
        }
        const std::size_t step = (n + shards - 1) / shards;
        std::latch done(static_cast<std::ptrdiff_t>(shards - 1));
        for (std::size_t i = 1; i < shards; ++i) {
            const std::size_t begin = std::min(n, i * step);
            const std::size_t end = std::min(n, begin + step);
            boost::asio::post(*pool_, [&shard, &done, begin, end] {
                if (begin < end) {
                    shard(begin, end);
                }
                done.count_down();
            });
        }
        shard(std::size_t{0}, std::min(n, step));
        done.wait();
    }

private:
    std::size_t helpers_;
    std::unique_ptr<boost::asio::thread_pool> pool_;
};

static_assert(Executor<SerialExecutor> && Executor<PoolExecutor>);

} // namespace ferry::afd
