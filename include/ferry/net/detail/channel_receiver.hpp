#pragma once
// The receiving end of a remote channel, shared by net::ChannelReceiver (typed) and
// net::MessageReceiver: its ReceiverLedger (channel_ledger.hpp: the pool, the queue and the
// credit ledger) behind a mutex, registered in its node's Directory, the control messages the
// ledger queues posted once the mutex is released (docs/multi-node-channels.md, Credits).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ferry/channel/detail/channel_counters.hpp>
#include <ferry/net/detail/channel_ledger.hpp>
#include <ferry/net/detail/channel_wait.hpp>
#include <ferry/net/detail/channel_wire.hpp>
#include <memory>
#include <string>
#include <vector>

namespace ferry::net::detail {

class ReceiverState final : public Endpoint, public std::enable_shared_from_this<ReceiverState> {
public:
    ReceiverState(Node& node, std::string name, Flavor flavor, std::size_t element_bytes,
                  std::size_t capacity)
        : node_(node), ledger_(std::move(name), flavor, element_bytes, capacity) {}
    ~ReceiverState() override = default;

    // Registers in the node's directory: repeat_initialize when a receiver of this node already
    // uses the name's hash; bad_alloc.
    Status serve();
    // Unregisters and tells every sender the channel is stopped (nothing will consume again).
    void leave();

    Verdict on_message(Delivery& d, const ChannelWire& w) override;
    void on_peer_lost(PeerId peer) override;
    [[nodiscard]] EndpointInfo describe() const override {
        const std::lock_guard lock(wait_.mutex);
        EndpointInfo e{"receiver",         ledger_.name(), ledger_.peers(),
                       ledger_.capacity(), ledger_.size(), ledger_.free_credits(),
                       ledger_.stopped(),  ledger_.lost()};
        std::sort(e.peers.begin(), e.peers.end()); // one entry per peer, not per sender
        e.peers.erase(std::unique(e.peers.begin(), e.peers.end()), e.peers.end());
        return e;
    }

    // The oldest message, its slot taken until give_back(): empty (no_wait), timed_out, stopped
    // (stopped and drained), peer_lost (a sender was lost, and drained).
    Status take(Taken& out, Deadline d);
    void give_back(const Taken& t);

    void stop();
    [[nodiscard]] bool stopped() const {
        return with_lock(wait_.mutex, [&] { return ledger_.stopped(); });
    }
    [[nodiscard]] bool lost() const {
        return with_lock(wait_.mutex, [&] { return ledger_.lost(); });
    }
    [[nodiscard]] std::size_t size() const {
        return with_lock(wait_.mutex, [&] { return ledger_.size(); });
    }
    [[nodiscard]] std::size_t blocked() const {
        return with_lock(wait_.mutex, [&] { return wait_.blocked; });
    }
    [[nodiscard]] std::size_t senders() const {
        return with_lock(wait_.mutex, [&] { return ledger_.senders(); });
    }
    [[nodiscard]] std::size_t capacity() const noexcept { return ledger_.capacity(); }
    [[nodiscard]] std::size_t element_bytes() const noexcept { return ledger_.element_bytes(); }
    [[nodiscard]] const std::string& name() const noexcept { return ledger_.name(); }

    // This end's counts (docs/multi-node-channels.md, Counters): updated by the handle layer.
    ferry::detail::ChannelCounters<true, true> counters;

private:
    Verdict on_data(Delivery& d, const ChannelWire& w);
    void receive_batch(Delivery& d, const Arrival& arrival);
    void landed(std::uint64_t seq, std::uint64_t count, Status s,
                std::span<const std::byte> staged = {});
    void check_peers();

    Node& node_;
    std::shared_ptr<Directory> directory_;
    mutable WaitState wait_;
    ReceiverLedger ledger_; // under wait_.mutex
};

} // namespace ferry::net::detail

#include <ferry/net/detail/channel_receiver_impl.hpp>
