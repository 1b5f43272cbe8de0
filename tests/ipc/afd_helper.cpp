// The other processes of tests/ipc/afd_window.cpp, started with fork + exec. Each reports through
// its exit status (0 done, 2 an ipc error — its message on stderr, 3 bad usage) and lines on
// stdout.
//
//   ffn PREFIX MODE        MODE norm|recv: create window PREFIX-ffn, print "ready", wait for
//                          stdin EOF, open PREFIX-att<s> for every session, serve, print
//                          "report DIGEST ERRORS ROWS"
//   attention PREFIX S     create window PREFIX-att<S>, print "ready", open PREFIX-ffn, run
//                          session S, print "report DIGEST ERRORS ROWS"
//   bell-wait NAME         open window NAME (context at 0, flag at 1024), print "parking", wait
//                          for the flag parked on the doorbell (60 s park bound, 10 s timeout),
//                          print "served", "stopped" or "timed_out" and the milliseconds the
//                          wait took (a wait that ends at its timeout with the flag set by then
//                          is "served" too)

#include "afd_roles.hpp"
#include "support.hpp"

#include <cstdio>
#include <ferry/ipc/window.hpp>
#include <string>
#include <unistd.h>

namespace {

using ferry::ipc::SharedWindow;
using namespace std::chrono_literals;

int report(const ferry::ipc::Error& error) {
    std::fprintf(stderr, "afd helper: %s\n", error.message.c_str());
    return 2;
}
void say(const std::string& line) {
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
}
void print_report(const afd_ipc::Report& r) {
    say("report " + std::to_string(r.digest) + " " + std::to_string(r.errors) + " " +
        std::to_string(r.rows));
}
void wait_for_eof() {
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
}

int ffn(const std::string& prefix, bool recv) {
    afd_ipc::Config c;
    c.recv = recv;
    ferry::AllocationRegistry registry; // outlives the window's registration in it
    auto own = SharedWindow::create(prefix + "-ffn", afd_ipc::ffn_layout(c).total);
    if (!own) {
        return report(own.error());
    }
    afd_ipc::init_ffn(own->data(), own->owner_base(), c);
    if (own->register_in(registry) != ferry::Status::ok) {
        return 2;
    }
    say("ready");
    wait_for_eof(); // every attention window exists now
    std::vector<SharedWindow> sessions;
    std::vector<afd_ipc::ScheduleContextView> views;
    std::vector<afd_ipc::Window> windows;
    for (std::uint32_t s = 0; s < c.sessions; ++s) {
        auto peer = SharedWindow::open(prefix + "-att" + std::to_string(s));
        if (!peer) {
            return report(peer.error());
        }
        views.emplace_back(peer->data().data());
        windows.push_back(peer->window());
        sessions.push_back(std::move(peer.value()));
    }
    print_report(afd_ipc::run_ffn(c, {own->data(), own->doorbell(), &registry, views, windows}));
    return 0;
}

int attention(const std::string& prefix, std::uint32_t s) {
    const afd_ipc::Config c;
    auto own = SharedWindow::create(prefix + "-att" + std::to_string(s),
                                    afd_ipc::attention_layout(c).total);
    if (!own) {
        return report(own.error());
    }
    afd_ipc::init_attention(own->data(), own->owner_base(), c);
    say("ready");
    auto ffn = SharedWindow::open(prefix + "-ffn");
    if (!ffn) {
        return report(ffn.error());
    }
    const afd_ipc::AttentionEnds ends{own->data(), own->doorbell(),
                                      afd_ipc::ScheduleContextView(ffn->data().data()),
                                      ffn->window()};
    print_report(afd_ipc::run_attention(c, ends, s));
    return 0;
}

int bell_wait(const std::string& name) {
    auto window = SharedWindow::open(name);
    if (!window) {
        return report(window.error());
    }
    std::byte* data = window->data().data();
    say("parking");
    const auto start = std::chrono::steady_clock::now();
    const auto exit = ferry::afd::detail::wait_until_ready(
        ferry::afd::ScheduleContextView(data), ferry::afd::DoorbellPark(window->doorbell(), 0, 60s),
        10s,
        [&] { return std::atomic_ref(*reinterpret_cast<std::int32_t*>(data + 1024)).load() == 1; });
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    const char* how = exit == ferry::afd::ScheduleExit::served    ? "served"
                      : exit == ferry::afd::ScheduleExit::stopped ? "stopped"
                                                                  : "timed_out";
    say(std::string(how) + " " + std::to_string(ms.count()));
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() == 3 && args[0] == "ffn") {
        return ffn(args[1], args[2] == "recv");
    }
    if (args.size() == 3 && args[0] == "attention") {
        return attention(args[1], static_cast<std::uint32_t>(std::stoul(args[2])));
    }
    if (args.size() == 2 && args[0] == "bell-wait") {
        return bell_wait(args[1]);
    }
    return 3;
}
