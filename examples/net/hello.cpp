// hello (ferry/net): two nodes, two processes, a typed channel over UCX; the secret is
// FERRY_NET_SECRET or a random one. Run: UCX_TLS=tcp UCX_NET_DEVICES=lo net_hello
#include <cstdio>
#include <cstdlib>
#include <ferry/net.hpp>
#include <string>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

namespace net = ferry::net;
using namespace std::chrono_literals;
struct Greeting {
    int pid;
    int number;
};

std::unique_ptr<net::Node> start_node(std::string listen) { // no secret: start refuses
    net::NodeOptions options;
    options.listen = std::move(listen);
    options.secret = net::Secret::from_environment().value_or(net::Secret{});
    auto node = net::Node::start(std::move(options));
    return node ? std::move(*node) : nullptr;
}

int child(const char* address) { // connects, sends three greetings
    auto node = start_node("");
    auto peer = node ? node->connect(address, 10s) : ferry::Status::failure;
    auto out = peer ? net::ChannelSender<Greeting>::open(*node, *peer, "hello") : peer.status();
    auto status = out ? ferry::Status::ok : out.status();
    for (int i = 1; status == ferry::Status::ok && i <= 3; ++i) {
        status = out->send(Greeting{static_cast<int>(::getpid()), i});
    }
    return status == ferry::Status::ok ? 0 : 1;
}

bool ensure_secret() { // the job's secret: FERRY_NET_SECRET as given, or a random one
    unsigned long long words[2];
    char hex[2 * sizeof words + 1];
    if (std::getenv("FERRY_NET_SECRET") == nullptr &&
        ::getrandom(words, sizeof words, 0) == static_cast<ssize_t>(sizeof words)) {
        std::snprintf(hex, sizeof hex, "%016llx%016llx", words[0], words[1]);
        ::setenv("FERRY_NET_SECRET", hex, 1); // the child inherits it
    }
    return std::getenv("FERRY_NET_SECRET") != nullptr;
}

int parent() {
    auto node = ensure_secret() ? start_node("127.0.0.1:0") : nullptr;
    auto in =
        node ? net::ChannelReceiver<Greeting, 4>::create(*node, "hello") : ferry::Status::failure;
    if (!in) {
        std::printf("parent: cannot start the node or the channel: %s\n",
                    in.error().message.c_str());
        return 1;
    }
    const std::string address = node->address();
    const pid_t pid = ::fork();
    if (pid == 0) {
        const char* argv[] = {"net_hello", "child", address.c_str(), nullptr};
        ::execv("/proc/self/exe", const_cast<char**>(argv));
        ::_exit(127);
    }
    int got = 0;
    for (auto g = in->receive_for(10s); g; g = in->receive_for(10s)) {
        std::printf("parent: greeting %d from pid %d\n", g->number, g->pid);
        if (++got == 3) {
            break;
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    std::printf("parent: %d greetings; the child exited with %d\n", got, WEXITSTATUS(status));
    return got == 3 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
    return argc == 3 ? child(argv[2]) : parent();
}
