#pragma once
// Everything ferry offers to C++: include this, or the one module you use. Every public header
// (each one outside a detail/ folder) is reachable from here; tools/umbrella.py checks it in CI.
#include <ferry/afd.hpp>
#include <ferry/channel.hpp>
#include <ferry/core.hpp>
#include <ferry/ipc.hpp>
#include <ferry/kernel.hpp>
#include <ferry/runtime.hpp>
#include <ferry/tensor.hpp>

// Left out of their module umbrellas because each reaches into another module: the resolver that
// checks AFD addresses against the runtime's allocation registry, and the process-wide registry
// of wire-format message channels that the C shim shares with C++ code.
#include <ferry/afd/registry_resolver.hpp>
#include <ferry/channel/message_channels.hpp>
