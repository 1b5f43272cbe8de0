// Stress (docs/cann-contract/quality.md#stress): N producers and M consumers, with stop and clear
// racing; every message is accounted for: nothing lost, nothing duplicated, nothing destroyed
// twice.
//
// Sizes: 4 producers x 4 consumers x 10^6 messages in a normal build; scaled down under
// ThreadSanitizer (about 10x slower, and CI gives the concurrency suite 2 cores) so each test
// stays near a minute there.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <ferry/core/cpu_relax.hpp>
#include <memory>
#include <thread>
#include <utility>
#include <vector>

using ferry::Status;

namespace {
#if defined(__SANITIZE_THREAD__)
constexpr std::uint64_t k_messages = 100'000;
#else
constexpr std::uint64_t k_messages = 1'000'000;
#endif
constexpr int k_producers = 4;
struct symmetric_mpmc : ferry::mpmc {
    static constexpr bool asymmetric_barrier = false;
};
constexpr int k_consumers = 4;

// What each consumer saw; checked on the main thread after join.
struct ConsumerLog {
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    bool per_producer_order_ok = true;
};

// Message value = producer * per_producer + sequence number.
template <typename Channel>
void consume(Channel& ch, std::uint64_t per_producer, ConsumerLog& log,
             std::vector<std::atomic<std::uint8_t>>& seen, std::atomic<std::uint64_t>& duplicates) {
    std::vector<std::uint64_t> last(k_producers, ~std::uint64_t{0});
    for (;;) {
        auto r = ch.receive();
        if (!r.has_value()) {
            return; // stopped and drained
        }
        const std::uint64_t v = *r;
        const auto producer = static_cast<std::size_t>(v / per_producer);
        const std::uint64_t seq = v % per_producer;
        if (last[producer] != ~std::uint64_t{0} && seq <= last[producer]) {
            log.per_producer_order_ok = false; // FIFO: one producer's items arrive in order
        }
        last[producer] = seq;
        if (seen[v].exchange(1, std::memory_order_relaxed) != 0) {
            duplicates.fetch_add(1, std::memory_order_relaxed);
        }
        ++log.count;
        log.sum += v;
    }
}

template <typename Channel>
void run_lossless(Channel& ch, int producers, int consumers,
                  std::uint64_t per_producer = k_messages) {
    const std::uint64_t total = static_cast<std::uint64_t>(producers) * per_producer;
    std::vector<std::atomic<std::uint8_t>> seen(total);
    std::atomic<std::uint64_t> duplicates{0};
    std::vector<ConsumerLog> logs(static_cast<std::size_t>(consumers));
    std::vector<Status> send_failures(static_cast<std::size_t>(producers), Status::ok);
    std::vector<std::thread> consumer_threads;
    for (int c = 0; c < consumers; ++c) {
        consumer_threads.emplace_back(
            [&, c] { consume(ch, per_producer, logs[c], seen, duplicates); });
    }
    std::vector<std::thread> producer_threads;
    for (int p = 0; p < producers; ++p) {
        producer_threads.emplace_back([&, p] {
            for (std::uint64_t i = 0; i < per_producer; ++i) {
                const Status s = ch.send(static_cast<std::uint64_t>(p) * per_producer + i);
                if (s != Status::ok) {
                    send_failures[p] = s;
                    return;
                }
            }
        });
    }
    for (auto& t : producer_threads) {
        t.join();
    }
    ch.stop(); // consumers drain what is left, then see stopped
    for (auto& t : consumer_threads) {
        t.join();
    }
    std::uint64_t count = 0;
    std::uint64_t sum = 0;
    for (const auto& log : logs) {
        count += log.count;
        sum += log.sum;
        CHECK(log.per_producer_order_ok);
    }
    for (Status s : send_failures) {
        CHECK(s == Status::ok);
    }
    CHECK(duplicates.load() == 0);
    CHECK(count == total);
    CHECK(sum == total * (total - 1) / 2);
    CHECK(ch.size() == 0);
}
} // namespace

TEST_CASE("mpmc 4x4: every message delivered exactly once, per-producer order kept") {
    SECTION("capacity 64") {
        ferry::Channel<std::uint64_t, 64, ferry::mpmc> ch;
        run_lossless(ch, k_producers, k_consumers);
    }
    SECTION("capacity 2 (always full or empty: the blocking paths; a tenth of the messages)") {
        ferry::Channel<std::uint64_t, ferry::dynamic_capacity, ferry::mpmc> ch(2);
        run_lossless(ch, k_producers, k_consumers, k_messages / 10);
    }
    SECTION("capacity 2, symmetric barriers (the fallback without membarrier)") {
        ferry::Channel<std::uint64_t, 2, symmetric_mpmc> ch;
        run_lossless(ch, k_producers, k_consumers, k_messages / 10);
    }
}

TEST_CASE("spsc 1x1: every message delivered exactly once, in order") {
    SECTION("capacity 2 (a quarter of the messages: every hand-off may park)") {
        ferry::Channel<std::uint64_t, 2> ch;
        run_lossless(ch, 1, 1, k_messages / 4);
    }
    SECTION("capacity 8192, dynamic (the flag ring)") {
        ferry::Channel<std::uint64_t, ferry::dynamic_capacity> ch(8192);
        run_lossless(ch, 1, 1);
    }
    SECTION("capacity 8192, fixed (the index ring: blocking send / receive, stop)") {
        const auto ch = std::make_unique<ferry::Channel<std::uint64_t, 8192>>();
        run_lossless(*ch, 1, 1);
    }
}

namespace {
// A payload of several words that must agree: an item overwritten while it is being read (a
// cell handed back to the producer too early) shows as a mismatch or a wrong sequence number.
struct Stamped {
    std::uint64_t seq = 0;
    std::uint64_t tripled = 0;
    std::uint64_t inverted = ~std::uint64_t{0};
    [[nodiscard]] static Stamped of(std::uint64_t i) noexcept { return {i, 3 * i, ~i}; }
    [[nodiscard]] bool is(std::uint64_t i) const noexcept {
        return seq == i && tripled == 3 * i && inverted == ~i;
    }
};

// Retries until `attempt` is true: pauses, and a yield now and then (both threads may share one
// CPU), never a park, so the two sides run into each other as often as possible.
template <typename Attempt>
void spin(Attempt attempt) {
    for (unsigned tries = 1; !attempt(); ++tries) {
        if (tries % 64 == 0) {
            std::this_thread::yield();
        } else {
            ferry::detail::cpu_relax();
        }
    }
}
} // namespace

// Capacity 2 runs the flag ring, 8192 the index ring (channel.hpp, spsc_ring_for): in both, a
// cell handed back before its item was read, or an item handed over before it was written, shows
// as a wrong or torn item.
TEMPLATE_TEST_CASE_SIG("spsc: no cell is reused before its item was read; exact sequence", "",
                       ((std::size_t C), C), 2, 8192) {
    const auto ch = std::make_unique<ferry::Channel<Stamped, C>>();
    std::atomic<std::uint64_t> oversize{0}; // the producer saw size() above the capacity
    std::thread producer([&ch, &oversize] {
        for (std::uint64_t i = 0; i < k_messages; ++i) {
            spin([&] { return ch->try_send(Stamped::of(i)) == Status::ok; });
            oversize += ch->size() > C ? 1 : 0;
        }
    });
    std::uint64_t wrong = 0; // items that were not the next one, intact
    std::uint64_t first_wrong = ~std::uint64_t{0};
    for (std::uint64_t i = 0; i < k_messages; ++i) {
        Stamped got;
        spin([&] {
            auto r = ch->try_receive();
            got = r.value_or(Stamped{});
            return r.has_value();
        });
        if (!got.is(i)) {
            first_wrong = wrong++ == 0 ? i : first_wrong;
        }
    }
    producer.join();
    INFO("first wrong item at " << first_wrong);
    CHECK(wrong == 0);
    CHECK(oversize.load() == 0);
    CHECK(ch->try_receive().status() == Status::empty); // nothing extra, nothing duplicated
    CHECK(ch->stats().sent == k_messages);
    CHECK(ch->stats().received == k_messages);
}

namespace {
// Per-message accounting for the clear/stop race: one counter per message id and per fate.
struct Ledger {
    explicit Ledger(std::size_t n) : sent(n), before_stop(n), received(n), late(n), dropped(n) {}
    std::vector<std::atomic<std::uint8_t>> sent;        // the send answered ok
    std::vector<std::atomic<std::uint8_t>> before_stop; // ... and returned before stop() began
    std::vector<std::atomic<std::uint8_t>> received;    // by a consumer thread
    std::vector<std::atomic<std::uint8_t>> late;        // by the final drain, after every join
    std::vector<std::atomic<std::uint8_t>> dropped;     // destroyed inside the channel
    std::atomic<std::uint64_t> handled{0}; // received by a consumer or dropped by clear()
    std::atomic<int> producers_done{0};
    std::atomic<bool> stopping{false};
};

void bump(std::vector<std::atomic<std::uint8_t>>& counts, std::uint64_t id) {
    counts[id].fetch_add(1, std::memory_order_relaxed);
}

// A move-only message that marks itself dropped when it is destroyed while still owning its id
// (by clear() or by the channel's destructor). Every 16th yields inside its move, which on mpmc
// happens between a sender's claim and its publication: the window a preempted sender leaves
// open, made frequent enough for receivers and clear() to run into it.
struct Token {
    std::uint64_t id = 0;
    Ledger* ledger = nullptr;

    Token(std::uint64_t i, Ledger* l) noexcept : id(i), ledger(l) {}
    Token(Token&& other) noexcept : id(other.id), ledger(std::exchange(other.ledger, nullptr)) {
        if (id % 4 == 0) {
            std::this_thread::yield();
        }
    }
    Token& operator=(Token&& other) noexcept {
        release();
        id = other.id;
        ledger = std::exchange(other.ledger, nullptr);
        return *this;
    }
    ~Token() { release(); }
    // Takes the id out; the token no longer owns it.
    std::uint64_t take() noexcept {
        ledger = nullptr;
        return id;
    }
    void release() noexcept {
        if (ledger != nullptr) {
            bump(ledger->dropped, id);
            ledger = nullptr;
        }
    }
};

using TokenChannel = ferry::Channel<Token, 16, ferry::mpmc>;

void produce_tokens(TokenChannel& ch, Ledger& ledger, std::uint64_t first, std::uint64_t count) {
    for (std::uint64_t id = first; id < first + count; ++id) {
        Token t(id, &ledger);
        const Status s = id % 3 == 0 ? ch.send(std::move(t))
                                     : ch.send_for(std::move(t), std::chrono::microseconds(200));
        if (s == Status::ok) {
            bump(ledger.sent, id);
            if (!ledger.stopping.load()) { // seq_cst: this send returned before stop() began
                bump(ledger.before_stop, id);
            }
            continue;
        }
        t.take(); // handed back: ours again, not the channel's
        if (s == Status::stopped) {
            return;
        }
    }
}

struct Outcome {
    std::uint64_t sent = 0;
    std::uint64_t received = 0;
    std::uint64_t dropped = 0;
    std::uint64_t bad = 0;      // ids whose fates do not add up to exactly their send
    std::uint64_t stranded = 0; // sent before stop(), yet not drained by the consumers
};

Outcome tally(const Ledger& ledger) {
    Outcome o;
    for (std::size_t id = 0; id < ledger.sent.size(); ++id) {
        const unsigned sent = ledger.sent[id].load();
        const unsigned received = ledger.received[id].load() + ledger.late[id].load();
        const unsigned dropped = ledger.dropped[id].load();
        o.sent += sent;
        o.received += received;
        o.dropped += dropped;
        o.bad += sent > 1 || received + dropped != sent ? 1 : 0;
        o.stranded += ledger.before_stop[id].load() != 0 && ledger.late[id].load() != 0 ? 1 : 0;
    }
    return o;
}

// One race: producers, consumers and a thread that clears repeatedly and then stops.
void race_clear_and_stop(std::uint64_t per_producer) {
    Ledger ledger(k_producers * per_producer);
    std::uint64_t cleared = 0; // what clear() reported
    TokenChannel ch;
    std::vector<std::thread> threads;
    for (int p = 0; p < k_producers; ++p) {
        threads.emplace_back([&, p] {
            produce_tokens(ch, ledger, p * per_producer, per_producer);
            ledger.producers_done.fetch_add(1);
        });
    }
    for (int c = 0; c < k_consumers; ++c) {
        threads.emplace_back([&] {
            while (auto r = ch.receive()) {
                bump(ledger.received, r->take());
                ledger.handled.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    std::thread chaos([&] {
        // Clear repeatedly while traffic flows; stop mid-stream, once half the messages are
        // through (or, should sends time out a lot, once the producers are done).
        const std::uint64_t half = k_producers * per_producer / 2;
        while (ledger.handled.load() < half && ledger.producers_done.load() < k_producers) {
            const std::size_t n = ch.clear();
            cleared += n;
            ledger.handled.fetch_add(n);
            std::this_thread::yield();
        }
        ledger.stopping.store(true);
        ch.stop();
    });
    chaos.join();
    for (auto& t : threads) {
        t.join();
    }
    CHECK(ch.blocked() == 0);
    // A send racing with stop() may complete after every consumer has left; its item is still
    // there to drain. A send that returned before stop() began must not be among these.
    while (auto r = ch.try_receive()) {
        bump(ledger.late, r->take());
    }
    CHECK(ch.size() == 0);
    const Outcome o = tally(ledger);
    CHECK(o.bad == 0);
    CHECK(o.stranded == 0);
    CHECK(o.sent == o.received + o.dropped);
    CHECK(o.dropped == cleared); // nothing left for the destructor: clear() counted every drop
    CHECK(o.received > 0);
}
} // namespace

TEST_CASE("mpmc with clear and stop racing: every ok send is received once or cleared, exactly") {
    // Several short races rather than one long one: each stop() is a chance to strand an item.
    constexpr int k_rounds = 10;
    for (int round = 0; round < k_rounds; ++round) {
        race_clear_and_stop(k_messages / 10 / k_rounds);
    }
}
