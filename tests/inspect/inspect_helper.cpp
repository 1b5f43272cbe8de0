// The other process of tests/inspect/inspect.py: `inspect_helper NAME` creates the typed channel
// NAME (capacity 4), tries to receive (finds it empty: a count in its own slot's block), sends one
// item (counted by the ring), prints "ready" and holds the channel until its stdin closes (then
// closes it and exits 0) or it is killed (the channel is then stale).
#include <cstdio>
#include <ferry/ipc/channel.hpp>

int main(int argc, char** argv) {
    if (argc != 2) {
        return 2;
    }
    auto channel = ferry::ipc::Channel<long, 4>::create(argv[1]);
    if (!channel || channel->try_receive().status() != ferry::Status::empty ||
        channel->send(42) != ferry::Status::ok) {
        std::printf("cannot create %s\n", argv[1]);
        return 1;
    }
    std::printf("ready\n");
    std::fflush(stdout);
    while (std::getchar() != EOF) {
    }
    return channel->close() ? 0 : 1;
}
