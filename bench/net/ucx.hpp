#pragma once
// Raw UCX (UCP API) for the baselines: one context and worker per process, the parent listening
// on 127.0.0.1 port 0, the peer connecting to the real port. Both processes get the same
// settings: the environment main() sets (UCX_TLS=tcp, UCX_NET_DEVICES=lo) and, on both
// endpoints, UCP_ERR_HANDLING_MODE_PEER with an error callback, as ferry's Node uses: peer
// error handling changes which protocols UCX picks (no shared memory, tcp only), so a baseline
// without it would not measure the same path. The worker is single-threaded and progressed by
// the caller. Two ways to wait: `sleep` progresses while UCX has work, then arms the worker
// and sleeps in poll on its event fd (and on the peer's report pipe) until something arrives,
// as ferry's Node's progress thread does; `spin` calls ucp_worker_progress in a loop, the
// fastest raw UCX gets on an idle machine and a loser on a shared one (a spinning process gets
// only its fair share of a CPU that others want, a sleeping one is woken at once).
// Two ways to connect: `sockaddr` (UCX's listener and connection manager, what UCX's own
// examples do) and `worker_address` (each side makes its endpoint from the other's worker
// address, as ferry's Node does once its handshake has proven the secret; the parent's address
// goes to the peer on its command line, the peer's comes back in a first AM). UCX 1.13 gives the
// two different endpoints over tcp: only the connection manager's gets a lane for zero-copy
// rendezvous (docs/performance/net.md, Bandwidth).

#include <arpa/inet.h>
#include <boost/algorithm/hex.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <string_view>
#include <ucp/api/ucp.h>
#include <vector>

namespace ferry::bench::net {

enum class Waiting { sleep, spin };
enum class Connect { sockaddr, worker_address };

inline const char* name_of(Waiting w) {
    return w == Waiting::spin ? "spin" : "sleep";
}
inline Waiting waiting_of(const std::string& name) {
    return name == "spin" ? Waiting::spin : Waiting::sleep;
}

class RawUcx {
public:
    // Sleeping waits poll this many times in a row without progress before they arm and sleep,
    // as ferry's DoorbellPark polls before it parks.
    static constexpr std::uint32_t k_idle_polls = 64;

    // Throws std::runtime_error when UCX cannot start or bind.
    RawUcx(bool listen, Waiting waiting, Connect how = Connect::sockaddr)
        : spin_(waiting == Waiting::spin) {
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM | UCP_FEATURE_TAG | UCP_FEATURE_RMA | UCP_FEATURE_WAKEUP;
        check(ucp_init(&params, nullptr, &context_), "ucp_init");
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        check(ucp_worker_create(context_, &wp, &worker_), "ucp_worker_create");
        check(ucp_worker_get_efd(worker_, &efd_), "ucp_worker_get_efd");
        if (listen && how == Connect::sockaddr) {
            start_listener();
        } else if (listen) {
            own_address_hex_ = own_address_hex();
            on_am(k_address_am, &RawUcx::on_peer_address, this);
        }
    }
    RawUcx(const RawUcx&) = delete;
    RawUcx& operator=(const RawUcx&) = delete;
    ~RawUcx() {
        if (ep_ != nullptr) {
            close_endpoint();
        }
        if (listener_ != nullptr) {
            ucp_listener_destroy(listener_);
        }
        if (worker_ != nullptr) {
            ucp_worker_destroy(worker_);
        }
        if (context_ != nullptr) {
            ucp_cleanup(context_);
        }
    }

    [[nodiscard]] ucp_context_h context() const noexcept { return context_; }
    [[nodiscard]] ucp_worker_h worker() const noexcept { return worker_; }
    [[nodiscard]] ucp_ep_h ep() const noexcept { return ep_; }
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    // What the peer's connect() takes: the listener's port, or "addr:" and the worker address
    // in hex.
    [[nodiscard]] std::string where() const {
        return own_address_hex_.empty() ? std::to_string(port_) : "addr:" + own_address_hex_;
    }
    // Set by the endpoint's error callback: the peer is gone, every wait gives up.
    [[nodiscard]] bool failed() const noexcept { return failed_; }

    void progress() noexcept { (void)ucp_worker_progress(worker_); }

    // Progresses until `done()` or failure; false on failure or after `patience`. Sleeping,
    // it also wakes when `also` (a pipe the condition reads) becomes readable.
    template <typename Done>
    bool progress_until(Done done, int also = -1,
                        std::chrono::seconds patience = std::chrono::seconds(60)) {
        const auto give_up = std::chrono::steady_clock::now() + patience;
        std::uint32_t spins = 0;
        std::uint32_t idle = 0; // progress calls in a row that did nothing
        while (!done()) {
            if (failed_ || ((++spins & 0xfff) == 0 && std::chrono::steady_clock::now() > give_up)) {
                return false;
            }
            idle = ucp_worker_progress(worker_) != 0 ? 0 : idle + 1;
            if (spin_ || idle < k_idle_polls || ucp_worker_arm(worker_) == UCS_ERR_BUSY) {
                continue;
            }
            if (std::chrono::steady_clock::now() > give_up) { // a sleep may last 100 ms
                return false;
            }
            pollfd fds[2] = {{efd_, POLLIN, 0}, {also, POLLIN, 0}};
            (void)::poll(fds, also >= 0 ? 2 : 1, 100); // 100 ms: only a bound, never the wake-up
        }
        return true;
    }

    // Progresses until the peer's byte `what` arrives (the parent's sends and puts go on
    // meanwhile); false when it failed, sent something else or hung.
    template <typename Peer>
    bool heard(Peer& peer, char what) {
        bool broken = false;
        return progress_until([&] { return peer.arrived(what, broken) || broken; }, peer.fd()) &&
               !broken;
    }

    // The parent's side: waits for the peer's connection request and makes the endpoint.
    bool accept() {
        if (!own_address_hex_.empty()) {
            return progress_until([&] { return !peer_address_.empty(); }) &&
                   connect_to_address(peer_address_);
        }
        if (!progress_until([&] { return request_ != nullptr; })) {
            return false;
        }
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | error_fields();
        ep.conn_request = request_;
        set_error_handling(ep);
        return ucp_ep_create(worker_, &ep, &ep_) == UCS_OK;
    }

    // The peer's side: connects to what the parent's where() said.
    bool connect(const std::string& where) {
        if (!where.starts_with("addr:")) {
            return connect(static_cast<std::uint16_t>(std::stoul(where)));
        }
        const std::string mine = own_address_hex();
        return connect_to_address(from_hex(where.substr(5))) &&
               send_header(k_address_am, mine.data(), mine.size());
    }

    // The peer's side: connects to the parent on 127.0.0.1:port.
    bool connect(std::uint16_t port) {
        sockaddr_in to = loopback(port);
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | error_fields();
        ep.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
        ep.sockaddr.addr = reinterpret_cast<const sockaddr*>(&to);
        ep.sockaddr.addrlen = sizeof to;
        set_error_handling(ep);
        return ucp_ep_create(worker_, &ep, &ep_) == UCS_OK;
    }

    // Waits for a request of an nbx call (NULL: completed at once) and frees it; false when it
    // failed or the peer is gone.
    bool wait(ucs_status_ptr_t request) {
        if (request == nullptr) {
            return true;
        }
        if (UCS_PTR_IS_ERR(request)) {
            return false;
        }
        const bool done =
            progress_until([&] { return ucp_request_check_status(request) != UCS_INPROGRESS; });
        const bool ok = done && ucp_request_check_status(request) == UCS_OK;
        ucp_request_free(request);
        return ok;
    }

    // wait(), then forgets the request (so that nobody frees it twice).
    bool settle(ucs_status_ptr_t& request) {
        const bool ok = wait(request);
        request = nullptr;
        return ok;
    }

    // Sends a small AM whose only content is `header`: credits, keys. UCX 1.13 reads the header
    // until the send completes (it has no flag to copy it), so a copy lives until then.
    bool send_header(unsigned id, const void* header, std::size_t length) {
        auto* copy = new std::vector<std::byte>(static_cast<const std::byte*>(header),
                                                static_cast<const std::byte*>(header) + length);
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.cb.send = [](void* request, ucs_status_t, void* user) {
            delete static_cast<std::vector<std::byte>*>(user);
            ucp_request_free(request);
        };
        p.user_data = copy;
        const ucs_status_ptr_t r =
            ucp_am_send_nbx(ep_, id, copy->data(), copy->size(), nullptr, 0, &p);
        if (r == nullptr || UCS_PTR_IS_ERR(r)) { // completed at once (no callback) or failed
            delete copy;
        }
        return !UCS_PTR_IS_ERR(r);
    }

    // Registers `callback(arg, header, header_length, data, length, param)` for AM `id`.
    void on_am(unsigned id, ucp_am_recv_callback_t callback, void* arg) {
        ucp_am_handler_param_t h{};
        h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG;
        h.id = id;
        h.cb = callback;
        h.arg = arg;
        check(ucp_worker_set_am_recv_handler(worker_, &h), "ucp_worker_set_am_recv_handler");
    }

    // Waits until every operation on the endpoint has completed (the peer's last answer).
    bool flush() {
        ucp_request_param_t p{};
        return wait(ucp_ep_flush_nbx(ep_, &p));
    }

private:
    static constexpr unsigned k_address_am = 31; // the peer's worker address, in hex

    bool connect_to_address(const std::vector<std::byte>& address) {
        ucp_ep_params_t ep{};
        ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | error_fields();
        ep.address = reinterpret_cast<const ucp_address_t*>(address.data());
        set_error_handling(ep);
        return !address.empty() && ucp_ep_create(worker_, &ep, &ep_) == UCS_OK;
    }

    std::string own_address_hex() {
        ucp_address_t* address = nullptr;
        std::size_t length = 0;
        check(ucp_worker_get_address(worker_, &address, &length), "ucp_worker_get_address");
        const auto* bytes = reinterpret_cast<const unsigned char*>(address);
        std::string hex;
        boost::algorithm::hex_lower(bytes, bytes + length, std::back_inserter(hex));
        ucp_worker_release_address(worker_, address);
        return hex;
    }

    // Empty when `hex` is not an even run of hex digits (nothing throws into UCX's callbacks).
    static std::vector<std::byte> from_hex(std::string_view hex) noexcept {
        std::vector<std::byte> out;
        try {
            std::string bytes;
            boost::algorithm::unhex(hex.begin(), hex.end(), std::back_inserter(bytes));
            for (const char c : bytes) {
                out.push_back(static_cast<std::byte>(c));
            }
        } catch (...) {
            out.clear();
        }
        return out;
    }

    static ucs_status_t on_peer_address(void* self, const void* header, std::size_t length, void*,
                                        std::size_t, const ucp_am_recv_param_t*) {
        auto* me = static_cast<RawUcx*>(self);
        if (me->peer_address_.empty()) {
            me->peer_address_ = from_hex({static_cast<const char*>(header), length});
        }
        return UCS_OK;
    }

    static void check(ucs_status_t status, const char* what) {
        if (status != UCS_OK) {
            throw std::runtime_error(std::string(what) + ": " + ucs_status_string(status));
        }
    }

    static sockaddr_in loopback(std::uint16_t port) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return a;
    }

    static std::uint64_t error_fields() {
        return UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    }

    void set_error_handling(ucp_ep_params_t& ep) {
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = [](void* self, ucp_ep_h, ucs_status_t) {
            static_cast<RawUcx*>(self)->failed_ = true;
        };
        ep.err_handler.arg = this;
    }

    void start_listener() {
        sockaddr_in any = loopback(0);
        ucp_listener_params_t lp{};
        lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
        lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&any);
        lp.sockaddr.addrlen = sizeof any;
        lp.conn_handler.cb = [](ucp_conn_request_h request, void* self) {
            auto* me = static_cast<RawUcx*>(self);
            if (me->request_ == nullptr) {
                me->request_ = request;
            } else {
                (void)ucp_listener_reject(me->listener_, request); // one peer per run
            }
        };
        lp.conn_handler.arg = this;
        check(ucp_listener_create(worker_, &lp, &listener_), "ucp_listener_create");
        ucp_listener_attr_t attr{};
        attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
        check(ucp_listener_query(listener_, &attr), "ucp_listener_query");
        port_ = ntohs(reinterpret_cast<const sockaddr_in*>(&attr.sockaddr)->sin_port);
    }

    // Force-closes: the runs are over, and a graceful close would wait on a peer that may have
    // exited already.
    void close_endpoint() {
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        const ucs_status_ptr_t r = ucp_ep_close_nbx(ep_, &p);
        if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
            const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(2);
            while (ucp_request_check_status(r) == UCS_INPROGRESS &&
                   std::chrono::steady_clock::now() < give_up) {
                progress();
            }
            ucp_request_free(r);
        }
        ep_ = nullptr;
    }

    ucp_context_h context_ = nullptr;
    ucp_worker_h worker_ = nullptr;
    ucp_listener_h listener_ = nullptr;
    ucp_conn_request_h request_ = nullptr;
    ucp_ep_h ep_ = nullptr;
    std::uint16_t port_ = 0;
    std::string own_address_hex_;         // worker_address, the parent's side
    std::vector<std::byte> peer_address_; // what the peer's first AM said
    int efd_ = -1;
    bool spin_;
    bool failed_ = false;
};

} // namespace ferry::bench::net
