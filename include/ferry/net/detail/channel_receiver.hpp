#pragma once
// The receiving end of a remote channel, shared by net::ChannelReceiver (typed) and
// net::MessageReceiver: a pool of Capacity slots, the queue of received messages, and the
// credit ledger that keeps the senders from ever sending more than the pool holds
// (docs/multi-node-channels.md, Credits).
//
// Ledger. Every credit is in exactly one place:
//   free_ (never granted, or reclaimed)  +  each sender's outstanding (granted, not yet used)
//   +  each sender's owed (its messages consumed, not yet returned)  +  queue_.size()
//   +  held_ (slots a caller is reading)                               ==  Capacity.
// A DATA spends one of its sender's outstanding credits and takes a slot; the slot and the
// credit come back when the message is consumed.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <ferry/channel/detail/channel_counters.hpp>
#include <ferry/net/detail/channel_wait.hpp>
#include <ferry/net/detail/channel_wire.hpp>
#include <map>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace ferry::net::detail {

inline constexpr std::size_t k_slot_alignment = 64; // a wire-format message is 64-byte aligned

struct AlignedFree {
    void operator()(std::byte* p) const noexcept {
        ::operator delete[](p, std::align_val_t{k_slot_alignment});
    }
};

// One slot handed to a caller: the message bytes and whom its credit belongs to.
struct Taken {
    std::uint32_t slot = 0;
    std::uint64_t sender = 0;
    std::span<std::byte> bytes;
};

class ReceiverState final : public Endpoint, public std::enable_shared_from_this<ReceiverState> {
public:
    ReceiverState(Node& node, std::string name, Flavor flavor, std::size_t element_bytes,
                  std::size_t capacity);
    ~ReceiverState() override = default;

    // Registers in the node's directory: repeat_initialize when a receiver of this node already
    // uses the name's hash; bad_alloc.
    Status serve();
    // Unregisters and tells every sender the channel is stopped (nothing will consume again).
    void leave();

    Verdict on_message(Delivery& d, const ChannelWire& w) override;
    void on_peer_lost(PeerId peer) override;

    // The oldest message, its slot taken until give_back(): empty (no_wait), timed_out, stopped
    // (stopped and drained), peer_lost (a sender was lost, and drained).
    Status take(Taken& out, Deadline d);
    void give_back(const Taken& t);

    void stop();
    [[nodiscard]] bool stopped() const {
        return with_lock(wait_.mutex, [&] { return stopped_; });
    }
    [[nodiscard]] bool lost() const {
        return with_lock(wait_.mutex, [&] { return lost_; });
    }
    [[nodiscard]] std::size_t size() const {
        return with_lock(wait_.mutex, [&] { return queue_.size(); });
    }
    [[nodiscard]] std::size_t blocked() const {
        return with_lock(wait_.mutex, [&] { return wait_.blocked; });
    }
    [[nodiscard]] std::size_t senders() const {
        return with_lock(wait_.mutex, [&] { return senders_.size(); });
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return capacity_; }
    [[nodiscard]] std::size_t element_bytes() const noexcept { return element_bytes_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }

    // This end's counts (docs/multi-node-channels.md, Counters): updated by the handle layer.
    ferry::detail::ChannelCounters<true, true> counters;

private:
    struct Sender {
        PeerId peer = 0;
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

    // The most senders one receiver keeps, and the most of them from one peer process
    // (docs/multi-node-channels.md, Limits).
    static constexpr std::size_t k_max_senders = 1024;
    static constexpr std::ptrdiff_t k_max_senders_per_peer = 64;
    static std::uint64_t key(PeerId peer, std::uint32_t id) noexcept {
        return (std::uint64_t{peer} << 32) | id;
    }
    [[nodiscard]] std::span<std::byte> slot_bytes(std::uint32_t slot) const noexcept {
        return {pool_.get() + std::size_t{slot} * slot_stride_, element_bytes_};
    }

    Verdict on_open(Delivery& d, const ChannelWire& w, std::vector<Outgoing>& out);
    Verdict on_data(Delivery& d, const ChannelWire& w);
    [[nodiscard]] const char* check_data(const Delivery& d, const ChannelWire& w,
                                         const Sender* s) const;
    void receive_batch(Delivery& d, std::uint64_t first, std::uint64_t count);
    Verdict on_sender_message(PeerId peer, const ChannelWire& w, std::vector<Outgoing>& out);
    void landed(std::uint64_t first, std::uint64_t count, Status s,
                std::span<const std::byte> staged = {});
    void consumed(std::uint64_t sender, std::vector<Outgoing>& out);
    void flush(std::vector<Outgoing>& out);
    void distribute(std::vector<Outgoing>& out);
    void grant(Sender& s, std::uint64_t n, std::vector<Outgoing>& out);
    void maybe_recall(std::vector<Outgoing>& out);
    void drop_sender(std::map<std::uint64_t, Sender>::iterator it);
    void stop_senders(std::vector<Outgoing>& out);
    void check_peers();

    Node& node_;
    const std::string name_;
    const Flavor flavor_;
    const std::size_t element_bytes_;
    const std::size_t capacity_;
    const std::size_t slot_stride_;
    const std::size_t batch_; // credits returned once this many were consumed (or on empty)
    std::unique_ptr<std::byte[], AlignedFree> pool_;
    std::shared_ptr<Directory> directory_;
    std::uint32_t id_ = 0;

    mutable WaitState wait_;
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

#include <ferry/net/detail/channel_receiver_impl.hpp>
