// ferry-inspect: reading one segment without trusting it (segment_report.hpp).

#include "segment_report.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <ferry/ipc/detail/channel_counters.hpp>
#include <ferry/ipc/detail/message_cell.hpp>
#include <ferry/ipc/detail/segment_checks.hpp>
#include <ferry/ipc/detail/segment_name.hpp>
#include <ferry/ipc/detail/shared_ring.hpp>
#include <ferry/ipc/detail/shared_ring_spsc.hpp>
#include <ferry/ipc/window.hpp>
#include <filesystem>
#include <new>
#include <span>
#include <string_view>
#include <sys/mman.h>
#include <unistd.h>

namespace ferry::inspect {
namespace {

namespace d = ipc::detail;

// Reads exactly `bytes` at `offset` into `out`; false on a short read (a file shrunk under us).
bool read_at(int fd, void* out, std::size_t bytes, std::uint64_t offset) {
    return ::pread(fd, out, bytes, static_cast<off_t>(offset)) == static_cast<ssize_t>(bytes);
}

// "12" from "...<marker>12..." (the last marker) up to the next '.', or nullopt.
std::optional<std::size_t> number_after(std::string_view text, std::string_view marker) {
    const auto at = text.rfind(marker); // the last: ".m" also starts "ferry.msg"
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    const char* first = text.data() + at + marker.size();
    const char* last = text.data() + text.size();
    std::size_t value = 0;
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc{} || (end != last && *end != '.')) {
        return std::nullopt;
    }
    return value;
}

std::string kind_of(std::string_view layout, std::string_view name) {
    if (layout == "ferry.ipc.channel") {
        return "typed channel";
    }
    if (layout.starts_with("ferry.msg.")) {
        return name.starts_with("tdt.") ? "TDT shared channel" : "message channel";
    }
    if (layout == "ferry.afd.window") {
        return "window";
    }
    return "unknown layout";
}

// The header's own consistency beyond the library's format check: the values used later.
std::string header_problem(const d::SegmentHeader& h, std::uint64_t file_bytes) {
    if (::strnlen(h.layout_name, sizeof h.layout_name) == sizeof h.layout_name) {
        return "its layout name is not terminated";
    }
    if (h.payload_offset != d::k_payload_offset ||
        h.total_bytes != h.payload_offset + h.payload_bytes || h.total_bytes < h.payload_bytes) {
        return "its header gives inconsistent sizes";
    }
    if (h.total_bytes > file_bytes) {
        return "its header claims " + std::to_string(h.total_bytes) + " bytes, the file has " +
               std::to_string(file_bytes);
    }
    return {};
}

HeaderFields fields_of(const d::SegmentHeader& h, const d::BootId& boot) {
    HeaderFields f;
    f.header_format = h.header_format;
    f.header_bytes = h.header_bytes;
    f.ready = h.ready;
    f.layout_version = h.layout_version;
    f.payload_offset = h.payload_offset;
    f.payload_bytes = h.payload_bytes;
    f.total_bytes = h.total_bytes;
    f.layout_hash = h.layout_hash;
    f.layout_name.assign(h.layout_name, ::strnlen(h.layout_name, sizeof h.layout_name));
    f.boot_id.assign(h.boot_id, ::strnlen(h.boot_id, d::k_boot_id_size));
    f.creator_pid = h.creator_pid;
    f.creator_start_time = h.creator_start_time;
    f.same_boot = d::same_boot(h, boot);
    return f;
}

std::vector<Participant> participants_of(d::SegmentHeader& h, bool same_boot) {
    std::vector<Participant> out;
    for (std::size_t i = 0; i < d::k_max_participants; ++i) {
        const d::ProcessIdentity p = d::read_slot(h.participants[i]);
        if (p.pid != 0) {
            out.push_back({i, p.pid, p.start_time, same_boot && d::is_alive(p.pid, p.start_time)});
        }
    }
    return out;
}

// A report of `ring` (SharedRing or SpscSharedRing), attached to the file's bytes.
template <typename Ring>
RingReport ring_report(const Ring& ring) {
    return RingReport{ring.capacity(), ring.cell_bytes(), ring.policy() == d::RingPolicy::mpmc,
                      ring.size(),     ring.blocked(),    ring.stopped(),
                      ring.lost(),     ring.published(),  ring.released()};
}

// The ring at the payload's start: its kind (the magic) and geometry from a private copy of the
// ring's first line, checked by the library's own attach against the file's bytes (mapped
// read-only; attach and the figures below only read).
std::optional<RingReport> read_ring(int fd, const d::SegmentHeader& h, std::string& problem) {
    d::RingGeometry geometry;
    if (h.payload_bytes < sizeof geometry ||
        !read_at(fd, &geometry, sizeof geometry, h.payload_offset)) {
        problem = "the payload is too small for a ring";
        return std::nullopt;
    }
    void* mapped = ::mmap(nullptr, h.payload_bytes, PROT_READ, MAP_SHARED, fd,
                          static_cast<off_t>(h.payload_offset));
    if (mapped == MAP_FAILED) {
        problem = std::string("cannot map the payload: ") + std::strerror(errno);
        return std::nullopt;
    }
    const std::span<std::byte> payload{static_cast<std::byte*>(mapped), h.payload_bytes};
    std::string why;
    std::optional<RingReport> report;
    if (geometry.magic == d::k_spsc_ring_magic) {
        const auto ring = d::SpscSharedRing::attach(payload, geometry.capacity, geometry.cell_bytes,
                                                    geometry.policy, &why);
        if (ring.attached()) {
            report = ring_report(ring);
        }
    } else {
        const auto ring = d::SharedRing::attach(payload, geometry.capacity, geometry.cell_bytes,
                                                geometry.policy, &why);
        if (ring.attached()) {
            report = ring_report(ring);
        }
    }
    if (!report) {
        problem = why.empty() ? "its ring is not initialised yet" : "ipc: " + why;
    }
    ::munmap(mapped, h.payload_bytes);
    return report;
}

// The counter area, copied once into private memory (header_problem has checked that the file
// reaches the payload, past the area), then summed. Counts are only reported, never used.
std::optional<CountersReport> read_counters(int fd, std::string& problem) {
    std::array<d::ParticipantCounters, d::k_max_participants> blocks;
    if (!read_at(fd, blocks.data(), sizeof blocks, d::k_counters_offset)) {
        problem = "its counter area cannot be read";
        return std::nullopt;
    }
    CountersReport report;
    report.total = d::sum_counters(std::as_bytes(std::span(blocks)));
    for (std::size_t i = 0; i < blocks.size(); ++i) {
        if (const ChannelStats s = d::block_stats(blocks[i]); s != ChannelStats{}) {
            report.by_slot.emplace_back(i, s);
        }
    }
    return report;
}

std::optional<WindowReport> read_window(int fd, const d::SegmentHeader& h, std::string& problem) {
    ipc::WindowHeader w;
    if (h.payload_bytes < sizeof w || !read_at(fd, &w, sizeof w, h.payload_offset)) {
        problem = "the payload is too small for a window header";
        return std::nullopt;
    }
    const bool published = w.published != 0;
    if (published && w.data_bytes != h.payload_bytes - sizeof w) {
        problem = "the window claims " + std::to_string(w.data_bytes) + " data bytes, holds " +
                  std::to_string(h.payload_bytes - sizeof w);
        return std::nullopt;
    }
    return WindowReport{published ? w.data_bytes : 0, published};
}

// A message channel's layout name carries its capacity and message size; both must agree with
// the ring the library validated.
void check_message_layout(SegmentReport& r) {
    const std::string& layout = r.header->layout_name;
    r.max_message_bytes = number_after(layout, ".m");
    const auto capacity = number_after(layout, ".c");
    if (!r.max_message_bytes || !capacity || *capacity != r.ring->capacity ||
        d::cell_bytes_for(*r.max_message_bytes) != r.ring->cell_bytes) {
        r.problem = "its layout name '" + layout + "' does not match its ring";
        r.ring.reset();
    }
}

void read_payload(int fd, const d::SegmentHeader& h, SegmentReport& r) {
    if (h.ready != d::k_ready) {
        return; // nothing past the header is final yet (or ever, when abandoned)
    }
    if (r.kind == "window") {
        r.window = read_window(fd, h, r.problem);
    } else if (r.kind != "unknown layout") {
        r.ring = read_ring(fd, h, r.problem);
        if (r.ring && r.kind != "typed channel") {
            check_message_layout(r);
        }
        if (r.ring) {
            r.counters = read_counters(fd, r.problem);
        }
        if (r.counters && r.kind == "typed channel") { // a cell holds one item: its bytes
            r.counters->total = d::with_ring_totals(r.counters->total, r.ring->published,
                                                    r.ring->released, r.ring->cell_bytes);
        }
    }
}

} // namespace

SegmentReport read_segment(const SegmentId& id, const d::BootId& boot) {
    SegmentReport r;
    r.domain = id.domain;
    r.name = id.name;
    const std::string& name = id.name;
    const std::string shm = d::shm_name_in(id.domain, id.name);
    const int raw = ::shm_open(shm.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0);
    if (raw < 0) {
        r.problem = "ipc: cannot open " + shm + ": " + std::strerror(errno);
        return r;
    }
    const d::FileDescriptor fd(raw);
    if (auto e = d::check_owner(fd.get(), shm)) {
        r.problem = e->message;
        return r;
    }
    r.file_bytes = d::file_size(fd.get()).value_or(0);
    d::SegmentHeader h;
    if (r.file_bytes < sizeof h || !read_at(fd.get(), &h, sizeof h, 0)) {
        r.kind = "no header";
        r.problem = "no header yet: its creator died before writing one, or is creating it";
        r.stale = true; // what the library's reclaim concludes once its wait for a header ends
        return r;
    }
    if (auto e = d::check_format(h, shm)) {
        r.problem = e->message;
        return r;
    }
    if (auto problem = header_problem(h, r.file_bytes); !problem.empty()) {
        r.problem = "ipc: " + shm + ": " + problem;
        return r;
    }
    r.header = fields_of(h, boot);
    r.kind = kind_of(r.header->layout_name, name);
    r.participants = participants_of(h, r.header->same_boot);
    r.stale = !d::live_participant(h, boot).has_value(); // the library's own liveness rule
    read_payload(fd.get(), h, r);
    return r;
}

std::vector<SegmentId> segment_names() {
    std::vector<SegmentId> ids;
    std::error_code error;
    const std::string_view plain = d::k_shm_prefix.substr(1);           // "ferry."
    const std::string_view domained = d::k_shm_domain_prefix.substr(1); // "ferry@"
    for (const auto& entry : std::filesystem::directory_iterator(d::k_shm_directory, error)) {
        const std::string file = entry.path().filename().string();
        if (file.starts_with(plain) && file.size() > plain.size()) {
            ids.push_back({{}, file.substr(plain.size())});
        } else if (file.starts_with(domained)) {
            const auto dot = file.find('.', domained.size());
            if (dot != std::string::npos && dot > domained.size() && dot + 1 < file.size()) {
                ids.push_back(
                    {file.substr(domained.size(), dot - domained.size()), file.substr(dot + 1)});
            }
        }
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

std::string qualified_name(const SegmentReport& r) {
    return r.domain.empty() ? r.name : r.domain + "/" + r.name;
}

SegmentId parse_segment_id(std::string_view text) {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos) {
        return {std::string(d::name_domain()), std::string(text)};
    }
    return {std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

} // namespace ferry::inspect
