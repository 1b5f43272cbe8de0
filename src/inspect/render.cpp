// ferry-inspect: text and JSON output (render.hpp).

#include "render.hpp"

#include <cstdio>
#include <ferry/core/detail/json_string.hpp>
#include <utility>
#include <vector>

namespace ferry::inspect {
namespace {

std::string hex64(std::uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
    return text;
}

const char* ready_text(std::uint32_t ready) {
    switch (ready) {
    case 0:
        return "initialising";
    case 1:
        return "ready";
    case 2:
        return "abandoned";
    default:
        return "invalid";
    }
}

std::string layout_text(const SegmentReport& r) {
    if (r.ring) {
        std::string text = std::to_string(r.ring->capacity) + " x " +
                           std::to_string(r.ring->cell_bytes) + " B cells";
        if (r.max_message_bytes) {
            text += ", messages <= " + std::to_string(*r.max_message_bytes) + " B";
        }
        return text + (r.ring->multi ? ", mpmc" : ", spsc");
    }
    if (r.window) {
        return std::to_string(r.window->data_bytes) + " data bytes" +
               (r.window->published ? "" : " (not published)");
    }
    return "-";
}

std::string state_text(const SegmentReport& r) {
    std::string text = r.stale ? "stale" : "live";
    if (r.ring) {
        text += " queued " + std::to_string(r.ring->queued) + " blocked " +
                std::to_string(r.ring->blocked);
        text += r.ring->stopped ? " stopped" : "";
        text += r.ring->lost ? " lost" : "";
    }
    return text;
}

// The list's few counter columns.
std::string counters_brief(const SegmentReport& r) {
    if (!r.counters) {
        return "";
    }
    const ChannelStats& s = r.counters->total;
    return "  sent " + std::to_string(s.sent) + " received " + std::to_string(s.received) +
           " full " + std::to_string(s.full) + " high-water " + std::to_string(s.high_water);
}

// Every counter, as (name, value) pairs: the one list both show and --json print.
std::vector<std::pair<const char*, std::uint64_t>> counter_fields(const ChannelStats& s) {
    return {{"sent", s.sent},
            {"sent_bytes", s.sent_bytes},
            {"received", s.received},
            {"received_bytes", s.received_bytes},
            {"full", s.full},
            {"empty", s.empty},
            {"send_blocked_ns", s.send_blocked_ns},
            {"receive_blocked_ns", s.receive_blocked_ns},
            {"high_water", s.high_water},
            {"dropped_by_clear", s.dropped_by_clear},
            {"refused", s.refused}};
}

std::string counters_line(const ChannelStats& s) {
    std::string out;
    for (const auto& [key, value] : counter_fields(s)) {
        out += (out.empty() ? "" : " ") + std::string(key) + " " + std::to_string(value);
    }
    return out;
}

std::string pids_text(const SegmentReport& r) {
    std::string text;
    for (const auto& p : r.participants) {
        text += (text.empty() ? "" : ", ") + std::to_string(p.pid) + (p.alive ? " alive" : " dead");
    }
    return text.empty() ? "no participants" : "pids " + text;
}

void field(std::string& out, const char* key, const std::string& value, bool quote = false) {
    out += (out.size() > 1 ? ", \"" : "\"") + std::string(key) + "\": ";
    out += quote ? json_string(value) : value;
}
std::string boolean(bool value) {
    return value ? "true" : "false";
}

std::string ring_json(const RingReport& ring) {
    std::string out = "{";
    field(out, "capacity", std::to_string(ring.capacity));
    field(out, "cell_bytes", std::to_string(ring.cell_bytes));
    field(out, "policy", ring.multi ? "mpmc" : "spsc", true);
    field(out, "queued", std::to_string(ring.queued));
    field(out, "blocked", std::to_string(ring.blocked));
    field(out, "stopped", boolean(ring.stopped));
    field(out, "lost", boolean(ring.lost));
    return out + "}";
}

std::string stats_json(const ChannelStats& s) {
    std::string out = "{";
    for (const auto& [key, value] : counter_fields(s)) {
        field(out, key, std::to_string(value));
    }
    return out + "}";
}

std::string counters_json(const CountersReport& c) {
    std::string out = "{";
    field(out, "total", stats_json(c.total));
    std::string slots = "[";
    for (const auto& [slot, s] : c.by_slot) {
        std::string one = stats_json(s);
        one.insert(1, "\"slot\": " + std::to_string(slot) + ", ");
        slots += (slots.size() > 1 ? ", " : "") + one;
    }
    field(out, "by_slot", slots + "]");
    return out + "}";
}

std::string header_json(const HeaderFields& h) {
    std::string out = "{";
    field(out, "header_format", std::to_string(h.header_format));
    field(out, "header_bytes", std::to_string(h.header_bytes));
    field(out, "payload_offset", std::to_string(h.payload_offset));
    field(out, "payload_bytes", std::to_string(h.payload_bytes));
    field(out, "total_bytes", std::to_string(h.total_bytes));
    field(out, "ready", ready_text(h.ready), true);
    field(out, "layout_name", h.layout_name, true);
    field(out, "layout_version", std::to_string(h.layout_version));
    field(out, "layout_hash", hex64(h.layout_hash), true);
    field(out, "boot_id", h.boot_id, true);
    field(out, "same_boot", boolean(h.same_boot));
    field(out, "creator_pid", std::to_string(h.creator_pid));
    field(out, "creator_start_time", std::to_string(h.creator_start_time));
    return out + "}";
}

std::string participants_json(const std::vector<Participant>& participants) {
    std::string out = "[";
    for (const auto& p : participants) {
        std::string one = "{";
        field(one, "slot", std::to_string(p.slot));
        field(one, "pid", std::to_string(p.pid));
        field(one, "start_time", std::to_string(p.start_time));
        field(one, "alive", boolean(p.alive));
        out += (out.size() > 1 ? ", " : "") + one + "}";
    }
    return out + "]";
}

} // namespace

std::string json_string(const std::string& text) {
    return ferry::detail::json_string(text);
}

std::string to_json(const SegmentReport& r) {
    std::string out = "{";
    field(out, "namespace", r.domain, true);
    field(out, "name", r.name, true);
    field(out, "kind", r.kind.empty() ? "unreadable" : r.kind, true);
    field(out, "stale", boolean(r.stale));
    field(out, "problem", r.problem.empty() ? "null" : json_string(r.problem));
    field(out, "file_bytes", std::to_string(r.file_bytes));
    field(out, "header", r.header ? header_json(*r.header) : "null");
    field(out, "participants", participants_json(r.participants));
    field(out, "ring", r.ring ? ring_json(*r.ring) : "null");
    field(out, "counters", r.counters ? counters_json(*r.counters) : "null");
    field(out, "max_message_bytes",
          r.max_message_bytes ? std::to_string(*r.max_message_bytes) : "null");
    field(out, "window_data_bytes", r.window ? std::to_string(r.window->data_bytes) : "null");
    return out + "}";
}

std::string to_json(const std::vector<SegmentReport>& reports) {
    std::string out = "[";
    for (const auto& r : reports) {
        out += (out.size() > 1 ? ",\n " : "") + to_json(r);
    }
    return out + "]\n";
}

std::string list_text(const std::vector<SegmentReport>& reports) {
    std::string out;
    for (const auto& r : reports) {
        const std::string quoted = json_string(r.name); // escaped: the name may be anything
        out += (r.domain.empty() ? std::string("-") : r.domain) + "  " +
               quoted.substr(1, quoted.size() - 2) + "  " +
               (r.kind.empty() ? "unreadable" : r.kind);
        if (!r.problem.empty()) {
            out +=
                "  " + std::string(r.stale ? "stale, " : "") + "not trusted: " + r.problem + "\n";
            continue;
        }
        out += "  " + layout_text(r) + "  " + state_text(r) + counters_brief(r) + "  " +
               pids_text(r) + "\n";
    }
    return out.empty() ? "no ferry segments in /dev/shm\n" : out;
}

std::string show_text(const SegmentReport& r) {
    std::string out =
        "namespace: " + (r.domain.empty() ? std::string("-") : r.domain) +
        "\nname: " + json_string(r.name) + "\nkind: " + (r.kind.empty() ? "unreadable" : r.kind) +
        "\nfile bytes: " + std::to_string(r.file_bytes) + "\nstate: " + state_text(r) + "\n";
    if (!r.problem.empty()) {
        out += "not trusted: " + r.problem + "\n";
    }
    if (r.header) {
        const HeaderFields& h = *r.header;
        out += "header format: " + std::to_string(h.header_format) + " (" +
               std::to_string(h.header_bytes) +
               " bytes)\npayload: " + std::to_string(h.payload_bytes) + " bytes at offset " +
               std::to_string(h.payload_offset) +
               "\ntotal bytes: " + std::to_string(h.total_bytes) +
               "\nready: " + ready_text(h.ready) + "\nlayout: " + json_string(h.layout_name) +
               " v" + std::to_string(h.layout_version) + " hash " + hex64(h.layout_hash) +
               "\nboot id: " + json_string(h.boot_id) +
               (h.same_boot ? " (this boot)" : " (another boot)") + "\ncreator: pid " +
               std::to_string(h.creator_pid) + " start time " +
               std::to_string(h.creator_start_time) + "\n";
    }
    for (const auto& p : r.participants) {
        out += "participant slot " + std::to_string(p.slot) + ": pid " + std::to_string(p.pid) +
               (p.alive ? " alive" : " dead") + ", start time " + std::to_string(p.start_time) + "\n";
    }
    out += "layout details: " + layout_text(r) + "\n";
    if (r.counters) {
        out += "counters, all processes: " + counters_line(r.counters->total) + "\n";
        for (const auto& [slot, s] : r.counters->by_slot) {
            out += "counters, slot " + std::to_string(slot) + ": " + counters_line(s) + "\n";
        }
    }
    return out;
}

} // namespace ferry::inspect
