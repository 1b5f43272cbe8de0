#pragma once
// Named TDT channels shared between processes (docs/c-api.md, Channels shared between
// processes; docs/processes.md, The C API). Internal to ferry-acl.
//
// FERRY_TDT_SHARED, read when a channel is created, says which named channels live in shared
// memory instead of in the process: unset or empty → none, "*" → all, otherwise a
// comma-separated list of names (for acltdtCreateChannel, the name without "TF_RECEIVE_").
// FERRY_TDT_SHARED_MESSAGE_BYTES bounds the size of one message (default 1 MiB).
//
// A shared channel is a ferry::ipc::MessageChannel<mpmc> in the segment
// "tdt.<device>.<kind>.<encoded name>" (segment_name). The first process creates it, later ones
// open it; in one process all handles on one (device, kind, name) share one participation
// (SharedChannel), which closes with its last handle.

#include "handles.hpp"

#include <cstddef>
#include <cstdint>
#include <ferry/channel/policy.hpp>
#include <ferry/channel/registry.hpp>
#include <ferry/core/status.hpp>
#include <ferry/core/timeout.hpp>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::acl {

inline constexpr const char* k_shared_variable = "FERRY_TDT_SHARED";
inline constexpr const char* k_shared_bytes_variable = "FERRY_TDT_SHARED_MESSAGE_BYTES";
// The default largest message: see docs/c-api.md, Channels shared between processes.
inline constexpr std::size_t k_default_shared_message_bytes = std::size_t{1} << 20;

// One process's participation in a shared channel, shared by its handles on that channel.
struct SharedChannel {
    using Queue = ipc::MessageChannel<mpmc>;

    SharedChannel(Queue q, std::size_t capacity);

    Queue queue;
    std::shared_ptr<ChannelSpares> spares; // receive buffers and parked messages of this process
    std::uint32_t device = 0;
    ChannelKind kind = ChannelKind::queue;
    std::string base;        // the channel name ("TF_RECEIVE_" removed for a process channel)
    std::size_t handles = 0; // handles of this process on it (guarded by the table's mutex)
};

// The segment name of channel `base` of `kind` on `device`: "tdt.<device>.<q|p>.<name>" with
// every character outside [A-Za-z0-9-] written ".XX" (hex), or, when that would not fit a
// segment name, "tdt.<device>.<Q|P>.<base64url of the name>". Both forms are reversible.
[[nodiscard]] std::string segment_name(std::uint32_t device, ChannelKind kind,
                                       std::string_view base);

// Whether FERRY_TDT_SHARED selects the channel `base` of `kind`.
[[nodiscard]] bool shared_requested(ChannelKind kind, std::string_view base);

// A handle's share of the channel (device, kind, base): this process's participation, made on
// first use by creating or opening the segment. On failure `error` says why and `status` is the
// aclError to log.
struct SharedOpened {
    std::shared_ptr<SharedChannel> channel;
    Status status = Status::ok;
    std::string error;
};
[[nodiscard]] SharedOpened open_shared(std::uint32_t device, ChannelKind kind,
                                       std::string_view base, std::size_t capacity);

// Gives a handle's share back; true when it was this process's last handle on the channel.
bool close_shared(SharedChannel& channel) noexcept;

// Serializes `data` straight into a cell of the shared channel. invalid_param, with the channel
// unchanged, when the message is larger than the channel's largest message (the caller logs it).
[[nodiscard]] Status send_shared(SharedChannel& channel, const Dataset& data, Timeout timeout,
                                 std::size_t& message_bytes) noexcept;

// Takes the next message into `out` (a copy out of the cell into a pooled buffer). The buffer is
// reserved before anything is dequeued, so a failure to allocate takes nothing; `out` changes
// only on success.
[[nodiscard]] Status receive_shared(SharedChannel& channel, MessageBuffer& out, Timeout timeout);

} // namespace ferry::acl
