// ChannelRegistry (docs/cann-contract/tdt.md#channel-kinds): unique ids for queue channels, one
// shared channel per (device, base name) for process channels with the TF_RECEIVE_ prefix, bad
// input rejected without side effects, lookups by id and by name, concurrent opens agree on one
// channel.
#include <catch2/catch.hpp>
#include <ferry/channel/registry.hpp>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

using ferry::ChannelKind;
using ferry::Status;
using Registry = ferry::ChannelRegistry<std::unique_ptr<int>>;

TEST_CASE("queue channels: each create is a new channel with a unique id") {
    Registry registry;
    std::set<ferry::ChannelId> ids;
    for (int i = 0; i < 10; ++i) {
        auto made = registry.create_queue(0, "same_label", 2 + static_cast<std::size_t>(i));
        REQUIRE(made.has_value());
        CHECK(made->id != 0);
        CHECK(made->kind == ChannelKind::queue);
        CHECK(made->name == "same_label");
        CHECK(made->channel->capacity() == 2 + static_cast<std::size_t>(i));
        ids.insert(made->id);
        CHECK(registry.find(made->id) == made->channel);
    }
    CHECK(ids.size() == 10);
    CHECK(registry.size() == 10);
    CHECK(registry.find(0, "same_label").size() == 10);
    CHECK(registry.find(1, "same_label").empty()); // another device
    CHECK(registry.find(0, "other").empty());
}

TEST_CASE("queue channels: the TF_RECEIVE_ prefix has no effect, the name is kept whole") {
    Registry registry;
    auto made = registry.create_queue(0, "TF_RECEIVE_q", 4);
    REQUIRE(made.has_value());
    CHECK(made->name == "TF_RECEIVE_q");
    CHECK_FALSE(made->receive_side);
    CHECK(registry.find(0, "TF_RECEIVE_q").size() == 1);
    CHECK(registry.find(0, "q").empty());
}

TEST_CASE("bad input: clear error, nothing registered") {
    Registry registry;
    const std::string longest(127, 'n');
    const std::string too_long(128, 'n');
    CHECK(registry.create_queue(0, too_long, 4).status() == Status::invalid_param);
    CHECK(registry.create_queue(0, "q", 1).status() == Status::invalid_param);
    CHECK(registry.create_queue(0, "q", 0).status() == Status::invalid_param);
    CHECK(registry.create_queue(0, "q", 8193).status() == Status::invalid_param);
    CHECK(registry.open_process(0, too_long).status() == Status::invalid_param);
    CHECK(registry.size() == 0);
    CHECK(registry.create_queue(0, longest, 8192).has_value());
    CHECK(registry.open_process(0, longest).has_value());
    CHECK(registry.size() == 2);
    CHECK(registry.close(12345) == Status::invalid_param);
    CHECK(registry.find(12345) == nullptr);
    CHECK(registry.size() == 2);
}

TEST_CASE(
    "process channels: one queue per (device, base name); TF_RECEIVE_ opens the receive side") {
    Registry registry;
    auto sender = registry.open_process(0, "feed");
    auto receiver = registry.open_process(0, "TF_RECEIVE_feed");
    auto other_device = registry.open_process(1, "feed");
    REQUIRE(sender.has_value());
    REQUIRE(receiver.has_value());
    REQUIRE(other_device.has_value());
    CHECK(sender->kind == ChannelKind::process);
    CHECK_FALSE(sender->receive_side);
    CHECK(receiver->receive_side);
    CHECK(receiver->name == "feed");
    CHECK(sender->id == receiver->id);
    CHECK(sender->channel == receiver->channel);
    CHECK(other_device->channel != sender->channel);
    CHECK(sender->channel->capacity() == ferry::k_process_channel_capacity);

    REQUIRE(sender->channel->send(std::make_unique<int>(7)) == Status::ok);
    auto got = receiver->channel->try_receive();
    REQUIRE(got.has_value());
    CHECK(**got == 7);

    CHECK(registry.find(0, "feed").size() == 1);
    CHECK(registry.find(0, "TF_RECEIVE_feed").size() == 1);
}

TEST_CASE("close: queue channels leave at once, process channels with their last handle") {
    Registry registry;
    auto queue = registry.create_queue(0, "q", 2);
    REQUIRE(queue.has_value());
    CHECK(registry.close(queue->id) == Status::ok);
    CHECK(registry.find(queue->id) == nullptr);
    CHECK(registry.close(queue->id) == Status::invalid_param); // double close
    CHECK(queue->channel->capacity() == 2); // the caller's shared_ptr keeps the object alive

    auto a = registry.open_process(0, "p");
    auto b = registry.open_process(0, "TF_RECEIVE_p");
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(registry.close(a->id) == Status::ok);
    CHECK(registry.find(b->id) == b->channel); // one handle left
    CHECK(registry.close(b->id) == Status::ok);
    CHECK(registry.find(b->id) == nullptr);
    CHECK(registry.size() == 0);
    auto again = registry.open_process(0, "p"); // a fresh channel after the last close
    REQUIRE(again.has_value());
    CHECK(again->channel != a->channel);
    CHECK(again->id != a->id);
}

TEST_CASE("stop_device stops every channel of that device only") {
    Registry registry;
    auto q0 = registry.create_queue(0, "q", 2);
    auto p0 = registry.open_process(0, "p");
    auto q1 = registry.create_queue(1, "q", 2);
    REQUIRE((q0.has_value() && p0.has_value() && q1.has_value()));
    registry.stop_device(0);
    CHECK(q0->channel->stopped());
    CHECK(p0->channel->stopped());
    CHECK_FALSE(q1->channel->stopped());
}

TEST_CASE("concurrent opens of one process name agree on a single channel") {
    constexpr int k_threads = 4;
    Registry registry;
    std::vector<Registry::Entry> entries(k_threads);
    std::vector<Status> statuses(k_threads, Status::failure);
    std::vector<std::thread> threads;
    for (int i = 0; i < k_threads; ++i) {
        threads.emplace_back([&, i] {
            auto r = registry.open_process(3, i % 2 == 0 ? "shared" : "TF_RECEIVE_shared");
            statuses[i] = r.has_value() ? Status::ok : r.status();
            if (r.has_value()) {
                entries[i] = *r;
            }
        });
    }
    for (auto& t : threads) {
        t.join();
    }
    for (int i = 0; i < k_threads; ++i) {
        REQUIRE(statuses[i] == Status::ok);
        CHECK(entries[i].channel == entries[0].channel);
        CHECK(entries[i].id == entries[0].id);
    }
    CHECK(registry.size() == 1);
}
