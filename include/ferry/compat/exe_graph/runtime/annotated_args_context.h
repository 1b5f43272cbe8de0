// ferry compat: CANN's <exe_graph/runtime/annotated_args_context.h> (liblowering), spelled as CANN
// spells it, mapped onto ferry/kernel (docs/cann-contract/kernel-args.md#append-rules).
//
//   gert::InputAddr / OutputAddr / WorkspaceAddr   = ferry::InputAddr / OutputAddr / WorkspaceAddr
//   gert::CustomDataBlock                          = ferry::CustomDataBlock (24 bytes)
//   gert::AnnotatedKernelLaunchInfo                = ferry::LaunchInfo
//   gert::AnnotatedKernelArgs                      : ferry::KernelArgs, with CANN's AppendArg names
//   gert::Tensor                                   : ferry::TensorBuffer, with GetAddr / GetSize
//   gert::AnnotatedArgsContext                     : ferry::BasicLoweringContext<gert::Tensor>,
//                                                    with GetInputTensor / GetOutputTensor /
//                                                    GetStreamId / MallocWorkSpace / AddLaunch
//   ge::graphStatus, ge::GRAPH_SUCCESS, ge::GRAPH_FAILED, ge::PARAM_INVALID
//
// An AnnotatedKernelArgs is a ferry::KernelArgs, so `plan.add_launch(info, std::move(args))` takes
// it directly. In CANN the framework builds the AnnotatedArgsContext; in ferry the caller builds
// it over runtime buffers and a LaunchPlan (docs/kernel-args.md#lowering-context), and lowering
// code written against CANN's names runs unchanged. Not provided: ExtractArgsData (ge::ArgDesc is
// not reproduced; use slots()/descs()).
#ifndef METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_
#define METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_

#include <cstddef>
#include <cstdint>
#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/custom_data_block.hpp>
#include <ferry/kernel/kernel_args.hpp>
#include <ferry/kernel/launch_plan.hpp>
#include <ferry/kernel/lowering_context.hpp>
#include <type_traits>

namespace ge {
using graphStatus = std::uint32_t;
inline constexpr graphStatus GRAPH_SUCCESS = static_cast<graphStatus>(ferry::GraphStatus::success);
inline constexpr graphStatus GRAPH_FAILED = static_cast<graphStatus>(ferry::GraphStatus::failed);
// What AddLaunch returns for a failed check (CANN: the GE_ASSERT error value for graphStatus).
inline constexpr graphStatus PARAM_INVALID = 1343225857U;
} // namespace ge

namespace gert {

using InputAddr = ferry::InputAddr;
using OutputAddr = ferry::OutputAddr;
using WorkspaceAddr = ferry::WorkspaceAddr;
using CustomDataBlock = ferry::CustomDataBlock;
using AnnotatedKernelLaunchInfo = ferry::LaunchInfo;

class AnnotatedKernelArgs : public ferry::KernelArgs {
public:
    AnnotatedKernelArgs() = default;
    // The variadic constructor: appends in order, stops at the first failure.
    using ferry::KernelArgs::KernelArgs;

    ge::graphStatus AppendArg(const InputAddr& arg) { return to_ge(append(arg)); }
    ge::graphStatus AppendArg(const OutputAddr& arg) { return to_ge(append(arg)); }
    ge::graphStatus AppendArg(const WorkspaceAddr& arg) { return to_ge(append(arg)); }
    ge::graphStatus AppendArg(std::uint64_t value) { return to_ge(append(value)); }
    ge::graphStatus AppendArg(const CustomDataBlock& block) { return to_ge(append(block)); }

private:
    static ge::graphStatus to_ge(ferry::GraphStatus s) noexcept {
        return static_cast<ge::graphStatus>(s);
    }
};

static_assert(sizeof(CustomDataBlock) == 24U);

// An operator's input or output as lowering sees it: the device address of its data.
class Tensor : public ferry::TensorBuffer {
public:
    Tensor() = default;
    Tensor(void* addr, std::size_t size) : ferry::TensorBuffer{addr, size} {}

    [[nodiscard]] const void* GetAddr() const noexcept { return addr; }
    [[nodiscard]] void* GetAddr() noexcept { return addr; }
    [[nodiscard]] std::size_t GetSize() const noexcept { return size; }
};

// The context a lowering function receives. Build one over runtime buffers:
//   ferry::LaunchPlan plan;
//   gert::AnnotatedArgsContext ctx(plan, {{x_dev, x_bytes}}, {{y_dev, y_bytes}});
// then call the lowering function with it, and ferry::load(rt, plan) / execute as usual.
class AnnotatedArgsContext : public ferry::BasicLoweringContext<Tensor> {
public:
    using ferry::BasicLoweringContext<Tensor>::BasicLoweringContext;

    // nullptr when the operator has no such input / output.
    [[nodiscard]] const Tensor* GetInputTensor(std::size_t index) const noexcept {
        return input(index);
    }
    [[nodiscard]] const Tensor* GetOutputTensor(std::size_t index) const noexcept {
        return output(index);
    }
    [[nodiscard]] std::uint32_t GetStreamId() const noexcept { return stream_id(); }

    // {index, logical address}; {0, nullptr} on failure (size 0), as CANN's error path returns.
    WorkspaceAddr MallocWorkSpace(std::size_t size) {
        const auto addr = malloc_workspace(size);
        return addr ? *addr : WorkspaceAddr{};
    }

    // GRAPH_SUCCESS, or PARAM_INVALID for a failed check (nothing recorded, args untouched).
    ge::graphStatus AddLaunch(const AnnotatedKernelLaunchInfo& launch_info,
                              AnnotatedKernelArgs&& args) {
        return add_launch(launch_info, std::move(args)) == ferry::ArgsError::none
                   ? ge::GRAPH_SUCCESS
                   : ge::PARAM_INVALID;
    }
};

} // namespace gert

#endif // METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_
