#pragma once
// ferry::afd::ContextTensor and ScheduleOutcome — what a scheduler call takes and returns.
//
// The kernels receive the context as a tensor and check it before anything else
// (docs/cann-contract/afd.md#validation-order steps 1–3: present, rank 1, at least 1024 bytes; no
// check that the shape is exactly 1024). ContextTensor carries exactly what those checks read.

#include <cstddef>
#include <cstdint>
#include <ferry/afd/kernel_status.hpp>
#include <ferry/afd/schedule_context.hpp>
#include <ferry/core/status.hpp>
#include <string>

namespace ferry::afd {

struct ContextTensor {
    std::byte* data = nullptr;
    std::uint64_t size_bytes = k_context_size;
    std::size_t rank = 1;
};

enum class ScheduleExit : unsigned char {
    served,    // rows were written (out_num > 0) or, for attention, a micro batch was consumed
    stopped,   // run_flag was 0 at entry or became 0 while waiting: status ok, nothing consumed
    timed_out, // ferry extension: the caller's Timeout expired: status ok, nothing consumed
    rejected,  // a check failed: status says which class; nothing was modified
    peer_lost, // ferry extension: a process sharing the waited-on window died; nothing consumed
};

[[nodiscard]] constexpr const char* name_of(ScheduleExit e) noexcept {
    switch (e) {
    case ScheduleExit::served:
        return "served";
    case ScheduleExit::stopped:
        return "stopped";
    case ScheduleExit::timed_out:
        return "timed out";
    case ScheduleExit::rejected:
        return "rejected";
    case ScheduleExit::peer_lost:
        return "peer lost";
    }
    return "unknown";
}

// The Status a simulator returns for a wait that did not end served.
[[nodiscard]] constexpr Status status_of_unserved(ScheduleExit e) noexcept {
    switch (e) {
    case ScheduleExit::stopped:
        return Status::stopped;
    case ScheduleExit::timed_out:
        return Status::timed_out;
    case ScheduleExit::peer_lost:
        return Status::peer_lost;
    default:
        return Status::invalid_param;
    }
}

struct ScheduleOutcome {
    KernelStatus status = KernelStatus::ok;
    ScheduleExit exit = ScheduleExit::served;
    std::uint32_t out_num = 0; // rows written by this call (FFN) or 0
    const char* field = "";    // the context field a rejection is about
    const char* reason = "";   // why (static text)

    [[nodiscard]] static ScheduleOutcome reject(KernelStatus s, const char* field,
                                                const char* reason) noexcept {
        return {s, ScheduleExit::rejected, 0, field, reason};
    }
    [[nodiscard]] bool ok() const noexcept { return status == KernelStatus::ok; }
    [[nodiscard]] std::string describe() const {
        std::string text = name_of(status);
        text += " (";
        text += name_of(exit);
        if (exit == ScheduleExit::rejected) {
            text += ": ";
            text += field;
            text += ' ';
            text += reason;
        }
        text += ')';
        return text;
    }
};

} // namespace ferry::afd
