// The other process of tests/inspect/net_state.py: `net_state_helper` starts two nodes (one
// listening, one connected to it), so each has a peer; with FERRY_NET_STATE_DIR set each
// publishes a state file. The listening node serves the channel "state-probe" (capacity 8),
// the other opens a sender to it and sends k_queued messages nobody takes. It prints
// "ready <sender credits> <receiver queue>" once they are queued and holds until its stdin
// closes (then destroys both nodes, which removes their files, and exits 0) or it is killed
// (the files stay, stale).
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <ferry/net/channel.hpp>
#include <ferry/net/node.hpp>
#include <thread>
#include <utility>

namespace {
std::unique_ptr<ferry::net::Node> start(bool listen) {
    auto secret = ferry::net::Secret::from_environment();
    if (!secret) {
        return nullptr;
    }
    ferry::net::NodeOptions options;
    options.listen = listen ? "127.0.0.1:0" : "";
    options.secret = *secret;
    auto node = ferry::net::Node::start(std::move(options));
    return node ? std::move(*node) : nullptr;
}
constexpr std::size_t k_queued = 3;
} // namespace

int main() {
    auto server = start(true);
    auto client = start(false);
    if (!server || !client || !client->connect(server->address(), std::chrono::seconds(10)) ||
        server->await_peers(1, std::chrono::seconds(10)) != ferry::Status::ok) {
        std::printf("cannot start two connected nodes\n");
        return 1;
    }
    auto receiver = ferry::net::ChannelReceiver<int, 8>::create(*server, "state-probe");
    if (!receiver) {
        std::printf("cannot serve a channel\n");
        return 1;
    }
    auto sender =
        ferry::net::ChannelSender<int>::open(*client, client->peers().at(0), "state-probe");
    for (int i = 0; sender && i < static_cast<int>(k_queued); ++i) {
        if (sender->send(i, std::chrono::seconds(10)) != ferry::Status::ok) {
            std::printf("cannot send\n");
            return 1;
        }
    }
    // The messages are on their way; wait (bounded) until the receiver holds them all.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (receiver->size() < k_queued && std::chrono::steady_clock::now() < limit) {
        std::this_thread::yield();
    }
    if (!sender || receiver->size() != k_queued) {
        std::printf("cannot queue %zu messages on a channel\n", k_queued);
        return 1;
    }
    std::printf("ready %zu %zu\n", sender->credits(), receiver->size());
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
    return 0;
}
