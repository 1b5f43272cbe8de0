// The other process of tests/inspect/net_state.py: `net_state_helper` starts two nodes (one
// listening, one connected to it), so each has a peer; with FERRY_NET_STATE_DIR set each
// publishes a state file. It prints "ready" once connected and holds until its stdin closes
// (then destroys both nodes, which removes their files, and exits 0) or it is killed (the
// files stay, stale).
#include <cstdio>
#include <ferry/net/node.hpp>
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
} // namespace

int main() {
    auto server = start(true);
    auto client = start(false);
    if (!server || !client || !client->connect(server->address(), std::chrono::seconds(10)) ||
        server->await_peers(1, std::chrono::seconds(10)) != ferry::Status::ok) {
        std::printf("cannot start two connected nodes\n");
        return 1;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
    return 0;
}
