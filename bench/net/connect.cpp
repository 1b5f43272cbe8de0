// What connecting costs, in one process (both ends here: connection set-up, not a peer's start):
//   connect/ferry/loopback  Node::connect to a listening Node of this process — ferry's TCP
//                           bootstrap with the handshake (hello, challenge, proof + Info, Info,
//                           ready) and both UCX endpoints by worker address — then Node::flush,
//                           the first UCX round trip (its answer needs the wire-up done);
//                           disconnect, next.
//   connect/raw/loopback    raw UCX between two workers of this process, spinning: ucp_ep_create
//                           to the other worker's sockaddr listener (UCX's own connection
//                           manager), the listener's ucp_ep_create from the connection request,
//                           then ucp_ep_flush_nbx on the client, which completes once the
//                           endpoint is wired up; both endpoints closed, next.
// Both with peer error handling and the transport of every bench/net row (tcp over lo). The
// figure is one connection's time; each repetition runs k_connects after k_connects / 4
// untimed, and reports their median (p50_us) and p99 as the exchange rows do.
#include "ferry_node.hpp"
#include "peer.hpp"

#include <arpa/inet.h>
#include <benchmark/benchmark.h>
#include <chrono>
#include <cstdint>
#include <netinet/in.h>
#include <stdexcept>
#include <string>
#include <ucp/api/ucp.h>
#include <vector>

namespace {
using ferry::bench::net::Rounds;

constexpr int k_connects = 100;
constexpr auto k_patience = std::chrono::seconds(10);

// Times `connect_once()` k_connects times after k_connects / 4 untimed; void when one fails.
template <typename Connect>
Rounds timed_connects(Connect connect_once) {
    Rounds result;
    for (int i = 0; i < k_connects / 4 + k_connects && result.error.empty(); ++i) {
        const auto start = ferry::bench::clock::now();
        if (!connect_once()) {
            result.error = "a connection failed";
        }
        if (i >= k_connects / 4) {
            result.us.push_back(
                std::chrono::duration<double, std::micro>(ferry::bench::clock::now() - start)
                    .count());
        }
    }
    return result;
}

Rounds connect_ferry() {
    auto listener = ferry::bench::net::start_node(true);
    auto client = ferry::bench::net::start_node(false);
    return timed_connects([&] {
        const auto peer = client->connect(listener->address(), ferry::Timeout(k_patience));
        const bool ok =
            peer && client->flush(*peer, ferry::Timeout(k_patience)) == ferry::Status::ok;
        if (peer) {
            client->disconnect(*peer);
        }
        return ok;
    });
}

// Two workers of one context; the first listens on 127.0.0.1 port 0.
class RawPair {
public:
    RawPair() {
        ucp_params_t params{};
        params.field_mask = UCP_PARAM_FIELD_FEATURES;
        params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP; // what a Node asks for
        check(ucp_init(&params, nullptr, &context_), "ucp_init");
        ucp_worker_params_t wp{};
        wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
        wp.thread_mode = UCS_THREAD_MODE_SINGLE;
        check(ucp_worker_create(context_, &wp, &server_), "ucp_worker_create");
        check(ucp_worker_create(context_, &wp, &client_), "ucp_worker_create");
        sockaddr_in any{};
        any.sin_family = AF_INET;
        any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ucp_listener_params_t lp{};
        lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
        lp.sockaddr.addr = reinterpret_cast<const sockaddr*>(&any);
        lp.sockaddr.addrlen = sizeof any;
        lp.conn_handler.cb = [](ucp_conn_request_h request, void* self) {
            static_cast<RawPair*>(self)->request_ = request;
        };
        lp.conn_handler.arg = this;
        check(ucp_listener_create(server_, &lp, &listener_), "ucp_listener_create");
        ucp_listener_attr_t attr{};
        attr.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
        check(ucp_listener_query(listener_, &attr), "ucp_listener_query");
        to_ = *reinterpret_cast<const sockaddr_in*>(&attr.sockaddr);
    }
    ~RawPair() {
        ucp_listener_destroy(listener_);
        ucp_worker_destroy(client_);
        ucp_worker_destroy(server_);
        ucp_cleanup(context_);
    }
    RawPair(const RawPair&) = delete;
    RawPair& operator=(const RawPair&) = delete;

    // One connection, wired up (the client's flush completed), then both ends closed.
    bool connect_once() {
        ucp_ep_params_t c{};
        c.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR | error_fields();
        c.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
        c.sockaddr.addr = reinterpret_cast<const sockaddr*>(&to_);
        c.sockaddr.addrlen = sizeof to_;
        set_error_handling(c);
        ucp_ep_h client_ep = nullptr;
        ucp_ep_h server_ep = nullptr;
        request_ = nullptr;
        bool ok = ucp_ep_create(client_, &c, &client_ep) == UCS_OK &&
                  progress_until([&] { return request_ != nullptr; });
        if (ok) {
            ucp_ep_params_t s{};
            s.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | error_fields();
            s.conn_request = request_;
            set_error_handling(s);
            ok = ucp_ep_create(server_, &s, &server_ep) == UCS_OK;
        }
        ucp_request_param_t p{};
        ok = ok && settle(ucp_ep_flush_nbx(client_ep, &p));
        close(client_ep);
        close(server_ep);
        return ok;
    }

private:
    static void check(ucs_status_t status, const char* what) {
        if (status != UCS_OK) {
            throw std::runtime_error(std::string(what) + ": " + ucs_status_string(status));
        }
    }
    static std::uint64_t error_fields() {
        return UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE | UCP_EP_PARAM_FIELD_ERR_HANDLER;
    }
    static void set_error_handling(ucp_ep_params_t& ep) {
        ep.err_mode = UCP_ERR_HANDLING_MODE_PEER;
        ep.err_handler.cb = [](void*, ucp_ep_h, ucs_status_t) {};
        ep.err_handler.arg = nullptr;
    }
    template <typename Done>
    bool progress_until(Done done) {
        const auto give_up = std::chrono::steady_clock::now() + k_patience;
        while (!done()) {
            ucp_worker_progress(client_);
            ucp_worker_progress(server_);
            if (std::chrono::steady_clock::now() > give_up) {
                return false;
            }
        }
        return true;
    }
    // Waits for an nbx request (NULL: done at once) and frees it; whether it succeeded.
    bool settle(ucs_status_ptr_t request) {
        if (request == nullptr || UCS_PTR_IS_ERR(request)) {
            return request == nullptr;
        }
        const bool done =
            progress_until([&] { return ucp_request_check_status(request) != UCS_INPROGRESS; });
        const bool ok = done && ucp_request_check_status(request) == UCS_OK;
        ucp_request_free(request);
        return ok;
    }
    void close(ucp_ep_h ep) {
        if (ep == nullptr) {
            return;
        }
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        p.flags = UCP_EP_CLOSE_FLAG_FORCE;
        static_cast<void>(settle(ucp_ep_close_nbx(ep, &p)));
    }

    ucp_context_h context_ = nullptr;
    ucp_worker_h server_ = nullptr;
    ucp_worker_h client_ = nullptr;
    ucp_listener_h listener_ = nullptr;
    ucp_conn_request_h request_ = nullptr;
    sockaddr_in to_{};
};

Rounds connect_raw() {
    RawPair pair;
    return timed_connects([&] { return pair.connect_once(); });
}

void connect_row(benchmark::State& state, Rounds (*run)()) {
    for (auto _ : state) {
        Rounds rounds = ferry::bench::net::guarded<Rounds>(run);
        if (!ferry::bench::net::record_rounds(state, rounds)) {
            break;
        }
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(k_connects) * state.iterations());
}

BENCHMARK_CAPTURE(connect_row, ferry, &connect_ferry)
    ->Name("connect/ferry/loopback")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(connect_row, raw, &connect_raw)
    ->Name("connect/raw/loopback")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
