#pragma once
// The receiving end of a remote channel without its Node (docs/multi-node-channels.md,
// Credits): a pool of Capacity slots, the queue of received messages, and the credit ledger that
// keeps the senders from ever sending more than the pool holds. Pure: ReceiverState
// (channel_receiver.hpp) calls it with its mutex held and posts the control messages it queues
// in `out`; the fuzzer (fuzz/net) calls it directly.
//
// Ledger. Every credit is in exactly one place:
//   free_ (never granted, or reclaimed)  +  each sender's outstanding (granted, not yet used)
//   +  each sender's owed (its messages consumed, not yet returned)  +  queue_.size()
//   +  held_ (slots a caller is reading)                               ==  Capacity.
// A DATA spends one of its sender's outstanding credits and takes a slot; the slot and the
// credit come back when the message is consumed.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <ferry/core/status.hpp>
#include <ferry/net/detail/channel_message.hpp>
#include <map>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ferry::net::detail {

inline constexpr std::size_t k_slot_alignment = 64; // a wire-format message is 64-byte aligned

struct AlignedFree {
    void operator()(std::byte* p) const noexcept {
        ::operator delete[](p, std::align_val_t{k_slot_alignment});
    }
};

[[nodiscard]] inline std::size_t round_up(std::size_t n, std::size_t to) noexcept {
    return (n + to - 1) / to * to;
}

// One slot handed to a caller: the message bytes and whom its credit belongs to.
struct Taken {
    std::uint32_t slot = 0;
    std::uint64_t sender = 0;
    std::span<std::byte> bytes;
};

// A DATA given its slots: `count` messages numbered from `seq`. A rendezvous one is to be
// received into `slot` (one message) or, for a batch (whose slots are not contiguous), into a
// staging buffer of the DATA's length; then landed(seq, count, ok, staged).
struct Arrival {
    std::uint64_t seq = 0;
    std::uint64_t count = 1;
    std::span<std::byte> slot;
};

class ReceiverLedger {
public:
    // The most senders one receiver keeps, and the most of them from one peer process
    // (docs/multi-node-channels.md, Limits).
    static constexpr std::size_t k_max_senders = 1024;
    static constexpr std::ptrdiff_t k_max_senders_per_peer = 64;

    ReceiverLedger(std::string name, Flavor flavor, std::size_t element_bytes,
                   std::size_t capacity);

    // This receiver's endpoint id (the `from` of what it sends), once registered.
    void set_id(std::uint32_t id) noexcept { id_ = id; }
    [[nodiscard]] std::uint32_t id() const noexcept { return id_; }

    // An OPEN from `peer` with the channel's name as its (eager) payload.
    const char* open(std::uint32_t peer, const ChannelWire& w, bool rendezvous,
                     std::span<const std::byte> name, std::vector<Outgoing>& out);
    // WANT, GIVE_BACK, CLOSE or STOP from a sender of `peer`.
    const char* sender_message(std::uint32_t peer, const ChannelWire& w,
                               std::vector<Outgoing>& out);
    // A DATA of `w.a` messages, `length` bytes, checked and given a slot per message; an eager
    // one is copied into them.
    const char* data(std::uint32_t peer, const ChannelWire& w, std::uint64_t length,
                     bool rendezvous, std::span<const std::byte> eager, Arrival& arrival);
    // Messages seq .. seq + count - 1 of a rendezvous DATA landed (ok) or failed; a batch's
    // bytes are in `staged`.
    void landed(std::uint64_t seq, std::uint64_t count, bool ok,
                std::span<const std::byte> staged = {});
    // A receive found nothing and is about to park or give up: what is owed goes back now if a
    // sender wants or holds fewer credits than it is owed.
    void idle(std::vector<Outgoing>& out);

    // The oldest message, its slot held until give_back(): empty, stopped or peer_lost when
    // there is none.
    Status take(Taken& out, std::vector<Outgoing>& messages);
    void give_back(const Taken& t, std::vector<Outgoing>& out);
    // The senders of `peer` are gone; true when one of them had not closed (the channel is lost).
    bool peer_lost(std::uint32_t peer, std::vector<Outgoing>& out);
    // Stops the channel and tells every sender; false when it was stopped already.
    bool stop(std::vector<Outgoing>& out);

    [[nodiscard]] std::vector<std::uint32_t> peers() const;
    [[nodiscard]] bool stopped() const noexcept { return stopped_; }
    [[nodiscard]] bool lost() const noexcept { return lost_; }
    [[nodiscard]] std::size_t size() const noexcept { return queue_.size(); }
    [[nodiscard]] std::size_t senders() const noexcept { return senders_.size(); }
    // Credits lent to no sender (the receiver's spare room).
    [[nodiscard]] std::uint64_t free_credits() const noexcept { return free_; }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t element_bytes() const noexcept { return element_bytes_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    // The ledger's sum and the slots' count, both Capacity when the books balance.
    [[nodiscard]] std::uint64_t credits_accounted() const;
    [[nodiscard]] std::size_t slots_accounted() const noexcept {
        return free_slots_.size() + queue_.size() + held_;
    }

private:
    struct Sender {
        std::uint32_t peer = 0;
        std::uint32_t id = 0;
        std::uint64_t outstanding = 0;
        std::uint64_t owed = 0;
        std::uint64_t initial = 0; // granted before the ACCEPT went out: carried by it
        bool accepted = false;
        bool wanting = false;
        bool recalled = false; // a RECALL is unanswered
        bool closed = false;   // CLOSE came; kept until its last credit is back
    };
    enum class EntryState : std::uint8_t { ready, pending, failed };
    struct Entry {
        std::uint64_t seq;
        std::uint32_t slot;
        std::uint64_t sender;
        std::uint64_t length;
        EntryState state;
    };

    static std::uint64_t key(std::uint32_t peer, std::uint32_t id) noexcept {
        return (std::uint64_t{peer} << 32) | id;
    }
    [[nodiscard]] std::span<std::byte> slot_bytes(std::uint32_t slot) const noexcept {
        return {pool_.get() + std::size_t{slot} * slot_stride_, element_bytes_};
    }
    [[nodiscard]] const char* check_data(const ChannelWire& w, std::uint64_t length,
                                         bool rendezvous, std::span<const std::byte> eager,
                                         const Sender* s) const;
    const char* admit_sender(std::uint32_t peer, const ChannelWire& w, std::vector<Outgoing>& out);
    void consumed(std::uint64_t sender, std::vector<Outgoing>& out);
    void flush(std::vector<Outgoing>& out);
    void distribute(std::vector<Outgoing>& out);
    void grant(Sender& s, std::uint64_t n, std::vector<Outgoing>& out);
    void maybe_recall(std::vector<Outgoing>& out);
    void drop_sender(std::map<std::uint64_t, Sender>::iterator it);
    void stop_senders(std::vector<Outgoing>& out);

    const std::string name_;
    const Flavor flavor_;
    const std::size_t element_bytes_;
    const std::size_t capacity_;
    const std::size_t slot_stride_;
    const std::size_t batch_; // credits returned once this many were consumed (or when idle)
    std::unique_ptr<std::byte[], AlignedFree> pool_;
    std::uint32_t id_ = 0;

    std::vector<std::uint32_t> free_slots_;
    std::deque<Entry> queue_;
    std::map<std::uint64_t, Sender> senders_;
    std::deque<std::uint64_t> wanting_; // senders waiting for credits, oldest first
    std::uint64_t free_ = 0;
    std::uint64_t held_ = 0;
    std::uint64_t consumed_since_flush_ = 0;
    std::uint64_t next_seq_ = 0;
    bool stopped_ = false;
    bool lost_ = false;
};

} // namespace ferry::net::detail

#include <ferry/net/detail/channel_ledger_impl.hpp>
