#pragma once
// ferry/kernel: kernel args (8-byte slots, CustomDataBlock), launch plans, load and execute
// (docs/cann-contract/kernel-args.md#what-ferry-implements, docs/kernel-args.md).

#include <ferry/kernel/arg_desc.hpp>
#include <ferry/kernel/args_status.hpp>
#include <ferry/kernel/block_view.hpp>
#include <ferry/kernel/custom_data_block.hpp>
#include <ferry/kernel/kernel_args.hpp>
#include <ferry/kernel/launch_plan.hpp>
#include <ferry/kernel/lowering_context.hpp>
#include <ferry/kernel/model_traits.hpp>
#include <ferry/kernel/upload.hpp>
