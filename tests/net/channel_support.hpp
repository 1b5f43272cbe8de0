#pragma once
// Shared by tests/net/channel.cpp and its helper process (channel_helper.cpp): the message, the
// channel names, the datasets, and how either side starts its Node. The child process comes
// from tests/ipc/support.hpp (fork + exec, pipes on stdin/stdout); tests/ipc/channel_support.hpp
// gives the checksummed message and tests/ipc/message_support.hpp the byte patterns.

#include "../ipc/channel_support.hpp"
#include "../ipc/message_support.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ferry/net/channel.hpp>
#include <ferry/net/message_channel.hpp>
#include <ferry/net/node.hpp>
#include <memory>
#include <string>

namespace net_test {

using ipc_test::checksum;
using ipc_test::make_message;
using ipc_test::Message;

inline constexpr std::size_t k_small = 8;    // capacity for the bound, stop and loss tests
inline constexpr std::size_t k_stream = 256; // capacity for the 100k-message test
using SmallReceiver = ferry::net::ChannelReceiver<Message, k_small>;
using StreamReceiver = ferry::net::ChannelReceiver<Message, k_stream>;
using Sender = ferry::net::ChannelSender<Message>;

// Sizes of the dataset test: one u8 item each; k_max_message holds the largest with room for
// the wire format's headers.
inline constexpr std::size_t k_dataset_sizes[] = {64, 64 << 10, 4 << 20};
inline constexpr std::size_t k_max_message = (4 << 20) + 4096;
inline constexpr std::size_t k_messages = 4; // the receiver's pool

inline std::string channel_helper() {
    return ipc_test::helper_path("FERRY_NET_CHANNEL_HELPER", "test-net-channel-helper");
}

// A node with the job's secret (FERRY_NET_SECRET, from tests/net/meson.build), listening on a
// free loopback port when `listen`; nullptr when it cannot start.
inline std::unique_ptr<ferry::net::Node> start_node(bool listen) {
    auto secret = ferry::net::Secret::from_environment();
    if (!secret) {
        return nullptr;
    }
    ferry::net::NodeOptions options;
    if (listen) {
        options.listen = "127.0.0.1:0";
    }
    options.secret = *secret;
    auto node = ferry::net::Node::start(std::move(options));
    return node ? std::move(*node) : nullptr;
}

// Dataset `index` of the dataset test: one u8 item of k_dataset_sizes[index] patterned bytes.
inline ferry::Dataset make_sized_dataset(std::size_t bytes, std::uint64_t seed) {
    ferry::Dataset ds;
    ipc_test::add_u8(ds, bytes, seed);
    return ds;
}

// "" when `got` is make_sized_dataset(bytes, seed) byte for byte; otherwise what differs.
inline std::string check_sized_dataset(const ferry::Dataset& got, std::size_t bytes,
                                       std::uint64_t seed) {
    if (got.size() != 1) {
        return std::to_string(got.size()) + " items, expected 1";
    }
    const auto want = ipc_test::pattern(bytes, seed);
    const auto have = got[0].bytes();
    if (have.size() != want.size()) {
        return std::to_string(have.size()) + " bytes, expected " + std::to_string(want.size());
    }
    if (std::memcmp(have.data(), want.data(), want.size()) != 0) {
        return "bytes differ";
    }
    return "";
}

inline void say(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}

} // namespace net_test
