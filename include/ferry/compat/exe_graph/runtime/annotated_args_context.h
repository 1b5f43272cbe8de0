// ferry compat: CANN's <exe_graph/runtime/annotated_args_context.h> (liblowering), spelled as CANN
// spells it, mapped onto ferry/kernel (docs/cann-contract/kernel-args.md#append-rules).
//
//   gert::InputAddr / OutputAddr / WorkspaceAddr   = ferry::InputAddr / OutputAddr / WorkspaceAddr
//   gert::CustomDataBlock                          = ferry::CustomDataBlock (24 bytes)
//   gert::AnnotatedKernelLaunchInfo                = ferry::LaunchInfo
//   gert::AnnotatedKernelArgs                      : ferry::KernelArgs, with CANN's AppendArg names
//   ge::graphStatus, ge::GRAPH_SUCCESS, ge::GRAPH_FAILED
//
// An AnnotatedKernelArgs is a ferry::KernelArgs, so `plan.add_launch(info, std::move(args))` takes
// it directly. Not provided (see docs/kernel-args.md, "Differences from CANN"): ExtractArgsData
// (ge::ArgDesc is not reproduced; use slots()/descs()) and AnnotatedArgsContext (its tensors come
// from GE's kernel context; ferry::LaunchPlan stands in for AddLaunch and MallocWorkSpace).
#ifndef METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_
#define METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_

#include <cstdint>
#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/custom_data_block.hpp>
#include <ferry/kernel/kernel_args.hpp>
#include <ferry/kernel/launch_plan.hpp>
#include <type_traits>

namespace ge {
using graphStatus = std::uint32_t;
inline constexpr graphStatus GRAPH_SUCCESS = static_cast<graphStatus>(ferry::GraphStatus::success);
inline constexpr graphStatus GRAPH_FAILED = static_cast<graphStatus>(ferry::GraphStatus::failed);
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

} // namespace gert

#endif // METADEF_CXX_INC_EXE_GRAPH_RUNTIME_ANNOTATED_ARGS_CONTEXT_H_
