#pragma once
// LiveHandles<T>: the set of C handles (aclTensor*, aclOpExecutor*) the shim has handed out and
// not yet taken back. Every use looks the handle up first, so a stale, foreign or twice-destroyed
// handle is an error code instead of a use after free (spec/quality.md: no crash on detectable
// misuse). Not on a data path: one mutex.

#include <memory>
#include <mutex>
#include <unordered_set>

namespace ferry::acl {

template <typename T>
class LiveHandles {
public:
    // Registers a new object and hands out its handle (throws bad_alloc, with nothing leaked).
    T* adopt(std::unique_ptr<T> object) {
        std::lock_guard lock(mutex_);
        live_.insert(object.get());
        return object.release();
    }

    // Takes a live handle back for destruction; nullptr when it is not live.
    std::unique_ptr<T> take(const T* handle) {
        std::lock_guard lock(mutex_);
        if (live_.erase(handle) == 0) {
            return nullptr;
        }
        return std::unique_ptr<T>(const_cast<T*>(handle));
    }

    // Calls use(T&) under the lock when the handle is live and returns true; false otherwise.
    template <typename Use>
    bool with(const T* handle, Use&& use) {
        std::lock_guard lock(mutex_);
        if (!live_.contains(handle)) {
            return false;
        }
        use(*const_cast<T*>(handle));
        return true;
    }

private:
    std::mutex mutex_;
    std::unordered_set<const T*> live_;
};

} // namespace ferry::acl
