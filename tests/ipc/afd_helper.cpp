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
//   hold NAME              open window NAME, print "opened", wait for stdin EOF (or SIGKILL)
//   own NAME               create window NAME, print "owned", wait for stdin EOF (or SIGKILL)

#include "afd_roles.hpp"
#include "support.hpp"

#include <cstdio>
#include <ferry/ipc/window.hpp>
#include <string>
#include <unistd.h>

namespace {

using ferry::ipc::SharedWindow;
using namespace std::chrono_literals;

int bell_wait(const std::string& name) {
    auto window = SharedWindow::open(name);
    if (!window) {
        return afd_ipc::ipc_failure(window.error());
    }
    std::byte* data = window->data().data();
    afd_ipc::say("parking");
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
    afd_ipc::say(std::string(how) + " " + std::to_string(ms.count()));
    return 0;
}

int hold(const std::string& name, bool own) {
    auto window = own ? SharedWindow::create(name, 4096) : SharedWindow::open(name);
    if (!window) {
        return afd_ipc::ipc_failure(window.error());
    }
    afd_ipc::say(own ? "owned" : "opened");
    char byte = 0;
    while (::read(STDIN_FILENO, &byte, 1) > 0) {
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    afd_ipc::Config c;
    if (args.size() == 3 && args[0] == "ffn") {
        c.recv = args[2] == "recv";
        return afd_ipc::ffn_process(args[1], c);
    }
    if (args.size() == 3 && args[0] == "attention") {
        return afd_ipc::attention_process(args[1], static_cast<std::uint32_t>(std::stoul(args[2])),
                                          c);
    }
    if (args.size() == 2 && args[0] == "bell-wait") {
        return bell_wait(args[1]);
    }
    if (args.size() == 2 && (args[0] == "hold" || args[0] == "own")) {
        return hold(args[1], args[0] == "own");
    }
    return 3;
}
