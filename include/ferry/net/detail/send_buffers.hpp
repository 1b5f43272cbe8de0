#pragma once
// A message sender's buffers, reused (docs/multi-node-channels.md, Sending without a copy). A
// buffer handed to UCX with a message comes back here when UCX is done with it (the post's
// completion drops its owner), so a steady sender allocates — and the kernel faults in — its
// buffers once, not once per message. At most `keep` idle buffers are kept (the receiver's
// capacity: no more messages can be in flight). Thread-safe: the last owner of a buffer may be
// dropped on the Node's progress thread.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace ferry::net::detail {

class SendBuffers : public std::enable_shared_from_this<SendBuffers> {
public:
    explicit SendBuffers(std::size_t keep) : keep_(keep) {
        idle_.reserve(keep); // a buffer coming back never allocates (its deleter is noexcept)
    }

    // A buffer of at least `bytes` bytes (contents unspecified), an idle one when one is large
    // enough. When its last owner drops it, it comes back here — or is freed, when `keep` are
    // idle already or the pool is gone. Throws bad_alloc.
    [[nodiscard]] std::shared_ptr<std::byte> take(std::size_t bytes) {
        Buffer b;
        {
            const std::lock_guard lock(mu_);
            const auto fits = std::ranges::find_if(
                idle_, [bytes](const Buffer& idle) { return idle.size >= bytes; });
            if (fits != idle_.end()) {
                b = std::move(*fits);
                idle_.erase(fits);
            }
        }
        if (!b.data) {
            b.data = std::make_unique_for_overwrite<std::byte[]>(bytes);
            b.size = bytes;
        }
        // On bad_alloc (the control block) the deleter runs: the buffer comes back.
        return std::shared_ptr<std::byte>(b.data.release(), Return{weak_from_this(), b.size});
    }

    // Idle buffers held now.
    [[nodiscard]] std::size_t idle() const {
        const std::lock_guard lock(mu_);
        return idle_.size();
    }

private:
    struct Buffer {
        std::unique_ptr<std::byte[]> data;
        std::size_t size = 0;
    };
    struct Return {
        std::weak_ptr<SendBuffers> pool;
        std::size_t size;
        void operator()(std::byte* p) const noexcept {
            std::unique_ptr<std::byte[]> owned(p);
            if (const auto alive = pool.lock()) {
                alive->give_back(std::move(owned), size);
            }
        }
    };

    void give_back(std::unique_ptr<std::byte[]> data, std::size_t size) noexcept {
        const std::lock_guard lock(mu_);
        if (idle_.size() < keep_) {
            idle_.push_back({std::move(data), size}); // within the reserved capacity
        }
    }

    const std::size_t keep_;
    mutable std::mutex mu_;
    std::vector<Buffer> idle_;
};

} // namespace ferry::net::detail
