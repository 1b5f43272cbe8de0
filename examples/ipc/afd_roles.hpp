#pragma once
// The Attention/FFN roles of examples/ipc/afd_processes.cpp and tests/ipc/afd_window.cpp,
// written once against Windows so that the same code runs as threads over LocalWindows (the
// in-process computation, run_in_process) and as processes over SharedWindows (ffn_process,
// attention_process).
//
// Each window's data area holds a ScheduleContext at offset 0 and the buffers it names, laid out
// with the owner's addresses (owner_base + offset), as a device context would hold device
// addresses. A role reports an order-dependent digest of everything it saw, and its errors.

#include "afd_ending.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ferry/afd.hpp>
#include <ferry/afd/registry_resolver.hpp>
#include <ferry/ipc/window.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace afd_ipc {

using namespace ferry::afd;

struct Config {
    std::uint32_t sessions = 2, micro_batches = 2, batch_size = 2, experts_per_token = 3;
    std::uint32_t expert_num = 8, token_size = 512, result_size = 512, steps = 12;
    bool recv = false; // FFN side: FfnWorkerBatching RECV mode instead of scheduler + NORM
    [[nodiscard]] Geometry geometry() const {
        return {sessions, micro_batches, batch_size, experts_per_token};
    }
};

inline constexpr auto k_wait = std::chrono::seconds(20); // a stuck role fails instead of hanging

[[nodiscard]] inline std::uint64_t align64(std::uint64_t n) {
    return (n + 63) / 64 * 64;
}

// Offsets inside a window's data area.
struct FfnLayout {
    std::uint64_t info, data, layer_ids, session_ids, micro_batch_ids, expert_ids, total;
};
[[nodiscard]] inline FfnLayout ffn_layout(const Config& c) {
    const Geometry g = c.geometry();
    FfnLayout l{};
    l.info = k_context_size;
    l.data = l.info + align64(*ffn_token_info_size(g));
    l.layer_ids = l.data + align64(*ffn_token_data_size(g, c.token_size));
    l.session_ids = l.layer_ids + align64(4ull * c.sessions);
    l.micro_batch_ids = l.session_ids + align64(4ull * c.sessions);
    l.expert_ids = l.micro_batch_ids + align64(4ull * c.sessions);
    l.total = l.expert_ids + align64(*expert_ids_buffer_size(g));
    return l;
}
struct AttentionLayout {
    std::uint64_t flags, data, total;
};
[[nodiscard]] inline AttentionLayout attention_layout(const Config& c) {
    const Geometry g = c.geometry();
    AttentionLayout l{};
    l.flags = k_context_size;
    l.data = l.flags + align64(*attention_token_info_size(g));
    l.total = l.data + align64(*attention_token_data_size(g, c.result_size));
    return l;
}

// The contexts as their owner lays them out at owner address `base`; a writer on another node
// keeps such a copy of its peer's context (docs/afd.md, Remote windows).
[[nodiscard]] inline ScheduleContext ffn_context(std::uint64_t base, const Config& c) {
    const FfnLayout l = ffn_layout(c);
    const Geometry g = c.geometry();
    ScheduleContext s{};
    s.common = {c.sessions,          c.micro_batches,     c.batch_size,
                c.experts_per_token, c.expert_num,        c.token_size,
                c.result_size,       k_schedule_mode_ffn, {}};
    s.control.run_flag = 1;
    s.ffn = {};
    s.ffn.token_info_buf = base + l.info;
    s.ffn.token_info_buf_size = *ffn_token_info_size(g);
    s.ffn.token_data_buf = base + l.data;
    s.ffn.token_data_buf_size = *ffn_token_data_size(g, c.token_size);
    s.ffn.layer_ids_buf = base + l.layer_ids;
    s.ffn.layer_ids_buf_size = 4ull * c.sessions;
    s.ffn.session_ids_buf = base + l.session_ids;
    s.ffn.session_ids_buf_size = 4ull * c.sessions;
    s.ffn.micro_batch_ids_buf = base + l.micro_batch_ids;
    s.ffn.micro_batch_ids_buf_size = 4ull * c.sessions;
    s.ffn.expert_ids_buf = base + l.expert_ids;
    s.ffn.expert_ids_buf_size = *expert_ids_buffer_size(g);
    return s;
}
[[nodiscard]] inline ScheduleContext attention_context(std::uint64_t base, const Config& c) {
    const AttentionLayout l = attention_layout(c);
    const Geometry g = c.geometry();
    ScheduleContext s{};
    s.common = {c.sessions,
                c.micro_batches,
                c.batch_size,
                c.experts_per_token,
                c.expert_num,
                c.token_size,
                c.result_size,
                k_schedule_mode_attention,
                {}};
    s.control.run_flag = 1;
    s.attention.token_info_buf = base + l.flags;
    s.attention.token_info_buf_size = *attention_token_info_size(g);
    s.attention.token_data_buf = base + l.data;
    s.attention.token_data_buf_size = *attention_token_data_size(g, c.result_size);
    s.attention.micro_batch_id = c.micro_batches - 1; // the first wait is on micro batch 0
    return s;
}

// The owner lays out its context in its window's data area (`local`, at owner address `base`).
inline void init_ffn(std::span<std::byte> local, std::uint64_t base, const Config& c) {
    ScheduleContextView(local.data()).store(ffn_context(base, c));
    FfnDescriptorTable(local.data() + ffn_layout(c).info, c.geometry()).initialize();
}
inline void init_attention(std::span<std::byte> local, std::uint64_t base, const Config& c) {
    ScheduleContextView(local.data()).store(attention_context(base, c));
}

// ---- the workload: deterministic tokens, routing and expert answers ----
[[nodiscard]] inline std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}
[[nodiscard]] inline std::uint64_t token_hash(std::uint32_t s, std::uint32_t step,
                                              std::uint32_t t) {
    return mix((std::uint64_t{s} << 40) ^ (std::uint64_t{step} << 12) ^ t);
}
// K distinct experts per token; one token in five has its last slot masked.
[[nodiscard]] inline std::int32_t expert_for(const Config& c, std::uint32_t s, std::uint32_t step,
                                             std::uint32_t t, std::uint32_t k) {
    const std::uint64_t h = token_hash(s, step, t);
    if (k + 1 == c.experts_per_token && h % 5 == 0) {
        return k_masked_expert_floor;
    }
    return static_cast<std::int32_t>((h + k) % c.expert_num);
}
inline void make_token(std::byte* p, std::size_t size, std::uint32_t s, std::uint32_t step,
                       std::uint32_t t) {
    const std::uint32_t head[4] = {s, step, t, 0xAFD0AFD0u};
    std::memcpy(p, head, sizeof head);
    for (std::size_t i = sizeof head; i < size; ++i) {
        p[i] = static_cast<std::byte>(mix(token_hash(s, step, t) + i) & 0xFF);
    }
}
// The "expert": the token's header, expert and slot, then token bytes mixed with the expert id.
inline void make_result(std::byte* out, std::size_t size, std::span<const std::byte> token,
                        std::int32_t expert, std::int32_t k) {
    std::memcpy(out, token.data(), 16);
    const std::int32_t tail[2] = {expert, k};
    std::memcpy(out + 16, tail, sizeof tail);
    for (std::size_t i = 24; i < size; ++i) {
        out[i] = token[i % token.size()] ^ static_cast<std::byte>((expert * 31 + k) & 0xFF);
    }
}

// FNV-1a over bytes: order-dependent, so equal digests mean equal sequences.
struct Digest {
    std::uint64_t value = 0xcbf29ce484222325ULL;
    void add(std::span<const std::byte> bytes) {
        for (std::byte b : bytes) {
            value = (value ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ULL;
        }
    }
    template <typename T>
    void add_value(const T& v) {
        add(std::as_bytes(std::span(&v, 1)));
    }
};

struct Report {
    std::uint64_t digest = 0, errors = 0, rows = 0;
};

// ---- the FFN role ----
// Serves A·steps rows: all-sync scheduler (registry-resolved) + NORM batching, or RECV batching;
// parks on the FFN window's doorbell (the attention side rings it); answers every row through
// the attention windows.
struct FfnEnds {
    std::span<std::byte> own; // the FFN window's data area, here
    Doorbell bell;            // the FFN window's doorbell
    const ferry::AllocationRegistry* registry;
    std::span<const ScheduleContextView> sessions; // attention contexts, mapped here
    std::span<const Window> session_windows;
    // examples/net: wait with AutoWait (the WaitDirectory's doorbell and peer probe) instead of
    // parking on `bell`; this rank of `ranks` FFN ranks serves global expert local·ranks + rank;
    // `consumed`, when set, runs once a round's descriptors are consumed and their tokens copied,
    // before the results go back (false: an error, the FFN stops).
    bool auto_wait = false;
    std::uint32_t rank = 0, ranks = 1;
    std::function<bool()> consumed = nullptr;
};

// One round: schedule (unless RECV) and batch; false when it did not serve.
template <typename Wait>
inline bool ffn_round_with(const Config& c, const FfnEnds& e, Wait park, Batch& batch, Report& r) {
    const ScheduleContextView ctx(e.own.data());
    if (c.recv) {
        const ferry::Status s = FfnWorkerBatching::receive(ctx, c.expert_num, batch, k_wait, park);
        r.rows += s == ferry::Status::ok ? c.sessions : 0;
        return s == ferry::Status::ok;
    }
    GroupSyncScheduler<Wait, LowestReady, SerialExecutor, RegistryResolver> scheduler(
        park, LowestReady{}, SerialExecutor{}, RegistryResolver(*e.registry));
    const ScheduleOutcome o =
        scheduler.schedule_once(e.own.data(), static_cast<std::int32_t>(c.sessions), 0, k_wait);
    if (!o.ok() || o.exit != ScheduleExit::served) {
        return false;
    }
    r.rows += o.out_num;
    return FfnWorkerBatching::gather(ctx, c.expert_num, batch) == ferry::Status::ok;
}
inline bool ffn_round(const Config& c, const FfnEnds& e, Batch& batch, Report& r) {
    return e.auto_wait ? ffn_round_with(c, e, AutoWait{}, batch, r)
                       : ffn_round_with(c, e, DoorbellPark(e.bell), batch, r);
}

inline Report run_ffn(const Config& c, const FfnEnds& e) {
    Report r;
    Digest d;
    const ferry::Result<FfnToAttention> back =
        FfnToAttention::attach(e.sessions, e.session_windows);
    Batch batch;
    std::vector<std::byte> results;
    while (back && r.rows < std::uint64_t{c.sessions} * c.steps) {
        if (!ffn_round(c, e, batch, r) || (e.consumed && !e.consumed())) {
            ++r.errors;
            break;
        }
        results.resize(batch.actual_token_num() * c.result_size);
        for (std::size_t i = 0; i < batch.actual_token_num(); ++i) {
            const GatheredToken& row = batch.rows[i];
            d.add_value(row);
            d.add(batch.row_data(i));
            make_result(results.data() + i * c.result_size, c.result_size, batch.row_data(i),
                        row.expert_id * static_cast<std::int32_t>(e.ranks) +
                            static_cast<std::int32_t>(e.rank),
                        row.expert_offset);
        }
        r.errors += back->send(batch, results) == ferry::Status::ok ? 0 : 1;
    }
    r.errors += back ? 0 : 1;
    r.digest = d.value;
    return r;
}

// ---- an attention role: session s ----
struct AttentionEnds {
    std::span<std::byte> own; // this session's window data area, here
    Doorbell bell;            // its doorbell (FfnToAttention rings it)
    ScheduleContextView ffn;  // the FFN context, mapped here
    Window ffn_window;
    bool auto_wait = false; // wait with AutoWait instead of parking on `bell` (examples/net)
    std::function<void(std::uint32_t)> sent = nullptr; // when set, runs after each step's send
};

// Waits for step's results and checks every non-masked slot against the expert's answer; how
// the wait ended.
inline ScheduleExit receive_step(const Config& c, const AttentionEnds& e, std::uint32_t s,
                                 std::uint32_t step, Digest& d, Report& r) {
    const ScheduleOutcome o =
        e.auto_wait ? AttentionWorkerScheduler<AutoWait>{}.schedule_once(e.own.data(), k_wait)
                    : AttentionWorkerScheduler<DoorbellPark>{DoorbellPark(e.bell)}.schedule_once(
                          e.own.data(), k_wait);
    const std::uint32_t mb = step % c.micro_batches;
    if (!o.ok() || o.exit != ScheduleExit::served) {
        ++r.errors;
        return o.ok() ? o.exit : ScheduleExit::timed_out;
    }
    const AttentionLayout l = attention_layout(c);
    std::vector<std::byte> token(c.token_size), expected(c.result_size);
    for (std::uint32_t t = 0; t < c.batch_size; ++t) {
        make_token(token.data(), token.size(), s, step, t);
        for (std::uint32_t k = 0; k < c.experts_per_token; ++k) {
            const std::int32_t expert = expert_for(c, s, step, t, k);
            if (is_masked_expert(expert)) {
                continue;
            }
            const std::size_t index =
                (std::size_t{mb} * c.batch_size + t) * c.experts_per_token + k;
            const std::span<const std::byte> got(e.own.data() + l.data + index * c.result_size,
                                                 c.result_size);
            make_result(expected.data(), expected.size(), token, expert,
                        static_cast<std::int32_t>(k));
            r.errors += std::memcmp(got.data(), expected.data(), expected.size()) == 0 ? 0 : 1;
            d.add(got);
            ++r.rows;
        }
    }
    return ScheduleExit::served;
}

inline Report run_attention(const Config& c, const AttentionEnds& e, std::uint32_t s) {
    Report r;
    Digest d;
    const ferry::Result<AttentionToFfn> sender = AttentionToFfn::attach(e.ffn, e.ffn_window);
    if (!sender) {
        r.errors = 1;
        return r;
    }
    const AttentionLayout l = attention_layout(c);
    const AttentionFlagTable own(e.own.data() + l.flags, c.geometry());
    std::vector<std::int32_t> ids(std::size_t{c.batch_size} * c.experts_per_token);
    std::vector<std::byte> tokens(std::size_t{c.batch_size} * c.token_size);
    bool going = true; // until a wait or a send fails: then the run ends (r.errors says so)
    for (std::uint32_t step = 0; going && step < c.steps; ++step) {
        if (step >= c.micro_batches) {
            going = receive_step(c, e, s, step - c.micro_batches, d, r) == ScheduleExit::served;
            if (!going) {
                break;
            }
        }
        for (std::uint32_t t = 0; t < c.batch_size; ++t) {
            make_token(tokens.data() + std::size_t{t} * c.token_size, c.token_size, s, step, t);
            for (std::uint32_t k = 0; k < c.experts_per_token; ++k) {
                ids[std::size_t{t} * c.experts_per_token + k] = expert_for(c, s, step, t, k);
            }
        }
        going = sender->send(s, step % c.micro_batches, static_cast<std::int32_t>(step), ids,
                             tokens, k_wait, &own) == ferry::Status::ok;
        r.errors += going ? 0 : 1;
        if (going && e.sent) {
            e.sent(step);
        }
    }
    for (std::uint32_t step = c.steps > c.micro_batches ? c.steps - c.micro_batches : 0;
         going && step < c.steps; ++step) {
        going = receive_step(c, e, s, step, d, r) == ScheduleExit::served;
    }
    r.digest = d.value;
    return r;
}

// ---- the in-process computation: the roles as threads over LocalWindows on private memory ----

// Zeroed, 64-byte aligned private memory (the layouts' sizes are multiples of 64).
class Arena {
public:
    explicit Arena(std::size_t n)
        : memory_(static_cast<std::byte*>(std::aligned_alloc(64, n)), &std::free), size_(n) {
        if (memory_ == nullptr) {
            throw std::bad_alloc();
        }
        std::memset(memory_.get(), 0, n);
    }
    [[nodiscard]] std::span<std::byte> bytes() const { return {memory_.get(), size_}; }

private:
    std::unique_ptr<std::byte, decltype(&std::free)> memory_;
    std::size_t size_;
};

struct Reports {
    Report ffn;
    std::vector<Report> sessions;
};

inline Reports run_in_process(const Config& c) {
    const Arena ffn_memory(ffn_layout(c).total);
    const std::span<std::byte> ffn = ffn_memory.bytes();
    init_ffn(ffn, reinterpret_cast<std::uintptr_t>(ffn.data()), c);
    const LocalWindow ffn_window(ffn);
    ferry::AllocationRegistry registry;
    Reports out;
    out.sessions.resize(c.sessions);
    if (registry.insert({reinterpret_cast<std::uintptr_t>(ffn.data()), ffn.size(), ffn.size(), 0,
                         ferry::AllocationKind::device}) != ferry::Status::ok) {
        out.ffn.errors = 1;
        return out;
    }
    std::vector<Arena> att_memory;
    std::vector<std::unique_ptr<LocalWindow>> att_windows;
    std::vector<ScheduleContextView> views;
    std::vector<Window> windows;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        const std::span<std::byte> bytes =
            att_memory.emplace_back(attention_layout(c).total).bytes();
        init_attention(bytes, reinterpret_cast<std::uintptr_t>(bytes.data()), c);
        att_windows.push_back(std::make_unique<LocalWindow>(bytes));
        views.emplace_back(bytes.data());
        windows.push_back(att_windows.back()->window());
    }
    std::thread server([&] {
        out.ffn = run_ffn(c, {ffn, ffn_window.doorbell(), &registry, views, windows});
    });
    std::vector<std::thread> clients;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        clients.emplace_back([&, s] {
            const AttentionEnds ends{att_memory[s].bytes(), att_windows[s]->doorbell(),
                                     ScheduleContextView(ffn.data()), ffn_window.window()};
            out.sessions[s] = run_attention(c, ends, s);
        });
    }
    for (std::thread& t : clients) {
        t.join();
    }
    server.join();
    return out;
}

// ---- the processes: windows PREFIX-ffn and PREFIX-att<s>; lines on stdout ----
// Both print "ready" once their own window exists, then "report DIGEST ERRORS ROWS"; an ipc
// error goes to stderr with exit status 2, a run that ended early (a peer died or stopped it,
// afd_ending.hpp) a line naming the lost peer with exit status 4. The FFN opens the attention
// windows when its stdin reaches EOF (the parent closes it once every attention process is
// ready). Both wait with AutoWait. With AFD_PROGRESS set in the environment, each also prints
// "step N" once step N is sent (attention) or served (FFN): what tools/afd_kill.py waits for.
// With AFD_HOLD_AT=K too, the role stops after "step K" until it is killed, so that the kill
// lands there, with work left that the other roles need (and not after a run that its progress
// lines, read late, had already finished).

inline void say(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}
inline bool progress_wanted() {
    return std::getenv("AFD_PROGRESS") != nullptr;
}
inline void say_step(std::uint32_t step) {
    say("step " + std::to_string(step));
    static const char* const hold = std::getenv("AFD_HOLD_AT");
    if (hold != nullptr && std::to_string(step) == hold) {
        for (;;) {
            ::pause(); // until the kill
        }
    }
}
inline int ipc_failure(const ferry::ipc::Error& error) {
    std::fprintf(stderr, "afd process: %s\n", error.message.c_str());
    return 2;
}
inline std::string format_report(const Report& r) {
    return "report " + std::to_string(r.digest) + " " + std::to_string(r.errors) + " " +
           std::to_string(r.rows);
}
inline Report parse_report(const std::string& line) {
    Report r{0, 1, 0};
    unsigned long long d = 0, e = 0, n = 0;
    if (std::sscanf(line.c_str(), "report %llu %llu %llu", &d, &e, &n) == 3) {
        r = {d, e, n};
    }
    return r;
}

// The FFN window's data area: the FFN's layout, then the roster (afd_ending.hpp).
[[nodiscard]] inline std::size_t ffn_window_bytes(const Config& c) {
    return ffn_layout(c).total + sizeof(Roster);
}

inline int ffn_process(const std::string& prefix, const Config& c) {
    if (c.sessions > k_roster_sessions) {
        return 3;
    }
    ferry::AllocationRegistry registry; // outlives the window's registration in it
    auto own = ferry::ipc::SharedWindow::create(prefix + "-ffn", ffn_window_bytes(c));
    if (!own) {
        return ipc_failure(own.error());
    }
    init_ffn(own->data(), own->owner_base(), c);
    const RosterView roster(own->data(), ffn_layout(c).total);
    roster.enlist(-1);
    if (own->register_in(registry) != ferry::Status::ok) {
        return 2;
    }
    say("ready");
    char byte = 0;
    while (::read(STDIN_FILENO, &byte, 1) > 0) { // until EOF: every attention window exists
    }
    std::vector<ferry::ipc::SharedWindow> sessions;
    std::vector<ScheduleContextView> views;
    std::vector<Window> windows;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        auto peer = ferry::ipc::SharedWindow::open(prefix + "-att" + std::to_string(s));
        if (!peer) {
            return ipc_failure(peer.error());
        }
        views.emplace_back(peer->data().data());
        windows.push_back(peer->window());
        sessions.push_back(std::move(peer.value()));
    }
    FfnEnds ends{own->data(), own->doorbell(), &registry, views, windows};
    ends.auto_wait = true;
    if (progress_wanted()) {
        ends.consumed = [round = 0U]() mutable {
            say_step(round++);
            return true;
        };
    }
    const Report r = run_ffn(c, ends);
    say(format_report(r));
    std::vector<const ferry::ipc::SharedWindow*> watched{&*own};
    for (const auto& w : sessions) {
        watched.push_back(&w);
    }
    views.emplace_back(own->data().data());
    windows.push_back(own->window());
    return end_run("ffn", r.errors == 0, roster, {watched, views, windows});
}

inline int attention_process(const std::string& prefix, std::uint32_t s, const Config& c) {
    auto own = ferry::ipc::SharedWindow::create(prefix + "-att" + std::to_string(s),
                                                attention_layout(c).total);
    if (!own) {
        return ipc_failure(own.error());
    }
    init_attention(own->data(), own->owner_base(), c);
    say("ready");
    auto ffn = ferry::ipc::SharedWindow::open(prefix + "-ffn");
    if (!ffn) {
        return ipc_failure(ffn.error());
    }
    if (s >= k_roster_sessions || ffn->data().size() != ffn_window_bytes(c)) {
        std::fprintf(stderr, "afd process: %s does not fit this run\n", ffn->name().c_str());
        return 2;
    }
    const RosterView roster(ffn->data(), ffn_layout(c).total);
    roster.enlist(static_cast<int>(s));
    AttentionEnds ends{own->data(), own->doorbell(), ScheduleContextView(ffn->data().data()),
                       ffn->window()};
    ends.auto_wait = true;
    if (progress_wanted()) {
        ends.sent = [](std::uint32_t step) { say_step(step); };
    }
    const Report r = run_attention(c, ends, s);
    say(format_report(r));
    const ferry::ipc::SharedWindow* watched[] = {&*own, &*ffn};
    const ScheduleContextView contexts[] = {ends.ffn, ScheduleContextView(own->data().data())};
    const Window windows[] = {ffn->window(), own->window()};
    return end_run("attention " + std::to_string(s), r.errors == 0, roster,
                   {watched, contexts, windows});
}

} // namespace afd_ipc
