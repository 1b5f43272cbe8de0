// Stress (spec/quality.md "Stress"): N producers and M consumers, with stop and clear racing;
// every message is accounted for: nothing lost, nothing duplicated, nothing destroyed twice.
//
// Sizes: 4 producers x 4 consumers x 10^6 messages in a normal build; scaled down under
// ThreadSanitizer (about 10x slower, and CI gives the concurrency suite 2 cores) so each test
// stays near a minute there.
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/channel/channel.hpp>
#include <memory>
#include <thread>
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
    SECTION("capacity 8192") {
        ferry::Channel<std::uint64_t, ferry::dynamic_capacity> ch(8192);
        run_lossless(ch, 1, 1);
    }
}

namespace {
// A move-only token that reports its value to `sink` when it is destroyed while still owning it:
// the values that clear() dropped or the channel's destructor destroyed land in `sink`.
struct Token {
    std::uint64_t value = 0;
    std::atomic<std::uint64_t>* sink = nullptr;

    Token(std::uint64_t v, std::atomic<std::uint64_t>* s) noexcept : value(v), sink(s) {}
    Token(Token&& other) noexcept : value(other.value), sink(other.sink) { other.sink = nullptr; }
    Token& operator=(Token&& other) noexcept {
        release();
        value = other.value;
        sink = other.sink;
        other.sink = nullptr;
        return *this;
    }
    ~Token() { release(); }
    // Takes the value out; the token no longer owns it.
    std::uint64_t take() noexcept {
        sink = nullptr;
        return value;
    }
    void release() noexcept {
        if (sink != nullptr) {
            sink->fetch_add(value + 1, std::memory_order_relaxed); // +1: value 0 counts too
            sink = nullptr;
        }
    }
};

struct Totals {
    std::atomic<std::uint64_t> sent{0}; // sum of value+1 over sends that returned ok
    std::atomic<std::uint64_t> handed_back{0};
    std::atomic<std::uint64_t> received{0};
    std::atomic<std::uint64_t> dropped{0}; // by clear() or by the channel's destructor
    std::atomic<std::uint64_t> produced{0};
};

void produce_tokens(ferry::Channel<Token, 16, ferry::mpmc>& ch, Totals& totals, std::uint64_t first,
                    std::uint64_t count) {
    for (std::uint64_t i = first; i < first + count; ++i) {
        Token t(i, &totals.dropped);
        totals.produced.fetch_add(i + 1, std::memory_order_relaxed);
        const Status s = i % 3 == 0 ? ch.send(std::move(t))
                                    : ch.send_for(std::move(t), std::chrono::microseconds(200));
        if (s == Status::ok) {
            totals.sent.fetch_add(i + 1, std::memory_order_relaxed);
        } else {
            totals.handed_back.fetch_add(t.take() + 1, std::memory_order_relaxed);
            if (s == Status::stopped) {
                return;
            }
        }
    }
}
} // namespace

TEST_CASE("mpmc with clear and stop racing: sent = received + dropped, failures hand values back") {
    constexpr std::uint64_t k_per_producer = k_messages / 10;
    Totals totals;
    {
        ferry::Channel<Token, 16, ferry::mpmc> ch;
        std::vector<std::thread> threads;
        for (int p = 0; p < k_producers; ++p) {
            threads.emplace_back(
                [&, p] { produce_tokens(ch, totals, p * k_per_producer, k_per_producer); });
        }
        for (int c = 0; c < k_consumers; ++c) {
            threads.emplace_back([&] {
                while (auto r = ch.receive()) {
                    totals.received.fetch_add(r->take() + 1, std::memory_order_relaxed);
                }
            });
        }
        std::thread chaos([&] {
            // Clear repeatedly while traffic flows, then stop mid-stream.
            for (int i = 0; i < 2000; ++i) {
                ch.clear();
                std::this_thread::yield();
            }
            ch.stop();
        });
        chaos.join();
        for (auto& t : threads) {
            t.join();
        }
        CHECK(ch.blocked() == 0);
    } // items a late send put in after the consumers left are destroyed here, into `dropped`
    CHECK(totals.produced.load() == totals.sent.load() + totals.handed_back.load());
    CHECK(totals.sent.load() == totals.received.load() + totals.dropped.load());
    CHECK(totals.received.load() > 0);
}
