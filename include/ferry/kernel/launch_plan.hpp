#pragma once
// ferry::LaunchPlan — the launches of one model, recorded in order (CANN: AnnotatedArgsContext's
// AddLaunch / MallocWorkSpace and the ArgsHandler's launch records).
//
// docs/cann-contract/kernel-args.md#addlaunch: add_launch checks, in this order,
// the kernel name, the kernel binary, block_dim > 0, the stream id, then the args (not moved-from,
// no failed append, not empty); it deep-copies the name and the binary, takes the args' content,
// and keeps launches in call order. A failed add_launch records nothing and leaves the args as
// they were. docs/cann-contract/kernel-args.md#offline-targets: a plan for an offline target (.omc,
// OM2) rejects args carrying a block — at compile time when the target is the traits parameter (the
// args type has no block append), at add_launch time when it is chosen at run time.

#include <cstddef>
#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/args_status.hpp>
#include <ferry/kernel/kernel_args.hpp>
#include <ferry/kernel/model_traits.hpp>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ferry {

// gert::AnnotatedKernelLaunchInfo (docs/cann-contract/kernel-args.md#addlaunch), field for field.
struct LaunchInfo {
    const char* kernel_name = nullptr;
    const void* kernel_bin = nullptr;
    std::size_t kernel_bin_size = 0;
    std::uint32_t block_dim = 0;
    std::uint32_t stream_id = 0;
};

// UINT32_MAX is "no stream" (GetStreamId's failure value); AddLaunch rejects it.
inline constexpr std::uint32_t k_invalid_stream_id = std::numeric_limits<std::uint32_t>::max();

// One recorded launch: private copies of everything it needs.
struct LaunchRecord {
    std::string kernel_name;
    std::vector<std::byte> kernel_bin;
    std::uint32_t block_dim = 0;
    std::uint32_t stream_id = 0;
    ArgsContent args;
};

// The first failing launch-info check, in AddLaunch's order (none when all pass).
[[nodiscard]] constexpr ArgsError check_launch_info(const LaunchInfo& info) noexcept {
    if (info.kernel_name == nullptr || info.kernel_name[0] == '\0') {
        return ArgsError::kernel_name_missing;
    }
    if (info.kernel_bin == nullptr || info.kernel_bin_size == 0) {
        return ArgsError::kernel_binary_missing;
    }
    if (info.block_dim == 0) {
        return ArgsError::block_dim_zero;
    }
    if (info.stream_id == k_invalid_stream_id) {
        return ArgsError::stream_id_invalid;
    }
    return ArgsError::none;
}

template <ArgsTraits Traits = OnlineModel>
class BasicLaunchPlan {
public:
    using args_type = BasicKernelArgs<Traits>;

    BasicLaunchPlan() = default;
    // A plan whose target is chosen at run time; blocks are then rejected at add_launch.
    explicit BasicLaunchPlan(ModelTarget target) : target_(target) {}

    [[nodiscard]] ModelTarget target() const noexcept { return target_; }

    // MallocWorkSpace (docs/cann-contract/kernel-args.md#workspaces): a writable buffer of `size`
    // bytes, allocated in device memory at load (zero-filled, 512-byte aligned). Indices count from
    // 0 in call order. The returned address is logical (CANN: an offset in the model's workspace):
    // the slot of a WorkspaceAddr is set to the real device address at load, by its index.
    [[nodiscard]] Result<WorkspaceAddr> malloc_workspace(std::size_t size,
                                                         ArgsError* why = nullptr) {
        const ArgsError e = size == 0 ? ArgsError::workspace_size_zero
                            : workspaces_.size() >= std::numeric_limits<std::uint32_t>::max()
                                ? ArgsError::too_many_workspaces
                                : ArgsError::none;
        if (why != nullptr) {
            *why = e;
        }
        if (e != ArgsError::none) {
            return Status::invalid_param;
        }
        const std::uint64_t offset = workspace_bytes_;
        workspaces_.push_back(size); // may throw: nothing changed yet
        workspace_bytes_ += size;
        return WorkspaceAddr{static_cast<std::uint32_t>(workspaces_.size() - 1),
                             reinterpret_cast<const void*>(static_cast<std::uintptr_t>(offset))};
    }

    // AddLaunch (docs/cann-contract/kernel-args.md#addlaunch). On success the args' content moves
    // into the plan (the args are left moved-from); on failure nothing is recorded and the args are
    // untouched.
    [[nodiscard]] ArgsError add_launch(const LaunchInfo& info, args_type&& args) {
        if (const ArgsError e = check_launch_info(info); e != ArgsError::none) {
            return e;
        }
        if (const ArgsError e = args.check_launchable(); e != ArgsError::none) {
            return e;
        }
        if (args.block_count() != 0 && !supports_data_blocks(target_)) {
            return ArgsError::offline_target;
        }
        for (const ArgDesc& d : args.descs()) {
            if (d.kind == ArgKind::workspace && d.index >= workspaces_.size()) {
                return ArgsError::unknown_workspace;
            }
        }
        const auto* bin = static_cast<const std::byte*>(info.kernel_bin);
        LaunchRecord record{std::string(info.kernel_name),
                            std::vector<std::byte>(bin, bin + info.kernel_bin_size),
                            info.block_dim,
                            info.stream_id,
                            {}};
        detail::reserve_one_more(launches_); // no throw after the args are released
        record.args = std::move(args).release();
        launches_.push_back(std::move(record));
        return ArgsError::none;
    }

    [[nodiscard]] std::span<const LaunchRecord> launches() const noexcept { return launches_; }
    [[nodiscard]] std::size_t launch_count() const noexcept { return launches_.size(); }
    [[nodiscard]] std::span<const std::size_t> workspaces() const noexcept { return workspaces_; }

private:
    ModelTarget target_ = Traits::target;
    std::vector<LaunchRecord> launches_;
    std::vector<std::size_t> workspaces_; // sizes, by index
    std::uint64_t workspace_bytes_ = 0;
};

using LaunchPlan = BasicLaunchPlan<OnlineModel>;

} // namespace ferry
