#pragma once
// The Attention/FFN roles of examples/net/afd_node.cpp with F FFN ranks, built on the roles of
// examples/ipc/afd_roles.hpp and written against Windows, so that the same code runs as threads
// over LocalWindows (run_ranks_in_process, the reference) and as processes on several nodes
// over ferry::net windows.
//
// Expert split: global expert e lives on FFN rank e % F as local expert e / F. An attention
// session sends every micro batch to every rank (the all-sync scheduler waits for each
// session's descriptor), with the ids of other ranks' experts masked in that rank's copy; rank r
// answers local expert l as global expert l·F + r, so the results are those of one FFN.
//
// Credits: a remote descriptor cannot be read back, so AttentionToFfn cannot wait for the FFN
// to consume it (docs/afd.md, Remote windows). Each FFN rank therefore publishes, per session
// and micro batch, how many of its descriptors it consumed into an int32 credit table at the end
// of the session's window ([F][M], after the attention layout), and rings; a session sends a
// micro batch's next use to the ranks only once every rank's credit for it has reached the
// number of earlier uses. The in-process reference uses the same credits.

#include "afd_roles.hpp"

#include <ferry/afd/detail/wait_loop.hpp>
#include <vector>

namespace afd_ipc {

// The credit table after the attention layout; the window's whole size.
[[nodiscard]] inline std::uint64_t credits_offset(const Config& c) {
    return attention_layout(c).total;
}
[[nodiscard]] inline std::uint64_t attention_window_size(const Config& c, std::uint32_t ranks) {
    return credits_offset(c) + align64(4ull * ranks * c.micro_batches);
}
// Rank r's configuration: its share of the experts.
[[nodiscard]] inline Config rank_config(Config c, std::uint32_t rank, std::uint32_t ranks) {
    c.expert_num = (c.expert_num + ranks - 1 - rank) / ranks;
    return c;
}
// Global expert ids as rank r sees them: its own as local ids, every other one masked.
inline void ids_for_rank(std::span<const std::int32_t> global, std::uint32_t rank,
                         std::uint32_t ranks, std::span<std::int32_t> out) {
    const auto f = static_cast<std::int32_t>(ranks);
    for (std::size_t i = 0; i < global.size(); ++i) {
        const std::int32_t e = global[i];
        out[i] = !is_masked_expert(e) && e % f == static_cast<std::int32_t>(rank)
                     ? e / f
                     : k_masked_expert_floor;
    }
}

// A role told to hold (tests of peer loss) waits until its puts have landed, says so and waits
// for its stdin to close, so that a test kills it at a known point while its peers wait on it.
// (Killed while the peer still applies its puts, UCX 1.13 over tcp may abort the peer: its
// put handler cannot acknowledge them to a dead endpoint.)
inline void hold(std::span<const Window> written) {
    for (const Window& w : written) {
        (void)w.flush(k_wait);
    }
    say("holding");
    char byte = 0;
    while (::read(STDIN_FILENO, &byte, 1) > 0) {
    }
}

// ---- FFN rank r: run_ffn, plus the credits it publishes once a round's descriptors are copied
class CreditWriter {
public:
    CreditWriter(const Config& c, std::uint32_t rank, std::span<const std::byte> own,
                 std::span<const Window> sessions)
        : c_(c), rank_(rank), own_(own), sessions_(sessions),
          counts_(std::size_t{c.sessions} * c.micro_batches, 0) {}

    // After a scheduler round: session_ids / micro_batch_ids [out_num] name what it consumed.
    [[nodiscard]] bool operator()() {
        const FfnLayout l = ffn_layout(c_);
        const ConstScheduleContextView ctx(own_.data());
        const std::uint32_t n = ctx.get(fields::ffn::out_num);
        const auto* session = reinterpret_cast<const std::int32_t*>(own_.data() + l.session_ids);
        const auto* mb = reinterpret_cast<const std::int32_t*>(own_.data() + l.micro_batch_ids);
        std::vector<bool> touched(sessions_.size(), false);
        for (std::uint32_t i = 0; i < n; ++i) {
            const auto s = static_cast<std::size_t>(session[i]);
            const auto m = static_cast<std::size_t>(mb[i]);
            if (s >= sessions_.size() || m >= c_.micro_batches) {
                return false;
            }
            const std::int32_t count = ++counts_[s * c_.micro_batches + m];
            const std::uint64_t at = sessions_[s].owner_base() + credits_offset(c_) +
                                     4 * (std::uint64_t{rank_} * c_.micro_batches + m);
            if (sessions_[s].publish(at, count) != ferry::Status::ok) {
                return false;
            }
            touched[s] = true;
        }
        for (std::size_t s = 0; s < sessions_.size(); ++s) {
            if (touched[s] && sessions_[s].ring() != ferry::Status::ok) {
                return false;
            }
        }
        return true;
    }

private:
    Config c_;
    std::uint32_t rank_;
    std::span<const std::byte> own_;
    std::span<const Window> sessions_;
    std::vector<std::int32_t> counts_;
};

// ---- attention session s with F FFN ranks ----
struct RankedEnds {
    AttentionEnds own;                        // own memory and doorbell (its ffn fields unused)
    std::span<const ScheduleContextView> ffn; // each rank's context (a copy for a remote rank)
    std::span<const Window> ffn_windows;
};

struct AttentionResult {
    Report report;
    ScheduleExit exit = ScheduleExit::served; // how the first failed wait ended
};

// Waits until every rank consumed the earlier uses of micro batch `mb` (credits).
inline ScheduleExit wait_credits(const Config& c, const RankedEnds& e, std::uint32_t mb,
                                 std::int32_t uses) {
    const ScheduleContextView ctx(e.own.own.data());
    const auto ready = [&] {
        for (std::size_t r = 0; r < e.ffn.size(); ++r) {
            std::byte* p = e.own.own.data() + credits_offset(c) + 4 * (r * c.micro_batches + mb);
            if (std::atomic_ref(*reinterpret_cast<std::int32_t*>(p))
                    .load(std::memory_order_acquire) < uses) {
                return false;
            }
        }
        return true;
    };
    return e.own.auto_wait ? detail::wait_until_ready(ctx, AutoWait{}, k_wait, ready)
                           : detail::wait_until_ready(ctx, DoorbellPark(e.own.bell), k_wait, ready);
}

inline ScheduleExit send_step(const Config& c, const RankedEnds& e,
                              std::span<const AttentionToFfn> senders, std::uint32_t s,
                              std::uint32_t step, std::span<const std::byte> tokens,
                              std::span<const std::int32_t> ids, Report& r) {
    const std::uint32_t mb = step % c.micro_batches;
    if (const ScheduleExit x =
            wait_credits(c, e, mb, static_cast<std::int32_t>(step / c.micro_batches));
        x != ScheduleExit::served) {
        ++r.errors;
        return x;
    }
    std::vector<std::int32_t> local(ids.size());
    for (std::size_t f = 0; f < senders.size(); ++f) {
        ids_for_rank(ids, static_cast<std::uint32_t>(f), static_cast<std::uint32_t>(senders.size()),
                     local);
        const ferry::Status st = senders[f].send(s, mb, static_cast<std::int32_t>(step), local,
                                                 tokens, k_wait, nullptr, AutoWait{});
        if (st != ferry::Status::ok) {
            ++r.errors;
            return st == ferry::Status::peer_lost ? ScheduleExit::peer_lost
                                                  : ScheduleExit::timed_out;
        }
    }
    // No rank answers a masked slot: its flag is set here, as AttentionToFFN's SetFlagInAttn does.
    const AttentionFlagTable own(e.own.own.data() + attention_layout(c).flags, c.geometry());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (is_masked_expert(ids[i])) {
            own.flag(mb, i).store(k_valid_flag, std::memory_order_release);
        }
    }
    return ScheduleExit::served;
}

// What run_attention does, for F ranks; stops at the first failed wait or send.
inline AttentionResult run_attention_ranks(const Config& c, const RankedEnds& e, std::uint32_t s,
                                           std::uint32_t hold_after = UINT32_MAX) {
    AttentionResult out;
    Report& r = out.report;
    Digest d;
    std::vector<AttentionToFfn> senders;
    for (std::size_t f = 0; f < e.ffn.size(); ++f) {
        const ferry::Result<AttentionToFfn> sender =
            AttentionToFfn::attach(e.ffn[f], e.ffn_windows[f]);
        if (!sender) {
            r.errors = 1;
            return out;
        }
        senders.push_back(*sender);
    }
    std::vector<std::int32_t> ids(std::size_t{c.batch_size} * c.experts_per_token);
    std::vector<std::byte> tokens(std::size_t{c.batch_size} * c.token_size);
    for (std::uint32_t step = 0; step < c.steps && out.exit == ScheduleExit::served; ++step) {
        if (step == hold_after) {
            hold(e.ffn_windows);
        }
        if (step >= c.micro_batches) {
            out.exit = receive_step(c, e.own, s, step - c.micro_batches, d, r);
            if (out.exit != ScheduleExit::served) {
                break;
            }
        }
        for (std::uint32_t t = 0; t < c.batch_size; ++t) {
            make_token(tokens.data() + std::size_t{t} * c.token_size, c.token_size, s, step, t);
            for (std::uint32_t k = 0; k < c.experts_per_token; ++k) {
                ids[std::size_t{t} * c.experts_per_token + k] = expert_for(c, s, step, t, k);
            }
        }
        out.exit = send_step(c, e, senders, s, step, tokens, ids, r);
    }
    for (std::uint32_t step = c.steps > c.micro_batches ? c.steps - c.micro_batches : 0;
         step < c.steps && out.exit == ScheduleExit::served; ++step) {
        out.exit = receive_step(c, e.own, s, step, d, r);
    }
    r.digest = d.value;
    return out;
}

// ---- the reference: A sessions and F FFN ranks as threads over LocalWindows ----
struct RankedReports {
    std::vector<Report> ffn;
    std::vector<Report> sessions;
};

inline RankedReports run_ranks_in_process(const Config& c, std::uint32_t ranks) {
    RankedReports out;
    out.ffn.resize(ranks);
    out.sessions.resize(c.sessions);
    std::vector<Arena> att_memory;
    std::vector<std::unique_ptr<LocalWindow>> att_windows;
    std::vector<ScheduleContextView> att_views;
    std::vector<Window> att_window_values;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        const std::span<std::byte> bytes =
            att_memory.emplace_back(attention_window_size(c, ranks)).bytes();
        init_attention(bytes, reinterpret_cast<std::uintptr_t>(bytes.data()), c);
        att_windows.push_back(std::make_unique<LocalWindow>(bytes));
        att_views.emplace_back(bytes.data());
        att_window_values.push_back(att_windows.back()->window());
    }
    std::vector<Arena> ffn_memory;
    std::vector<std::unique_ptr<LocalWindow>> ffn_windows;
    std::vector<ferry::AllocationRegistry> registries(ranks);
    std::vector<ScheduleContextView> ffn_views;
    std::vector<Window> ffn_window_values;
    for (std::uint32_t f = 0; f < ranks; ++f) {
        const Config rc = rank_config(c, f, ranks);
        const std::span<std::byte> bytes = ffn_memory.emplace_back(ffn_layout(rc).total).bytes();
        const auto base = reinterpret_cast<std::uintptr_t>(bytes.data());
        init_ffn(bytes, base, rc);
        (void)registries[f].insert(
            {base, bytes.size(), bytes.size(), 0, ferry::AllocationKind::device});
        ffn_windows.push_back(std::make_unique<LocalWindow>(bytes));
        ffn_views.emplace_back(bytes.data());
        ffn_window_values.push_back(ffn_windows.back()->window());
    }
    std::vector<std::thread> threads;
    for (std::uint32_t f = 0; f < ranks; ++f) {
        threads.emplace_back([&, f] {
            const Config rc = rank_config(c, f, ranks);
            CreditWriter credits(rc, f, ffn_memory[f].bytes(), att_window_values);
            FfnEnds e{ffn_memory[f].bytes(), ffn_windows[f]->doorbell(), &registries[f], att_views,
                      att_window_values};
            e.rank = f;
            e.ranks = ranks;
            e.consumed = std::ref(credits);
            out.ffn[f] = run_ffn(rc, e);
        });
    }
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        threads.emplace_back([&, s] {
            const RankedEnds e{{att_memory[s].bytes(), att_windows[s]->doorbell(), ffn_views[0],
                                ffn_window_values[0]},
                               ffn_views,
                               ffn_window_values};
            out.sessions[s] = run_attention_ranks(c, e, s).report;
        });
    }
    for (std::thread& t : threads) {
        t.join();
    }
    return out;
}

} // namespace afd_ipc
