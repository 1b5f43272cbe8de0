// afd_node: Attention/FFN disaggregation across nodes over ferry::net (UCX one-sided puts).
//
//   afd_node --role ffn --listen HOST:PORT --rank R --ranks F --sessions A [sizes]
//       exposes its ScheduleContext buffers (descriptors, token data, scheduler outputs), prints
//       "listening HOST:PORT" (the real port when PORT is 0), waits for the A attention nodes,
//       runs the all-sync scheduler + NORM batching (unchanged: it polls and parks on its own
//       memory) and puts every result into the session's window; prints "report D E N".
//   afd_node --role attention --connect ADDR[,ADDR...] --session S --sessions A [sizes]
//       exposes its flag table, results and credits, connects to the F FFN ranks (rank r is the
//       r-th address), puts token data and descriptors into their windows, waits for results on
//       its own memory; prints "report D E N".
//   afd_node --role reference --sessions A --ranks F [sizes]
//       the same roles as threads in one process: prints "ffn R report ..." and
//       "session S report ..." lines, what tools/afd_nodes.py compares the nodes against.
// Sizes: --steps N --micro-batches M --batch-size BS --experts-per-token K --expert-num E
//        --token-size BYTES --result-size BYTES. Tests: --hold-after N (say "holding" and wait
//        for stdin to close: after N rounds for an FFN, before step N for an attention node).
// Expert split (examples/net/afd_ranks.hpp): global expert e is local expert e / F on rank e % F.
// The job's secret comes from FERRY_NET_SECRET or FERRY_NET_SECRET_FILE. Exit status: 0 done,
// 1 wrong results, 2 bad arguments or setup, 4 a peer node was lost. docs/multi-node.md.

#include "afd_ranks.hpp"

#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <ferry/net/node.hpp>
#include <ferry/net/window.hpp>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

using namespace afd_ipc;
using ferry::Status;
namespace net = ferry::net;

constexpr net::ServiceId k_hello_service = 0xAFD0'4E11;
constexpr int k_exit_results = 1, k_exit_setup = 2, k_exit_peer_lost = 4;

struct Options {
    std::string role, listen, connect;
    std::uint32_t rank = 0, ranks = 1, session = 0, hold_after = UINT32_MAX;
    Config c;
};

// The attention node's first message to each FFN rank: who it is and the sizes it uses; the FFN
// refuses (and so disconnects) a node whose sizes differ from its own. Its last one, the same
// with magic k_bye: it has every result, so the rank may leave (a rank that left earlier would
// look lost to a session still waiting for another rank's results).
constexpr std::uint32_t k_hello = 0xAFD0'0001, k_bye = 0xAFD0'0002;
struct Hello {
    std::uint32_t magic = k_hello, session = 0, rank = 0, ranks = 0;
    std::uint32_t sessions = 0, micro_batches = 0, batch_size = 0, experts_per_token = 0;
    std::uint32_t expert_num = 0, token_size = 0, result_size = 0, steps = 0;
    friend bool operator==(const Hello&, const Hello&) = default;
};
Hello hello_of(const Options& o, std::uint32_t session, std::uint32_t rank,
               std::uint32_t magic = k_hello) {
    const Config& c = o.c;
    return {magic,        session,         rank,          o.ranks,
            c.sessions,   c.micro_batches, c.batch_size,  c.experts_per_token,
            c.expert_num, c.token_size,    c.result_size, c.steps};
}

int fail(const std::string& what, Status s = Status::ok) {
    std::fprintf(stderr, "afd_node: %s%s%s\n", what.c_str(), s == Status::ok ? "" : ": ",
                 s == Status::ok ? "" : ferry::name_of(s));
    return k_exit_setup;
}

ferry::Result<std::unique_ptr<net::Node>> start_node(const std::string& listen) {
    auto secret = net::Secret::from_environment();
    if (!secret) {
        const bool given = std::getenv("FERRY_NET_SECRET") || std::getenv("FERRY_NET_SECRET_FILE");
        std::fprintf(stderr, "afd_node: %s; every node of the job needs the same secret\n",
                     given ? "the secret (FERRY_NET_SECRET or FERRY_NET_SECRET_FILE) is empty, "
                             "over 256 bytes or an unreadable file"
                           : "FERRY_NET_SECRET is not set (nor FERRY_NET_SECRET_FILE)");
        return secret.status();
    }
    net::NodeOptions options;
    options.listen = listen;
    options.secret = std::move(*secret);
    // FERRY_NET_ONE_SIDED_RMA=1: windows by one-sided RMA, for fabrics that check remote keys.
    options.one_sided_rma = net::one_sided_rma_from_environment();
    return net::Node::start(std::move(options));
}

// ---- FFN rank ----
// The sessions' hellos and byes, from the node's progress thread.
class Roster {
public:
    explicit Roster(const Options& o) : o_(o) {}
    net::Verdict operator()(net::Delivery& d) {
        Hello h;
        if (d.header().size() != sizeof h) {
            return "afd hello: wrong size";
        }
        std::memcpy(&h, d.header().data(), sizeof h);
        if (h.session >= o_.c.sessions || !(h == hello_of(o_, h.session, o_.rank, h.magic)) ||
            (h.magic != k_hello && h.magic != k_bye)) {
            return "afd hello: sizes, rank or session differ from this FFN rank's";
        }
        const std::lock_guard lock(mutex_);
        const auto known = peers_.find(h.session);
        if (h.magic == k_hello ? known != peers_.end()
                               : known == peers_.end() || known->second != d.peer()) {
            return "afd hello: a session's second hello, or a bye from a stranger";
        }
        if (h.magic == k_hello) {
            peers_[h.session] = d.peer();
        } else {
            ++byes_;
        }
        changed_.notify_all();
        return nullptr;
    }
    // Session s's peer, for every session; empty on timeout.
    std::vector<net::PeerId> wait_hellos() {
        std::unique_lock lock(mutex_);
        if (!changed_.wait_for(lock, k_wait, [&] { return peers_.size() == o_.c.sessions; })) {
            return {};
        }
        std::vector<net::PeerId> out;
        for (const auto& [s, p] : peers_) {
            out.push_back(p);
        }
        return out;
    }
    void wait_byes() {
        std::unique_lock lock(mutex_);
        (void)changed_.wait_for(lock, k_wait, [&] { return byes_ == o_.c.sessions; });
    }

private:
    const Options& o_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::map<std::uint32_t, net::PeerId> peers_;
    std::uint32_t byes_ = 0;
};

// A peer's first exposed region, as a RemoteWindow.
ferry::Result<std::unique_ptr<net::RemoteWindow>> open_first(net::Node& node, net::PeerId peer) {
    const std::vector<net::RemoteRegion> regions = node.regions(peer);
    if (regions.empty()) {
        // A peer lost before this node opened its window (it may die while this node is still
        // setting up) is reported as lost, not as a setup error.
        const auto stats = node.peer_stats();
        const bool lost = std::ranges::any_of(
            stats, [&](const net::PeerStats& p) { return p.peer == peer && !p.alive; });
        return lost ? Status::peer_lost : Status::invalid_param;
    }
    return net::RemoteWindow::open(node, peer, regions.front().id);
}

// The peers this node writes to: a RemoteWindow over each one's first region, and this node's
// copy of its ScheduleContext (the peer's addresses), as the roles take them.
struct PeerWindows {
    std::vector<std::unique_ptr<net::RemoteWindow>> remotes;
    std::deque<ContextImage> images; // views point into it: no reallocation
    std::vector<ScheduleContextView> views;
    std::vector<Window> windows;

    // `context` lays out the peer's context at its region's base; `own` watches the peer.
    Status add(net::Node& node, net::ExposedWindow& own, net::PeerId peer,
               const std::function<ScheduleContext(std::uint64_t)>& context) {
        auto remote = open_first(node, peer);
        if (!remote) {
            return remote.status();
        }
        own.watch(peer);
        images.emplace_back().view().store(context((*remote)->region().base));
        views.push_back(images.back().view());
        windows.push_back((*remote)->window());
        remotes.push_back(std::move(*remote));
        return Status::ok;
    }
};

int run_ffn_node(const Options& o) {
    const Config rc = rank_config(o.c, o.rank, o.ranks);
    const Arena memory(ffn_layout(rc).total);
    // Declared before the node, so destroyed after it: the node calls into them until it stops.
    ferry::Result<std::unique_ptr<net::ExposedWindow>> own = Status::invalid_param;
    Roster roster(o);
    auto node = start_node(o.listen);
    if (!node) {
        return fail("cannot start the node", node.status());
    }
    const auto base = reinterpret_cast<std::uintptr_t>(memory.bytes().data());
    init_ffn(memory.bytes(), base, rc);
    ferry::AllocationRegistry registry;
    if (registry.insert({base, memory.bytes().size(), memory.bytes().size(), 0,
                         ferry::AllocationKind::device}) != Status::ok) {
        return fail("cannot register the FFN memory");
    }
    own = net::ExposedWindow::expose(**node, memory.bytes());
    if (!own) {
        return fail("cannot expose the FFN memory", own.status());
    }
    (*node)->serve(k_hello_service, std::ref(roster));
    say("listening " + (*node)->address());
    const std::vector<net::PeerId> peers = roster.wait_hellos();
    if (peers.empty()) {
        return fail("the attention nodes did not all arrive");
    }
    PeerWindows sessions;
    for (std::size_t s = 0; s < peers.size(); ++s) {
        const Status st = sessions.add(**node, **own, peers[s], [&](std::uint64_t base) {
            return attention_context(base, o.c);
        });
        if (st == Status::peer_lost) {
            std::fprintf(stderr, "afd_node: session %zu: peer_lost during setup\n", s);
            return k_exit_peer_lost;
        }
        if (st != Status::ok) {
            return fail("session " + std::to_string(s) + " exposed no window", st);
        }
    }
    CreditWriter credits(rc, o.rank, memory.bytes(), sessions.windows);
    std::uint32_t rounds = 0;
    FfnEnds e{memory.bytes(), (*own)->doorbell(), &registry, sessions.views, sessions.windows};
    e.auto_wait = true;
    e.rank = o.rank;
    e.ranks = o.ranks;
    e.consumed = [&] {
        if (rounds++ == o.hold_after) {
            hold(sessions.windows);
        }
        return credits();
    };
    const Report r = run_ffn(rc, e);
    for (const auto& remote : sessions.remotes) { // every result lands before this node goes
        (void)remote->flush(k_wait);
    }
    say(format_report(r));
    if ((*own)->peer_lost()) {
        std::fprintf(stderr, "afd_node: ffn rank %u: peer_lost\n", o.rank);
        return k_exit_peer_lost;
    }
    roster.wait_byes();
    return r.errors == 0 ? 0 : k_exit_results;
}

// ---- attention node: session o.session ----
// Counts lost FFN peers, so the node leaves only after the FFN ranks did (their last puts and
// rings find it alive).
class Departures {
public:
    void lost() {
        const std::lock_guard lock(mutex_);
        ++lost_;
        changed_.notify_all();
    }
    void wait(std::size_t count) {
        std::unique_lock lock(mutex_);
        (void)changed_.wait_for(lock, k_wait, [&] { return lost_ >= count; });
    }

private:
    std::mutex mutex_;
    std::condition_variable changed_;
    std::size_t lost_ = 0;
};

std::vector<std::string> split(const std::string& list) {
    std::vector<std::string> out;
    std::size_t from = 0;
    while (from <= list.size()) {
        const std::size_t comma = std::min(list.find(',', from), list.size());
        out.push_back(list.substr(from, comma - from));
        from = comma + 1;
    }
    return out;
}

int run_attention_node(Options o) {
    const std::vector<std::string> addresses = split(o.connect);
    o.ranks = static_cast<std::uint32_t>(addresses.size());
    const Arena memory(attention_window_size(o.c, o.ranks));
    // Declared before the node, so destroyed after it: the node calls into them until it stops.
    ferry::Result<std::unique_ptr<net::ExposedWindow>> own = Status::invalid_param;
    Departures departures;
    auto node = start_node("");
    if (!node) {
        return fail("cannot start the node", node.status());
    }
    init_attention(memory.bytes(), reinterpret_cast<std::uintptr_t>(memory.bytes().data()), o.c);
    own = net::ExposedWindow::expose(**node, memory.bytes());
    if (!own) {
        return fail("cannot expose the attention memory", own.status());
    }
    const std::uint64_t watch = (*node)->on_peer_lost([&](net::PeerId) { departures.lost(); });
    PeerWindows ffns;
    for (std::uint32_t f = 0; f < o.ranks; ++f) {
        const ferry::Result<net::PeerId> peer = (*node)->connect(addresses[f], k_wait);
        if (!peer) {
            return fail("cannot connect to " + addresses[f], peer.status());
        }
        const Hello hello = hello_of(o, o.session, f);
        if (const Status s = (*node)->send(*peer, k_hello_service,
                                           std::as_bytes(std::span(&hello, 1)), {}, k_wait);
            s != Status::ok) {
            return fail("ffn rank " + std::to_string(f) + " did not take the hello", s);
        }
        const Status st = ffns.add(**node, **own, *peer, [&](std::uint64_t base) {
            return ffn_context(base, rank_config(o.c, f, o.ranks));
        });
        if (st == Status::peer_lost) {
            std::fprintf(stderr, "afd_node: ffn rank %u: peer_lost during setup\n", f);
            return k_exit_peer_lost;
        }
        if (st != Status::ok) {
            return fail("ffn rank " + std::to_string(f) + " exposed no window", st);
        }
    }
    AttentionEnds ends{memory.bytes(), (*own)->doorbell(), ffns.views[0], ffns.windows[0]};
    ends.auto_wait = true;
    const AttentionResult result =
        run_attention_ranks(o.c, {ends, ffns.views, ffns.windows}, o.session, o.hold_after);
    say(format_report(result.report));
    if (result.exit == ScheduleExit::peer_lost) {
        std::fprintf(stderr, "afd_node: session %u: peer_lost\n", o.session);
        (*node)->unwatch(watch);
        return k_exit_peer_lost;
    }
    for (std::uint32_t f = 0; f < o.ranks; ++f) {
        const Hello bye = hello_of(o, o.session, f, k_bye);
        (void)(*node)->send(ffns.remotes[f]->peer(), k_hello_service,
                            std::as_bytes(std::span(&bye, 1)), {}, k_wait);
    }
    departures.wait(o.ranks);
    (*node)->unwatch(watch);
    return result.report.errors == 0 ? 0 : k_exit_results;
}

// ---- the reference ----
int run_reference(const Options& o) {
    const RankedReports r = run_ranks_in_process(o.c, o.ranks);
    std::uint64_t errors = 0;
    for (std::size_t f = 0; f < r.ffn.size(); ++f) {
        say("ffn " + std::to_string(f) + " " + format_report(r.ffn[f]));
        errors += r.ffn[f].errors;
    }
    for (std::size_t s = 0; s < r.sessions.size(); ++s) {
        say("session " + std::to_string(s) + " " + format_report(r.sessions[s]));
        errors += r.sessions[s].errors;
    }
    return errors == 0 ? 0 : k_exit_results;
}

bool parse(int argc, char** argv, Options& o) {
    const std::map<std::string, std::uint32_t*> numbers = {
        {"--rank", &o.rank},
        {"--ranks", &o.ranks},
        {"--session", &o.session},
        {"--sessions", &o.c.sessions},
        {"--hold-after", &o.hold_after},
        {"--steps", &o.c.steps},
        {"--micro-batches", &o.c.micro_batches},
        {"--batch-size", &o.c.batch_size},
        {"--experts-per-token", &o.c.experts_per_token},
        {"--expert-num", &o.c.expert_num},
        {"--token-size", &o.c.token_size},
        {"--result-size", &o.c.result_size},
    };
    const std::map<std::string, std::string*> texts = {
        {"--role", &o.role}, {"--listen", &o.listen}, {"--connect", &o.connect}};
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        char* end = nullptr;
        if (const auto t = texts.find(key); t != texts.end()) {
            *t->second = argv[i + 1];
        } else if (const auto n = numbers.find(key); n != numbers.end()) {
            const unsigned long v = std::strtoul(argv[i + 1], &end, 10);
            if (end == argv[i + 1] || *end != '\0' || v > UINT32_MAX) {
                return false;
            }
            *n->second = static_cast<std::uint32_t>(v);
        } else {
            return false;
        }
    }
    const Config& c = o.c;
    // Every size positive; result rows carry a 24-byte header and tokens a 16-byte one.
    return argc % 2 == 1 && o.ranks > 0 && c.sessions > 0 && c.steps > 0 && c.micro_batches > 0 &&
           c.batch_size > 0 && c.experts_per_token > 0 && c.expert_num >= o.ranks &&
           c.experts_per_token <= c.expert_num && c.token_size >= 24 && c.result_size >= 24 &&
           o.rank < o.ranks && o.session < c.sessions;
}

} // namespace

int main(int argc, char** argv) {
    Options o;
    o.c.micro_batches = 3;
    o.c.steps = 24;
    if (!parse(argc, argv, o)) {
        std::fprintf(
            stderr,
            "usage: %s --role ffn --listen HOST:PORT --rank R --ranks F --sessions A\n"
            "       %s --role attention --connect ADDR[,ADDR...] --session S --sessions A\n"
            "       %s --role reference --ranks F --sessions A\n"
            "       sizes: --steps --micro-batches --batch-size --experts-per-token "
            "--expert-num --token-size --result-size; --hold-after N\n",
            argv[0], argv[0], argv[0]);
        return k_exit_setup;
    }
    if (o.role == "ffn" && !o.listen.empty()) {
        return run_ffn_node(o);
    }
    if (o.role == "attention" && !o.connect.empty()) {
        return run_attention_node(o);
    }
    if (o.role == "reference") {
        return run_reference(o);
    }
    return fail("--role ffn needs --listen, --role attention needs --connect");
}
