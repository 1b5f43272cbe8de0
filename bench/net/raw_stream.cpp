// The streaming baselines of bench/net: raw UCX between this process and its peer
// (peer.hpp, ucx.hpp), the parent sending, the peer receiving:
//   rate/raw_am/64B        ucp_am_send_nbx of 64-byte messages (the sequence number in an
//                          8-byte header and in the payload's first bytes); the peer's AM
//                          handler checks and counts them
//   rate/raw_tag/64B       ucp_tag_send_nbx of the same 64 bytes; the peer receives each with
//                          ucp_tag_recv_nbx (posted one at a time, as a receive loop would)
//   bandwidth/raw_am/S     ucp_am_send_nbx of S bytes (64KiB, 4MiB); the peer places each
//                          payload into a preallocated buffer: ucp_am_recv_data_nbx for a
//                          rendezvous arrival, memcpy for an eager one
//   bandwidth/raw_am_addr/S  the same over endpoints made from worker addresses (ucx.hpp,
//                          Connect::worker_address), the kind of endpoint ferry's Node uses
//   bandwidth/raw_am_copy/S  raw_am_addr with the sender's guarantee of a copying send: the
//                          message is built in one buffer of its own (the sequence number
//                          stamped in it) and copied into its slot before ucp_am_send_nbx, so
//                          the buffer is free again when the call returns, as it is after
//                          MessageSender::send(bytes) and send(Dataset)
//   bandwidth/raw_am_addr_again/4MiB, bandwidth/raw_am_copy_again/4MiB  the two 4 MiB
//                          baselines once more under their own names, in the same round: A/A
//                          controls, whose ratio to the first shows how many pairs of two equal
//                          transports fall under 0.9x by noise alone (docs/performance/net.md,
//                          "A/A controls")
// Raw UCX has no flow control (unexpected messages are buffered without bound), so the sender
// keeps at most `window` messages unconsumed: the peer returns a credit (an AM carrying its
// count) every window / 4 messages consumed, and the sender waits for credit before going
// further. The same window bounds the sender's payload buffers (slot i % window).
// Every raw row sleeps in poll while it waits (ucx.hpp, Waiting), as ferry's Node does;
// the *_spin rows are the AM rows with both sides spinning on ucp_worker_progress instead.
// Timing: from the first timed send to the peer's "done" (after a warm-up of a quarter of the
// messages); the parent progresses its worker while it waits, so its last sends go out.
#include "../ipc/messages.hpp"
#include "peer.hpp"
#include "shapes.hpp"
#include "ucx.hpp"

#include <benchmark/benchmark.h>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {
using ferry::bench::page_aligned;
using ferry::bench::record;
using ferry::bench::Timed;
using ferry::bench::net::Connect;
using ferry::bench::net::ExecPeer;
using ferry::bench::net::name_of;
using ferry::bench::net::RawUcx;
using ferry::bench::net::Reporter;
using ferry::bench::net::shape_of;
using ferry::bench::net::StreamShape;
using ferry::bench::net::Waiting;

constexpr unsigned k_data_am = 1;
constexpr unsigned k_credit_am = 2;
constexpr ucp_tag_t k_data_tag = 1;
// `window` page-aligned slots of `size` bytes.
class Slots {
public:
    Slots(std::size_t size, std::uint64_t window)
        : size_(size), window_(window), base_(page_aligned(storage_, size * window)) {}
    std::byte* operator[](std::uint64_t i) { return base_ + (i % window_) * size_; }

private:
    std::size_t size_;
    std::uint64_t window_;
    std::vector<std::byte> storage_;
    std::byte* base_;
};

// How the sender fills a slot: in place (the sequence number only), or by copying a message
// built in a buffer of its own (the copying send's guarantee: that buffer is free on return).
enum class Fill { in_place, copied };

// The parent's side: sends message i once the peer has credited all but window - 1 before it.
class WindowedSender {
public:
    WindowedSender(RawUcx& ucx, const StreamShape& shape, Fill fill)
        : ucx_(ucx), shape_(shape), slots_(shape.size, shape.window), pending_(shape.window),
          headers_(shape.window) {
        if (fill == Fill::copied) {
            source_.emplace(shape.size, 1);
        }
        ucx_.on_am(k_credit_am, &WindowedSender::on_credit, this);
    }
    ~WindowedSender() {
        for (auto& r : pending_) {
            (void)ucx_.settle(r);
        }
    }
    WindowedSender(const WindowedSender&) = delete;
    WindowedSender& operator=(const WindowedSender&) = delete;

    bool send(std::uint64_t i) {
        if (!ucx_.progress_until([&] { return i - credited_ < shape_.window; })) {
            return false;
        }
        ucs_status_ptr_t& slot_request = pending_[i % shape_.window];
        if (!ucx_.settle(slot_request)) { // the slot's previous message must have left
            return false;
        }
        std::byte* payload = slots_[i];
        if (source_) {
            std::byte* message = (*source_)[0];
            std::memcpy(message, &i, sizeof i);
            std::memcpy(payload, message, shape_.size);
        } else {
            std::memcpy(payload, &i, sizeof i);
        }
        ucp_request_param_t p{};
        if (shape_.tag) {
            slot_request = ucp_tag_send_nbx(ucx_.ep(), payload, shape_.size, k_data_tag, &p);
        } else {
            std::uint64_t& header = headers_[i % shape_.window]; // alive until the send completes
            header = i;
            slot_request = ucp_am_send_nbx(ucx_.ep(), k_data_am, &header, sizeof header, payload,
                                           shape_.size, &p);
        }
        if (UCS_PTR_IS_ERR(slot_request)) {
            slot_request = nullptr;
            return false;
        }
        return true;
    }

private:
    static ucs_status_t on_credit(void* self, const void* header, std::size_t length, void*,
                                  std::size_t, const ucp_am_recv_param_t*) {
        if (length == sizeof(std::uint64_t)) {
            std::memcpy(&static_cast<WindowedSender*>(self)->credited_, header, length);
        }
        return UCS_OK;
    }

    RawUcx& ucx_;
    StreamShape shape_;
    Slots slots_;
    std::optional<Slots> source_; // Fill::copied: the message, built before each send
    std::vector<ucs_status_ptr_t> pending_;
    std::vector<std::uint64_t> headers_;
    std::uint64_t credited_ = 0;
};

Timed stream_to_peer(const StreamShape& shape, Waiting waiting, Connect how, Fill fill) {
    const auto cpus = ferry::bench::two_cpus();
    const ferry::bench::PinnedToCpu pinned(cpus.first);
    RawUcx ucx(true, waiting, how);
    WindowedSender sender(ucx, shape, fill);
    ExecPeer peer(cpus.second, shape.tag ? "raw_tag_sink" : "raw_am_sink",
                  {ucx.where(), std::to_string(shape.size), std::to_string(shape.count),
                   std::to_string(shape.window), name_of(waiting)});
    const bool accepted = ucx.accept();
    return ferry::bench::net::timed_stream(
        peer, shape.count, [&](std::uint64_t i) { return sender.send(i); },
        [&](char what) { return accepted && ucx.heard(peer, what); });
}

void stream(benchmark::State& state, std::size_t size, bool tag, Waiting waiting,
            Connect how = Connect::sockaddr, Fill fill = Fill::in_place) {
    const StreamShape shape = shape_of(size, tag);
    for (auto _ : state) {
        if (!record(state, ferry::bench::net::guarded<Timed>(
                               [&] { return stream_to_peer(shape, waiting, how, fill); }))) {
            break;
        }
    }
    state.counters["load_after"] = ferry::bench::net::load_1min();
    state.SetItemsProcessed(static_cast<std::int64_t>(shape.count) * state.iterations());
    state.SetBytesProcessed(static_cast<std::int64_t>(shape.count * size) * state.iterations());
}

// The peer's side: counts what arrives, checks each sequence number, returns credits.
class Sink {
public:
    Sink(RawUcx& ucx, const StreamShape& shape)
        : ucx_(ucx), shape_(shape), slots_(shape.size, shape.window) {}

    // Consumed one message: its sequence number `seq`, its payload now at `at`.
    void consumed(std::uint64_t seq, const std::byte* at) {
        std::uint64_t carried = 0;
        std::memcpy(&carried, at, sizeof carried);
        intact_ = intact_ && carried == seq;
        sum_ += seq;
        ++received_;
    }

    // Progresses until `total` messages were consumed, crediting as they come.
    bool until(std::uint64_t total, const std::function<bool()>& receive_one) {
        while (received_ < total) {
            if (!receive_one()) {
                return false;
            }
            if (received_ - credited_ >= shape_.step() || received_ == total) {
                credited_ = received_;
                if (!ucx_.send_header(k_credit_am, &credited_, sizeof credited_)) {
                    return false;
                }
            }
        }
        return true;
    }

    std::byte* slot(std::uint64_t seq) { return slots_[seq]; }
    [[nodiscard]] std::uint64_t received() const { return received_; }
    // Every message came once with its own payload: the sequence numbers 0..total-1 summed.
    [[nodiscard]] bool intact() const {
        return intact_ && sum_ == (received_ == 0 ? 0 : received_ * (received_ - 1) / 2);
    }
    RawUcx& ucx() { return ucx_; }
    void fail() { failed_ = true; }
    [[nodiscard]] bool failed() const { return failed_; }

private:
    RawUcx& ucx_;
    StreamShape shape_;
    Slots slots_;
    std::uint64_t received_ = 0;
    std::uint64_t credited_ = 0;
    std::uint64_t sum_ = 0;
    bool intact_ = true;
    bool failed_ = false;
};

struct Landing {
    Sink* sink;
    std::uint64_t seq;
};

ucs_status_t on_data(void* arg, const void* header, std::size_t header_length, void* data,
                     std::size_t length, const ucp_am_recv_param_t* param) {
    auto* sink = static_cast<Sink*>(arg);
    std::uint64_t seq = 0;
    if (header_length != sizeof seq) {
        sink->fail();
        return UCS_OK;
    }
    std::memcpy(&seq, header, sizeof seq);
    std::byte* into = sink->slot(seq);
    if ((param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) == 0) {
        std::memcpy(into, data, length);
        sink->consumed(seq, into);
        return UCS_OK;
    }
    // Rendezvous: UCX fetches the payload into the slot; counted when it has landed. The
    // Landing lives until then (one per message in flight: the window bounds them).
    auto* landing = new Landing{sink, seq};
    ucp_request_param_t p{};
    p.op_attr_mask =
        UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL;
    p.cb.recv_am = [](void* request, ucs_status_t status, std::size_t, void* user) {
        auto* l = static_cast<Landing*>(user);
        if (status == UCS_OK) {
            l->sink->consumed(l->seq, l->sink->slot(l->seq));
        } else {
            l->sink->fail();
        }
        delete l;
        ucp_request_free(request);
    };
    p.user_data = landing;
    const ucs_status_ptr_t r = ucp_am_recv_data_nbx(sink->ucx().worker(), data, into, length, &p);
    if (UCS_PTR_IS_ERR(r)) {
        delete landing;
        sink->fail();
    }
    return UCS_INPROGRESS;
}

// argv: where (RawUcx::where) size count window waiting. Exit 0 when every message came once,
// intact.
int sink_role(const std::vector<std::string>& args, Reporter report, bool tag) {
    if (args.size() != 5) {
        return 2;
    }
    const StreamShape shape{std::stoul(args[1]), std::stoull(args[2]), std::stoull(args[3]), tag};
    const std::uint64_t warmup = shape.count / 4;
    RawUcx ucx(false, ferry::bench::net::waiting_of(args[4]));
    Sink sink(ucx, shape);
    ucx.on_am(k_data_am, &on_data, &sink);
    if (!ucx.connect(args[0])) {
        return 2;
    }
    std::uint64_t next = 0;
    const std::function<bool()> receive_one = [&]() -> bool {
        if (!tag) {
            const std::uint64_t before = sink.received();
            return ucx.progress_until([&] { return sink.received() != before || sink.failed(); }) &&
                   !sink.failed();
        }
        ucp_request_param_t p{};
        std::byte* into = sink.slot(next);
        if (!ucx.wait(
                ucp_tag_recv_nbx(ucx.worker(), into, shape.size, k_data_tag, ~ucp_tag_t{0}, &p))) {
            return false;
        }
        sink.consumed(next++, into);
        return true;
    };
    report('r');
    if (!sink.until(warmup, receive_one)) {
        return 2;
    }
    report('w');
    if (!sink.until(warmup + shape.count, receive_one)) {
        return 2;
    }
    report('d');
    return sink.intact() ? 0 : 1;
}

[[maybe_unused]] const bool registered =
    ferry::bench::net::add_role(
        "raw_am_sink", [](const auto& args, Reporter r) { return sink_role(args, r, false); }) &&
    ferry::bench::net::add_role(
        "raw_tag_sink", [](const auto& args, Reporter r) { return sink_role(args, r, true); });

#define FERRY_NET_STREAM(measure, side, param, size, tag, waiting)                                 \
    BENCHMARK_CAPTURE(stream, side##_##param, size, tag, Waiting::waiting)                         \
        ->Name(#measure "/" #side "/" #param)                                                      \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_NET_STREAM(rate, raw_am, 64B, 64, false, sleep);
FERRY_NET_STREAM(rate, raw_am_spin, 64B, 64, false, spin);
FERRY_NET_STREAM(rate, raw_tag, 64B, 64, true, sleep);
FERRY_NET_STREAM(bandwidth, raw_am, 64KiB, 64 << 10, false, sleep);
FERRY_NET_STREAM(bandwidth, raw_am, 4MiB, 4 << 20, false, sleep);
// Over a Node's kind of endpoint: filled in place, and copied from the sender's own buffer.
#define FERRY_NET_ADDR_STREAM(side, param, size, fill)                                             \
    BENCHMARK_CAPTURE(stream, side##_##param, size, false, Waiting::sleep,                         \
                      Connect::worker_address, fill)                                               \
        ->Name("bandwidth/" #side "/" #param)                                                      \
        ->UseManualTime()                                                                          \
        ->Iterations(1)

FERRY_NET_ADDR_STREAM(raw_am_addr, 64KiB, 64 << 10, Fill::in_place);
FERRY_NET_ADDR_STREAM(raw_am_addr, 4MiB, 4 << 20, Fill::in_place);
FERRY_NET_ADDR_STREAM(raw_am_copy, 64KiB, 64 << 10, Fill::copied);
FERRY_NET_ADDR_STREAM(raw_am_copy, 4MiB, 4 << 20, Fill::copied);
FERRY_NET_ADDR_STREAM(raw_am_addr_again, 4MiB, 4 << 20, Fill::in_place);
FERRY_NET_ADDR_STREAM(raw_am_copy_again, 4MiB, 4 << 20, Fill::copied);
FERRY_NET_STREAM(bandwidth, raw_am_spin, 64KiB, 64 << 10, false, spin);
FERRY_NET_STREAM(bandwidth, raw_am_spin, 4MiB, 4 << 20, false, spin);
} // namespace
