#pragma once
// node_helper.cpp's "raw" scenarios: a hostile process against the node of tests/net/node.cpp
// and tests/net/hostile.cpp. Each reads what it needs from stdin lines, prints one line with
// its outcome, then holds its connections until stdin closes (the parent asserts).

#include "raw_peer.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>

namespace net_test {

inline std::string secret_of_environment() {
    const char* s = std::getenv("FERRY_NET_SECRET");
    return s == nullptr ? "" : s;
}

inline std::string next_line() {
    std::string line;
    std::getline(std::cin, line);
    return line;
}

// Garbage at every port of the line "PORT PORT ...": 1, 16, 2000 and 65536 bytes, connect and
// close, half-open connections, 300 connections at once; prints "done".
inline std::string garbage(const std::string& ports_line) {
    std::istringstream ports(ports_line);
    std::vector<bs::Fd> held;
    int port = 0;
    while (ports >> port) {
        const auto address = "127.0.0.1:" + std::to_string(port);
        const auto parsed = ferry::net::detail::parse_address(address);
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        for (const std::size_t n : {1, 16, 2000, 65536, 0}) {
            auto fd = bs::connect_to(*parsed.address, deadline);
            const std::vector<std::byte> bytes(n, std::byte{0});
            if (fd.valid() && n > 0) {
                static_cast<void>(bs::write_all(fd.get(), bytes, deadline));
            }
        }
        for (int i = 0; i < 3; ++i) { // half-open: a hello's first bytes, then nothing
            auto fd = bs::connect_to(*parsed.address, deadline);
            const std::byte part[3] = {std::byte{56}, std::byte{0}, std::byte{0}};
            static_cast<void>(bs::write_all(fd.get(), part, deadline));
            ::shutdown(fd.get(), SHUT_WR);
            held.push_back(std::move(fd));
        }
        for (int i = 0; i < 100; ++i) {
            held.push_back(bs::connect_to(*parsed.address, deadline));
        }
    }
    held.clear();
    return "done";
}

// A listener without the secret: answers a Hello with a made-up Challenge and records what the
// connecting node sends. Prints "address A", then "got N secret=yes|no".
inline std::string fake_listener() {
    std::string bound;
    std::string error;
    const auto at = ferry::net::detail::parse_address("127.0.0.1:0");
    auto listener = bs::listen_on(*at.address, bound, error);
    std::printf("address %s\n", bound.c_str());
    std::fflush(stdout);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    if (!bs::wait_for(listener.get(), POLLIN, deadline)) {
        return "no connection";
    }
    bs::Fd fd(::accept(listener.get(), nullptr, nullptr));
    std::vector<std::byte> got(65536);
    std::size_t n = 0;
    hs::Challenge c{};
    static_cast<void>(hs::random_bytes(c.nonce));
    static_cast<void>(hs::random_bytes(c.proof));
    const auto challenge = hs::message_of(c);
    bool answered = false;
    while (n < got.size() && bs::wait_for(fd.get(), POLLIN, deadline)) {
        const auto r = ::recv(fd.get(), got.data() + n, got.size() - n, 0);
        if (r <= 0) {
            break;
        }
        n += static_cast<std::size_t>(r);
        if (!answered && n >= 4 + sizeof(hs::Hello)) {
            answered = bs::write_all(fd.get(), challenge, deadline);
        }
    }
    const auto secret = secret_of_environment();
    const std::string all(reinterpret_cast<const char*>(got.data()), n);
    return "got " + std::to_string(n) +
           (all.find(secret) == std::string::npos ? " secret=no" : " secret=yes");
}

inline std::string after_handshake(RawPeer& peer, const std::string& scenario) {
    const auto token = peer.server().token;
    std::vector<std::byte> service;
    wire::append(service, wire::Service{k_service, 1});
    if (scenario == "forged") { // a token this connection never agreed, then a proper message
        service.push_back(std::byte{1});
        peer.send(wire::Kind::service, token ^ 1, service, patterned(64, 1));
        service.back() = std::byte{2};
        peer.send(wire::Kind::service, token, service, patterned(64, 2));
        return "sent";
    }
    if (scenario == "outside" || scenario == "unexposed") { // past the end, or no such region
        const auto& r = peer.server().regions.at(0);
        const wire::Put put{scenario == "outside" ? 0U : 7U, 0, r.size - 8};
        peer.send(wire::Kind::put, token, std::as_bytes(std::span(&put, 1)), patterned(64, 1));
        return "sent";
    }
    if (scenario == "rma") { // one-sided, with a key of its own making
        peer.rma(peer.server().regions.at(0).base, patterned(64, 1));
        const bool read = !std::all_of(peer.got().begin(), peer.got().end(),
                                       [](std::byte b) { return b == std::byte{0}; });
        return read ? "read" : "nothing";
    }
    if (scenario == "rehello") { // a second handshake on the same TCP connection
        return peer.closed_after(peer.sent_hello) ? "closed" : "open";
    }
    return "unknown scenario";
}

// Prints the outcome of `scenario`, then holds its connections until stdin closes.
inline int run_raw(const std::string& scenario) {
    RawPeer peer;
    if (!peer.ok()) {
        return 2;
    }
    std::string outcome;
    if (scenario == "garbage") {
        outcome = garbage(next_line());
    } else if (scenario == "fake-listener") {
        outcome = fake_listener();
    } else if (scenario == "replay") { // a handshake with the first listener, replayed to the second
        const auto first = next_line();
        const auto second = next_line();
        if (!peer.handshake(first, secret_of_environment())) {
            return 2;
        }
        RawPeer replayer;
        replayer.open(second, std::chrono::steady_clock::now() + std::chrono::seconds(5));
        auto both = peer.sent_hello;
        both.insert(both.end(), peer.sent_proof.begin(), peer.sent_proof.end());
        outcome = replayer.closed_after(both) ? "closed" : "open";
    } else {
        if (!peer.handshake(next_line(), secret_of_environment())) {
            return 2;
        }
        outcome = after_handshake(peer, scenario);
    }
    std::printf("%s\n", outcome.c_str());
    std::fflush(stdout);
    std::string line;
    while (std::getline(std::cin, line) && line != "exit") { // holds its connections till then
    }
    return 0;
}

} // namespace net_test
