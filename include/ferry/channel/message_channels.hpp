#pragma once
// ferry::message_channels() — the process's registry of message channels.
//
// One process, one runtime (docs/c-api.md#one-process-one-runtime): the channels that the C API
// creates (acltdtCreateChannelWithCapacity, acltdtCreateChannel) are registered here, so C++ code
// in the same process finds them by id or by (device, name) and exchanges messages with C callers.
// A message is one wire-format buffer (ferry/tensor/wire_format.hpp): serialize() a Dataset to
// send one, parse() what you receive.
//
// The registry is never destroyed: C handles, and threads blocked on their channels, may outlive
// static destruction. libferry-acl.so exports this object (src/acl/rt/process_state.hpp) so the
// library and the program share one.

#include <ferry/channel/registry.hpp>
#include <ferry/tensor/wire_format.hpp>

namespace ferry {

using MessageChannelRegistry = ChannelRegistry<MessageBuffer>;

struct MessageChannels {
    MessageChannelRegistry registry;
};

inline MessageChannels& message_channels() noexcept {
    static MessageChannels* const instance = new MessageChannels;
    return *instance;
}

} // namespace ferry
