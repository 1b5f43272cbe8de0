#pragma once
// Shared by tests/ipc/channel.cpp and its helper process: the message, the channel types, and
// how either side reaches the ring of a channel directly (to claim without publishing, or to
// wait without watching the peers).

#include "support.hpp"

#include <chrono>
#include <cstdint>
#include <ferry/ipc/channel.hpp>
#include <string>

namespace ipc_test {

struct Message {
    std::uint64_t sequence;
    std::uint32_t producer;
    std::uint32_t spare;
    std::uint64_t check; // checksum of the other fields: a torn or stale cell shows
};

inline std::uint64_t checksum(std::uint64_t sequence, std::uint32_t producer) noexcept {
    std::uint64_t z = sequence ^ (std::uint64_t{producer} << 48) ^ 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL; // splitmix64's finaliser
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
inline Message make_message(std::uint64_t sequence, std::uint32_t producer) noexcept {
    return Message{sequence, producer, 0, checksum(sequence, producer)};
}

inline constexpr std::size_t k_small = 8;
using Small = ferry::ipc::Channel<Message, k_small>;                    // semantics and crashes
using Stream = ferry::ipc::Channel<Message, 1024>;                      // spsc throughput
using Shared = ferry::ipc::Channel<Message, 1024, ferry::mpmc>;         // mpmc throughput
using SmallShared = ferry::ipc::Channel<Message, k_small, ferry::mpmc>; // claim without publish

inline std::string channel_helper() {
    return helper_path("FERRY_IPC_CHANNEL_HELPER", "test-ipc-channel-helper");
}

inline std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A channel's segment and ring, reached directly (Small's or SmallShared's layout): the ring
// type is the channel's (SpscSharedRing for spsc, SharedRing for mpmc).
template <typename ChannelType>
using RingOf = ferry::ipc::detail::ring_for<ChannelType::policy_type::multi_producer>;

template <typename ChannelType>
struct RawRing {
    ferry::ipc::Segment segment;
    RingOf<ChannelType> ring;
};

template <typename ChannelType>
ferry::ipc::Expected<RawRing<ChannelType>> open_raw(const std::string& name) {
    auto segment = ferry::ipc::Segment::open(name, ChannelType::layout_tag());
    if (!segment) {
        return segment.error();
    }
    constexpr auto policy = ChannelType::policy_type::multi_producer
                                ? ferry::ipc::detail::RingPolicy::mpmc
                                : ferry::ipc::detail::RingPolicy::spsc;
    std::string why;
    auto ring = RingOf<ChannelType>::attach(segment->payload(), ChannelType::capacity(),
                                            sizeof(Message), policy, &why);
    if (!ring.attached()) {
        return ferry::ipc::Error{ferry::Status::invalid_file, "no ring: " + why, 0};
    }
    return RawRing<ChannelType>{std::move(*segment), ring};
}

// Polls (bounded) until `ready()`: observable state in shared memory, never a fixed sleep.
template <typename Ready>
bool poll_for(Ready ready, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!ready()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

} // namespace ipc_test
