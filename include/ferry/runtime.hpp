#pragma once
// ferry/runtime: the host-emulated CANN runtime (docs/cann-contract/runtime.md, docs/runtime.md).

#include <ferry/runtime/allocation_registry.hpp>
#include <ferry/runtime/config.hpp>
#include <ferry/runtime/context.hpp>
#include <ferry/runtime/device.hpp>
#include <ferry/runtime/event.hpp>
#include <ferry/runtime/init.hpp>
#include <ferry/runtime/kernel_table.hpp>
#include <ferry/runtime/launch.hpp>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/memory.hpp>
#include <ferry/runtime/notify.hpp>
#include <ferry/runtime/profiler.hpp>
#include <ferry/runtime/profiling_session.hpp>
#include <ferry/runtime/runtime.hpp>
#include <ferry/runtime/stream.hpp>
