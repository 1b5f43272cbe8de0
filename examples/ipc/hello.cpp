// hello (ferry/ipc): two processes, a typed ipc::Channel and an ipc::MessageChannel of datasets.
// The parent creates both channels and starts itself again as the child (fork + exec), which
// sends a greeting and a dataset, then waits. The parent prints them, kills the child (SIGKILL)
// and sees the channel answer Status::peer_lost. Exit status 0 when all of that happened.
#include <csignal>
#include <cstdio>
#include <ferry/ipc.hpp>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace ipc = ferry::ipc;
struct Greeting {
    int pid;
    int answer;
};
using Greetings = ipc::Channel<Greeting, 4>;

int child(const std::string& name) { // opens what the parent created, sends, then waits
    auto greetings = Greetings::open(name);
    auto data = ipc::MessageChannel<>::open(name + "-data", 4, 4096);
    if (!greetings || !data) {
        std::printf("child: cannot open the channels\n");
        return 1;
    }
    const std::vector<float> values{1.5F, 2.5F, 3.5F, 4.5F};
    ferry::Dataset batch;
    if (batch.add(*ferry::DataItem::from(values, {2, 2})) != ferry::Status::ok ||
        greetings->send(Greeting{static_cast<int>(::getpid()), 42}) != ferry::Status::ok ||
        data->send(batch) != ferry::Status::ok) {
        return 1;
    }
    ::pause(); // until the parent kills it
    return 0;
}

int parent() {
    const std::string name = "hello-" + std::to_string(::getpid());
    auto greetings = Greetings::create(name);
    auto data = ipc::MessageChannel<>::create(name + "-data", 4, 4096);
    if (!greetings || !data) {
        std::printf("parent: %s\n", (greetings ? data.error() : greetings.error()).message.c_str());
        return 1;
    }
    const pid_t pid = ::fork();
    if (pid == 0) {
        const char* argv[] = {"hello", "child", name.c_str(), nullptr};
        ::execv("/proc/self/exe", const_cast<char**>(argv));
        ::_exit(127);
    }
    auto hello = greetings->receive_for(std::chrono::seconds(10));
    auto batch = data->receive(std::chrono::seconds(10));
    if (!hello || !batch) {
        std::printf("parent: nothing from the child\n");
        ::kill(pid, SIGKILL);
        return 1;
    }
    std::printf("parent: greeting from pid %d: %d\n", hello->pid, hello->answer);
    const auto values = (*batch)[0].values<float>().value();
    std::printf("parent: dataset of %zu item(s), values %.1f %.1f %.1f %.1f\n", batch->size(),
                values[0], values[1], values[2], values[3]);
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0); // reaped: its pid is gone, so the channel sees it dead
    auto after = greetings->receive_for(std::chrono::seconds(10));
    std::printf("parent: after the child was killed, receive says %s\n",
                after.status() == ferry::Status::peer_lost ? "peer_lost" : "something else");
    return after.status() == ferry::Status::peer_lost ? 0 : 1;
}

int main(int argc, char** argv) {
    return argc == 3 && std::string(argv[1]) == "child" ? child(argv[2]) : parent();
}
