// libFuzzer target: ferry/net's message decoders and handlers, without UCX (docs/security.md,
// The network fuzzer). The input is a script of messages from two peers — one that holds the
// secret and, once connected, the token this node gave it, and one that holds neither — in any
// order (script.hpp). They reach:
//   - the bootstrap framer and the handshake's listening side, as raw bytes or as the next
//     message a client builds with or without the secret (handshake_peers.hpp);
//   - the handshake's connecting side, answered by a Challenge proved with or without the
//     secret, and its decoder of the listener's answer (handshake_peers.hpp);
//   - the window owner's put, ring and flush handling over a fake window with guard zones
//     (window_owner.hpp);
//   - a remote channel receiver's credit ledger (channel_receiver.hpp).
// Each part checks its own properties after every message with __builtin_trap: no write outside
// an exposed range, nothing revealed or admitted without the secret, every per-peer table within
// its cap. ASan and UBSan catch the rest.

#include "channel_receiver.hpp"
#include "handshake_peers.hpp"
#include "script.hpp"
#include "window_owner.hpp"

#include <cstddef>
#include <cstdint>

namespace {

struct Nodes {
    explicit Nodes(const net_fuzz::Secrets& s) : secrets(s), listening(s) {}
    const net_fuzz::Secrets& secrets;
    net_fuzz::ListeningSide listening;
    net_fuzz::WindowOwner window;
    net_fuzz::ChannelReceiver channel;
};

void apply(Nodes& nodes, const net_fuzz::Record& r, std::size_t nth) {
    using net_fuzz::Kind;
    switch (r.kind) {
    case Kind::server_bytes:
        nodes.listening.stream(r.bytes);
        break;
    case Kind::server_turn:
        nodes.listening.turn(r.authenticated, r.bytes);
        break;
    case Kind::client_turn:
        net_fuzz::connecting_side(nodes.secrets, r.authenticated, r.bytes);
        break;
    case Kind::answer_info:
        net_fuzz::answer_info(r.bytes);
        break;
    case Kind::window_write:
        nodes.window.write(r.authenticated, r.rendezvous, r.bytes);
        break;
    case Kind::window_land:
        nodes.window.land();
        break;
    case Kind::channel:
        nodes.channel.message(r.authenticated, r.rendezvous, r.bytes, nth);
        break;
    case Kind::channel_local:
        nodes.channel.local(r.bytes);
        break;
    case Kind::reconnect:
        nodes.listening.restart();
        nodes.window.reconnect();
        break;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const net_fuzz::Secrets secrets;
    Nodes nodes(secrets);
    auto input = std::as_bytes(std::span(data, size));
    std::size_t steps = 0;
    while (const auto record = net_fuzz::next_record(input)) {
        for (std::size_t i = 0; i < record->repeat && steps < net_fuzz::k_max_steps; ++i, ++steps) {
            apply(nodes, *record, i);
        }
    }
    return 0;
}
