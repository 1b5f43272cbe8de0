#pragma once
// ferry/afd: Attention/FFN disaggregation — the 1024-byte ScheduleContext, its view and sizes,
// the FFN group-sync scheduler and attention worker scheduler, and host simulators of the
// operators around them (AttentionToFFN, FFNWorkerBatching, FFNToAttention), writing through
// windows and ringing doorbells.
#include <ferry/afd/attention_to_ffn.hpp>
#include <ferry/afd/attention_worker_scheduler.hpp>
#include <ferry/afd/auto_wait.hpp>
#include <ferry/afd/doorbell.hpp>
#include <ferry/afd/executor.hpp>
#include <ferry/afd/ffn_data_desc.hpp>
#include <ferry/afd/ffn_to_attention.hpp>
#include <ferry/afd/ffn_worker_batching.hpp>
#include <ferry/afd/group_sync_scheduler.hpp>
#include <ferry/afd/kernel_status.hpp>
#include <ferry/afd/memory_resolver.hpp>
#include <ferry/afd/remote_access.hpp>
#include <ferry/afd/schedule_context.hpp>
#include <ferry/afd/schedule_context_view.hpp>
#include <ferry/afd/schedule_outcome.hpp>
#include <ferry/afd/selection_policy.hpp>
#include <ferry/afd/sizes.hpp>
#include <ferry/afd/wait_directory.hpp>
#include <ferry/afd/wait_policy.hpp>
#include <ferry/afd/window.hpp>
