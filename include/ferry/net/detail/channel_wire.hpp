#pragma once
// The messages of ferry/net's remote channels and the per-node directory that routes them
// (docs/multi-node-channels.md, Wire messages).
//
// Every channel message goes to one ServiceId, k_channel_service, on the destination node; a
// 40-byte ChannelWire header says which endpoint of that node it is for. A node's channel
// endpoints (receivers and senders) live in its Directory, made with the first endpoint and
// kept as long as the node. Routing through one service rather than one ServiceId per channel has
// two reasons: an OPEN for a name nobody serves gets a REFUSE (the Node would disconnect the
// whole peer for a message to an unserved ServiceId), and a message that was already on the
// wire when its endpoint went away is dropped quietly instead of costing the connection.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ferry/core/detail/json_string.hpp>
#include <ferry/net/detail/channel_message.hpp>
#include <ferry/net/node.hpp>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ferry::net::detail {

// Posts control messages (no payload). A failure means the peer is gone, which the Node
// reports through on_peer_lost: nothing to do here.
inline void post_all(Node& node, const std::vector<Outgoing>& out) {
    for (const Outgoing& o : out) {
        static_cast<void>(
            node.post(o.peer, k_channel_service, bytes_of(o.wire), {}, [](Status) {}));
    }
}

// What one channel end looks like now, for the node's state file (docs/multi-node.md,
// Publishing a node's state).
struct EndpointInfo {
    const char* role = "";      // "receiver" or "sender"
    std::string name;           // the channel's name
    std::vector<PeerId> peers;  // receiver: the peers its senders are on; sender: its receiver's
    std::uint64_t capacity = 0; // the receiver's slots (a sender: 0 until accepted)
    std::uint64_t queued = 0;   // receiver: messages waiting to be taken; sender: 0
    std::uint64_t credits = 0;  // sender: credits held; receiver: credits not lent to any sender
    bool stopped = false;
    bool lost = false;
};

// One endpoint as a JSON object on one line.
inline std::string endpoint_json(std::uint32_t id, const EndpointInfo& e) {
    using ferry::detail::json_string;
    std::string peers;
    for (const PeerId p : e.peers) {
        peers += (peers.empty() ? "" : ", ") + std::to_string(p);
    }
    return "{\"id\": " + std::to_string(id) + ", \"role\": " + json_string(e.role) +
           ", \"name\": " + json_string(e.name) + ", \"peers\": [" + peers +
           "], \"capacity\": " + std::to_string(e.capacity) +
           ", \"queued\": " + std::to_string(e.queued) +
           ", \"credits\": " + std::to_string(e.credits) +
           ", \"stopped\": " + (e.stopped ? "true" : "false") +
           ", \"lost\": " + (e.lost ? "true" : "false") + "}";
}

// A receiver or sender registered in its node's directory.
class Endpoint {
public:
    virtual ~Endpoint() = default;
    // A message for this endpoint; nullptr to accept, else why it is refused.
    virtual Verdict on_message(Delivery& d, const ChannelWire& w) = 0;
    virtual void on_peer_lost(PeerId peer) = 0;
    // Its state now (takes the endpoint's own lock, briefly).
    [[nodiscard]] virtual EndpointInfo describe() const = 0;
};

// Endpoint ids come from one counter per process, never reused: a message for an id this
// process issued whose endpoint is gone is stale (dropped), one for an id never issued is forged.
inline std::atomic<std::uint32_t>& endpoint_counter() noexcept {
    static std::atomic<std::uint32_t> counter{0};
    return counter;
}

class Directory {
public:
    explicit Directory(Node& node) noexcept : node_(node) {}

    // The directory of `node`: made, and served under k_channel_service, with the first
    // endpoint on the node, and kept while the node serves it. It is never unserved: a message
    // that arrives after its endpoint left must be dropped here, not refused by the Node (which
    // would disconnect the peer). The Node destroys the handler when it goes; that forgets the
    // directory, so a later Node at the same address gets a new one.
    static std::shared_ptr<Directory> of(Node& node);

    // Registers an endpoint; `name_hash` non-zero for a receiver. 0 (nothing registered) when a
    // receiver of this node already uses that hash.
    std::uint32_t add(const std::shared_ptr<Endpoint>& ep, std::uint32_t name_hash = 0) {
        const std::lock_guard lock(mutex_);
        if (name_hash != 0 && names_.contains(name_hash)) {
            return 0;
        }
        const std::uint32_t id = endpoint_counter().fetch_add(1) + 1;
        endpoints_[id] = ep;
        if (name_hash != 0) {
            names_[name_hash] = id;
        }
        return id;
    }
    void remove(std::uint32_t id, std::uint32_t name_hash = 0) {
        const std::lock_guard lock(mutex_);
        endpoints_.erase(id);
        if (name_hash != 0) {
            names_.erase(name_hash);
        }
    }

    Verdict dispatch(Delivery& d);
    // Every endpoint as a JSON array, a line each, in id order. The endpoints are copied under
    // the directory's lock and described after it is released.
    std::string channels_json() {
        std::map<std::uint32_t, std::shared_ptr<Endpoint>> eps;
        {
            const std::lock_guard lock(mutex_);
            eps.insert(endpoints_.begin(), endpoints_.end());
        }
        std::string out = "[";
        for (const auto& [id, ep] : eps) {
            out += (out.size() > 1 ? ",\n  " : "\n  ") + endpoint_json(id, ep->describe());
        }
        return out + "]";
    }
    void peer_lost(PeerId peer) {
        std::vector<std::shared_ptr<Endpoint>> eps;
        {
            const std::lock_guard lock(mutex_);
            for (auto& [id, ep] : endpoints_) {
                eps.push_back(ep);
            }
        }
        for (auto& ep : eps) {
            ep->on_peer_lost(peer);
        }
    }

private:
    std::shared_ptr<Endpoint> find(std::uint32_t id) {
        const std::lock_guard lock(mutex_);
        const auto it = endpoints_.find(id);
        return it == endpoints_.end() ? nullptr : it->second;
    }
    std::uint32_t find_name(std::uint32_t hash) {
        const std::lock_guard lock(mutex_);
        const auto it = names_.find(hash);
        return it == names_.end() ? 0 : it->second;
    }
    Verdict stale(const Delivery& d, const ChannelWire& w);

    Node& node_;
    std::once_flag served_;
    std::mutex mutex_;
    std::unordered_map<std::uint32_t, std::shared_ptr<Endpoint>> endpoints_;
    std::unordered_map<std::uint32_t, std::uint32_t> names_; // name hash -> receiver id
};

// The directories of this process, one per Node that has had channel endpoints.
struct Directories {
    std::mutex mutex;
    std::map<Node*, std::shared_ptr<Directory>> by_node;
    static Directories& instance() {
        static Directories d;
        return d;
    }
};

// Held by the node's handler: when the Node destroys the handler (with itself), the directory
// is forgotten.
struct DirectoryKeeper {
    Node* node;
    std::shared_ptr<Directory> dir;
    DirectoryKeeper(Node* n, std::shared_ptr<Directory> d) noexcept : node(n), dir(std::move(d)) {}
    DirectoryKeeper(const DirectoryKeeper&) = delete;
    DirectoryKeeper& operator=(const DirectoryKeeper&) = delete;
    ~DirectoryKeeper() {
        auto& all = Directories::instance();
        const std::lock_guard lock(all.mutex);
        const auto it = all.by_node.find(node);
        if (it != all.by_node.end() && it->second == dir) {
            all.by_node.erase(it);
        }
    }
};

inline std::shared_ptr<Directory> Directory::of(Node& node) {
    std::shared_ptr<Directory> dir;
    {
        auto& all = Directories::instance();
        const std::lock_guard lock(all.mutex);
        auto& slot = all.by_node[&node];
        if (!slot) {
            slot = std::make_shared<Directory>(node);
        }
        dir = slot;
    }
    // Outside the process-wide lock (serve may destroy an old handler, whose keeper takes it);
    // call_once holds back a second endpoint until the service is there.
    std::call_once(dir->served_, [&] {
        const auto keeper = std::make_shared<DirectoryKeeper>(&node, dir);
        node.serve(k_channel_service, [keeper](Delivery& d) { return keeper->dir->dispatch(d); });
        std::weak_ptr<Directory> weak = dir;
        static_cast<void>(node.on_peer_lost([weak](PeerId peer) {
            if (const auto self = weak.lock()) {
                self->peer_lost(peer);
            }
        }));
        node.report_channels([weak] {
            const auto self = weak.lock();
            return self ? self->channels_json() : std::string("[]");
        });
    });
    return dir;
}

inline Verdict Directory::dispatch(Delivery& d) {
    ChannelWire w;
    if (const Verdict malformed = decode_channel_wire(d.header(), w)) {
        return malformed;
    }
    const auto kind = static_cast<WireKind>(w.kind);
    const std::uint32_t id = kind == WireKind::open ? find_name(w.to) : w.to;
    if (kind == WireKind::open && id == 0) {
        const Outgoing no{d.peer(), make_wire(WireKind::refuse, w.from, 0,
                                              static_cast<std::uint64_t>(Status::not_found))};
        post_all(node_, {no});
        return nullptr;
    }
    if (const auto ep = find(id)) {
        return ep->on_message(d, w);
    }
    return stale(d, w);
}

// A message for an endpoint that is gone. An id this process never issued is forged; otherwise
// the message crossed the endpoint's departure and is dropped — except those that lent credits
// to a sender that is gone (an ACCEPT after its open gave up, a CREDIT after its CLOSE): the
// credits go straight back (CLOSE, GIVE_BACK), or the receiver would count them lent forever.
inline Verdict Directory::stale(const Delivery& d, const ChannelWire& w) {
    if (w.to == 0 || w.to > endpoint_counter().load()) {
        return "ferry.net.channel: message for an endpoint this node never had";
    }
    const auto kind = static_cast<WireKind>(w.kind);
    if (kind == WireKind::accept || kind == WireKind::credit) {
        const auto back = kind == WireKind::accept ? WireKind::close : WireKind::give_back;
        post_all(node_, {Outgoing{d.peer(), make_wire(back, w.from, w.to, w.a)}});
    }
    return nullptr;
}

} // namespace ferry::net::detail
