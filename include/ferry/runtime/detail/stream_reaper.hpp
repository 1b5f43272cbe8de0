#pragma once
// Streams released from their own thread: a task that destroys its own stream or resets its
// device. That thread cannot join itself, so the released stream waits here, its thread finishing
// what was queued before the release, until another thread joins it: the next stream release
// joins those that have finished (never blocking on one that has not), finalize and process exit
// join the rest. Nothing is left unjoined, and nothing waits for a thread still at work.

#include <algorithm>
#include <ferry/runtime/stream.hpp>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace ferry::detail {

class StreamReaper {
public:
    void adopt(std::shared_ptr<Stream> stream) {
        std::lock_guard lock(mutex_);
        streams_.push_back(std::move(stream));
    }

    // Joins and drops the adopted streams whose threads have finished.
    void reap() {
        std::vector<std::shared_ptr<Stream>> done;
        {
            std::lock_guard lock(mutex_);
            const auto finished = std::stable_partition(
                streams_.begin(), streams_.end(), [](const auto& s) { return !s->finished(); });
            done.assign(std::make_move_iterator(finished), std::make_move_iterator(streams_.end()));
            streams_.erase(finished, streams_.end());
        }
        for (auto& stream : done) {
            (void)stream->join(); // the thread has left its loop: returns at once
        }
    }

    // Every adopted stream, for finalize and process exit to stop and join.
    [[nodiscard]] std::vector<std::shared_ptr<Stream>> take_all() {
        std::lock_guard lock(mutex_);
        return std::exchange(streams_, {});
    }

private:
    std::mutex mutex_;
    std::vector<std::shared_ptr<Stream>> streams_;
};

} // namespace ferry::detail
