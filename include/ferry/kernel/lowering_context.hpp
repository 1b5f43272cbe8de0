#pragma once
// ferry::LoweringContext — what a lowering function sees: the operator's input and output tensors
// (device buffers), the stream its launches go to, and the LaunchPlan that AddLaunch and
// MallocWorkSpace record into (CANN: gert::AnnotatedArgsContext, docs/kernel-args.md#lowering-context).
//
// In CANN the framework builds this context from GE's kernel context; in ferry the caller builds
// it over runtime buffers it allocated (a host test, a tool, an application that lowers its own
// operators), then hands it to lowering code written against CANN's names through the compat
// header <exe_graph/runtime/annotated_args_context.h>. The context does not own the plan: it
// records into it, and the caller loads and executes the plan afterwards.
//
// The tensor type is a parameter so that the compat header can hand out its own gert::Tensor
// (which adds CANN's GetAddr()) from the same storage; ferry code uses TensorBuffer.

#include <cstddef>
#include <cstdint>
#include <ferry/core/result.hpp>
#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/args_status.hpp>
#include <ferry/kernel/launch_plan.hpp>
#include <type_traits>
#include <utility>
#include <vector>

namespace ferry {

// One input or output tensor as lowering sees it: the device address of its data and its size.
struct TensorBuffer {
    void* addr = nullptr;
    std::size_t size = 0;
};

template <typename Tensor = TensorBuffer>
requires std::is_base_of_v<TensorBuffer, Tensor>
class BasicLoweringContext {
public:
    // `plan` must outlive the context. Launches default to stream id 0 (the model's main stream).
    BasicLoweringContext(LaunchPlan& plan, std::vector<Tensor> inputs, std::vector<Tensor> outputs,
                         std::uint32_t stream_id = 0)
        : plan_(&plan), inputs_(std::move(inputs)), outputs_(std::move(outputs)),
          stream_id_(stream_id) {}

    // Input / output i (CANN's flattened per-instance index); nullptr when there is none.
    [[nodiscard]] const Tensor* input(std::size_t i) const noexcept {
        return i < inputs_.size() ? &inputs_[i] : nullptr;
    }
    [[nodiscard]] const Tensor* output(std::size_t i) const noexcept {
        return i < outputs_.size() ? &outputs_[i] : nullptr;
    }
    [[nodiscard]] std::size_t input_count() const noexcept { return inputs_.size(); }
    [[nodiscard]] std::size_t output_count() const noexcept { return outputs_.size(); }

    // The stream launches go to (CANN's GetStreamId; UINT32_MAX would mean "none").
    [[nodiscard]] std::uint32_t stream_id() const noexcept { return stream_id_; }

    // A writable device buffer for data rewritten at run time (LaunchPlan::malloc_workspace).
    [[nodiscard]] Result<WorkspaceAddr> malloc_workspace(std::size_t size,
                                                         ArgsError* why = nullptr) {
        return plan_->malloc_workspace(size, why);
    }

    // Records one launch (LaunchPlan::add_launch: same checks, same order, same effects).
    [[nodiscard]] ArgsError add_launch(const LaunchInfo& info, KernelArgs&& args) {
        return plan_->add_launch(info, std::move(args));
    }

    [[nodiscard]] LaunchPlan& plan() noexcept { return *plan_; }
    [[nodiscard]] const LaunchPlan& plan() const noexcept { return *plan_; }

private:
    LaunchPlan* plan_;
    std::vector<Tensor> inputs_;
    std::vector<Tensor> outputs_;
    std::uint32_t stream_id_;
};

using LoweringContext = BasicLoweringContext<>;

} // namespace ferry
