#pragma once
// ferry-inspect: what one shared segment in /dev/shm holds, read without trusting it
// (docs/processes.md, Inspecting segments).
//
// read_segment opens the file read-only, applies the library's own checks (owner and mode,
// header format) to a private copy of the header, and reads the channel ring or window header
// the same way: copied once, validated, then reported. Nothing is written and the caller is not
// registered as a participant. A file that fails a check is reported with the check's message.

#include <cstdint>
#include <ferry/channel/stats.hpp>
#include <ferry/ipc/detail/process_identity.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ferry::inspect {

struct Participant {
    std::size_t slot = 0;
    std::int32_t pid = 0;
    std::uint64_t start_time = 0;
    bool alive = false;
};

// The ring of a typed or message channel (the TDT shared channels are message channels).
struct RingReport {
    std::size_t capacity = 0;
    std::size_t cell_bytes = 0;
    bool multi = false; // mpmc
    std::size_t queued = 0;
    std::size_t blocked = 0;
    bool stopped = false;
    bool lost = false;
    std::uint64_t published = 0; // the ring's counters as read (a typed channel's totals)
    std::uint64_t released = 0;
};

// A channel's counters (docs/processes.md, Counters): the sum over every slot's block, and each
// slot whose block counted anything (a block keeps its counts after its process left). A typed
// channel's message and byte totals come from its ring (its blocks hold none).
struct CountersReport {
    ChannelStats total;
    std::vector<std::pair<std::size_t, ChannelStats>> by_slot;
};

struct WindowReport {
    std::uint64_t data_bytes = 0;
    bool published = false;
};

// Every field of the segment header, as read into the private copy.
struct HeaderFields {
    std::uint32_t header_format = 0, header_bytes = 0, ready = 0, layout_version = 0;
    std::uint64_t payload_offset = 0, payload_bytes = 0, total_bytes = 0, layout_hash = 0;
    std::string layout_name, boot_id;
    std::int32_t creator_pid = 0;
    std::uint64_t creator_start_time = 0;
    bool same_boot = false;
};

// Where a segment lives: its name domain (FERRY_NAMESPACE; empty for the default one) and its
// name within it (docs/processes.md, Name domains).
struct SegmentId {
    std::string domain;
    std::string name;
    bool operator==(const SegmentId&) const = default;
    auto operator<=>(const SegmentId&) const = default;
};

struct SegmentReport {
    std::string domain;  // the name domain; empty for the default one
    std::string name;    // after "ferry." or "ferry@<domain>." (a foreign file's may be anything)
    std::string kind;    // "typed channel", "message channel", "TDT shared channel", "window", ...
    std::string problem; // empty when every check passed; otherwise why the file is not trusted
    std::uint64_t file_bytes = 0;
    std::optional<HeaderFields> header;
    std::vector<Participant> participants; // registered slots only
    std::optional<RingReport> ring;
    std::optional<CountersReport> counters; // channels
    std::optional<WindowReport> window;
    std::optional<std::size_t> max_message_bytes; // message channels, from the layout name
    bool stale = false; // no live participant: gc may remove it (the library decides again)
};

// The report for the segment `id` (/dev/shm/ferry.<name> or ferry@<domain>.<name>); `boot` is
// this boot's id.
SegmentReport read_segment(const SegmentId& id, const ipc::detail::BootId& boot);

// Every ferry segment file in /dev/shm, of every name domain, sorted.
std::vector<SegmentId> segment_names();

// "NAME" for the default domain's, "DOMAIN/NAME" for another's: how the tool shows `r`.
std::string qualified_name(const SegmentReport& r);

// "NAME" (in this process's FERRY_NAMESPACE) or "DOMAIN/NAME" (a name never holds '/').
SegmentId parse_segment_id(std::string_view text);

} // namespace ferry::inspect
