// bench-net's main: a benchmark run, or (with --net-peer) the second process of one (peer.hpp).
// Both processes run with the same UCX settings, set here before UCX reads its environment:
// TCP on the loopback device, which is what ferry/net's tests use too.
#include "peer.hpp"

#include <benchmark/benchmark.h>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace ferry::bench::net {

int run_peer(int argc, char** argv) {
    if (argc < 5) {
        return 2;
    }
    LineProbe probe(std::atoi(argv[3]));
    const Reporter report(std::atoi(argv[2]), probe);
    const auto role = roles().find(argv[4]);
    if (role == roles().end()) {
        std::fprintf(stderr, "bench-net peer: no role %s\n", argv[4]);
        return 2;
    }
    try {
        return role->second(std::vector<std::string>(argv + 5, argv + argc), report);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench-net peer %s: %s\n", argv[4], e.what());
        return 2;
    }
}

} // namespace ferry::bench::net

int main(int argc, char** argv) {
    // Overwritten, so that a stray UCX_TLS in the caller's environment cannot give the two
    // sides (or two runs) different transports; the peer inherits them across exec.
    ::setenv("UCX_TLS", "tcp", 1);
    ::setenv("UCX_NET_DEVICES", "lo", 1);
    ::setenv("UCX_SOCKADDR_TLS_PRIORITY", "tcp", 1);
    if (argc >= 2 && std::string_view(argv[1]) == ferry::bench::net::k_peer_flag) {
        return ferry::bench::net::run_peer(argc, argv);
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
