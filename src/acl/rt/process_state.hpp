#pragma once
// One process, one runtime (docs/c-api.md#one-process-one-runtime): the state behind ferry's
// header-only singletons must be the same object in libferry-acl.so and in a program that also uses
// the C++ API.
//
// Every shim source is compiled with -fvisibility=hidden, which would give the shared library
// private copies of the function-local statics and inline variables below — a second Runtime,
// a second aclInit reference count, a second current context per thread. This header, force-
// included before anything else in every ferry-acl source (src/acl/meson.build: `-include`),
// redeclares exactly those entities with default visibility before their inline definitions are
// seen; the dynamic linker then binds the library's references to the one definition the process
// has (GNU unique / interposable symbols), whichever module came first.
//
// The shared library therefore exports, besides the acl* C API, these ferry process-state symbols
// and nothing else of ferry (tests/compat/rt/exported_symbols.py holds the list; docs/c-api.md
// explains it). A new singleton in the header-only code must be added here and there.

#include <atomic>

#define FERRY_ACL_PROCESS_STATE [[gnu::visibility("default")]]

namespace ferry {

struct PointerLocation;
using PointerLocator = PointerLocation (*)(const void* address) noexcept;
class Profiler;
struct MessageChannels;

FERRY_ACL_PROCESS_STATE Profiler& profiler();
FERRY_ACL_PROCESS_STATE MessageChannels& message_channels() noexcept; // channel/message_channels.hpp

namespace detail {

struct RuntimeKeeper;
struct AclState;
struct LogState;
struct CurrentContext;

FERRY_ACL_PROCESS_STATE RuntimeKeeper& keeper();                     // runtime/detail/keeper.hpp
FERRY_ACL_PROCESS_STATE AclState& acl_state();                       // runtime/init.hpp
FERRY_ACL_PROCESS_STATE LogState& log_state();                       // runtime/log.hpp
FERRY_ACL_PROCESS_STATE extern std::atomic<int> log_threshold;       // runtime/log.hpp
FERRY_ACL_PROCESS_STATE extern std::atomic<int> profilers_recording; // runtime/profiler.hpp
FERRY_ACL_PROCESS_STATE extern std::atomic<PointerLocator> pointer_locator; // core/memory_kind.hpp
FERRY_ACL_PROCESS_STATE extern thread_local CurrentContext current_context; // runtime/context.hpp

} // namespace detail
} // namespace ferry
