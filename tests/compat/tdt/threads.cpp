// acltdt* channels from several threads (suite 'concurrency', run under ThreadSanitizer in CI):
// stop waking blocked send and receive, destroy with a blocked receiver (queue and legacy), and
// send/receive/query/clean/stop racing with every message accounted for. The calls under test are
// the C API's; this file is C++ only to observe the channel the C handle shares with C++ code
// (ferry::message_channels(), docs/c-api.md): how many threads are blocked on it — so a test acts
// once a thread is provably blocked, never after a sleep — and how many messages a clean dropped.

#include "acl/acl_tdt.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/channel/message_channels.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

using SharedChannel = ferry::MessageChannelRegistry::channel_type;

// The channel behind the C handles of `name` on device 0 (exactly one must exist).
std::shared_ptr<SharedChannel> shared_channel(const std::string& name) {
    const auto found = ferry::message_channels().registry.find(0, name);
    REQUIRE(found.size() == 1);
    return found.front().channel;
}

// Returns once `count` threads are blocked on `channel` (a hang is caught by the test timeout).
void wait_blocked(const SharedChannel& channel, std::size_t count) {
    while (channel.blocked() < count) {
        std::this_thread::yield();
    }
}

// A dataset of one int64 tensor over `*value` (the caller keeps it alive). Made on worker
// threads too, so it checks nothing itself (Catch2 checks on the main thread only): see ok().
struct ValueDataset {
    acltdtDataItem* item;
    acltdtDataset* dataset;
    bool added;
    explicit ValueDataset(std::int64_t* value) {
        const std::int64_t dims[1] = {1};
        item =
            acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 1, ACL_INT64, value, sizeof *value);
        dataset = acltdtCreateDataset();
        added = acltdtAddDataItem(dataset, item) == ACL_SUCCESS;
    }
    [[nodiscard]] bool ok() const noexcept { return added; }
    ValueDataset(const ValueDataset&) = delete;
    ValueDataset& operator=(const ValueDataset&) = delete;
    ~ValueDataset() {
        acltdtDestroyDataset(dataset);
        acltdtDestroyDataItem(item);
    }
};

// The value a one-item int64 dataset filled by a receive holds.
std::int64_t value_of(const acltdtDataset* dataset) {
    return *static_cast<const std::int64_t*>(
        acltdtGetDataAddrFromItem(acltdtGetDataItem(dataset, 0)));
}

} // namespace

// Stop wakes a receiver blocked on an empty channel and a sender blocked on a full one; a woken
// send answers QUEUE_FULL and a woken receive QUEUE_EMPTY (docs/c-api.md, Channels).
TEST_CASE("stop wakes blocked send and receive", "[compat][tdt][threads]") {
    std::int64_t value = 1;
    const ValueDataset source(&value);
    REQUIRE(source.ok());
    acltdtChannelHandle* empty = acltdtCreateChannelWithCapacity(0, "threads-stop-rx", 2);
    acltdtChannelHandle* full = acltdtCreateChannelWithCapacity(0, "threads-stop-tx", 2);
    REQUIRE((empty != nullptr && full != nullptr));
    REQUIRE(acltdtSendTensor(full, source.dataset, 0) == ACL_SUCCESS);
    REQUIRE(acltdtSendTensor(full, source.dataset, 0) == ACL_SUCCESS);
    acltdtDataset* out = acltdtCreateDataset();
    aclError rx = -1;
    aclError tx = -1;
    std::thread receiver([&] { rx = acltdtReceiveTensor(empty, out, -1); });
    std::thread sender([&] { tx = acltdtSendTensor(full, source.dataset, -1); });
    wait_blocked(*shared_channel("threads-stop-rx"), 1);
    wait_blocked(*shared_channel("threads-stop-tx"), 1);
    CHECK(acltdtStopChannel(empty) == ACL_SUCCESS);
    CHECK(acltdtStopChannel(full) == ACL_SUCCESS);
    receiver.join();
    sender.join();
    CHECK(rx == ACL_ERROR_RT_QUEUE_EMPTY);
    CHECK(tx == ACL_ERROR_RT_QUEUE_FULL);
    CHECK(acltdtDestroyChannel(empty) == ACL_SUCCESS);
    CHECK(acltdtDestroyChannel(full) == ACL_SUCCESS);
    CHECK(acltdtDestroyDataset(out) == ACL_SUCCESS);
}

// Destroying a channel while a receiver is provably blocked on it wakes the receiver with
// QUEUE_EMPTY (as CANN's queue destroy) and returns only after it has left; the handle is stale
// afterwards. Also for a legacy receive handle whose channel still has another (sending) handle.
TEST_CASE("destroy wakes a blocked receiver and waits for it", "[compat][tdt][threads]") {
    acltdtDataset* out = acltdtCreateDataset();
    REQUIRE(out != nullptr);
    SECTION("queue channel") {
        acltdtChannelHandle* queue = acltdtCreateChannelWithCapacity(0, "threads-destroy-rx", 4);
        REQUIRE(queue != nullptr);
        const auto channel = shared_channel("threads-destroy-rx");
        aclError rx = -1;
        std::thread receiver([&] { rx = acltdtReceiveTensor(queue, out, -1); });
        wait_blocked(*channel, 1);
        CHECK(acltdtDestroyChannel(queue) == ACL_SUCCESS);
        CHECK(channel->blocked() == 0); // destroy returned after the receiver woke
        receiver.join();
        CHECK(rx == ACL_ERROR_RT_QUEUE_EMPTY);
        CHECK(acltdtReceiveTensor(queue, out, 0) == ACL_ERROR_INVALID_PARAM); // stale now
    }
    SECTION("legacy channel with another handle open") {
        acltdtChannelHandle* tx = acltdtCreateChannel(0, "threads-destroy-legacy");
        acltdtChannelHandle* rx_handle =
            acltdtCreateChannel(0, "TF_RECEIVE_threads-destroy-legacy");
        REQUIRE((tx != nullptr && rx_handle != nullptr));
        const auto channel = shared_channel("threads-destroy-legacy");
        aclError rx = -1;
        std::thread receiver([&] { rx = acltdtReceiveTensor(rx_handle, out, -1); });
        wait_blocked(*channel, 1);
        CHECK(acltdtDestroyChannel(rx_handle) == ACL_SUCCESS);
        CHECK(channel->blocked() == 0);
        receiver.join();
        CHECK(rx == ACL_ERROR_RT_QUEUE_EMPTY);
        CHECK(acltdtDestroyChannel(tx) == ACL_SUCCESS);
    }
    CHECK(acltdtDestroyDataset(out) == ACL_SUCCESS);
}

namespace {

constexpr int k_producers = 2;
constexpr int k_consumers = 2;
constexpr int k_per_producer = 2000;

using Counts = std::vector<std::atomic<int>>; // one counter per message id

// Every message id a producer sent (send returned ACL_SUCCESS) and how often each was received.
// A send racing with a stop (in flight when it is called) may answer ok after every consumer
// has seen the channel stopped and drained and left (docs/channel.md, stop): its message is
// still queued, and only the final drain, after every join, receives it (`late`). A send that
// answered ok before the stop began must never be left to that drain (`before_stop`).
struct Ledger {
    Counts sent = Counts(k_producers * k_per_producer);
    Counts before_stop = Counts(k_producers * k_per_producer); // sent, before the stop began
    Counts received = Counts(k_producers * k_per_producer);    // by the consumers
    Counts late = Counts(k_producers * k_per_producer);        // by the final drain
    std::atomic<bool> stopping{false}; // seq_cst: set before the first stop is called
    std::atomic<int> bad_codes{0};
    std::atomic<long> dropped{0}; // messages the meddler's cleans dropped
};

void produce(acltdtChannelHandle* channel, Ledger& ledger, int producer) {
    std::int64_t value = 0;
    const ValueDataset source(&value);
    if (!source.ok()) {
        ledger.bad_codes.fetch_add(1);
        return;
    }
    for (int i = 0; i < k_per_producer; ++i) {
        value = std::int64_t{producer} * k_per_producer + i;
        const aclError e = acltdtSendTensor(channel, source.dataset, -1);
        if (e == ACL_SUCCESS) {
            ledger.sent[static_cast<std::size_t>(value)].fetch_add(1);
            if (!ledger.stopping.load()) {
                ledger.before_stop[static_cast<std::size_t>(value)].fetch_add(1);
            }
        } else if (e != ACL_ERROR_RT_QUEUE_FULL) { // QUEUE_FULL: stopped
            ledger.bad_codes.fetch_add(1);
        }
    }
}

// Receives until the channel is stopped and drained (a stopped, empty channel: QUEUE_EMPTY),
// counting each message id into `into`.
void consume(acltdtChannelHandle* channel, Ledger& ledger, Counts& into) {
    acltdtDataset* out = acltdtCreateDataset();
    for (aclError e = acltdtReceiveTensor(channel, out, -1); e != ACL_ERROR_RT_QUEUE_EMPTY;
         e = acltdtReceiveTensor(channel, out, -1)) {
        const std::int64_t v =
            e == ACL_SUCCESS && acltdtGetDatasetSize(out) == 1 ? value_of(out) : -1;
        if (v < 0 || v >= k_producers * k_per_producer) {
            ledger.bad_codes.fetch_add(1);
            continue;
        }
        into[static_cast<std::size_t>(v)].fetch_add(1);
    }
    acltdtDestroyDataset(out);
}

// Queries and cleans while the others run, then stops the channel. Cleans go through the shared
// channel, the very clear() acltdtCleanChannel calls, because only there is the number each one
// dropped known (acltdtCleanChannel reports none), and exact accounting needs it.
void meddle(acltdtChannelHandle* channel, SharedChannel& shared, Ledger& ledger) {
    for (int i = 0; i < 200; ++i) {
        std::size_t size = 0;
        if (acltdtQueryChannelSize(channel, &size) != ACL_SUCCESS || size > 8) {
            ledger.bad_codes.fetch_add(1);
        }
        if (i % 10 == 0) {
            ledger.dropped.fetch_add(static_cast<long>(shared.clear()));
        }
        std::this_thread::yield();
    }
    ledger.stopping.store(true);
    if (acltdtStopChannel(channel) != ACL_SUCCESS) { // senders still sending: QUEUE_FULL
        ledger.bad_codes.fetch_add(1);               // Catch2 checks on the main thread only
    }
}

// Exact accounting once every thread has left and the channel is drained: every id whose send
// succeeded was received exactly once (by a consumer or the final drain) or dropped by a clean,
// nothing else arrived, sent = received + dropped, and no send that answered ok before the stop
// began was left for the final drain.
void check_accounting(const Ledger& ledger, bool with_meddler) {
    long sent = 0, received = 0, late = 0, lost = 0, duplicated = 0, unsent = 0, stranded = 0;
    for (std::size_t id = 0; id < ledger.sent.size(); ++id) {
        const int s = ledger.sent[id].load();
        const int r = ledger.received[id].load() + ledger.late[id].load();
        sent += s;
        received += r;
        late += ledger.late[id].load();
        lost += s == 1 && r == 0;
        duplicated += r > 1;
        unsent += s == 0 && r != 0;
        stranded += ledger.before_stop[id].load() != 0 && ledger.late[id].load() != 0;
    }
    INFO("sent " << sent << ", received " << received << " (" << late << " by the final drain)"
                 << ", dropped " << ledger.dropped.load());
    CHECK(ledger.bad_codes.load() == 0);
    CHECK(duplicated == 0);
    CHECK(unsent == 0);
    CHECK(stranded == 0);
    if (!with_meddler) {
        CHECK(sent == k_producers * k_per_producer);
        CHECK(received == sent);
    } else {
        CHECK(sent == received + ledger.dropped.load());
        CHECK(lost == ledger.dropped.load()); // and the dropped ones are the unreceived ones
    }
}

// Producers and consumers on one channel, with or without a meddler (which stops the channel
// while producers may still be sending). Consumers block (-1) until a stop: no timeouts.
void race(bool with_meddler) {
    const std::string name = with_meddler ? "threads-race-meddled" : "threads-race";
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, name.c_str(), 8);
    REQUIRE(channel != nullptr);
    const auto shared = shared_channel(name);
    Ledger ledger;
    std::vector<std::thread> producers;
    std::vector<std::thread> consumers;
    for (int p = 0; p < k_producers; ++p) {
        producers.emplace_back(produce, channel, std::ref(ledger), p);
    }
    for (int c = 0; c < k_consumers; ++c) {
        consumers.emplace_back(consume, channel, std::ref(ledger), std::ref(ledger.received));
    }
    std::thread meddler;
    if (with_meddler) {
        meddler = std::thread(meddle, channel, std::ref(*shared), std::ref(ledger));
    }
    for (std::thread& t : producers) {
        t.join();
    }
    if (meddler.joinable()) {
        meddler.join();
    }
    ledger.stopping.store(true); // without a meddler, every send has answered by now
    CHECK(acltdtStopChannel(channel) == ACL_SUCCESS); // consumers drain, then leave
    for (std::thread& t : consumers) {
        t.join();
    }
    consume(channel, ledger, ledger.late); // what a send racing the meddler's stop left queued
    check_accounting(ledger, with_meddler);
    CHECK(acltdtDestroyChannel(channel) == ACL_SUCCESS);
}

} // namespace

TEST_CASE("racing producers and consumers: every message exactly once", "[compat][tdt][threads]") {
    race(false);
}

TEST_CASE("racing with query, clean and stop: every message accounted for",
          "[compat][tdt][threads]") {
    race(true);
}
