#pragma once
// How the Attention/FFN processes of afd_processes end together when one of them dies
// (docs/processes.md, Attention/FFN across processes).
//
// Each role waits with AutoWait, which ends a wait with peer_lost when a process registered in
// the waited-on window died. That tells only the roles sharing that window: when attention 0
// dies, the FFN learns it, but attention 1 — which shares a window with the FFN alone — would
// wait on. So a role whose run ends early stops everyone it can reach: it records the lost pid
// in the roster, sets run_flag to 0 in every context it maps (its own included) and rings their
// doorbells. The others' waits then end with `stopped`, and they name the lost peer from the
// roster.
//
// The roster lives in the FFN window, after the FFN's layout (every role maps that window):
// each role's pid, entered once its windows are set up, and the first lost pid any role saw.

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <ferry/afd.hpp>
#include <ferry/ipc/window.hpp>
#include <span>
#include <string>
#include <unistd.h>

namespace afd_ipc {

inline constexpr std::uint32_t k_roster_sessions = 14;

struct alignas(64) Roster {
    std::int32_t lost; // 0 until a role records a death
    std::int32_t ffn;
    std::int32_t attention[k_roster_sessions];
};
static_assert(sizeof(Roster) == 64);

// The roster at `offset` of the FFN window's data area `ffn_data` (mapped in this process).
class RosterView {
public:
    RosterView(std::span<std::byte> ffn_data, std::size_t offset)
        : roster_(reinterpret_cast<Roster*>(ffn_data.data() + offset)) {}

    // Enters this process as the FFN (session < 0) or as attention `session`.
    void enlist(int session) const {
        std::int32_t& slot = session < 0 ? roster_->ffn : roster_->attention[session];
        std::atomic_ref<std::int32_t>(slot).store(static_cast<std::int32_t>(::getpid()));
    }
    // Records `pid` as lost unless a death was recorded already; the pid recorded.
    std::int32_t record_lost(std::int32_t pid) const {
        std::int32_t none = 0;
        std::atomic_ref<std::int32_t> lost(roster_->lost);
        return lost.compare_exchange_strong(none, pid) ? pid : none;
    }
    [[nodiscard]] std::int32_t lost() const {
        return std::atomic_ref<std::int32_t>(roster_->lost).load();
    }
    // "ffn (pid N)", "attention S (pid N)", or "pid N" for a pid not in the roster.
    [[nodiscard]] std::string name_of(std::int32_t pid) const {
        const std::string id = "pid " + std::to_string(pid);
        if (std::atomic_ref<std::int32_t>(roster_->ffn).load() == pid) {
            return "ffn (" + id + ")";
        }
        for (std::uint32_t s = 0; s < k_roster_sessions; ++s) {
            if (std::atomic_ref<std::int32_t>(roster_->attention[s]).load() == pid) {
                return "attention " + std::to_string(s) + " (" + id + ")";
            }
        }
        return id;
    }

private:
    Roster* roster_;
};

// What a role holds when its run ends: the windows it watches for a dead peer, and the
// contexts (with the windows that map them) it stops.
struct Reach {
    std::span<const ferry::ipc::SharedWindow* const> watched;
    std::span<const ferry::afd::ScheduleContextView> contexts;
    std::span<const ferry::afd::Window> windows;
};

// Ends `role`'s run: 0 when it completed; otherwise stops everyone in reach, says on stderr
// which peer was lost (or that the run was stopped), and returns 4.
inline int end_run(const std::string& role, bool completed, const RosterView& roster,
                   const Reach& reach) {
    if (completed) {
        return 0;
    }
    for (const ferry::ipc::SharedWindow* w : reach.watched) {
        if (const auto pid = w->lost_participant()) {
            roster.record_lost(*pid);
            break;
        }
    }
    for (std::size_t i = 0; i < reach.contexts.size(); ++i) {
        reach.contexts[i].set_run_flag(0);
        reach.windows[i].doorbell().ring();
    }
    const std::int32_t lost = roster.lost();
    const std::string why =
        lost != 0 ? roster.name_of(lost) + " was lost" : std::string("the run ended early");
    std::fprintf(stderr, "afd %s: stopping: %s\n", role.c_str(), why.c_str());
    return 4;
}

} // namespace afd_ipc
