// libFuzzer target: a hostile peer against ferry/ipc (docs/processes.md, Reading shared memory
// and Liveness; docs/reliability.md, A hostile peer).
//
// One process holds two mappings of one segment: the survivor's, used only through ferry's public
// API (MessageChannel, Channel, SharedWindow, their loans, views and doorbell), and the
// attacker's, a raw mmap of /dev/shm/ferry.<name> (attacker.hpp). The input is a script: its
// first byte picks a message channel, a typed channel (mpmc), a window or a typed channel of the
// spsc policy (its own ring, SpscSharedRing); then survivor operations
// interleave with attacker writes — a chosen field set to a chosen class of value, a forged
// participant registration, or raw bytes at a chosen place. Every survivor call must answer a
// status — no sanitizer report, no signal, no hang: the survivor only makes no-wait or short
// (1 ms) calls. After each attacker write the liveness oracle (liveness_oracle.hpp) checks that
// a participant the table says is dead is reported lost, and (windows) that none is otherwise.
// Two operations place the attacker's write inside a survivor call, where a peer running
// concurrently could put it:
//   - between the parser's two passes over a message read in place (the count pass and the fill
//     pass of wire_format, called as MessageView::dataset() calls them);
//   - between open's checks of the segment header and its use: the attacker holds the segment
//     file's lock, which open takes after checking and registering, and writes once the opener
//     has registered.
// The segment is created afresh for each input and its name removed after it, so one input never
// sees another's damage.

#include "attacker.hpp"
#include "liveness_oracle.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ferry/ipc/channel.hpp>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/ipc/window.hpp>
#include <ferry/runtime/allocation_registry.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

using namespace std::chrono_literals;
namespace ipc = ferry::ipc;
namespace detail = ferry::ipc::detail;
using ferry::Status;
using namespace ipc_fuzz;

constexpr std::size_t k_capacity = 4;
constexpr std::size_t k_max_message = 512;
constexpr std::size_t k_window_bytes = 256;
struct Item {
    std::uint64_t sequence;
    std::uint64_t check;
};
using Messages = ipc::MessageChannel<ferry::mpmc>;
using Items = ipc::Channel<Item, k_capacity, ferry::mpmc>;
using SpscItems = ipc::Channel<Item, k_capacity, ferry::spsc>;

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

// ---- raw writes ----------------------------------------------------------------------------

// Decodes a place: a region, then a selector within it, so that every field is a few values away.
std::size_t place(Script& in, const Target& target, std::size_t file_bytes,
                  std::optional<std::uint8_t> only_region) {
    const std::uint8_t region = only_region ? *only_region : in.byte();
    const std::uint16_t at = in.word();
    const std::size_t cell = cells_at(target) + (at >> 8) % k_capacity * target.stride;
    switch (region % 7) {
    case 0:
        return k_segment_fields[at % k_segment_fields.size()].offset; // the field itself
    case 1: // the participants table: a slot, then a byte in it
        return k_participants_at + at % k_participants * k_slot_bytes + (at >> 8) % k_slot_bytes;
    case 2:
        if (target.window) {
            return k_window_fields[at % k_window_fields.size()].offset;
        }
        return target.spsc ? k_spsc_fields[at % k_spsc_fields.size()].offset
                           : k_ring_fields[at % k_ring_fields.size()].offset;
    case 3:
        return target.window ? k_window_data_at + at % k_window_bytes
                             : cell + at % 128; // the turn and the message cell header
    case 4: { // a field of an item header of the message the survivor sends
        const auto& items = sample_items();
        return cell + k_turn_bytes + detail::k_cell_header_bytes + items[at % items.size()] +
               k_item_fields[(at >> 8) % std::size(k_item_fields)];
    }
    case 5: // anywhere in a message: item headers, dims, payloads
        return cell + k_turn_bytes + detail::k_cell_header_bytes + at % k_max_message;
    default:
        return (static_cast<std::size_t>(at) * 61) % file_bytes;
    }
}

// Writes a value of 1, 2, 4 or 8 bytes at a place: zero, one, all ones, the current value plus
// a small signed delta, or bytes from the script.
void write_raw(Script& in, Attacker& peer, const Target& target,
               std::optional<std::uint8_t> only_region = std::nullopt) {
    const std::size_t offset = place(in, target, peer.bytes(), only_region);
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
    default:
        value = in.bytes(width);
    }
    peer.write(offset, value, width);
}

// The liveness oracle (liveness_oracle.hpp) for a channel: when the table holds a lost
// participant, a no-wait receive that finds the ring empty is where the survivor learns of it
// (the watch is due: the attacker zeroes its timestamp, at `next_watch_at` in the ring's
// control block), so `empty` is a wrong answer.
template <typename Receive>
void check_channel_liveness(Attacker& peer, std::size_t next_watch_at, Receive receive) {
    if (expected_liveness(peer) != Verdict::lost) {
        return;
    }
    peer.write(next_watch_at, 0, 8);
    if (receive() == Status::empty) {
        __builtin_trap(); // a dead registration taken for alive
    }
}

// One attacker step of the given kind, then the oracle (`judge`).
enum class Attack { field, registration, raw };
template <typename Judge>
void attack(Attack kind, Script& in, Attacker& peer, const Target& target, Judge judge) {
    switch (kind) {
    case Attack::field:
        write_field(in, peer, target);
        break;
    case Attack::registration:
        write_registration(in, peer);
        break;
    case Attack::raw:
        write_raw(in, peer, target);
        break;
    }
    judge();
}
// The attacker's op numbers: raw writes below `raw_end`, then three for field writes, then
// registrations.
Attack attack_kind(std::uint8_t op, std::uint8_t raw_end) {
    return op < raw_end ? Attack::raw : op < raw_end + 3 ? Attack::field : Attack::registration;
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
void parse_with_write_between(Script& in, Attacker& peer, MessageSide& s, const Target& target) {
    Messages& ch = s.pick(in.byte());
    auto view = ch.receive_view(ferry::no_wait);
    if (!view && ch.send(s.sent, ferry::no_wait) == Status::ok) {
        view = ch.receive_view(ferry::no_wait);
    }
    if (!view) {
        write_raw(in, peer, target);
        return;
    }
    check(view->bytes().size() <= k_max_message);
    ferry::detail::WireSummary summary;
    const bool counted = ferry::detail::summarize_message(view->bytes(), summary) == Status::ok;
    write_raw(in, peer, target);
    if (counted) {
        ferry::Dataset ds;
        static_cast<void>(ferry::detail::fill_dataset(ds, view->bytes(), summary,
                                                      ferry::detail::PayloadMode::borrow));
    }
}

// An open of the channel with the attacker's write to a header field after open checked the
// header (a field write with coverage of its own; the other regions are reached by writes
// before a second open): the attacker holds the file's lock, waits (briefly) until the opener
// registered, writes, and lets it go on.
void open_with_write_after_check(Script& in, Attacker& peer, MessageSide& s) {
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
    write_header_field_inside_open(in, peer);
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

// Survivor operations 0-8, raw writes 9-11 (the first version's numbering, which the seeds
// use), field writes 12-14, a registration 15.
void message_step(Script& in, Attacker& peer, MessageSide& s, const Target& target) {
    const std::uint8_t op = in.byte() % 16;
    if (op >= 9) {
        attack(attack_kind(op, 12), in, peer, target, [&] {
            check_channel_liveness(peer, k_next_watch_at,
                                   [&] { return s.channel->receive(s.received, ferry::no_wait); });
        });
        return;
    }
    switch (op) {
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
        parse_with_write_between(in, peer, s, target);
        break;
    default:
        open_with_write_after_check(in, peer, s);
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
    Attacker peer(segment_name());
    if (!peer.mapped()) {
        return;
    }
    const Target target{false, cell_stride(detail::cell_bytes_for(k_max_message))};
    while (in.more()) {
        message_step(in, peer, s, target);
    }
}

// A typed channel of either policy: where its ring keeps what the attacker and the oracle need.
template <typename Channel>
struct ItemsRing;
template <>
struct ItemsRing<Items> {
    static Target target() { return Target{false, cell_stride(sizeof(Item))}; }
    static constexpr std::size_t k_next_watch = k_next_watch_at;
    static constexpr std::uint8_t k_ops = 12;
};
template <>
struct ItemsRing<SpscItems> {
    static Target target() { return Target{false, spsc_cell_stride(sizeof(Item)), true}; }
    static constexpr std::size_t k_next_watch = k_spsc_next_watch_at;
    static constexpr std::uint8_t k_ops = 15;
};

// The spsc channel's operations beyond the mpmc kind's (appended, so the mpmc kind's numbering
// stays): a blocking send bounded at 1 ms, a no-wait receive into an existing object, and an
// explicit close after which the handle answers `uninitialized` (a closed second opener is
// dropped; a closed creator stays closed for the rest of the input).
template <typename Channel>
void item_extra_step(std::uint8_t op, Script& in, Channel& ch, std::optional<Channel>& second) {
    switch (op) {
    case 12:
        static_cast<void>(ch.send_for(Item{in.word(), 1}, 1ms));
        break;
    case 13: {
        Item out{};
        static_cast<void>(ch.receive(out, ferry::no_wait));
        break;
    }
    default:
        static_cast<void>(ch.close()); // an error is an answer too; closed either way
        check(!ch.is_open() && ch.try_send(Item{0, 0}) == Status::uninitialized);
        if (second && &ch == &*second) {
            second.reset();
        }
        break;
    }
}

// Survivor operations 0-5, raw writes 6-7 (the first version's numbering), field writes 8-10,
// a registration 11; for the spsc channel, item_extra_step's 12-14.
template <typename Channel>
void item_step(Script& in, Attacker& peer, Channel& channel, std::optional<Channel>& second) {
    using Ring = ItemsRing<Channel>;
    Channel& ch = (in.byte() & 1) != 0 && second ? *second : channel;
    const std::uint8_t op = in.byte() % Ring::k_ops;
    if (op >= 6 && op < 12) {
        attack(attack_kind(op, 8), in, peer, Ring::target(), [&] {
            check_channel_liveness(peer, Ring::k_next_watch, [&] {
                Item out{};
                return channel.receive(out, ferry::no_wait);
            });
        });
        return;
    }
    switch (op) {
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
        } else if (auto r = Channel::open(segment_name(), 1ms)) {
            second.emplace(std::move(*r));
        }
        break;
    default:
        item_extra_step(op, in, ch, second);
        break;
    }
}

template <typename Channel>
void run_items(Script& in) {
    auto channel = Channel::create(segment_name(), 100ms);
    if (!channel) {
        return;
    }
    Attacker peer(segment_name());
    if (!peer.mapped()) {
        return;
    }
    std::optional<Channel> second;
    while (in.more()) {
        item_step(in, peer, *channel, second);
    }
}

// ---- a shared window ------------------------------------------------------------------------

struct WindowSide {
    ferry::AllocationRegistry registry; // outlives the windows: their records point into it
    std::optional<ipc::SharedWindow> owner;
    std::optional<ipc::SharedWindow> peer; // an opener in the same process

    const ipc::SharedWindow& pick(std::uint8_t b) const {
        return (b & 1) != 0 && peer ? *peer : *owner;
    }
};

// The oracle for a window: lost_participant() answers the table exactly.
void check_window_liveness(const Attacker& attacker, const ipc::SharedWindow& owner) {
    const Verdict v = expected_liveness(attacker);
    const bool lost = owner.lost_participant().has_value();
    if ((v == Verdict::lost && !lost) || (v == Verdict::alive && lost)) {
        __builtin_trap(); // the library judged a registration otherwise than the rule
    }
}

// A writer's store through either mapping: in range it lands in the data area, out of range it
// is refused. The owner's address comes from the script, near the window or anywhere.
void window_write(Script& in, const ipc::SharedWindow& w, bool flag) {
    const std::uint16_t at = in.word();
    const std::uint64_t address =
        (at & 0x8000) != 0 ? in.bytes(8) : w.owner_base() + at % (k_window_bytes + 64) - 32;
    if (flag) {
        const Status st = w.window().publish(address, static_cast<std::int32_t>(in.byte()));
        check(st != Status::ok ||
              (address >= w.owner_base() && address - w.owner_base() + 4 <= w.window().size()));
        return;
    }
    const std::uint8_t bytes[32] = {};
    const std::size_t n = in.byte() % sizeof bytes;
    const Status st =
        w.window().write(address, std::span(reinterpret_cast<const std::byte*>(bytes), n));
    check(st != Status::ok ||
          (address >= w.owner_base() && address - w.owner_base() + n <= w.window().size()));
}

// A waiter's bounded park on the shared doorbell (rings and sleepers are the attacker's too).
void window_park(const ipc::SharedWindow& w) {
    const ferry::afd::Doorbell& bell = w.doorbell();
    bell.arm();
    bell.park(bell.snapshot(), ferry::afd::Doorbell::clock::now() + 200us);
    bell.disarm();
}

// Survivor operations 0-6, raw writes 7-8, field writes 9-11, a registration 12.
void window_step(Script& in, Attacker& attacker, WindowSide& s) {
    const std::uint8_t op = in.byte() % 13;
    if (op >= 7) {
        attack(attack_kind(op, 9), in, attacker, Target{true, 0},
               [&] { check_window_liveness(attacker, *s.owner); });
        return;
    }
    switch (op) {
    case 0:
        if (s.peer) {
            s.peer.reset();
        } else if (auto r = ipc::SharedWindow::open(segment_name(), 1ms)) {
            check(r->window().size() == k_window_bytes && r->data().size() == k_window_bytes);
            s.peer.emplace(std::move(*r));
        }
        break;
    case 1:
    case 2:
        window_write(in, s.pick(in.byte()), op == 2);
        break;
    case 3:
        static_cast<void>(s.pick(in.byte()).window().ring());
        break;
    case 4:
        window_park(s.pick(in.byte()));
        break;
    case 5:
        static_cast<void>(s.owner->register_in(s.registry));
        break;
    default:
        check_window_liveness(attacker, *s.owner);
        break;
    }
}

void run_window(Script& in) {
    WindowSide s;
    auto made = ipc::SharedWindow::create(segment_name(), k_window_bytes, 100ms);
    if (!made) {
        return;
    }
    s.owner.emplace(std::move(*made));
    Attacker attacker(segment_name());
    if (!attacker.mapped()) {
        return;
    }
    while (in.more()) {
        window_step(in, attacker, s);
    }
    check_window_liveness(attacker, *s.owner);
}

void remove_segment() {
    ::unlink(segment_path().c_str());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool cleanup = std::atexit(remove_segment) == 0;
    static_cast<void>(cleanup);
    Script in(data, size);
    switch (in.byte() % 4) {
    case 0:
        run_messages(in);
        break;
    case 1:
        run_items<Items>(in);
        break;
    case 2:
        run_window(in);
        break;
    default:
        run_items<SpscItems>(in);
    }
    // Whatever the attacker left in the participants table, the name goes: the next input starts
    // from a fresh segment.
    remove_segment();
    return 0;
}
