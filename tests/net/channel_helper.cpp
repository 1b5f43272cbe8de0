// The other process of tests/net/channel.cpp, started with fork + exec. It reports through its
// exit status (0 done, 2 setup failed — the reason on stderr, 3 bad usage, 4 a failed check)
// and through lines on stdout. "Hold" means: wait until stdin reaches EOF (the parent's
// Child::release()), keeping the node and channel.
//
//   send ADDR NAME ID COUNT   connect, open, send COUNT messages as producer ID, print
//                             "sent COUNT", hold
//   fill ADDR NAME            connect, open, try_send until full, then send_for 20 ms until
//                             one fails; print "filled K" (the sends that went) and "timed
//                             CODE"; then send (forever) until one fails, while a watcher
//                             prints "blocked" once one parked; print "send CODE MORE"
//   stopper ADDR NAME COUNT   connect, open, send COUNT, print "sent", hold, stop, print
//                             "stopped", hold until killed or the parent closes
//   serve NAME                listen on 127.0.0.1:0, print the address, serve a receiver of
//                             capacity k_small under NAME, print "ready", hold
//   datasets ADDR NAME        connect, open a MessageSender, send one dataset of each
//                             k_dataset_sizes, then an oversized one (print "oversize CODE"),
//                             then a 64-byte one with seed 99; print "sent", hold

#include "channel_support.hpp"

#include <cstdio>
#include <string>
#include <thread>
#include <unistd.h>

namespace {

using namespace net_test;
using ferry::Status;
using namespace std::chrono_literals;

std::string code(Status s) {
    return std::to_string(static_cast<int>(s));
}

void hold() {
    char c = 0;
    while (::read(STDIN_FILENO, &c, 1) > 0) {
    }
}

int fail(const std::string& what, Status s) {
    std::fprintf(stderr, "helper: %s: %s\n", what.c_str(), ferry::name_of(s));
    return 2;
}

struct Connected {
    std::unique_ptr<ferry::net::Node> node;
    ferry::net::PeerId peer = 0;
};

Connected connect_to(const std::string& address) {
    Connected c;
    c.node = start_node(false);
    if (c.node) {
        auto peer = c.node->connect(address, 10s);
        c.peer = peer ? *peer : 0;
    }
    return c;
}

// Connects to `address`, opens an `S` on `name` and returns body(sender), the sender living
// only as long as the connection; fail()'s code when either step fails.
template <typename S, typename Body>
int with_sender(const std::string& address, const std::string& name, Body body) {
    auto c = connect_to(address);
    if (c.peer == 0) {
        return fail("connect", Status::failure);
    }
    auto sender = S::open(*c.node, c.peer, name);
    if (!sender) {
        return fail("open", sender.status());
    }
    return body(*sender);
}

int send_all(const std::string& address, const std::string& name, std::uint32_t id,
             std::uint64_t count) {
    return with_sender<Sender>(address, name, [&](Sender& sender) {
        for (std::uint64_t i = 0; i < count; ++i) {
            if (const Status s = sender.send_for(make_message(i, id), 20s); s != Status::ok) {
                say("send " + code(s));
                return 4;
            }
        }
        say("sent " + std::to_string(count));
        hold();
        return 0;
    });
}

int fill(const std::string& address, const std::string& name) {
    return with_sender<Sender>(address, name, [&](Sender& sender) {
        // Credits may still move between the senders (a recall) while they fill: every send that
        // answers ok is counted, and the parent adds them up.
        std::uint64_t sent = 0;
        while (sender.try_send(make_message(sent, 0)) == Status::ok) {
            ++sent;
        }
        Status timed = Status::ok;
        while ((timed = sender.send_for(make_message(sent, 0), 20ms)) == Status::ok) {
            ++sent;
        }
        say("filled " + std::to_string(sent));
        say("timed " + code(timed));
        std::thread watcher([&] {
            if (ipc_test::poll_for([&] { return sender.blocked() >= 1; })) {
                say("blocked");
            }
        });
        std::uint64_t more = 0;
        Status s = Status::ok;
        while ((s = sender.send(make_message(sent + more, 0))) == Status::ok) {
            ++more;
        }
        watcher.join();
        say("send " + code(s) + " " + std::to_string(more));
        return 0;
    });
}

int stopper(const std::string& address, const std::string& name, std::uint64_t count) {
    return with_sender<Sender>(address, name, [&](Sender& sender) {
        for (std::uint64_t i = 0; i < count; ++i) {
            if (const Status s = sender.send_for(make_message(i, 1), 20s); s != Status::ok) {
                return fail("send", s);
            }
        }
        say("sent");
        hold();
        sender.stop();
        say("stopped");
        return 0;
    });
}

int serve(const std::string& name) {
    auto node = start_node(true);
    if (!node) {
        return fail("node", Status::failure);
    }
    auto receiver = SmallReceiver::create(*node, name);
    if (!receiver) {
        return fail("create", receiver.status());
    }
    say(node->address());
    say("ready");
    hold();
    return 0;
}

int datasets(const std::string& address, const std::string& name) {
    return with_sender<ferry::net::MessageSender>(
        address, name, [&](ferry::net::MessageSender& sender) {
            for (std::size_t i = 0; i < std::size(k_dataset_sizes); ++i) {
                const Status s = sender.send_for(make_sized_dataset(k_dataset_sizes[i], i), 20s);
                if (s != Status::ok) {
                    return fail("send", s);
                }
            }
            say("oversize " + code(sender.send(make_sized_dataset(k_max_message, 7), 20s)));
            if (const Status s = sender.send_for(make_sized_dataset(64, 99), 20s);
                s != Status::ok) {
                return fail("send", s);
            }
            say("sent");
            hold();
            return 0;
        });
}

} // namespace

int main(int argc, char** argv) {
    const std::vector<std::string> a(argv + 1, argv + argc);
    if (a.size() == 5 && a[0] == "send") {
        return send_all(a[1], a[2], static_cast<std::uint32_t>(std::stoul(a[3])),
                        std::stoull(a[4]));
    }
    if (a.size() == 3 && a[0] == "fill") {
        return fill(a[1], a[2]);
    }
    if (a.size() == 4 && a[0] == "stopper") {
        return stopper(a[1], a[2], std::stoull(a[3]));
    }
    if (a.size() == 2 && a[0] == "serve") {
        return serve(a[1]);
    }
    if (a.size() == 3 && a[0] == "datasets") {
        return datasets(a[1], a[2]);
    }
    std::fprintf(stderr, "helper: bad usage\n");
    return 3;
}
