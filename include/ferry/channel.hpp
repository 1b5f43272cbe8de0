#pragma once
// ferry/channel: typed bounded channels (Channel<T, Capacity, Policy>) and the named registry.
#include <ferry/channel/capacity.hpp>
#include <ferry/channel/channel.hpp>
#include <ferry/channel/policy.hpp>
#include <ferry/channel/registry.hpp>
#include <ferry/channel/stats.hpp>
