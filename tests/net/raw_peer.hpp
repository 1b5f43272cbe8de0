#pragma once
// A peer that speaks ferry/net's handshake (detail/handshake.hpp) and UCX itself, for what a
// Node never sends: replayed handshakes, second hellos, forged tokens, writes outside a region,
// one-sided RMA with a key of its own. Used by node_helper.cpp's "raw" mode; raw_scenarios.hpp
// has the scenarios.

#include "support.hpp"

#include <chrono>
#include <ferry/net/detail/address.hpp>
#include <ferry/net/detail/bootstrap.hpp>
#include <ferry/net/detail/handshake_session.hpp>
#include <ferry/net/detail/wire.hpp>
#include <string>
#include <ucp/api/ucp.h>
#include <vector>

namespace net_test {

namespace wire = ferry::net::detail::wire;
namespace hs = ferry::net::detail::handshake;
namespace bs = ferry::net::detail::bootstrap;

class RawPeer {
public:
    // A UCX context that can do RMA (unlike a Node's) and a worker.
    RawPeer() {
        ucp_config_t* config = nullptr;
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA;
        if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) {
            return;
        }
        const auto s = ucp_init(&params, config, &context_);
        ucp_config_release(config);
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        if (s != UCS_OK || ucp_worker_create(context_, &wp, &worker_) != UCS_OK) {
            worker_ = nullptr;
            return;
        }
        for (const auto kind : wire::k_kinds) { // the node's heartbeats and answers: ignored
            ucp_am_handler_param_t hp{};
            hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
            hp.id = static_cast<unsigned>(kind);
            hp.cb = [](void*, const void*, std::size_t, void*, std::size_t,
                       const ucp_am_recv_param_t*) { return UCS_OK; };
            ucp_worker_set_am_recv_handler(worker_, &hp);
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
        if (memh_ != nullptr) {
            ucp_mem_unmap(context_, memh_);
        }
        if (worker_ != nullptr) {
            ucp_worker_destroy(worker_);
        }
        if (context_ != nullptr) {
            ucp_cleanup(context_);
        }
    }

    [[nodiscard]] bool ok() const { return worker_ != nullptr; }
    [[nodiscard]] bool failed() const { return failed_; }
    [[nodiscard]] const hs::Info& server() const { return server_; }
    [[nodiscard]] int socket() const { return fd_.get(); }
    // The Hello and Proof messages this peer sent in its last handshake.
    std::vector<std::byte> sent_hello;
    std::vector<std::byte> sent_proof;

    // The whole handshake with `secret`; the server's Info in server(). False when refused.
    bool handshake(const std::string& address, const std::string& secret) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        if (!open(address, deadline)) {
            return false;
        }
        const auto s = ferry::net::Secret::from_bytes(secret);
        hs::Identity id{};
        static_cast<void>(hs::random_bytes(id));
        hs::ClientSession session(*s, id);
        sent_hello = session.hello();
        const auto challenge = bs::write_all(fd_.get(), sent_hello, deadline)
                                   ? bs::read_message(fd_.get(), sizeof(hs::Challenge), deadline)
                                   : std::nullopt;
        const char* refusal = nullptr;
        sent_proof = challenge ? session.respond(*challenge, info(), refusal) : sent_proof;
        if (!challenge || refusal != nullptr || !bs::write_all(fd_.get(), sent_proof, deadline)) {
            return false;
        }
        const auto answer = bs::read_message(fd_.get(), hs::k_max_info, deadline);
        const auto decoded = answer ? hs::decode_info(*answer) : std::nullopt;
        if (!decoded || !bs::write_all(fd_.get(), hs::message_of(hs::k_ready_magic), deadline)) {
            return false;
        }
        server_ = *decoded;
        return connect_worker();
    }
    // Opens the TCP connection only.
    bool open(const std::string& address, std::chrono::steady_clock::time_point deadline) {
        const auto parsed = ferry::net::detail::parse_address(address);
        fd_ = parsed.address ? bs::connect_to(*parsed.address, deadline) : bs::Fd();
        return fd_.valid();
    }
    // Sends raw bytes on the TCP connection; whether the other side then closed it (within 10 s).
    bool closed_after(std::span<const std::byte> bytes) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        static_cast<void>(bs::write_all(fd_.get(), bytes, deadline));
        while (bs::wait_for(fd_.get(), POLLIN, deadline)) {
            std::byte sink[256];
            if (::recv(fd_.get(), sink, sizeof sink, 0) <= 0) {
                return true;
            }
        }
        return false;
    }

    // An AM of `kind` with the frame's `token`, `extra` after the frame, `data` as payload.
    void send(wire::Kind kind, std::uint64_t token, std::span<const std::byte> extra,
              std::span<const std::byte> data) {
        std::vector<std::byte> header;
        wire::append(header, wire::frame(kind, token));
        wire::append_bytes(header, extra);
        ucp_request_param_t p{};
        wait(ucp_am_send_nbx(ep_, static_cast<unsigned>(kind), header.data(), header.size(),
                             data.data(), data.size(), &p));
    }
    // One-sided put and get at the server's `address` with a key this peer packed itself.
    void rma(std::uint64_t address, std::span<const std::byte> bytes) {
        ucp_mem_map_params_t mp{};
        mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
        mp.address = local_.data();
        mp.length = local_.size();
        void* packed = nullptr;
        std::size_t length = 0;
        ucp_rkey_h rkey = nullptr;
        if (ucp_mem_map(context_, &mp, &memh_) != UCS_OK ||
            ucp_rkey_pack(context_, memh_, &packed, &length) != UCS_OK) {
            return;
        }
        if (ucp_ep_rkey_unpack(ep_, packed, &rkey) == UCS_OK) {
            ucp_request_param_t p{};
            wait(ucp_put_nbx(ep_, bytes.data(), bytes.size(), address, rkey, &p));
            wait(ucp_get_nbx(ep_, local_.data(), 64, address, rkey, &p));
            ucp_rkey_destroy(rkey);
        }
        ucp_rkey_buffer_release(packed);
    }
    // Progresses until `done()` or 5 s; whether done() held.
    template <typename Done>
    bool progress_until(Done done) {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!done() && std::chrono::steady_clock::now() < deadline) {
            ucp_worker_progress(worker_);
        }
        return done();
    }
    // Bytes a get brought back (all zero when nothing was read).
    [[nodiscard]] std::span<const std::byte> got() const { return local_; }

private:
    hs::Info info() {
        hs::Info mine;
        static_cast<void>(hs::random_bytes(std::as_writable_bytes(std::span(&mine.token, 1))));
        mine.token |= 1;
        ucp_address_t* address = nullptr;
        std::size_t length = 0;
        if (ucp_worker_get_address(worker_, &address, &length) == UCS_OK) {
            const auto* p = reinterpret_cast<const std::byte*>(address);
            mine.worker_address.assign(p, p + length);
            ucp_worker_release_address(worker_, address);
        }
        return mine;
    }
    bool connect_worker() {
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                        UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.address = reinterpret_cast<const ucp_address_t*>(server_.worker_address.data());
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = [](void* arg, ucp_ep_h, ucs_status_t) {
            static_cast<RawPeer*>(arg)->failed_ = true;
        };
        ep.err_handler.arg = this;
        return ucp_ep_create(worker_, &ep, &ep_) == UCS_OK;
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
    ucp_mem_h memh_ = nullptr;
    bs::Fd fd_;
    hs::Info server_;
    bool failed_ = false;
    std::vector<std::byte> local_ = std::vector<std::byte>(4096);
};

} // namespace net_test
