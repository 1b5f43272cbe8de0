#pragma once
// ferry::afd::WaitDirectory — what a wait over some memory can rely on besides polling: a
// doorbell its writers ring, and a probe that tells whether a peer process has died.
//
// A shared window (ferry/ipc/window.hpp) enters its data area here while it is open: the owner
// with its doorbell (ferry's writers into an owner's window ring after publishing) and both sides
// with a peer probe (the segment's participant table). AutoWait, the default wait policy of the
// schedulers and simulators, looks the waited-on context up once per wait. A net::ExposedWindow
// enters its memory with a WaitDriver as well: its waiters progress the Node themselves. The
// directory is process-wide; a process with no window open pays one atomic load per wait.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <ferry/afd/doorbell.hpp>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <vector>

namespace ferry::afd {

// Type-erased "has a peer died?": a function and its argument, both owned by the registrant.
struct PeerProbe {
    bool (*lost)(const void*) noexcept = nullptr;
    const void* arg = nullptr;

    [[nodiscard]] bool connected() const noexcept { return lost != nullptr; }
    [[nodiscard]] bool peer_lost() const noexcept { return lost != nullptr && lost(arg); }
};

// A waiter's own share of a WaitDriver: what it keeps between the driver's calls.
struct DriverState {
    std::chrono::microseconds max_sleep{1000}; // longest sleep between two polls
    std::uint32_t spin = 64;                   // idle drives in a row before a sleep
    std::uint32_t idle = 0;
    std::uint32_t sleeps = 0;
    bool started = false;
    bool joined = false;
};

// Type-erased "the waiter drives the writers' transport itself" (ferry/net registers one for an
// ExposedWindow: the waiter progresses the Node, as net::NetWait does), so that ferry/afd needs
// nothing of the transport. prepare before each poll, pause_until between polls (never past the
// deadline), finish once at the end; the functions and their argument belong to the registrant.
struct WaitDriver {
    using time_point = std::chrono::steady_clock::time_point;
    void (*prepare)(void*, DriverState&) noexcept = nullptr;
    void (*pause_until)(void*, DriverState&, time_point) noexcept = nullptr;
    void (*finish)(void*, DriverState&) noexcept = nullptr;
    void* arg = nullptr;

    [[nodiscard]] bool connected() const noexcept {
        return prepare != nullptr && pause_until != nullptr && finish != nullptr;
    }
};

struct WatchedMemory {
    Doorbell bell;       // disconnected: nobody rings for this memory
    PeerProbe peers;     // disconnected: no other process writes it
    WaitDriver driver{}; // disconnected: the waiter parks on `bell` or polls
};

class WaitDirectory {
public:
    [[nodiscard]] static WaitDirectory& instance() {
        static WaitDirectory directory;
        return directory;
    }

    // Enters `range` (this process's addresses); returns the token that removes it. The caller
    // removes the entry before the memory, the doorbell or the probe's argument goes away.
    [[nodiscard]] std::uint64_t add(std::span<const std::byte> range, WatchedMemory what) {
        std::unique_lock lock(mutex_);
        const std::uint64_t token = next_token_++;
        const auto begin = reinterpret_cast<std::uintptr_t>(range.data());
        entries_.push_back({begin, begin + range.size(), what, token});
        count_.store(entries_.size(), std::memory_order_release);
        return token;
    }
    void remove(std::uint64_t token) noexcept {
        std::unique_lock lock(mutex_);
        std::erase_if(entries_, [&](const Entry& e) { return e.token == token; });
        count_.store(entries_.size(), std::memory_order_release);
    }

    // What is known about the memory at `address`; nullopt (one atomic load when the directory
    // is empty) for memory no window covers.
    [[nodiscard]] std::optional<WatchedMemory> find(const void* address) const {
        if (count_.load(std::memory_order_acquire) == 0) {
            return std::nullopt;
        }
        const auto a = reinterpret_cast<std::uintptr_t>(address);
        std::shared_lock lock(mutex_);
        const auto it = std::find_if(entries_.begin(), entries_.end(),
                                     [&](const Entry& e) { return a >= e.begin && a < e.end; });
        if (it == entries_.end()) {
            return std::nullopt;
        }
        return it->what;
    }

private:
    struct Entry {
        std::uintptr_t begin;
        std::uintptr_t end;
        WatchedMemory what;
        std::uint64_t token;
    };
    WaitDirectory() = default;

    mutable std::shared_mutex mutex_;
    std::vector<Entry> entries_;
    std::uint64_t next_token_ = 1;
    std::atomic<std::size_t> count_{0};
};

} // namespace ferry::afd
