#pragma once
// The ferry side of the net benchmarks: a Node per process with the same UCX settings as the
// raw baselines (ucx.hpp; main() sets them in the environment, and they are repeated here as
// the Node's own settings), the parent listening on 127.0.0.1 port 0, the peer connecting.

#include <chrono>
#include <ferry/net/node.hpp>
#include <ferry/net/secret.hpp>
#include <memory>
#include <stdexcept>
#include <string>

namespace ferry::bench::net {

inline constexpr std::chrono::seconds k_connect_patience{30};

// How a row's Nodes (both processes) run their progress thread: as the process does, or with
// NodeOptions::progress_thread_batch (the `_sched_batch` rows).
enum class ProgressThread { inherited, sched_batch };

inline const char* name_of(ProgressThread p) {
    return p == ProgressThread::sched_batch ? "sched_batch" : "inherited";
}
inline ProgressThread progress_thread_of(const std::string& name) {
    return name == "sched_batch" ? ProgressThread::sched_batch : ProgressThread::inherited;
}

// Throws std::runtime_error when the node cannot start. `one_sided`: NodeOptions::one_sided_rma
// (windows by ucp_put_nbx; over tcp only for measuring, docs/security.md).
inline std::unique_ptr<ferry::net::Node>
start_node(bool listen, bool one_sided = false,
           ProgressThread progress = ProgressThread::inherited) {
    ferry::net::NodeOptions options;
    options.one_sided_rma = one_sided;
    options.progress_thread_batch = progress == ProgressThread::sched_batch;
    if (listen) {
        options.listen = "127.0.0.1:0";
    }
    auto secret = ferry::net::Secret::from_bytes("ferry-bench-net");
    if (!secret) {
        throw std::runtime_error("bench-net: no secret");
    }
    options.secret = *secret;
    options.ucx_settings = {{"TLS", "tcp"}, {"NET_DEVICES", "lo"}};
    auto node = ferry::net::Node::start(std::move(options));
    if (!node) {
        throw std::runtime_error("bench-net: Node::start failed, status " +
                                 std::to_string(static_cast<int>(node.status())));
    }
    return std::move(*node);
}

// The parent's side: the one peer that connected to `node`, 0 when none came in time.
inline ferry::net::PeerId accept_one(ferry::net::Node& node) {
    if (node.await_peers(1, Timeout(k_connect_patience)) != Status::ok || node.peers().empty()) {
        return 0;
    }
    return node.peers().front();
}

} // namespace ferry::bench::net
