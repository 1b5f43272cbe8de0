// ferry-inspect: the ferry segments of this user in /dev/shm — what they are, who uses them,
// which are stale — and removal of the stale ones (docs/processes.md, Inspecting segments).
//
//   ferry-inspect [list] [--json]     every ferry segment of every name domain, one line (or
//                                     object) each, with its domain (FERRY_NAMESPACE)
//   ferry-inspect show NAME [--json]  every header field of one segment
//   ferry-inspect gc [NAME...] [--json]  removes the stale segments (only these, when named),
//                                     through the library's reclaim
//   ferry-inspect net [DIR] [--json]  the state files ferry/net nodes publish in DIR
//                                     (default: $FERRY_NET_STATE_DIR), stale ones marked
//
// A NAME is in this process's FERRY_NAMESPACE, or DOMAIN/NAME for another domain's.
//
// Read-only except gc. Exit status: 0 done, 1 show found no trustworthy segment or gc could not
// remove a stale one, 2 bad arguments or no boot id.

#include "net_report.hpp"
#include "render.hpp"
#include "segment_report.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ferry/ipc/detail/reclaim.hpp>
#include <ferry/ipc/segment.hpp>
#include <ferry/runtime/log.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace d = ferry::ipc::detail;
using ferry::inspect::SegmentReport;

constexpr int k_exit_failed = 1, k_exit_usage = 2;

const char* const k_usage =
    "usage: ferry-inspect [list | show NAME | gc [NAME...] | net [DIR]] [--json]\n";

std::vector<SegmentReport> read_all(const d::BootId& boot) {
    std::vector<SegmentReport> reports;
    for (const auto& id : ferry::inspect::segment_names()) {
        reports.push_back(ferry::inspect::read_segment(id, boot));
    }
    return reports;
}

int show(std::string_view name, const d::BootId& boot, bool json) {
    const SegmentReport r =
        ferry::inspect::read_segment(ferry::inspect::parse_segment_id(name), boot);
    const std::string text =
        json ? ferry::inspect::to_json(r) + "\n" : ferry::inspect::show_text(r);
    std::fputs(text.c_str(), stdout);
    return r.problem.empty() ? 0 : k_exit_failed;
}

// Stale by the listing; the library's reclaim judges each again under its unlink lock and
// removes it only if no participant is alive then (and never one of another user or format).
int gc(const d::BootId& boot, const std::vector<std::string_view>& only, bool json) {
    std::string removed, kept;
    int status = 0;
    for (const auto& r : read_all(boot)) {
        const bool foreign = !r.problem.empty() && !r.header && r.kind != "no header";
        const bool chosen = only.empty() || std::any_of(only.begin(), only.end(), [&](auto n) {
                                const auto id = ferry::inspect::parse_segment_id(n);
                                return id.domain == r.domain && id.name == r.name;
                            });
        if (!r.stale || foreign || !chosen) {
            continue;
        }
        const std::string shm = d::shm_name_in(r.domain, r.name);
        const auto error =
            d::reclaim_if_stale(shm, boot, d::Clock::now() + ferry::ipc::k_default_wait);
        const std::string name = ferry::inspect::json_string(ferry::inspect::qualified_name(r));
        if (!error) {
            removed += (removed.empty() ? "" : ", ") + name;
        } else {
            kept += (kept.empty() ? "" : ", ") +
                    (json ? "{\"name\": " + name +
                                ", \"reason\": " + ferry::inspect::json_string(error->message) + "}"
                          : name + " (" + error->message + ")");
            status = k_exit_failed;
        }
    }
    const std::string text = json ? "{\"removed\": [" + removed + "], \"kept\": [" + kept + "]}\n"
                                  : "removed: " + (removed.empty() ? "none" : removed) +
                                        (kept.empty() ? "" : "\nkept: " + kept) + "\n";
    std::fputs(text.c_str(), stdout);
    return status;
}

// The nodes' state files in `dir` (or $FERRY_NET_STATE_DIR).
int net(const std::vector<std::string_view>& args, bool json) {
    const char* from_environment = std::getenv("FERRY_NET_STATE_DIR");
    const std::string dir = args.size() == 2   ? std::string(args[1])
                            : from_environment ? std::string(from_environment)
                                               : std::string();
    if (dir.empty() || args.size() > 2) {
        ferry::log(ferry::LogLevel::error,
                   "ferry-inspect: net needs a directory (or FERRY_NET_STATE_DIR)");
        return k_exit_usage;
    }
    const auto reports = ferry::inspect::read_net_states(dir);
    const std::string text =
        json ? ferry::inspect::net_json(reports) : ferry::inspect::net_text(reports);
    std::fputs(text.c_str(), stdout);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string_view> args(argv + 1, argv + argc);
    const bool json = std::erase(args, "--json") > 0;
    const auto boot = d::read_boot_id();
    if (!boot) {
        ferry::log(ferry::LogLevel::error, "ferry-inspect: cannot read this boot's id from /proc");
        return k_exit_usage;
    }
    if (args.empty() || (args.size() == 1 && args[0] == "list")) {
        const auto reports = read_all(*boot);
        const std::string text =
            json ? ferry::inspect::to_json(reports) : ferry::inspect::list_text(reports);
        std::fputs(text.c_str(), stdout);
        return 0;
    }
    if (args.size() == 2 && args[0] == "show") {
        return show(args[1], *boot, json);
    }
    if (!args.empty() && args[0] == "net") {
        return net(args, json);
    }
    if (!args.empty() && args[0] == "gc") {
        return gc(*boot, {args.begin() + 1, args.end()}, json);
    }
    if (args.size() == 1 && args[0] == "--help") {
        std::fputs(k_usage, stdout);
        return 0;
    }
    ferry::log(ferry::LogLevel::error, std::string("ferry-inspect: bad arguments; ") + k_usage);
    return k_exit_usage;
}
