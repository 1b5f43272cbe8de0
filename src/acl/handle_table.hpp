#pragma once
// HandleTable<T>: the C handles of one kind that ferry-acl has handed out, as tokens that are
// never reused within the process (docs/c-api.md, Handles).
//
// A C handle (acltdtDataItem*, aclrtStream, aclTensor*, ...) is opaque: callers pass it back and
// never dereference it. Handing out the object's address would make identity depend on the
// allocator — after a destroy, the next create may get the same address, and the stale handle
// would then designate the new object (a second destroy would destroy *it*). So the handle's value
// is a token instead: the kind, a slot index and the slot's generation, packed into the pointer's
// bits. A destroy bumps the slot's generation, so the old token never matches again; a slot whose
// generation would wrap is retired, never reused. Tokens are never NULL (the kind is never 0), and
// the kind makes a handle of one kind never a live handle of another.
//
// Lookups copy a shared_ptr under the table's lock, so the object outlives the call that found it
// even when another thread takes the handle out meanwhile; take() and take_if() remove the handle
// and its check atomically (no window between "is it live?" and "destroy it"). Not on a per-byte
// path: one shared_mutex per kind, and no allocation except when the table grows.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace ferry::acl {

static_assert(sizeof(std::uintptr_t) == 8, "handle tokens pack 64 bits into a pointer");

// Every kind of C handle, as the token's low bits: never 0, so no token is NULL.
enum class HandleKind : std::uint8_t {
    item = 1,
    dataset,
    channel,
    stream,
    event,
    context,
    tensor,
    executor,
    notify,
    profiler_config,
};

using Token = std::uintptr_t;

// The token as the C handle type `Handle` (an opaque pointer that is never dereferenced).
template <typename Handle>
[[nodiscard]] Handle* to_handle(Token token) noexcept {
    return reinterpret_cast<Handle*>(token); // NOLINT: the pointer only carries the token
}
[[nodiscard]] inline Token to_token(const void* handle) noexcept {
    return reinterpret_cast<Token>(handle); // NOLINT
}

template <typename T>
class HandleTable {
public:
    explicit HandleTable(HandleKind kind) noexcept : kind_(kind) {}
    HandleTable(const HandleTable&) = delete;
    HandleTable& operator=(const HandleTable&) = delete;

    // Registers `object` under a new token. Throws std::bad_alloc (registering nothing) when the
    // table cannot grow.
    [[nodiscard]] Token add(std::shared_ptr<T> object) {
        const std::unique_lock lock(mutex_);
        const std::size_t slot = allocate();
        slots_[slot].object = std::move(object);
        return encode(slot, slots_[slot].generation);
    }

    // The object of a live token of this kind; nullptr for NULL, a stale or foreign token.
    [[nodiscard]] std::shared_ptr<T> find(Token token) const noexcept {
        const std::shared_lock lock(mutex_);
        const Slot* slot = live(token);
        return slot != nullptr ? slot->object : nullptr;
    }
    [[nodiscard]] std::shared_ptr<T> find(const void* handle) const noexcept {
        return find(to_token(handle));
    }

    // Runs `use(std::shared_ptr<T>&)` under the lock when the token is live (so that what `use`
    // records, e.g. a call entering the object, is ordered before any take); false otherwise.
    template <typename Use>
    bool find_and(Token token, Use&& use) const {
        const std::shared_lock lock(mutex_);
        const Slot* slot = live(token);
        if (slot == nullptr) {
            return false;
        }
        use(slot->object);
        return true;
    }

    // Takes a live token's object out: the token is stale from here on.
    [[nodiscard]] std::shared_ptr<T> take(Token token) noexcept {
        return take_if(token, [](T&) { return true; });
    }
    [[nodiscard]] std::shared_ptr<T> take(const void* handle) noexcept {
        return take(to_token(handle));
    }

    // Takes the object out only when `keep_going(T&)` — run under the lock, atomically with the
    // lookup — returns true; nullptr when the token is not live or `keep_going` said no.
    template <typename Predicate>
    [[nodiscard]] std::shared_ptr<T> take_if(Token token, Predicate&& keep_going) {
        const std::unique_lock lock(mutex_);
        Slot* slot = const_cast<Slot*>(live(token));
        if (slot == nullptr || !keep_going(*slot->object)) {
            return nullptr;
        }
        std::shared_ptr<T> object = std::move(slot->object);
        release(static_cast<std::size_t>(slot - slots_.data()));
        return object;
    }

    // A new token for the same object; the old one is stale from here on. 0 when `token` is not
    // live. Throws std::bad_alloc (changing nothing) only when a spent slot must move the object.
    [[nodiscard]] Token reissue(Token token) {
        const std::unique_lock lock(mutex_);
        Slot* slot = const_cast<Slot*>(live(token));
        if (slot == nullptr) {
            return 0;
        }
        std::size_t index = static_cast<std::size_t>(slot - slots_.data());
        if (slot->generation == k_max_generation) {
            const std::size_t fresh = allocate(); // may move slots_: use indices from here
            slots_[fresh].object = std::move(slots_[index].object);
            index = fresh; // the spent slot stays retired
        } else {
            ++slots_[index].generation;
        }
        return encode(index, slots_[index].generation);
    }

private:
    static constexpr unsigned k_kind_bits = 4;
    static constexpr unsigned k_slot_bits = 24; // 16 M live handles of one kind
    static constexpr std::size_t k_max_slots = std::size_t{1} << k_slot_bits;
    static constexpr std::uint64_t k_max_generation =
        (std::uint64_t{1} << (64 - k_kind_bits - k_slot_bits)) - 1;

    struct Slot {
        std::uint64_t generation = 1;
        std::shared_ptr<T> object; // null: free (or retired)
    };

    [[nodiscard]] Token encode(std::size_t slot, std::uint64_t generation) const noexcept {
        return static_cast<Token>((generation << (k_kind_bits + k_slot_bits)) |
                                  (std::uint64_t{slot} << k_kind_bits) |
                                  static_cast<std::uint64_t>(kind_));
    }

    // The slot a token designates when it is live; caller holds the lock.
    [[nodiscard]] const Slot* live(Token token) const noexcept {
        const auto bits = static_cast<std::uint64_t>(token);
        if ((bits & ((1U << k_kind_bits) - 1)) != static_cast<std::uint64_t>(kind_)) {
            return nullptr;
        }
        const std::size_t slot = (bits >> k_kind_bits) & (k_max_slots - 1);
        const std::uint64_t generation = bits >> (k_kind_bits + k_slot_bits);
        if (slot >= slots_.size() || slots_[slot].generation != generation ||
            slots_[slot].object == nullptr) {
            return nullptr;
        }
        return &slots_[slot];
    }

    // A free slot (its object still null); throws std::bad_alloc when the table cannot grow.
    // Caller holds the lock.
    [[nodiscard]] std::size_t allocate() {
        if (!free_.empty()) {
            const std::size_t slot = free_.back();
            free_.pop_back();
            return slot;
        }
        if (slots_.size() >= k_max_slots) {
            throw std::bad_alloc();
        }
        free_.reserve(slots_.size() + 1); // so that release() can always push the slot back
        slots_.emplace_back();
        return slots_.size() - 1;
    }

    // Frees a slot for reuse under the next generation, or retires it when none is left.
    void release(std::size_t slot) noexcept {
        if (slots_[slot].generation == k_max_generation) {
            return; // retired: its tokens stay stale forever
        }
        ++slots_[slot].generation;
        free_.push_back(slot); // capacity reserved by add()
    }

    const HandleKind kind_;
    mutable std::shared_mutex mutex_;
    std::vector<Slot> slots_;
    std::vector<std::size_t> free_;
};

} // namespace ferry::acl
