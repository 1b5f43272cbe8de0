#pragma once
// The hostile peer's half of hostile_peer.cpp: the script it reads, its raw mapping of the
// segment, and the writes it makes (docs/reliability.md, A hostile peer).
//
// Three kinds of write, so that the corruptions a real peer makes are short inputs:
//   - a field write: one byte names a field of the segment (layout.hpp), one byte a value —
//     0, 1, all ones, small, the top bit, the current value plus a delta or with a bit flipped,
//     or bytes from the script. Each field is written by its own instantiation of hit<>, so
//     every field reached is new coverage and libFuzzer keeps an input for it;
//   - a registration: a participant slot set to a chosen pid (this process, its parent, a pid
//     that cannot exist, a negative one, any) with a chosen start time (right, wrong, none);
//   - a raw write: a region, a place in it, a value of 1 to 8 bytes (the first version's).

#include "layout.hpp"
#include "support.hpp" // tests/ipc: SegmentFile, a peer's mapping of a segment

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <sys/file.h>
#include <unistd.h>
#include <utility>

namespace ipc_fuzz {

// The script: bytes taken in order, zeros once it is used up.
class Script {
public:
    Script(const std::uint8_t* data, std::size_t size) : data_(data), left_(size) {}
    [[nodiscard]] bool more() const { return left_ != 0; }
    std::uint8_t byte() {
        if (left_ == 0) {
            return 0;
        }
        --left_;
        return *data_++;
    }
    std::uint16_t word() { return static_cast<std::uint16_t>(byte() | byte() << 8); }
    std::uint64_t bytes(std::size_t width) {
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < width; ++i) {
            value |= std::uint64_t{byte()} << (8 * i);
        }
        return value;
    }

private:
    const std::uint8_t* data_;
    std::size_t left_;
};

// Its own descriptor and read-write mapping of the whole segment file.
class Attacker {
public:
    explicit Attacker(const std::string& segment) : file_(segment) {}

    [[nodiscard]] bool mapped() const { return file_.mapped(); }
    [[nodiscard]] std::size_t bytes() const { return file_.bytes(); }
    [[nodiscard]] std::byte* at(std::size_t offset) const { return file_.base() + offset; }
    // `width` bytes of `value`, little-endian, at `offset`, cut at the end of the file.
    void write(std::size_t offset, std::uint64_t value, std::size_t width) {
        for (std::size_t i = 0; i < width && offset + i < bytes(); ++i) {
            file_.base()[offset + i] = static_cast<std::byte>(value >> (8 * i));
        }
    }
    // The `width` bytes at `offset` (fewer at the end of the file), little-endian.
    [[nodiscard]] std::uint64_t read(std::size_t offset, std::size_t width = 8) const {
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < width && offset + i < bytes(); ++i) {
            value |= std::uint64_t{std::to_integer<std::uint8_t>(file_.base()[offset + i])}
                     << (8 * i);
        }
        return value;
    }
    void lock() { static_cast<void>(::flock(file_.fd(), LOCK_EX)); }
    void unlock() { static_cast<void>(::flock(file_.fd(), LOCK_UN)); }
    // Registered participants, read as any peer reads the table.
    [[nodiscard]] std::size_t participants() const {
        std::size_t n = 0;
        for (std::size_t i = 0; i < k_participants; ++i) {
            n += decode_slot(at(k_participants_at + i * k_slot_bytes)).pid != 0 ? 1 : 0;
        }
        return n;
    }

private:
    ipc_test::SegmentFile file_;
};

// A value for a field of `width` bytes, of the class the script names.
inline std::uint64_t value_for(Script& in, std::uint64_t current, std::size_t width) {
    const std::uint64_t ones =
        width >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * width)) - 1;
    switch (in.byte() % 8) {
    case 0:
        return 0;
    case 1:
        return 1;
    case 2:
        return ones;
    case 3:
        return 2 + in.byte() % 14; // small: a few cells, a few bytes
    case 4:
        return std::uint64_t{1} << (8 * width - 1); // huge: the top bit
    case 5:
        return current + static_cast<std::uint64_t>(static_cast<std::int8_t>(in.byte()));
    case 6:
        return current ^ std::uint64_t{1} << (in.byte() % (8 * width));
    default:
        return in.bytes(width);
    }
}

// ---- field writes ---------------------------------------------------------------------------

// What the survivor under attack holds: a channel's ring (with its cell stride) or a window.
struct Target {
    bool window = false;
    std::size_t stride = 0; // between cells; 0 for a window
    bool spsc = false;      // the ring is an SpscSharedRing (layout.hpp, k_spsc_fields)
};

// Where the cells of the target's ring start.
inline std::size_t cells_at(const Target& target) {
    return target.spsc ? k_spsc_cells_at : k_cells_at;
}

// Field numbers: the segment header's, then the ring's and two cells' (mpmc channels), the
// window header's (windows), the spsc ring's and the first word of two of its cells (spsc
// channels). Each kind's fields are appended after the others', so that a number the seeds use
// keeps its field.
inline constexpr std::size_t k_cell_count = 2;
inline constexpr std::size_t k_channel_fields =
    k_segment_fields.size() + k_ring_fields.size() + k_cell_count * k_cell_fields.size();
inline constexpr std::size_t k_spsc_first = k_channel_fields + k_window_fields.size();
inline constexpr std::size_t k_spsc_own_fields = k_spsc_fields.size() + k_cell_count;
inline constexpr std::size_t k_all_fields = k_spsc_first + k_spsc_own_fields;

inline Field field_number(std::size_t n, std::size_t stride) {
    if (n < k_segment_fields.size()) {
        return k_segment_fields[n];
    }
    n -= k_segment_fields.size();
    if (n < k_ring_fields.size()) {
        return k_ring_fields[n];
    }
    n -= k_ring_fields.size();
    if (n < k_cell_count * k_cell_fields.size()) {
        const Field f = k_cell_fields[n % k_cell_fields.size()];
        return Field{k_cells_at + n / k_cell_fields.size() * stride + f.offset, f.width};
    }
    n -= k_cell_count * k_cell_fields.size();
    if (n < k_window_fields.size()) {
        return k_window_fields[n];
    }
    n -= k_window_fields.size();
    if (n < k_spsc_fields.size()) {
        return k_spsc_fields[n];
    }
    return Field{k_spsc_cells_at + (n - k_spsc_fields.size()) * stride, 8};
}

// When a field write happens: between survivor calls, or inside an open, after its checks
// (hostile_peer.cpp, open_with_write_after_check). Each (when, field) pair is its own function,
// so its own coverage.
enum class When { between_calls, inside_open };

template <When W, std::size_t N>
[[gnu::noinline]] void hit(Script& in, Attacker& peer, std::size_t stride) {
    const Field f = field_number(N, stride);
    peer.write(f.offset, value_for(in, peer.read(f.offset, f.width), f.width), f.width);
}

template <When W, std::size_t... N>
void hit_number(std::size_t n, Script& in, Attacker& peer, std::size_t stride,
                std::index_sequence<N...>) {
    static_cast<void>(((n == N ? (hit<W, N>(in, peer, stride), true) : false) || ...));
}

// One field of the target, chosen by the script, set to a value of a class it chooses.
inline void write_field(Script& in, Attacker& peer, const Target& target) {
    const std::size_t segment = k_segment_fields.size();
    std::size_t n = 0;
    if (target.window) {
        n = in.byte() % (segment + k_window_fields.size());
        n = n < segment ? n : n - segment + k_channel_fields;
    } else if (target.spsc) {
        n = in.byte() % (segment + k_spsc_own_fields);
        n = n < segment ? n : n - segment + k_spsc_first;
    } else {
        n = in.byte() % k_channel_fields;
    }
    hit_number<When::between_calls>(n, in, peer, target.stride,
                                    std::make_index_sequence<k_all_fields>{});
}

// One field of the segment header, written while an open is between its checks and their use.
inline void write_header_field_inside_open(Script& in, Attacker& peer) {
    hit_number<When::inside_open>(in.byte() % k_segment_fields.size(), in, peer, 0,
                                  std::make_index_sequence<k_segment_fields.size()>{});
}

} // namespace ipc_fuzz
