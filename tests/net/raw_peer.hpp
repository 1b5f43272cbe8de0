#pragma once
// A peer that speaks UCX directly, with ferry/net's wire format (detail/wire.hpp), for the
// messages a Node never sends: messages before the handshake, malformed hellos, forged tokens,
// messages without a reply endpoint. Used by node_helper.cpp's "raw" mode.

#include "support.hpp"

#include <chrono>
#include <cstdio>
#include <ferry/net/detail/address.hpp>
#include <ferry/net/detail/wire.hpp>
#include <ferry/net/secret.hpp>
#include <string>
#include <ucp/api/ucp.h>
#include <unistd.h>
#include <vector>

namespace net_test {

namespace wire = ferry::net::detail::wire;

class RawPeer {
public:
    // Connects to `address` ("127.0.0.1:port"); ok() false when UCX cannot start.
    explicit RawPeer(const std::string& address) {
        ucp_config_t* config = nullptr;
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM;
        if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) {
            return;
        }
        const auto s = ucp_init(&params, config, &context_);
        ucp_config_release(config);
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        if (s != UCS_OK || ucp_worker_create(context_, &wp, &worker_) != UCS_OK) {
            return;
        }
        ucp_am_handler_param_t hp{};
        hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                        UCP_AM_HANDLER_PARAM_FIELD_ARG;
        hp.id = static_cast<unsigned>(wire::Kind::hello_ack);
        hp.cb = &RawPeer::on_ack;
        hp.arg = this;
        ucp_worker_set_am_recv_handler(worker_, &hp);
        const auto parsed = ferry::net::detail::parse_address(address);
        if (!parsed.address) {
            return;
        }
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                        UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
        ep.sockaddr.addr = parsed.address->get();
        ep.sockaddr.addrlen = parsed.address->length;
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = [](void* arg, ucp_ep_h, ucs_status_t) {
            static_cast<RawPeer*>(arg)->failed_ = true;
        };
        ep.err_handler.arg = this;
        if (ucp_ep_create(worker_, &ep, &ep_) != UCS_OK) {
            ep_ = nullptr;
        }
    }
    RawPeer(const RawPeer&) = delete;
    RawPeer& operator=(const RawPeer&) = delete;
    ~RawPeer() {
        if (ep_ != nullptr) {
            ucp_request_param_t p{};
            p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
            p.flags = UCP_EP_CLOSE_FLAG_FORCE;
            wait(ucp_ep_close_nbx(ep_, &p));
        }
        if (worker_ != nullptr) {
            ucp_worker_destroy(worker_);
        }
        if (context_ != nullptr) {
            ucp_cleanup(context_);
        }
    }

    [[nodiscard]] bool ok() const { return ep_ != nullptr; }
    [[nodiscard]] bool failed() const { return failed_; }
    [[nodiscard]] bool acked() const { return server_token_ != 0; }
    [[nodiscard]] std::uint64_t server_token() const { return server_token_; }

    // A hello with `secret`; `claimed` secret bytes in its header (a lie when it differs).
    void hello(const std::string& secret, std::uint32_t claimed) {
        std::vector<std::byte> header;
        wire::append(header, wire::frame(wire::Kind::hello, 0));
        wire::append(header, wire::Hello{0x1234, claimed, 0});
        const auto* p = reinterpret_cast<const std::byte*>(secret.data());
        send(wire::Kind::hello, header, std::vector<std::byte>(p, p + secret.size()), true);
    }
    // A service message with `token`; the payload is patterned with `seed`.
    void service(std::uint64_t token, unsigned seed, bool reply = true) {
        std::vector<std::byte> header;
        wire::append(header, wire::frame(wire::Kind::service, token));
        wire::append(header, wire::Service{k_service, 1});
        header.push_back(static_cast<std::byte>(seed));
        send(wire::Kind::service, header, patterned(64, seed), reply);
    }
    // Progresses until `done()` or 10 s; whether done() held.
    template <typename Done>
    bool progress_until(Done done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            ucp_worker_progress(worker_);
        }
        return done();
    }

private:
    static ucs_status_t on_ack(void* arg, const void* header, std::size_t length, void*,
                               std::size_t, const ucp_am_recv_param_t*) {
        const auto hello = wire::read<wire::Hello>(
            std::span(static_cast<const std::byte*>(header), length), sizeof(wire::Frame));
        if (hello) {
            static_cast<RawPeer*>(arg)->server_token_ = hello->reply_token;
        }
        return UCS_OK;
    }
    void send(wire::Kind kind, const std::vector<std::byte>& header,
              const std::vector<std::byte>& data, bool reply) {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = reply ? UCP_AM_SEND_FLAG_REPLY : 0;
        wait(ucp_am_send_nbx(ep_, static_cast<unsigned>(kind), header.data(), header.size(),
                             data.data(), data.size(), &p));
    }
    void wait(void* request) {
        if (request == nullptr || UCS_PTR_IS_ERR(request)) {
            return;
        }
        progress_until([&] { return ucp_request_check_status(request) != UCS_INPROGRESS; });
        ucp_request_free(request);
    }

    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    ucp_ep_h ep_ = nullptr;
    bool failed_ = false;
    std::uint64_t server_token_ = 0;
};

// The raw scenarios; prints one line with the outcome.
inline int run_raw(const std::string& scenario, const std::string& address) {
    RawPeer peer(address);
    if (!peer.ok()) {
        return 2;
    }
    const std::string secret =
        std::getenv("FERRY_NET_SECRET") ? std::getenv("FERRY_NET_SECRET") : "";
    std::string outcome;
    if (scenario == "early") { // a service message before any hello
        peer.service(0, 1);
        outcome = peer.progress_until([&] { return peer.failed(); }) ? "closed" : "open";
    } else if (scenario == "malformed") { // claims more secret bytes than it carries
        peer.hello(secret, static_cast<std::uint32_t>(secret.size() + 1));
        outcome = peer.progress_until([&] { return peer.failed(); }) ? "closed" : "open";
    } else if (scenario == "forged" || scenario == "no-reply") {
        peer.hello(secret, static_cast<std::uint32_t>(secret.size()));
        if (!peer.progress_until([&] { return peer.acked(); })) {
            return 2;
        }
        if (scenario == "forged") {
            peer.service(peer.server_token() ^ 1, 1); // a token this connection never agreed
        } else {
            peer.service(peer.server_token(), 1, false); // no reply endpoint: who sent it?
        }
        peer.service(peer.server_token(), 2); // then a proper one
        outcome = peer.failed() ? "closed" : "sent";
    }
    std::printf("%s\n", outcome.c_str());
    std::fflush(stdout);
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) { // holds the connection until the parent is done
    }
    return 0;
}

} // namespace net_test
