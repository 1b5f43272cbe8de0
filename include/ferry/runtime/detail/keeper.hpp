#pragma once
// The runtime keeper: boot stage, the booted Runtime and the last boot error
// (CANN's RuntimeKeeper, docs/cann-contract/runtime.md#singleton-and-boot). It is allocated once
// and never destroyed, so nothing of it can be used after destruction while the process exits.

#include <atomic>
#include <cstdint>
#include <ferry/core/status.hpp>
#include <mutex>
#include <string>
#include <vector>

namespace ferry {

class Runtime;

// RuntimeKeeper's BOOT_INIT = 0, BOOT_ON = 1, BOOT_DONE = 2.
enum class BootStage : std::uint32_t { init = 0, on = 1, done = 2 };

namespace detail {

struct RuntimeKeeper {
    std::atomic<std::uint32_t> stage{static_cast<std::uint32_t>(BootStage::init)};
    std::atomic<Runtime*> runtime{nullptr};
    std::atomic<std::uint64_t> attempts{0}; // finished boot attempts, successful or not
    std::atomic<bool> exiting{false};       // set by the atexit handler
    // Ids of contexts, streams and events: unique for the life of the process, shared by every
    // module of it (the keeper is the one process-state object the C shim exports).
    std::atomic<std::uint64_t> next_object_id{0};

    std::mutex mutex; // guards the members below
    std::string error;
    Status last_status = Status::ok;
    std::vector<Runtime*> retired; // finalized runtimes: kept, as raw pointers may still exist
    bool atexit_registered = false;

    [[nodiscard]] std::string last_error() {
        std::lock_guard lock(mutex);
        return error;
    }
};

[[nodiscard]] inline RuntimeKeeper& keeper() {
    static RuntimeKeeper* const instance = new RuntimeKeeper; // leaked on purpose (see above)
    return *instance;
}

[[nodiscard]] inline std::uint64_t next_object_id() noexcept {
    return keeper().next_object_id.fetch_add(1, std::memory_order_relaxed) + 1;
}

} // namespace detail
} // namespace ferry
