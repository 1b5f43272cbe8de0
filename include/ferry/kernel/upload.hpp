#pragma once
// ferry::LoadedPlan — a plan's blocks uploaded once, and its launches executed on streams.
//
// docs/cann-contract/kernel-args.md#upload-and-alignment: blocks travel with the model and are
// uploaded to the device once, at load time (not per launch); the kernel's slot holds the block's
// device address. load() makes one device allocation for the whole plan (blocks, then workspaces;
// detail/layout.hpp), fills one zeroed host staging image, copies it with one host-to-device memcpy
// through the runtime, and writes the device addresses into the block and workspace slots.
// execute() only launches: however many times it runs, nothing is uploaded again. Releasing (or
// destroying) the LoadedPlan frees the device memory; launches still running must be synchronized
// first (as a model is unloaded only after its streams are idle).

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <ferry/kernel/detail/block_directory.hpp>
#include <ferry/kernel/detail/layout.hpp>
#include <ferry/kernel/launch_plan.hpp>
#include <ferry/runtime/runtime.hpp>
#include <span>
#include <utility>
#include <vector>

namespace ferry {

class LoadedPlan {
public:
    LoadedPlan() = default;
    LoadedPlan(const LoadedPlan&) = delete;
    LoadedPlan& operator=(const LoadedPlan&) = delete;
    LoadedPlan(LoadedPlan&& other) noexcept { *this = std::move(other); }
    LoadedPlan& operator=(LoadedPlan&& other) noexcept {
        if (this != &other) {
            release();
            runtime_ = std::exchange(other.runtime_, nullptr);
            image_ = std::exchange(other.image_, nullptr);
            image_size_ = std::exchange(other.image_size_, 0);
            owner_ = std::exchange(other.owner_, 0);
            launches_ = std::move(other.launches_);
            block_bases_ = std::move(other.block_bases_);
            workspace_bases_ = std::move(other.workspace_bases_);
        }
        return *this;
    }
    ~LoadedPlan() { release(); }

    // Launches every recorded launch, in order, on streams[stream_id] (the kernel is looked up by
    // name in the runtime's kernel table). Unknown kernels and stream ids outside `streams` are
    // found before anything is queued: rt_kernel_lookup / rt_param_invalid.
    [[nodiscard]] Status execute(Runtime& rt, std::span<Stream* const> streams) const {
        return launch_all(rt, [&](std::uint32_t id) -> Stream* const* {
            return id < streams.size() ? &streams[id] : nullptr;
        });
    }
    // Every stream id on one stream (nullptr: the current context's default stream).
    [[nodiscard]] Status execute(Runtime& rt, Stream* stream = nullptr) const {
        return launch_all(rt, [&](std::uint32_t) -> Stream* const* { return &stream; });
    }

    [[nodiscard]] bool loaded() const noexcept { return runtime_ != nullptr; }
    [[nodiscard]] std::size_t launch_count() const noexcept { return launches_.size(); }
    // The device image (blocks then workspaces); null when the plan had neither.
    [[nodiscard]] void* device_image() const noexcept { return image_; }
    [[nodiscard]] std::size_t image_size() const noexcept { return image_size_; }
    // The device address of block `block` of launch `launch`, as written in its slot.
    [[nodiscard]] const void* block_address(std::size_t launch, std::size_t block) const {
        return block_bases_.at(launch).at(block);
    }
    [[nodiscard]] void* workspace_address(std::uint32_t index) const {
        return workspace_bases_.at(index);
    }
    // The args image a launch is given (slots resolved).
    [[nodiscard]] const ArgsImage& args(std::size_t launch) const {
        return launches_.at(launch).args;
    }

    // Frees the device image and forgets the launches (idempotent).
    void release() noexcept;

    // Loads recorded launches: one device allocation and one upload (rt needs a current device).
    // Errors are the runtime's (rt_context_null, rt_memory_allocation, ...); nothing stays
    // allocated after a failure.
    [[nodiscard]] static Result<LoadedPlan> load(Runtime& rt,
                                                 std::span<const LaunchRecord> launches,
                                                 std::span<const std::size_t> workspaces);

private:
    struct Launch {
        std::string kernel_name;
        std::uint32_t block_dim = 0;
        std::uint32_t stream_id = 0;
        ArgsImage args;
    };

    template <typename PickStream>
    [[nodiscard]] Status launch_all(Runtime& rt, PickStream pick) const {
        for (const Launch& launch : launches_) {
            if (pick(launch.stream_id) == nullptr) {
                return Status::rt_param_invalid;
            }
            if (!rt.kernels().lookup(launch.kernel_name)) {
                return Status::rt_kernel_lookup;
            }
        }
        for (const Launch& launch : launches_) {
            if (const Status s = rt.launch_by_name(launch.kernel_name, launch.block_dim,
                                                   launch.args, *pick(launch.stream_id));
                failed(s)) {
                return s;
            }
        }
        return Status::ok;
    }

    Runtime* runtime_ = nullptr;
    std::byte* image_ = nullptr;
    std::size_t image_size_ = 0;
    std::uint64_t owner_ = 0; // this load's entries in the block directory
    std::vector<Launch> launches_;
    std::vector<std::vector<const void*>> block_bases_;
    std::vector<void*> workspace_bases_;
};

inline void LoadedPlan::release() noexcept {
    if (runtime_ == nullptr) {
        return;
    }
    for (const auto& bases : block_bases_) {
        for (const void* base : bases) {
            detail::block_directory().remove(static_cast<const std::byte*>(base), owner_);
        }
    }
    // Free only into the runtime that allocated it: after a shutdown (which released all memory)
    // a new runtime may have handed the same address to someone else.
    if (image_ != nullptr && Runtime::boot_stage() == BootStage::done) {
        const auto current = Runtime::instance();
        if (current && *current == runtime_) {
            static_cast<void>(runtime_->free(image_));
        }
    }
    runtime_ = nullptr;
    image_ = nullptr;
    image_size_ = 0;
    launches_.clear();
    block_bases_.clear();
    workspace_bases_.clear();
}

namespace detail {
// Copies every block into its place in a zero-filled staging image.
inline std::vector<std::byte> stage_blocks(std::span<const LaunchRecord> launches,
                                           const ImageLayout& layout) {
    std::vector<std::byte> staging(layout.size, std::byte{0});
    for (std::size_t l = 0; l < launches.size(); ++l) {
        const ArgsContent& args = launches[l].args;
        for (std::size_t b = 0; b < args.blocks.size(); ++b) {
            std::memcpy(staging.data() + layout.block_offsets[l][b],
                        args.block_bytes.data() + args.blocks[b].offset, args.blocks[b].size);
        }
    }
    return staging;
}

// The slots of one launch with block and workspace slots set to their device addresses.
inline std::vector<std::uint64_t> resolve_slots(const ArgsContent& args,
                                                std::span<const void* const> blocks,
                                                std::span<void* const> workspaces) {
    std::vector<std::uint64_t> slots = args.slots;
    for (std::size_t i = 0; i < slots.size(); ++i) {
        const ArgDesc& d = args.descs[i];
        if (d.kind == ArgKind::data_block) {
            slots[i] = reinterpret_cast<std::uintptr_t>(blocks[d.index]);
        } else if (d.kind == ArgKind::workspace) {
            slots[i] = reinterpret_cast<std::uintptr_t>(workspaces[d.index]);
        }
    }
    return slots;
}
} // namespace detail

inline Result<LoadedPlan> LoadedPlan::load(Runtime& rt, std::span<const LaunchRecord> launches,
                                           std::span<const std::size_t> workspaces) {
    ProfileScope trace("upload", "kernel_args", rt.current_device().value_or(k_host_trace_device));
    const detail::ImageLayout layout = detail::plan_layout(launches, workspaces);
    LoadedPlan loaded;
    if (layout.size != 0) {
        const auto image = rt.malloc(static_cast<std::size_t>(layout.size));
        if (!image) {
            return image.status();
        }
        loaded.runtime_ = &rt;
        loaded.image_ = static_cast<std::byte*>(*image);
        loaded.image_size_ = static_cast<std::size_t>(layout.size);
        FERRY_EXPECTS(reinterpret_cast<std::uintptr_t>(loaded.image_) % k_block_alignment == 0);
        const std::vector<std::byte> staging = detail::stage_blocks(launches, layout);
        if (const Status s = rt.memcpy(loaded.image_, loaded.image_size_, staging.data(),
                                       staging.size(), MemcpyKind::host_to_device);
            failed(s)) {
            return s; // `loaded` frees the image
        }
    }
    loaded.runtime_ = &rt;
    loaded.owner_ = detail::block_directory().new_owner();
    for (const std::uint64_t offset : layout.workspace_offsets) {
        loaded.workspace_bases_.push_back(loaded.image_ + offset);
    }
    for (std::size_t l = 0; l < launches.size(); ++l) {
        auto& bases = loaded.block_bases_.emplace_back();
        for (std::size_t b = 0; b < launches[l].args.blocks.size(); ++b) {
            const std::uint64_t offset = layout.block_offsets[l][b];
            const std::uint64_t end =
                detail::align_up(offset + launches[l].args.blocks[b].size, k_block_alignment);
            bases.push_back(loaded.image_ + offset);
            detail::block_directory().add(loaded.image_ + offset,
                                          static_cast<std::size_t>(end - offset), loaded.owner_);
        }
        const LaunchRecord& r = launches[l];
        loaded.launches_.push_back({r.kernel_name, r.block_dim, r.stream_id,
                                    ArgsImage(std::span<const std::uint64_t>(detail::resolve_slots(
                                        r.args, bases, loaded.workspace_bases_)))});
    }
    return loaded;
}

// Loads a plan: loading a set of launches uploads all blocks
// (docs/cann-contract/kernel-args.md#upload-and-alignment).
template <ArgsTraits Traits>
[[nodiscard]] Result<LoadedPlan> load(Runtime& rt, const BasicLaunchPlan<Traits>& plan) {
    return LoadedPlan::load(rt, plan.launches(), plan.workspaces());
}

} // namespace ferry
