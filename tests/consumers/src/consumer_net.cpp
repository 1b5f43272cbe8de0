// A C++ program outside ferry's build that uses the installed ferry/net through CMake's ferry::net
// (which brings UCX): a node listening on 127.0.0.1, port 0 (a free one), then closed.
#include <cstdio>
#include <ferry/net.hpp>
#include <string>
#include <utility>

int main() {
    auto secret = ferry::net::Secret::from_bytes("ferry consumer");
    if (!secret) {
        std::puts("ferry consumer (net): no secret");
        return 1;
    }
    ferry::net::NodeOptions options;
    options.listen = "127.0.0.1:0";
    options.secret = std::move(*secret);
    options.ucx_settings = {{"TLS", "tcp"}, {"NET_DEVICES", "lo"}};
    auto node = ferry::net::Node::start(std::move(options));
    if (!node) {
        std::printf("ferry consumer (net): Node::start failed (%s)\n",
                    ferry::make_error_code(node.status()).message().c_str());
        return 1;
    }
    const std::string address = (*node)->address();
    node->reset(); // closes the listener and releases UCX
    const bool listened = address.starts_with("127.0.0.1:") && address != "127.0.0.1:0";
    std::printf("ferry consumer (net): %s %s\n", listened ? "listened on" : "bad address",
                address.c_str());
    return listened ? 0 : 1;
}
