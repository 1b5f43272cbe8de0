// The Attention/FFN exchange baseline of bench/net: one-sided puts in raw UCX between this
// process (the attention side) and its peer (the FFN side):
//   exchange/raw_put/S  per round, the parent writes a micro-batch of S bytes into the peer's
//                       ucp_mem_map'ped memory (ucp_put_nbx), orders it (ucp_worker_fence),
//                       then writes the round number as a flag (ucp_put_nbx, 8 bytes). The peer
//                       polls its flag while progressing its worker (over tcp a put lands only
//                       while the target progresses), checks that the whole micro-batch came
//                       before the flag (its first and last 8 bytes carry the round), and
//                       answers with an 8-byte put of the round into the parent's mapped flag,
//                       which the parent polls the same way.
// Both sides sleep in poll while they wait (ucx.hpp, Waiting), as ferry's Node does;
// exchange/raw_put_spin/S spin on ucp_worker_progress instead; exchange/raw_put_addr/S is
// raw_put over endpoints made from worker addresses, the kind a Node makes (ucx.hpp, Connect).
// exchange/raw_put_wake/S: raw_put with, after each flag put, a fence and an 8-byte eager
// active message to the flag's owner: what a raw program must add to wake an owner asleep on
// its worker where a put makes no event at the target (RDMA), as ferry's one-sided path does
// with its ring (docs/performance/net.md, Profile of the one-sided exchange).
// S: 1KiB, and 56KiB (8 tokens x 7168 bytes, the hidden size of the examples' micro-batches).
// The figure is the round trip (micro-batch there, flag back), per round; each repetition runs
// k_rounds after k_rounds / 4 untimed, and reports their median (p50_us) and p99.
#include "../ipc/messages.hpp"
#include "peer.hpp"
#include "shapes.hpp"
#include "ucx.hpp"

#include <atomic>
#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {
using ferry::bench::page_aligned;
using ferry::bench::net::Connect;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::k_rounds;
using ferry::bench::net::name_of;
using ferry::bench::net::RawUcx;
using ferry::bench::net::Reporter;
using ferry::bench::net::Rounds;
using ferry::bench::net::Waiting;

constexpr unsigned k_key_am = 3;
constexpr unsigned k_wake_am = 4;

enum class Wake { none, message };
constexpr std::size_t k_flag_bytes = 64; // the flag's own cache line after the data

// Memory of this process that the other side writes into: `data` bytes, then the flag.
class Exposed {
public:
    Exposed(RawUcx& ucx, std::size_t data) : ucx_(ucx), data_(data) {
        base_ = page_aligned(storage_, data + k_flag_bytes);
        std::memset(base_, 0, data + k_flag_bytes);
        ucp_mem_map_params_t p{};
        p.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH;
        p.address = base_;
        p.length = data + k_flag_bytes;
        if (ucp_mem_map(ucx.context(), &p, &memh_) != UCS_OK) {
            throw std::runtime_error("ucp_mem_map failed");
        }
        ucx.on_am(k_key_am, &Exposed::on_key, this);
    }
    ~Exposed() {
        if (rkey_ != nullptr) {
            ucp_rkey_destroy(rkey_);
        }
        (void)ucp_mem_unmap(ucx_.context(), memh_);
    }
    Exposed(const Exposed&) = delete;
    Exposed& operator=(const Exposed&) = delete;

    // Sends this memory's address and packed key to the other side, then waits for theirs.
    bool swap_keys() {
        void* packed = nullptr;
        std::size_t size = 0;
        if (ucp_rkey_pack(ucx_.context(), memh_, &packed, &size) != UCS_OK) {
            return false;
        }
        std::vector<std::byte> message(sizeof(std::uint64_t) + size);
        const auto address = reinterpret_cast<std::uint64_t>(base_);
        std::memcpy(message.data(), &address, sizeof address);
        std::memcpy(message.data() + sizeof address, packed, size);
        ucp_rkey_buffer_release(packed);
        return ucx_.send_header(k_key_am, message.data(), message.size()) &&
               ucx_.progress_until([&] { return !their_key_.empty(); }) &&
               ucp_ep_rkey_unpack(ucx_.ep(), their_key_.data() + sizeof(std::uint64_t), &rkey_) ==
                   UCS_OK;
    }

    [[nodiscard]] const std::byte* data() const { return base_; }
    // The flag the other side writes, read as its writer (UCX, inside progress) left it.
    [[nodiscard]] std::uint64_t flag() const {
        return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(base_ + data_))
            .load(std::memory_order_acquire);
    }
    [[nodiscard]] std::uint64_t their_base() const {
        std::uint64_t a = 0;
        std::memcpy(&a, their_key_.data(), sizeof a);
        return a;
    }
    [[nodiscard]] ucp_rkey_h their_rkey() const { return rkey_; }

private:
    static ucs_status_t on_key(void* self, const void* header, std::size_t length, void*,
                               std::size_t, const ucp_am_recv_param_t*) {
        auto* me = static_cast<Exposed*>(self);
        if (length > sizeof(std::uint64_t)) {
            const auto* at = static_cast<const std::byte*>(header);
            me->their_key_.assign(at, at + length);
        }
        return UCS_OK;
    }

    RawUcx& ucx_;
    std::size_t data_;
    std::vector<std::byte> storage_;
    std::byte* base_ = nullptr;
    ucp_mem_h memh_ = nullptr;
    std::vector<std::byte> their_key_;
    ucp_rkey_h rkey_ = nullptr;
};

// One put of `bytes` at the other side's `address`; the request is kept in `request` (the
// previous one, completed by now, is waited for and freed first).
bool put(RawUcx& ucx, const Exposed& mem, const void* bytes, std::size_t n, std::uint64_t address,
         ucs_status_ptr_t& request) {
    if (!ucx.settle(request)) {
        return false;
    }
    ucp_request_param_t p{};
    request = ucp_put_nbx(ucx.ep(), bytes, n, address, mem.their_rkey(), &p);
    if (UCS_PTR_IS_ERR(request)) {
        request = nullptr;
        return false;
    }
    return true;
}

// With Wake::message, after a flag's put: a fence, then an eager 8-byte message (`word`, which
// must stay unchanged until `request` completes) that the owner's worker receives as an event.
// The owner's handler (count_wake) counts it.
bool wake(RawUcx& ucx, Wake how, const std::uint64_t& word, ucs_status_ptr_t& request) {
    if (how == Wake::none) {
        return true;
    }
    if (!ucx.settle(request) || ucp_worker_fence(ucx.worker()) != UCS_OK) {
        return false;
    }
    ucp_request_param_t p{};
    p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    p.flags = UCP_AM_SEND_FLAG_EAGER;
    request = ucp_am_send_nbx(ucx.ep(), k_wake_am, &word, sizeof word, nullptr, 0, &p);
    if (UCS_PTR_IS_ERR(request)) {
        request = nullptr;
        return false;
    }
    return true;
}

ucs_status_t count_wake(void* count, const void*, std::size_t, void*, std::size_t,
                        const ucp_am_recv_param_t*) {
    ++*static_cast<std::uint64_t*>(count);
    return UCS_OK;
}

// The parent's side of one round: data, fence, flag (and its wake); then waits for the answer.
class Attention {
public:
    Attention(RawUcx& ucx, Exposed& mem, std::size_t size, Wake how)
        : ucx_(ucx), mem_(mem), size_(size), how_(how), batch_(page_aligned(storage_, size)) {}
    ~Attention() {
        (void)ucx_.settle(data_request_);
        (void)ucx_.settle(flag_request_);
        (void)ucx_.settle(wake_request_);
    }
    Attention(const Attention&) = delete;
    Attention& operator=(const Attention&) = delete;

    bool round(std::uint64_t r) {
        // The sources of the last round's puts are rewritten: those puts must have completed.
        if (!ucx_.settle(data_request_) || !ucx_.settle(flag_request_) ||
            !ucx_.settle(wake_request_)) {
            return false;
        }
        std::memcpy(batch_, &r, sizeof r);
        std::memcpy(batch_ + size_ - sizeof r, &r, sizeof r);
        if (!put(ucx_, mem_, batch_, size_, mem_.their_base(), data_request_) ||
            ucp_worker_fence(ucx_.worker()) != UCS_OK) {
            return false;
        }
        flag_ = r;
        return put(ucx_, mem_, &flag_, sizeof flag_, mem_.their_base() + size_, flag_request_) &&
               wake(ucx_, how_, flag_, wake_request_) && ucx_.settle(data_request_) &&
               ucx_.settle(flag_request_) && ucx_.settle(wake_request_) &&
               ucx_.progress_until([&] { return mem_.flag() == r; });
    }

private:
    RawUcx& ucx_;
    Exposed& mem_;
    std::size_t size_;
    Wake how_;
    std::vector<std::byte> storage_;
    std::byte* batch_;
    ucs_status_ptr_t data_request_ = nullptr;
    ucs_status_ptr_t flag_request_ = nullptr;
    ucs_status_ptr_t wake_request_ = nullptr;
    std::uint64_t flag_ = 0;
};

Rounds exchange_with_peer(std::size_t size, Waiting waiting, Connect how, Wake wakes) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    RawUcx ucx(true, waiting, how);
    Exposed mem(ucx, 0); // the answer flag only
    std::uint64_t woken = 0;
    ucx.on_am(k_wake_am, &count_wake, &woken);
    ExecPeer peer(cpus.second, "raw_ffn",
                  {ucx.where(), std::to_string(size), std::to_string(k_rounds / 4 + k_rounds),
                   name_of(waiting), wakes == Wake::message ? "wake" : "none"});
    const bool keyed = ucx.accept() && mem.swap_keys();
    Attention attention(ucx, mem, size, wakes);
    return ferry::bench::net::timed_rounds(
        peer, k_rounds, [&](std::uint64_t r) { return attention.round(r); },
        [&](char what) { return keyed && ucx.heard(peer, what); });
}

void exchange(benchmark::State& state, std::size_t size, Waiting waiting,
              Connect how = Connect::sockaddr, Wake wakes = Wake::none) {
    ferry::bench::net::exchange_rows(state, k_rounds, size,
                                     [&] { return exchange_with_peer(size, waiting, how, wakes); });
}

// The peer (FFN side). argv: where (RawUcx::where) size rounds waiting wake|none. Exit 0 when
// every micro-batch was whole before its flag and, with wake, every flag's wake came.
int ffn_role(const std::vector<std::string>& args, Reporter report) {
    if (args.size() != 5) {
        return 2;
    }
    const std::size_t size = std::stoul(args[1]);
    const std::uint64_t rounds = std::stoull(args[2]);
    const Wake wakes = args[4] == "wake" ? Wake::message : Wake::none;
    RawUcx ucx(false, ferry::bench::net::waiting_of(args[3]));
    Exposed mem(ucx, size);
    std::uint64_t woken = 0;
    ucx.on_am(k_wake_am, &count_wake, &woken);
    if (!ucx.connect(args[0]) || !mem.swap_keys()) {
        return 2;
    }
    report('r');
    bool whole = true;
    std::uint64_t answer = 0;
    ucs_status_ptr_t request = nullptr;
    ucs_status_ptr_t wake_request = nullptr;
    for (std::uint64_t r = 1; r <= rounds; ++r) {
        if (!ucx.progress_until([&] { return mem.flag() == r; })) {
            return 2;
        }
        std::uint64_t first = 0;
        std::uint64_t last = 0;
        std::memcpy(&first, mem.data(), sizeof first);
        std::memcpy(&last, mem.data() + size - sizeof last, sizeof last);
        whole = whole && first == r && last == r;
        if (!ucx.settle(request) || !ucx.settle(wake_request)) {
            return 2;
        }
        answer = r;
        // Waited for at once, as the parent waits for its own: a put UCX has not finished
        // pushing out would otherwise sit until some other event wakes this sleeping side.
        if (!put(ucx, mem, &answer, sizeof answer, mem.their_base(), request) ||
            !wake(ucx, wakes, answer, wake_request) || !ucx.settle(request) ||
            !ucx.settle(wake_request)) {
            return 2;
        }
    }
    if (!ucx.settle(request) || !ucx.flush()) {
        return 2;
    }
    // The last round's wake may still be on its way when its flag is seen: look once more.
    if (wakes == Wake::message && !ucx.progress_until([&] { return woken == rounds; })) {
        return 2;
    }
    report('d');
    return whole && (wakes == Wake::none || woken == rounds) ? 0 : 1;
}

[[maybe_unused]] const bool registered = ferry::bench::net::add_role("raw_ffn", &ffn_role);

#define FERRY_NET_EXCHANGE(side, param, size, waiting)                                             \
    BENCHMARK_CAPTURE(exchange, side##_##param, size, Waiting::waiting)                            \
        ->Name("exchange/" #side "/" #param)                                                       \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_NET_EXCHANGE(raw_put, 1KiB, 1 << 10, sleep);
FERRY_NET_EXCHANGE(raw_put, 56KiB, 8 * 7168, sleep);
BENCHMARK_CAPTURE(exchange, raw_put_addr_1KiB, 1 << 10, Waiting::sleep, Connect::worker_address)
    ->Name("exchange/raw_put_addr/1KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(exchange, raw_put_addr_56KiB, 8 * 7168, Waiting::sleep, Connect::worker_address)
    ->Name("exchange/raw_put_addr/56KiB")
    ->UseManualTime()
    ->Iterations(1);
FERRY_NET_EXCHANGE(raw_put_spin, 1KiB, 1 << 10, spin);
FERRY_NET_EXCHANGE(raw_put_spin, 56KiB, 8 * 7168, spin);
BENCHMARK_CAPTURE(exchange, raw_put_wake_1KiB, 1 << 10, Waiting::sleep, Connect::sockaddr,
                  Wake::message)
    ->Name("exchange/raw_put_wake/1KiB")
    ->UseManualTime()
    ->Iterations(1);
BENCHMARK_CAPTURE(exchange, raw_put_wake_56KiB, 8 * 7168, Waiting::sleep, Connect::sockaddr,
                  Wake::message)
    ->Name("exchange/raw_put_wake/56KiB")
    ->UseManualTime()
    ->Iterations(1);
} // namespace
