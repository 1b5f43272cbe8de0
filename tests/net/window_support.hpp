#pragma once
// What the window tests share: a writer node connected to an owner node, with the owner's exposed
// region opened as a RemoteWindow.
#include <catch2/catch.hpp>
#include <chrono>
#include <ferry/net/window.hpp>
#include <memory>
#include <string>
#include <utility>

namespace net_test {

struct Reached {
    ferry::net::PeerId peer = 0;
    std::unique_ptr<ferry::net::RemoteWindow> remote;
};

// Connects `writer` to the owner at `address` and opens its `region` (every step REQUIREd).
inline Reached reach(ferry::net::Node& writer, const std::string& address,
                     ferry::net::RegionId region, std::chrono::milliseconds limit) {
    auto p = writer.connect(address, ferry::Timeout(limit));
    REQUIRE(p.has_value());
    auto r = ferry::net::RemoteWindow::open(writer, *p, region);
    REQUIRE(r.has_value());
    return {*p, std::move(*r)};
}

} // namespace net_test
