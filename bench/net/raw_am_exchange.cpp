// The active-message baseline of the exchange rows, beside exchange/raw_put/S (raw_exchange.cpp)
// and on the same transport and rounds:
//   exchange/raw_am/S  per round, the parent sends one AM (ucp_am_send_nbx, no flags: UCX picks
//                      eager or rendezvous as it does for ferry's put messages) whose 8-byte
//                      header is the round and whose data is the micro-batch of S bytes. The
//                      peer's handler places the batch into its preallocated memory (a copy when
//                      eager, ucp_am_recv_data_nbx straight into it when rendezvous), then marks
//                      the round landed; the peer, progressing its worker, sees that, checks the
//                      batch's first and last 8 bytes and answers with an AM whose header is the
//                      round, which the parent's handler records while it progresses.
// It is what ferry's checked put messages cost at least: the same AM, with no frame, no checks,
// no ordering of later writes behind a landing one and no doorbell. Both sides sleep in poll as
// the raw_put rows do (ucx.hpp, Waiting).
#include "../ipc/messages.hpp"
#include "peer.hpp"
#include "shapes.hpp"
#include "ucx.hpp"

#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {
using ferry::bench::page_aligned;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::k_rounds;
using ferry::bench::net::RawUcx;
using ferry::bench::net::Reporter;
using ferry::bench::net::Rounds;
using ferry::bench::net::Waiting;

constexpr unsigned k_batch_am = 5;
constexpr unsigned k_answer_am = 6;

// Registers `callback` for AM `id` with whole messages, as ferry's Node registers its handlers.
void on_whole_am(RawUcx& ucx, unsigned id, ucp_am_recv_callback_t callback, void* arg) {
    ucp_am_handler_param_t h{};
    h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                   UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    h.id = id;
    h.cb = callback;
    h.arg = arg;
    h.flags = UCP_AM_FLAG_WHOLE_MSG;
    if (ucp_worker_set_am_recv_handler(ucx.worker(), &h) != UCS_OK) {
        throw std::runtime_error("ucp_worker_set_am_recv_handler failed");
    }
}

// The last round number an AM of 8-byte header carried (the parent's answers).
ucs_status_t on_answer(void* arg, const void* header, std::size_t length, void*, std::size_t,
                       const ucp_am_recv_param_t*) {
    if (length == sizeof(std::uint64_t)) {
        std::memcpy(arg, header, sizeof(std::uint64_t));
    }
    return UCS_OK;
}

// The peer's memory and what has landed in it.
struct Target {
    ucp_worker_h worker = nullptr;
    std::byte* memory = nullptr;
    std::size_t size = 0;
    std::uint64_t landed = 0;   // the last round whose batch is in `memory`
    std::uint64_t arriving = 0; // a rendezvous batch's round, until it lands

    static ucs_status_t on_batch(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param) {
        auto& t = *static_cast<Target*>(arg);
        std::uint64_t round = 0;
        if (header_length != sizeof round || length != t.size) {
            return UCS_OK; // dropped: the round never lands and the peer reports the failure
        }
        std::memcpy(&round, header, sizeof round);
        if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
            std::memcpy(t.memory, data, length);
            t.landed = round;
            return UCS_OK;
        }
        t.arriving = round;
        ucp_request_param_t p{};
        p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
        p.user_data = &t;
        p.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user) {
            auto& target = *static_cast<Target*>(user);
            if (status == UCS_OK) {
                target.landed = target.arriving;
            }
            ucp_request_free(request);
        };
        void* request = ucp_am_recv_data_nbx(t.worker, data, t.memory, length, &p);
        if (request == nullptr) {
            t.landed = round; // placed at once
        }
        return UCS_INPROGRESS;
    }
};

// Sends AM `id` with the 8-byte `header` and `data`, and waits for its completion.
bool send_round(RawUcx& ucx, unsigned id, const std::uint64_t& header, const void* data,
                std::size_t length) {
    ucp_request_param_t p{};
    return ucx.wait(ucp_am_send_nbx(ucx.ep(), id, &header, sizeof header, data, length, &p));
}

Rounds exchange_with_peer(std::size_t size) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    RawUcx ucx(true, Waiting::sleep);
    std::uint64_t answer = 0;
    on_whole_am(ucx, k_answer_am, &on_answer, &answer);
    ExecPeer peer(cpus.second, "raw_am_ffn",
                  {std::to_string(ucx.port()), std::to_string(size),
                   std::to_string(k_rounds / 4 + k_rounds)});
    const bool accepted = ucx.accept();
    std::vector<std::byte> storage;
    std::byte* batch = page_aligned(storage, size);
    std::uint64_t header = 0;
    return ferry::bench::net::timed_rounds(
        peer, k_rounds,
        [&](std::uint64_t r) {
            std::memcpy(batch, &r, sizeof r);
            std::memcpy(batch + size - sizeof r, &r, sizeof r);
            header = r;
            return send_round(ucx, k_batch_am, header, batch, size) &&
                   ucx.progress_until([&] { return answer == r; });
        },
        [&](char what) { return accepted && ucx.heard(peer, what); });
}

void exchange_raw_am(benchmark::State& state, std::size_t size) {
    ferry::bench::net::exchange_rows(state, k_rounds, size,
                                     [&] { return exchange_with_peer(size); });
}

// The peer (FFN side). argv: port size rounds. Exit 0 when every batch was whole when it landed.
int raw_am_ffn(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 3) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    const std::uint64_t rounds = std::stoull(args[2]);
    RawUcx ucx(false, Waiting::sleep);
    std::vector<std::byte> storage;
    Target target;
    target.worker = ucx.worker();
    target.memory = page_aligned(storage, size);
    target.size = size;
    on_whole_am(ucx, k_batch_am, &Target::on_batch, &target);
    if (!ucx.connect(static_cast<std::uint16_t>(std::stoul(args[0])))) {
        return 2;
    }
    report('r');
    bool whole = true;
    std::uint64_t answer = 0;
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        if (!ucx.progress_until([&] { return target.landed == r; })) {
            return 2;
        }
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        std::memcpy(&first, target.memory, sizeof first);
        std::memcpy(&last, target.memory + size - sizeof last, sizeof last);
        whole = whole && first == r && last == r;
        answer = r;
        if (!send_round(ucx, k_answer_am, answer, nullptr, 0)) {
            return 2;
        }
    }
    if (!ucx.flush()) {
        return 2;
    }
    report('d');
    return whole ? 0 : 1;
}

[[maybe_unused]] const bool registered = ferry::bench::net::add_role("raw_am_ffn", &raw_am_ffn);

BENCHMARK_CAPTURE(exchange_raw_am, raw_am_1KiB, 1 << 10)
    ->Name("exchange/raw_am/1KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(exchange_raw_am, raw_am_56KiB, 8 * 7168)
    ->Name("exchange/raw_am/56KiB")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
