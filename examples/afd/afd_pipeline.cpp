// afd_pipeline: one FFN rank serving A attention sessions, end to end on host threads.
//
//   A attention threads: AttentionToFfn::send (back-pressure, payload, ids, flag = 1)
//                        AttentionWorkerScheduler::schedule_once (wait for the results)
//   1 FFN thread:        GroupSyncScheduler::schedule_once -> FfnWorkerBatching::gather ->
//                        "expert GEMM" -> FfnToAttention::send (results, flags = 1)
//
// The senders write through LocalWindows and ring their doorbells; the FFN scheduler and the
// attention waiters park on those doorbells (DoorbellPark) instead of polling with backoff.
// tests/ipc/afd_window.cpp runs the same exchange between processes over SharedWindows.
//
// It runs many iterations in all-sync mode (sync_group_size = A), grouped mode (A / 2) and
// grouped round-robin, and proves with a tally and checksums that every non-masked token slot
// reached its expert exactly once and came back with that expert's answer.
// Usage: afd_pipeline [steps-per-session]   (exit status 0 when every check passes)

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <ferry/afd.hpp>
#include <thread>
#include <vector>

using namespace ferry::afd;
using namespace std::chrono_literals;

namespace {

struct Config {
    std::uint32_t sessions = 4, micro_batches = 3, batch_size = 4, experts_per_token = 3;
    std::uint32_t expert_num = 8, token_size = 512, result_size = 512, steps = 60;
    std::uint32_t sync_group_size = 4;
    [[nodiscard]] Geometry geometry() const {
        return {sessions, micro_batches, batch_size, experts_per_token};
    }
};

constexpr auto k_wait = std::chrono::seconds(20); // a stuck pipeline fails instead of hanging

std::uint64_t mix(std::uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}
std::uint64_t token_hash(std::uint32_t s, std::uint32_t step, std::uint32_t t) {
    return mix((std::uint64_t{s} << 40) ^ (std::uint64_t{step} << 12) ^ t);
}
// K distinct experts per token; one token in five has its last slot masked (an inactive slot).
std::int32_t expert_for(const Config& c, std::uint32_t s, std::uint32_t step, std::uint32_t t,
                        std::uint32_t k) {
    const std::uint64_t h = token_hash(s, step, t);
    if (k + 1 == c.experts_per_token && h % 5 == 0) {
        return k_masked_expert_floor + static_cast<std::int32_t>(k);
    }
    return static_cast<std::int32_t>((h + k) % c.expert_num);
}
std::uint64_t slot_sum(std::uint32_t s, std::uint32_t step, std::uint32_t t, std::uint32_t k,
                       std::int32_t e) {
    return mix(token_hash(s, step, t) + 0x9e37 * k + static_cast<std::uint64_t>(e));
}

void put_u32(std::byte* p, std::uint32_t v) {
    std::memcpy(p, &v, 4);
}
std::uint32_t get_u32(const std::byte* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// A token's payload: {session, step, token, magic}, then a fill byte derived from them.
void make_token(std::byte* p, std::size_t size, std::uint32_t s, std::uint32_t step,
                std::uint32_t t) {
    put_u32(p, s);
    put_u32(p + 4, step);
    put_u32(p + 8, t);
    put_u32(p + 12, 0xAFD0AFD0u);
    std::memset(p + 16, static_cast<int>(token_hash(s, step, t) & 0xFF), size - 16);
}
// The expert's answer: the token's header, the expert id and the slot.
void make_result(std::byte* out, std::size_t size, const std::byte* token, std::int32_t expert,
                 std::int32_t k) {
    std::memcpy(out, token, 16);
    put_u32(out + 16, static_cast<std::uint32_t>(expert));
    put_u32(out + 20, static_cast<std::uint32_t>(k));
    std::memset(out + 24, static_cast<int>((static_cast<std::uint32_t>(expert) * 7u + 1u) & 0xFF),
                size - 24);
}

std::uintptr_t addr(const void* p) {
    return reinterpret_cast<std::uintptr_t>(p);
}

struct FfnSide {
    LocalWindow window; // this process's memory; the attention senders ring its doorbell
    ContextImage ctx;
    std::vector<std::int32_t> token_info;
    std::vector<std::byte> token_data;
    std::vector<std::int32_t> layer_ids, session_ids, micro_batch_ids, expert_ids;

    explicit FfnSide(const Config& c) {
        const Geometry g = c.geometry();
        token_info.resize(*ffn_token_info_size(g) / 4);
        token_data.resize(*ffn_token_data_size(g, c.token_size));
        layer_ids.resize(c.sessions);
        session_ids.resize(c.sessions);
        micro_batch_ids.resize(c.sessions);
        expert_ids.resize(*expert_ids_buffer_size(g) / 4);
        ScheduleContext s{};
        s.common = {c.sessions,          c.micro_batches,     c.batch_size,
                    c.experts_per_token, c.expert_num,        c.token_size,
                    c.result_size,       k_schedule_mode_ffn, {}};
        s.control.run_flag = 1;
        s.ffn.token_info_buf = addr(token_info.data());
        s.ffn.token_info_buf_size = 4 * token_info.size();
        s.ffn.token_data_buf = addr(token_data.data());
        s.ffn.token_data_buf_size = token_data.size();
        s.ffn.layer_ids_buf = addr(layer_ids.data());
        s.ffn.layer_ids_buf_size = 4 * layer_ids.size();
        s.ffn.session_ids_buf = addr(session_ids.data());
        s.ffn.session_ids_buf_size = 4 * session_ids.size();
        s.ffn.micro_batch_ids_buf = addr(micro_batch_ids.data());
        s.ffn.micro_batch_ids_buf_size = 4 * micro_batch_ids.size();
        s.ffn.expert_ids_buf = addr(expert_ids.data());
        s.ffn.expert_ids_buf_size = 4 * expert_ids.size();
        ctx.view().store(s);
        FfnDescriptorTable(reinterpret_cast<std::byte*>(token_info.data()), g).initialize();
    }
};

struct AttentionSide {
    LocalWindow window; // FfnToAttention rings its doorbell
    ContextImage ctx;
    std::vector<std::int32_t> flags;
    std::vector<std::byte> results;

    explicit AttentionSide(const Config& c) {
        const Geometry g = c.geometry();
        flags.assign(*attention_token_info_size(g) / 4, 0);
        results.resize(*attention_token_data_size(g, c.result_size));
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
        s.attention.token_info_buf = addr(flags.data());
        s.attention.token_info_buf_size = 4 * flags.size();
        s.attention.token_data_buf = addr(results.data());
        s.attention.token_data_buf_size = results.size();
        s.attention.micro_batch_id = c.micro_batches - 1; // as torch_npu: first wait on mb 0
        ctx.view().store(s);
    }
    [[nodiscard]] AttentionFlagTable table(const Config& c) {
        return {reinterpret_cast<std::byte*>(flags.data()), c.geometry()};
    }
};

struct SessionReport {
    std::uint64_t sent_sum = 0, returned_sum = 0, slots_sent = 0, slots_returned = 0, errors = 0;
};

// Waits for step's results (micro batch step % M) and checks every non-masked slot's answer.
void receive_step(const Config& c, AttentionSide& side,
                  AttentionWorkerScheduler<DoorbellPark>& waiter, std::uint32_t s,
                  std::uint32_t step, SessionReport& r) {
    const ScheduleOutcome o = waiter.schedule_once(side.ctx.bytes.data(), k_wait);
    const std::uint32_t mb = step % c.micro_batches;
    if (!o.ok() || o.exit != ScheduleExit::served ||
        side.ctx.view().get(fields::attention::micro_batch_id) != mb) {
        ++r.errors;
        return;
    }
    for (std::uint32_t t = 0; t < c.batch_size; ++t) {
        for (std::uint32_t k = 0; k < c.experts_per_token; ++k) {
            const std::int32_t e = expert_for(c, s, step, t, k);
            if (is_masked_expert(e)) {
                continue;
            }
            const std::size_t index =
                (std::size_t{mb} * c.batch_size + t) * c.experts_per_token + k;
            const std::byte* res = side.results.data() + index * c.result_size;
            const bool right =
                get_u32(res) == s && get_u32(res + 4) == step && get_u32(res + 8) == t &&
                get_u32(res + 16) == static_cast<std::uint32_t>(e) && get_u32(res + 20) == k;
            r.errors += right ? 0 : 1;
            r.returned_sum += right ? slot_sum(s, step, t, k, e) : 0;
            r.slots_returned += right ? 1 : 0;
        }
    }
}

void attention_session(const Config& c, FfnSide& ffn, AttentionSide& side, std::uint32_t s,
                       SessionReport& r) {
    const ferry::Result<AttentionToFfn> sender =
        AttentionToFfn::attach(ffn.ctx.view(), ffn.window.window());
    if (!sender) {
        ++r.errors;
        return;
    }
    AttentionWorkerScheduler<DoorbellPark> waiter{DoorbellPark(side.window.doorbell())};
    const AttentionFlagTable own = side.table(c);
    std::vector<std::int32_t> ids(std::size_t{c.batch_size} * c.experts_per_token);
    std::vector<std::byte> tokens(std::size_t{c.batch_size} * c.token_size);
    for (std::uint32_t step = 0; step < c.steps; ++step) {
        if (step >= c.micro_batches) {
            receive_step(c, side, waiter, s, step - c.micro_batches, r);
        }
        for (std::uint32_t t = 0; t < c.batch_size; ++t) {
            make_token(tokens.data() + std::size_t{t} * c.token_size, c.token_size, s, step, t);
            for (std::uint32_t k = 0; k < c.experts_per_token; ++k) {
                const std::int32_t e = expert_for(c, s, step, t, k);
                ids[std::size_t{t} * c.experts_per_token + k] = e;
                r.sent_sum += is_masked_expert(e) ? 0 : slot_sum(s, step, t, k, e);
                r.slots_sent += is_masked_expert(e) ? 0 : 1;
            }
        }
        const auto layer = static_cast<std::int32_t>(step);
        if (sender->send(s, step % c.micro_batches, layer, ids, tokens, k_wait, &own) !=
            ferry::Status::ok) {
            ++r.errors;
            return;
        }
    }
    for (std::uint32_t step = c.steps > c.micro_batches ? c.steps - c.micro_batches : 0;
         step < c.steps; ++step) {
        receive_step(c, side, waiter, s, step, r);
    }
}

struct FfnReport {
    std::uint64_t rows = 0, calls = 0, slot_sum = 0, errors = 0;
    std::vector<std::uint8_t> tally; // [session][step][token][k]: times the slot reached its expert
};

// Checks one gathered row against the payload it carries, and counts it.
void account(const Config& c, const Batch& batch, std::size_t i, FfnReport& r) {
    const GatheredToken& row = batch.rows[i];
    const std::byte* p = batch.row_data(i).data();
    const std::uint32_t s = get_u32(p), step = get_u32(p + 4), t = get_u32(p + 8);
    const auto k = static_cast<std::uint32_t>(row.expert_offset);
    const bool right = get_u32(p + 12) == 0xAFD0AFD0u && s < c.sessions && step < c.steps &&
                       row.session == static_cast<std::int32_t>(s) &&
                       row.micro_batch == static_cast<std::int32_t>(step % c.micro_batches) &&
                       row.token == static_cast<std::int32_t>(t) &&
                       row.expert_id == expert_for(c, s, step, t, k);
    if (!right) {
        ++r.errors;
        return;
    }
    ++r.tally[((std::size_t{s} * c.steps + step) * c.batch_size + t) * c.experts_per_token + k];
    r.slot_sum += slot_sum(s, step, t, k, row.expert_id);
}

template <SelectionPolicy Selection>
void ffn_worker(const Config& c, FfnSide& ffn, std::deque<AttentionSide>& sessions, FfnReport& r) {
    std::vector<ScheduleContextView> views;
    std::vector<Window> windows;
    for (AttentionSide& a : sessions) {
        views.push_back(a.ctx.view());
        windows.push_back(a.window.window());
    }
    const ferry::Result<FfnToAttention> back = FfnToAttention::attach(views, windows);
    GroupSyncScheduler<DoorbellPark, Selection> scheduler{DoorbellPark(ffn.window.doorbell())};
    Batch batch;
    std::vector<std::byte> results;
    r.tally.assign(std::size_t{c.sessions} * c.steps * c.batch_size * c.experts_per_token, 0);
    while (back && r.rows < std::uint64_t{c.sessions} * c.steps) {
        const ScheduleOutcome o =
            scheduler.schedule_once(ffn.ctx.bytes.data(), static_cast<int>(c.sync_group_size), 0);
        if (!o.ok() || o.exit != ScheduleExit::served) {
            r.errors += o.ok() ? 0 : 1;
            return;
        }
        ++r.calls;
        r.rows += o.out_num;
        for (std::uint32_t a = 0; a < o.out_num;
             ++a) { // layer = step, so layer % M is the micro batch
            r.errors += static_cast<std::uint32_t>(ffn.layer_ids[a]) % c.micro_batches ==
                                static_cast<std::uint32_t>(ffn.micro_batch_ids[a])
                            ? 0
                            : 1;
        }
        if (FfnWorkerBatching::gather(ffn.ctx.view(), c.expert_num, batch) != ferry::Status::ok) {
            ++r.errors;
            return;
        }
        results.resize(batch.actual_token_num() * c.result_size);
        for (std::size_t i = 0; i < batch.actual_token_num(); ++i) {
            account(c, batch, i, r);
            make_result(results.data() + i * c.result_size, c.result_size, batch.row_data(i).data(),
                        batch.rows[i].expert_id, batch.rows[i].expert_offset);
        }
        r.errors += back->send(batch, results) == ferry::Status::ok ? 0 : 1;
    }
    r.errors += back ? 0 : 1;
}

template <SelectionPolicy Selection>
bool run(const char* name, const Config& c) {
    FfnSide ffn(c);
    std::deque<AttentionSide> sessions; // not movable: waiters hold their doorbells
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        sessions.emplace_back(c);
    }
    std::vector<SessionReport> reports(c.sessions);
    FfnReport ffn_report;
    std::thread ffn_thread([&] { ffn_worker<Selection>(c, ffn, sessions, ffn_report); });
    std::vector<std::thread> attention;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        attention.emplace_back([&, s] { attention_session(c, ffn, sessions[s], s, reports[s]); });
    }
    for (std::thread& t : attention) {
        t.join();
    }
    ffn.ctx.view().set_run_flag(0); // releases the FFN thread if anything went wrong (bounded park)
    ffn_thread.join();

    SessionReport total;
    for (const SessionReport& r : reports) {
        total.sent_sum += r.sent_sum;
        total.returned_sum += r.returned_sum;
        total.slots_sent += r.slots_sent;
        total.slots_returned += r.slots_returned;
        total.errors += r.errors;
    }
    std::uint64_t exactly_once = 0;
    for (std::uint8_t n : ffn_report.tally) {
        exactly_once += n == 1 ? 1 : 0;
    }
    const bool ok = total.errors == 0 && ffn_report.errors == 0 &&
                    exactly_once == total.slots_sent &&
                    ffn_report.rows == std::uint64_t{c.sessions} * c.steps &&
                    total.sent_sum == ffn_report.slot_sum && total.sent_sum == total.returned_sum &&
                    total.slots_returned == total.slots_sent;
    std::printf(
        "%-22s sgs=%u: %llu rows in %llu calls, %llu slots exactly once, checksum sent %016llx "
        "ffn %016llx returned %016llx, errors %llu -> %s\n",
        name, c.sync_group_size, static_cast<unsigned long long>(ffn_report.rows),
        static_cast<unsigned long long>(ffn_report.calls),
        static_cast<unsigned long long>(exactly_once),
        static_cast<unsigned long long>(total.sent_sum),
        static_cast<unsigned long long>(ffn_report.slot_sum),
        static_cast<unsigned long long>(total.returned_sum),
        static_cast<unsigned long long>(total.errors + ffn_report.errors), ok ? "OK" : "FAILED");
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    Config c;
    if (argc > 1) {
        c.steps = static_cast<std::uint32_t>(std::strtoul(argv[1], nullptr, 10));
        if (c.steps == 0) {
            std::fprintf(stderr, "usage: %s [steps-per-session > 0]\n", argv[0]);
            return 2;
        }
    }
    bool ok = true;
    c.sync_group_size = c.sessions; // one group: all-sync, strict micro-batch order
    ok = run<LowestReady>("all-sync", c) && ok;
    c.sync_group_size = c.sessions / 2; // two groups, each emitted when ready
    ok = run<LowestReady>("grouped lowest-ready", c) && ok;
    ok = run<RoundRobin>("grouped round-robin", c) && ok;
    c.sync_group_size = 1; // every session its own group
    ok = run<RoundRobin>("per-session round-robin", c) && ok;
    return ok ? EXIT_SUCCESS : EXIT_FAILURE;
}
