#pragma once
// ferry::KernelArgs — a kernel's arguments as 8-byte slots (CANN: gert::AnnotatedKernelArgs).
//
// docs/cann-contract/kernel-args.md#append-rules. Each successful append adds exactly one slot
// and one descriptor:
//   InputAddr / OutputAddr / WorkspaceAddr  the slot holds the address; index <= INT32_MAX
//   std::uint64_t (CustomValue)             the slot holds the value
//   CustomDataBlock                         the bytes are deep-copied now; the slot will hold the
//                                           block's device address once the plan is loaded
// Status rules (kept from CANN): a failure is sticky (every later append returns GRAPH_FAILED), the
// variadic constructor stops at the first failure, copies are deep, a moved-from object fails
// every operation. Deliberate differences (docs/kernel-args.md): a failing append appends nothing
// (CANN still appends a slot after a failed address append), and a scalar append does NOT clear a
// failed status (CANN's quirk, not copied: docs/cann-contract/kernel-args.md#append-rules).

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/result.hpp>
#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/args_status.hpp>
#include <ferry/kernel/custom_data_block.hpp>
#include <ferry/kernel/model_traits.hpp>
#include <limits>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferry {

// Where one block's copied bytes sit in its args' byte store.
struct BlockRef {
    std::size_t offset = 0;
    std::size_t size = 0;
};

// Everything a valid KernelArgs holds, handed over to a launch (CANN: ExtractArgsData's output,
// plus the blocks). Slots of kind data_block and workspace are placeholders until load.
struct ArgsContent {
    std::vector<std::uint64_t> slots;
    std::vector<ArgDesc> descs;         // one per slot
    std::vector<std::byte> block_bytes; // every block's bytes, back to back
    std::vector<BlockRef> blocks;       // in append order; ArgDesc::index numbers them
    std::uint64_t block_total = 0;      // sum of block sizes (the per-launch limit)
};

template <ArgsTraits Traits = OnlineModel>
class BasicKernelArgs;

namespace detail {
// Makes room for one more element with geometric growth, so that the push_back that follows
// cannot throw (strong guarantee for a multi-vector append) and appends stay amortised O(1);
// reserve(size() + 1) would reallocate on every call.
template <typename T>
void reserve_one_more(std::vector<T>& v) {
    if (v.size() == v.capacity()) {
        v.reserve(std::max<std::size_t>(8, v.capacity() * 2));
    }
}
} // namespace detail

// What the variadic constructor accepts: one of the append overloads' argument types.
template <typename T, typename Traits>
concept KernelArg = std::same_as<std::remove_cvref_t<T>, InputAddr> ||
                    std::same_as<std::remove_cvref_t<T>, OutputAddr> ||
                    std::same_as<std::remove_cvref_t<T>, WorkspaceAddr> ||
                    (std::integral<std::remove_cvref_t<T>> &&
                     !std::same_as<std::remove_cvref_t<T>, bool>) ||
                    (std::same_as<std::remove_cvref_t<T>, CustomDataBlock> &&
                     Traits::supports_data_blocks);

template <ArgsTraits Traits>
class BasicKernelArgs {
public:
    using traits_type = Traits;

    BasicKernelArgs() : state_(std::make_unique<ArgsState>()) {}

    // Appends each argument in order and stops at the first failure, which stays recorded in the
    // object (as CANN's variadic constructor does).
    template <typename Arg, typename... Args>
    requires(!std::same_as<std::remove_cvref_t<Arg>, BasicKernelArgs>) && KernelArg<Arg, Traits> &&
        (KernelArg<Args, Traits> && ...) explicit BasicKernelArgs(const Arg& first,
                                                                  const Args&... rest)
        : BasicKernelArgs() {
        static_cast<void>(succeeded(append_one(first)) && (succeeded(append_one(rest)) && ...));
    }

    // Deep copy; a copy of a moved-from object is a fresh object that has already failed
    // (docs/cann-contract/kernel-args.md#copy-and-move).
    BasicKernelArgs(const BasicKernelArgs& other)
        : state_(other.state_ ? std::make_unique<ArgsState>(*other.state_) : moved_from_copy()) {}
    BasicKernelArgs& operator=(const BasicKernelArgs& other) {
        if (this != &other) {
            state_ = other.state_ ? std::make_unique<ArgsState>(*other.state_) : moved_from_copy();
        }
        return *this;
    }
    // Moves leave the source moved-from: every later operation on it fails.
    BasicKernelArgs(BasicKernelArgs&& other) noexcept = default;
    BasicKernelArgs& operator=(BasicKernelArgs&& other) noexcept {
        if (this != &other) {
            state_ = std::move(other.state_);
        }
        return *this;
    }
    ~BasicKernelArgs() = default;

    [[nodiscard]] GraphStatus append(const InputAddr& a) {
        return append_address(ArgKind::input, a.index, a.addr);
    }
    [[nodiscard]] GraphStatus append(const OutputAddr& a) {
        return append_address(ArgKind::output, a.index, a.addr);
    }
    [[nodiscard]] GraphStatus append(const WorkspaceAddr& a) {
        return append_address(ArgKind::workspace, a.index, a.addr);
    }
    // CustomValue: the value is inlined in the slot. Never clears an earlier failure.
    [[nodiscard]] GraphStatus append(std::uint64_t value) {
        return append_slot({ArgKind::custom_value, 0}, value);
    }
    // docs/cann-contract/kernel-args.md#block-rules: deep-copies the block; the slot will hold its
    // device address after load. Offline-model traits have no such overload (a compile-time error,
    // docs/cann-contract/kernel-args.md#offline-targets).
    [[nodiscard]] GraphStatus
    append(const CustomDataBlock& block) requires Traits::supports_data_blocks;

    // Not moved-from.
    [[nodiscard]] bool valid() const noexcept { return state_ != nullptr; }
    [[nodiscard]] GraphStatus status() const noexcept {
        return state_ ? state_->status : GraphStatus::failed;
    }
    // Why the first failure happened (none when status() is success).
    [[nodiscard]] ArgsError error() const noexcept {
        return state_ ? state_->error : ArgsError::moved_from;
    }
    [[nodiscard]] std::size_t slot_count() const noexcept {
        return state_ ? state_->content.slots.size() : 0;
    }
    [[nodiscard]] std::size_t block_count() const noexcept {
        return state_ ? state_->content.blocks.size() : 0;
    }
    // The slots and descriptors appended so far (empty when moved-from). Block and workspace slots
    // hold placeholders until load.
    [[nodiscard]] std::span<const std::uint64_t> slots() const noexcept {
        return state_ ? std::span<const std::uint64_t>(state_->content.slots)
                      : std::span<const std::uint64_t>{};
    }
    [[nodiscard]] std::span<const ArgDesc> descs() const noexcept {
        return state_ ? std::span<const ArgDesc>(state_->content.descs)
                      : std::span<const ArgDesc>{};
    }
    // The copied bytes of block `i` (i < block_count()).
    [[nodiscard]] std::span<const std::byte> block(std::size_t i) const noexcept {
        FERRY_EXPECTS(state_ && i < state_->content.blocks.size());
        const BlockRef& ref = state_->content.blocks[i];
        return std::span<const std::byte>(state_->content.block_bytes)
            .subspan(ref.offset, ref.size);
    }

    // CANN's ExtractArgsData: fails when moved-from, after a failed append, or when empty.
    [[nodiscard]] ArgsError check_launchable() const noexcept {
        if (!state_) {
            return ArgsError::moved_from;
        }
        if (failed(state_->status)) {
            return state_->error;
        }
        return state_->content.slots.empty() ? ArgsError::empty_args : ArgsError::none;
    }

    // Hands the content over to a launch and leaves this object moved-from. Precondition:
    // check_launchable() == ArgsError::none.
    [[nodiscard]] ArgsContent release() && {
        FERRY_EXPECTS(check_launchable() == ArgsError::none);
        ArgsContent content = std::move(state_->content);
        state_.reset();
        return content;
    }

private:
    struct ArgsState {
        GraphStatus status = GraphStatus::success;
        ArgsError error = ArgsError::none;
        ArgsContent content;
    };

    static std::unique_ptr<ArgsState> moved_from_copy() {
        auto state = std::make_unique<ArgsState>();
        state->status = GraphStatus::failed;
        state->error = ArgsError::moved_from;
        return state;
    }

    template <typename T>
    GraphStatus append_one(const T& arg) {
        if constexpr (std::integral<T>) {
            return append(static_cast<std::uint64_t>(arg));
        } else {
            return append(arg);
        }
    }

    // Records the first failure; a failed append changes nothing else.
    GraphStatus fail(ArgsError why) {
        if (state_ && succeeded(state_->status)) {
            state_->status = GraphStatus::failed;
            state_->error = why;
        }
        return GraphStatus::failed;
    }

    // Common checks of every append: moved-from, sticky failure, the slot limit.
    [[nodiscard]] ArgsError admit() const noexcept {
        if (!state_) {
            return ArgsError::moved_from;
        }
        if (failed(state_->status)) {
            return ArgsError::earlier_failure;
        }
        if (state_->content.slots.size() >= Traits::max_slots) {
            return ArgsError::too_many_slots;
        }
        return ArgsError::none;
    }

    GraphStatus append_slot(ArgDesc desc, std::uint64_t value) {
        if (const ArgsError why = admit(); why != ArgsError::none) {
            return why == ArgsError::earlier_failure ? GraphStatus::failed : fail(why);
        }
        ArgsContent& c = state_->content;
        c.slots.push_back(value);
        try {
            c.descs.push_back(desc);
        } catch (...) {
            c.slots.pop_back(); // out of memory: leave the object as it was
            throw;
        }
        return GraphStatus::success;
    }

    GraphStatus append_address(ArgKind kind, std::uint32_t index, const void* addr) {
        // The index must fit ge::ArgDesc's int32 ir_idx
        // (docs/cann-contract/kernel-args.md#address-descriptors). A null addr is accepted
        // (docs/cann-contract/kernel-args.md#slots) and written as 0.
        if (index > static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max())) {
            return admit() == ArgsError::earlier_failure ? GraphStatus::failed
                                                         : fail(ArgsError::index_out_of_range);
        }
        return append_slot({kind, index},
                           static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(addr)));
    }

    std::unique_ptr<ArgsState> state_; // null: moved from
};

template <ArgsTraits Traits>
inline GraphStatus BasicKernelArgs<Traits>::append(
    const CustomDataBlock& block) requires Traits::supports_data_blocks {
    if (const ArgsError why = admit(); why != ArgsError::none) {
        return why == ArgsError::earlier_failure ? GraphStatus::failed : fail(why);
    }
    if (const ArgsError why = validate(block, Traits::max_block_size); why != ArgsError::none) {
        return fail(why);
    }
    ArgsContent& c = state_->content;
    if (!fits_launch(c.block_total, block.size, Traits::max_launch_block_bytes)) {
        return fail(ArgsError::launch_blocks_too_large);
    }
    // Reserve everything first so that a bad_alloc leaves the object unchanged.
    detail::reserve_one_more(c.slots);
    detail::reserve_one_more(c.descs);
    detail::reserve_one_more(c.blocks);
    const std::size_t offset = c.block_bytes.size();
    const auto* bytes = static_cast<const std::byte*>(block.data);
    c.block_bytes.insert(c.block_bytes.end(), bytes, bytes + block.size); // the deep copy
    c.blocks.push_back({offset, block.size});
    c.block_total += block.size;
    c.descs.push_back({ArgKind::data_block, static_cast<std::uint32_t>(c.blocks.size() - 1)});
    c.slots.push_back(0); // the device address, known at load
    return GraphStatus::success;
}

using KernelArgs = BasicKernelArgs<OnlineModel>;

} // namespace ferry
