// libFuzzer target: a hostile peer against ferry/ipc (docs/processes.md, Reading shared memory).
//
// One process holds two mappings of one segment: the survivor's, used only through ferry's public
// API (MessageChannel, Channel, their loans and views), and the attacker's, a raw mmap of
// /dev/shm/ferry.<name>. The input is a script: survivor operations interleaved with attacker
// writes of chosen bytes at chosen places (headers, ring words, cells, message items,
// participants). Every survivor call must answer a status — no sanitizer report, no signal, no
// hang: the survivor only makes no-wait or short calls. Two operations place the attacker's write
// inside a survivor call, where a peer running concurrently could put it:
//   - between the parser's two passes over a message read in place (the count pass and the fill
//     pass of wire_format, called as MessageView::dataset() calls them);
//   - between open's checks of the segment header and its use: the attacker holds the segment
//     file's lock, which open takes after checking and registering, and writes once the opener
//     has registered.
// The segment is created afresh for each input and its name removed after it, so one input never
// sees another's damage.

#include "support.hpp" // tests/ipc: SegmentFile, a peer's mapping of a segment

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ferry/ipc/channel.hpp>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <optional>
#include <span>
#include <string>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace ipc = ferry::ipc;
namespace detail = ferry::ipc::detail;
using ferry::Status;

constexpr std::size_t k_capacity = 4;
constexpr std::size_t k_max_message = 512;
struct Item {
    std::uint64_t sequence;
    std::uint64_t check;
};
using Messages = ipc::MessageChannel<ferry::mpmc>;
using Items = ipc::Channel<Item, k_capacity, ferry::mpmc>;

void check(bool ok) {
    if (!ok) {
        std::abort(); // a property broke: let libFuzzer record the input
    }
}

const std::string& segment_name() {
    static const std::string name = "fz" + std::to_string(::getpid()) + "-peer";
    return name;
}
std::string segment_path() {
    return ipc_test::shm_path(segment_name());
}

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
    std::span<const std::uint8_t> take(std::size_t bytes) {
        const std::size_t n = std::min(bytes, left_);
        const std::span<const std::uint8_t> out(data_, n);
        data_ += n;
        left_ -= n;
        return out;
    }

private:
    const std::uint8_t* data_;
    std::size_t left_;
};

// The attacker: its own descriptor and read-write mapping of the whole segment file.
class Attacker {
public:
    Attacker() : file_(segment_name()) {}

    [[nodiscard]] bool mapped() const { return file_.mapped(); }
    [[nodiscard]] std::size_t bytes() const { return file_.bytes(); }
    void write(std::size_t offset, std::span<const std::uint8_t> value) {
        if (offset < bytes()) {
            std::memcpy(file_.base() + offset, value.data(),
                        std::min(value.size(), bytes() - offset));
        }
    }
    // The 8 bytes at `offset` (fewer at the end of the file), little-endian.
    [[nodiscard]] std::uint64_t read(std::size_t offset) const {
        std::uint64_t value = 0;
        for (std::size_t i = 0; i < 8 && offset + i < bytes(); ++i) {
            value |= std::uint64_t{std::to_integer<std::uint8_t>(file_.base()[offset + i])}
                     << (8 * i);
        }
        return value;
    }
    void lock() { static_cast<void>(::flock(file_.fd(), LOCK_EX)); }
    void unlock() { static_cast<void>(::flock(file_.fd(), LOCK_UN)); }
    // Registered participants, read as any peer reads the table.
    [[nodiscard]] std::size_t participants() const {
        auto& header = *reinterpret_cast<detail::SegmentHeader*>(file_.base());
        std::size_t n = 0;
        for (auto& slot : header.participants) {
            n += detail::read_slot(slot).pid != 0 ? 1 : 0;
        }
        return n;
    }

private:
    ipc_test::SegmentFile file_;
};

// The dataset the survivor sends, and where its item headers lie in a message.
ferry::Dataset sample() {
    ferry::Dataset ds;
    static_cast<void>(ds.set_name("fz"));
    static_cast<void>(
        ds.add(*ferry::DataItem::from(std::vector<std::int32_t>{1, 2, 3, 4}, {2, 2})));
    static_cast<void>(ds.add(*ferry::DataItem::from(std::vector<std::int8_t>{5, 6, 7}, {3})));
    static_cast<void>(ds.add(ferry::DataItem::end_of_sequence()));
    return ds;
}

const std::vector<std::size_t>& sample_items() {
    static const std::vector<std::size_t> offsets = [] {
        std::vector<std::size_t> at{0};
        const auto message = ferry::serialize(sample());
        static_cast<void>(ferry::detail::walk_message(*message, [&](const auto& item) {
            at.push_back(static_cast<std::size_t>(item.payload.data() - message->data()) +
                         item.payload.size());
            return Status::ok;
        }));
        at.pop_back(); // the end of the message
        return at;
    }();
    return offsets;
}
constexpr std::size_t k_item_fields[] = {0, 4, 8, 12, 16, 20, 24, 56}; // WireItemHeader's

// ---- where the attacker writes --------------------------------------------------------------

constexpr std::size_t k_header_fields[] = {
    offsetof(detail::SegmentHeader, magic),
    offsetof(detail::SegmentHeader, header_format),
    offsetof(detail::SegmentHeader, header_bytes),
    offsetof(detail::SegmentHeader, payload_offset),
    offsetof(detail::SegmentHeader, payload_bytes),
    offsetof(detail::SegmentHeader, total_bytes),
    offsetof(detail::SegmentHeader, ready),
    offsetof(detail::SegmentHeader, layout_version),
    offsetof(detail::SegmentHeader, layout_hash),
    offsetof(detail::SegmentHeader, layout_name),
    offsetof(detail::SegmentHeader, boot_id),
    offsetof(detail::SegmentHeader, creator_pid),
    offsetof(detail::SegmentHeader, creator_start_time),
};
constexpr std::size_t k_ring_fields[] = {
    offsetof(detail::RingControl, magic),         offsetof(detail::RingControl, format),
    offsetof(detail::RingControl, policy),        offsetof(detail::RingControl, capacity),
    offsetof(detail::RingControl, cell_bytes),    offsetof(detail::RingControl, stride),
    offsetof(detail::RingControl, ready),         offsetof(detail::RingControl, tail),
    offsetof(detail::RingControl, head),          offsetof(detail::RingControl, stopped),
    offsetof(detail::RingControl, lost),          offsetof(detail::RingControl, items_word),
    offsetof(detail::RingControl, slots_word),    offsetof(detail::RingControl, blocked),
    offsetof(detail::RingControl, next_watch_ns),
};
constexpr std::size_t k_ring_at = detail::k_payload_offset;

// The cell stride of the channel under attack: a turn line, then the cell.
std::size_t stride_of(std::size_t cell_bytes) {
    return detail::k_ring_line + (cell_bytes + 63) / 64 * 64;
}

// Decodes a place: a region, then a selector within it, so that every field is a few values away.
std::size_t place(Script& in, std::size_t cell_bytes, std::size_t file_bytes,
                  std::optional<std::uint8_t> only_region) {
    const std::uint8_t region = only_region ? *only_region : in.byte();
    const std::uint16_t at = in.word();
    const std::size_t cells = k_ring_at + sizeof(detail::RingControl);
    const std::size_t cell = cells + (at >> 8) % k_capacity * stride_of(cell_bytes);
    switch (region % 7) {
    case 0:
        return k_header_fields[at % std::size(k_header_fields)]; // the field itself
    case 1: // the participants table: slot, then word / start time / generation
        return offsetof(detail::SegmentHeader, participants) +
               at % detail::k_max_participants * sizeof(detail::ParticipantSlot) + (at >> 8) % 24;
    case 2:
        return k_ring_at + k_ring_fields[at % std::size(k_ring_fields)];
    case 3:
        return cell + at % 128; // the turn and the message cell header
    case 4: {                   // a field of an item header of the message the survivor sends
        const auto& items = sample_items();
        return cell + detail::k_ring_line + detail::k_cell_header_bytes + items[at % items.size()] +
               k_item_fields[(at >> 8) % std::size(k_item_fields)];
    }
    case 5: // anywhere in a message: item headers, dims, payloads
        return cell + detail::k_ring_line + detail::k_cell_header_bytes + at % k_max_message;
    default:
        return (static_cast<std::size_t>(at) * 61) % file_bytes;
    }
}

// Writes a value of 1, 2, 4 or 8 bytes at a place: zero, one, all ones, the current value plus
// a small signed delta, or bytes from the script.
void attack(Script& in, Attacker& peer, std::size_t cell_bytes,
            std::optional<std::uint8_t> only_region = std::nullopt) {
    const std::size_t offset = place(in, cell_bytes, peer.bytes(), only_region);
    const std::uint8_t how = in.byte();
    const std::size_t width = std::size_t{1} << ((how >> 3) & 3);
    std::uint64_t value = 0;
    switch (how % 5) {
    case 0:
        break;
    case 1:
        value = 1;
        break;
    case 2:
        value = ~std::uint64_t{0};
        break;
    case 3:
        value = peer.read(offset) + static_cast<std::uint64_t>(static_cast<std::int8_t>(in.byte()));
        break;
    default: {
        const auto bytes = in.take(width);
        std::memcpy(&value, bytes.data(), bytes.size());
    }
    }
    std::uint8_t le[8];
    for (std::size_t i = 0; i < 8; ++i) {
        le[i] = static_cast<std::uint8_t>(value >> (8 * i));
    }
    peer.write(offset, std::span<const std::uint8_t>(le, width));
}

// ---- the survivor ---------------------------------------------------------------------------

struct MessageSide {
    std::optional<Messages> channel;
    std::optional<Messages> second; // an opener in the same process
    std::vector<ipc::MessageView> views;
    std::vector<ipc::MessageLoan> loans;
    ferry::Dataset sent = sample();
    ferry::Dataset received;

    Messages& pick(std::uint8_t b) { return (b & 1) != 0 && second ? *second : *channel; }
};

// A view's message parsed as dataset() does, with the attacker's write between the count pass
// and the fill pass.
void parse_with_write_between(Script& in, Attacker& peer, MessageSide& s, std::size_t cell_bytes) {
    Messages& ch = s.pick(in.byte());
    auto view = ch.receive_view(ferry::no_wait);
    if (!view && ch.send(s.sent, ferry::no_wait) == Status::ok) {
        view = ch.receive_view(ferry::no_wait);
    }
    if (!view) {
        attack(in, peer, cell_bytes);
        return;
    }
    check(view->bytes().size() <= k_max_message);
    ferry::detail::WireSummary summary;
    const bool counted = ferry::detail::summarize_message(view->bytes(), summary) == Status::ok;
    attack(in, peer, cell_bytes);
    if (counted) {
        ferry::Dataset ds;
        static_cast<void>(ferry::detail::fill_dataset(ds, view->bytes(), summary,
                                                      ferry::detail::PayloadMode::borrow));
    }
}

// An open of the channel with the attacker's write to a header field after open checked the
// header (the other regions are reached by plain writes before a second open): the attacker
// holds the file's lock, waits (briefly) until the opener registered, writes, and lets it go on.
void open_with_write_after_check(Script& in, Attacker& peer, MessageSide& s,
                                 std::size_t cell_bytes) {
    s.second.reset();
    const std::size_t before = peer.participants();
    peer.lock();
    std::optional<Messages> opened;
    std::atomic<bool> done{false};
    std::thread opener([&] {
        auto r = Messages::open(segment_name(), k_capacity, k_max_message, 100ms);
        if (r) {
            opened.emplace(std::move(*r));
        }
        done.store(true);
    });
    const auto give_up = std::chrono::steady_clock::now() + 50ms;
    while (!done.load() && peer.participants() <= before &&
           std::chrono::steady_clock::now() < give_up) {
        std::this_thread::yield();
    }
    attack(in, peer, cell_bytes, 0); // a segment header field
    peer.unlock();
    opener.join();
    s.second = std::move(opened);
}

void receive_some(Script& in, MessageSide& s) {
    Messages& ch = s.pick(in.byte());
    switch (in.byte() % 3) {
    case 0:
        static_cast<void>(ch.receive(ferry::no_wait));
        break;
    case 1:
        s.received.clear();
        static_cast<void>(ch.receive(s.received, ferry::no_wait));
        break;
    default: {
        auto view = ch.receive_view(ferry::no_wait);
        if (view) {
            check(view->bytes().size() <= k_max_message);
            static_cast<void>(view->dataset());
            if (s.views.size() < 2) {
                s.views.push_back(std::move(*view));
            }
        }
    }
    }
}

void loan_some(Script& in, MessageSide& s) {
    const std::uint8_t how = in.byte();
    auto loan = s.pick(how).loan(in.word() % (k_max_message + 8), ferry::no_wait);
    if (!loan) {
        return;
    }
    check(loan->bytes().size() <= k_max_message);
    const auto written = ferry::serialize_into(s.sent, loan->bytes());
    if ((how & 2) != 0 && s.loans.size() < 2) {
        s.loans.push_back(std::move(*loan)); // held: published or dropped later
    } else if ((how & 4) != 0) {
        static_cast<void>(loan->publish(written ? *written : loan->bytes().size()));
    } // otherwise dropped here: a cancelled marker
}

void message_step(Script& in, Attacker& peer, MessageSide& s, std::size_t cell_bytes) {
    switch (in.byte() % 12) {
    case 0:
        static_cast<void>(s.pick(in.byte()).send(s.sent, ferry::no_wait));
        break;
    case 1:
        receive_some(in, s);
        break;
    case 2:
        loan_some(in, s);
        break;
    case 3:
        if (!s.loans.empty()) {
            static_cast<void>(s.loans.back().publish());
            s.loans.pop_back();
        }
        if (!s.views.empty()) {
            s.views.erase(s.views.begin());
        }
        break;
    case 4:
        static_cast<void>(s.pick(in.byte()).clear());
        check(s.channel->size() <= k_capacity);
        break;
    case 5:
        s.pick(in.byte()).stop();
        break;
    case 6:
        if (s.second) {
            s.second.reset();
        } else if (auto r = Messages::open(segment_name(), k_capacity, k_max_message, 1ms)) {
            s.second.emplace(std::move(*r));
        }
        break;
    case 7:
        parse_with_write_between(in, peer, s, cell_bytes);
        break;
    case 8:
        open_with_write_after_check(in, peer, s, cell_bytes);
        break;
    default:
        attack(in, peer, cell_bytes);
        break;
    }
}

void run_messages(Script& in) {
    MessageSide s;
    auto made = Messages::create(segment_name(), k_capacity, k_max_message, 100ms);
    if (!made) {
        return;
    }
    s.channel.emplace(std::move(*made));
    Attacker peer;
    if (!peer.mapped()) {
        return;
    }
    const std::size_t cell_bytes = detail::cell_bytes_for(k_max_message);
    while (in.more()) {
        message_step(in, peer, s, cell_bytes);
    }
}

void item_step(Script& in, Attacker& peer, Items& channel, std::optional<Items>& second) {
    Items& ch = (in.byte() & 1) != 0 && second ? *second : channel;
    switch (in.byte() % 8) {
    case 0:
        static_cast<void>(ch.try_send(Item{in.word(), 0}));
        break;
    case 1:
        static_cast<void>(ch.try_receive());
        break;
    case 2:
        static_cast<void>(ch.receive_for(1ms));
        break;
    case 3:
        static_cast<void>(ch.clear());
        check(ch.size() <= k_capacity);
        break;
    case 4:
        ch.stop();
        break;
    case 5:
        if (second) {
            second.reset();
        } else if (auto r = Items::open(segment_name(), 1ms)) {
            second.emplace(std::move(*r));
        }
        break;
    default:
        attack(in, peer, sizeof(Item));
        break;
    }
}

void run_items(Script& in) {
    auto channel = Items::create(segment_name(), 100ms);
    if (!channel) {
        return;
    }
    Attacker peer;
    if (!peer.mapped()) {
        return;
    }
    std::optional<Items> second;
    while (in.more()) {
        item_step(in, peer, *channel, second);
    }
}

void remove_segment() {
    ::unlink(segment_path().c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool cleanup = std::atexit(remove_segment) == 0;
    static_cast<void>(cleanup);
    Script in(data, size);
    if ((in.byte() & 1) == 0) {
        run_messages(in);
    } else {
        run_items(in);
    }
    // Whatever the attacker left in the participants table, the name goes: the next input starts
    // from a fresh segment.
    remove_segment();
    return 0;
}
