// ferry::ipc::MessageChannel across processes: tests/ipc/message_channel_helper.cpp is the other
// process. The parent creates the channel and asserts; children report by exit status and lines.
#include "message_support.hpp"
#include "support.hpp"

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <ferry/ipc/message_channel.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <string>
#include <thread>
#include <vector>

using Catch::Contains;
using ferry::Dataset;
using ferry::Status;
using ferry::ipc::MessageChannel;
using ipc_test::Child;
using ipc_test::k_test_max_message;
using ipc_test::unique_name;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::size_t k_count = 10; // two rounds of the five dataset shapes

template <typename Policy>
const char* policy_name() {
    return Policy::multi_producer ? "mpmc" : "spsc";
}

// The helper's arguments for a channel: command, policy, name, capacity, max message bytes.
template <typename Policy>
std::vector<std::string> channel_args(const char* command, const std::string& name,
                                      std::size_t capacity, std::size_t max) {
    return {command, policy_name<Policy>(), name, std::to_string(capacity), std::to_string(max)};
}

// Starts the helper with `args` followed by `extra`.
std::unique_ptr<Child> start(std::vector<std::string> args, std::vector<std::string> extra = {}) {
    args.insert(args.end(), extra.begin(), extra.end());
    // Child takes an initializer_list: the longest form, padded with "" (the helper drops them).
    args.resize(8);
    return std::make_unique<Child>(std::initializer_list<std::string>{
        args[0], args[1], args[2], args[3], args[4], args[5], args[6], args[7]});
}

// The channel is closed and its name is gone: nothing is left in /dev/shm.
void require_gone(const std::string& name) {
    CHECK(ipc_test::leftovers(name).empty());
}

Dataset one_u8_item(std::size_t bytes) {
    Dataset ds;
    const std::vector<std::uint8_t> data(bytes, 7);
    REQUIRE(ds.add(*ferry::DataItem::from(data)) == Status::ok);
    return ds;
}

template <typename Policy>
void receive_and_check(MessageChannel<Policy>& ch, unsigned producer, std::size_t count,
                       bool by_view) {
    Dataset reused;
    for (std::size_t i = 0; i < count; ++i) {
        INFO("message " << i);
        if (by_view) {
            auto view = ch.receive_view(20s);
            REQUIRE(view);
            auto ds = view->dataset();
            REQUIRE(ds);
            CHECK(ipc_test::check_dataset(*ds, producer, i).empty());
            // Read in place: every payload lies inside the message in the shared cell.
            for (const auto& item : *ds) {
                const auto* p = static_cast<const std::byte*>(item.data());
                CHECK((p == nullptr ||
                       (p >= view->bytes().data() &&
                        p + item.size() <= view->bytes().data() + view->bytes().size())));
            }
        } else if (i % 2 == 0) {
            auto ds = ch.receive(20s);
            REQUIRE(ds);
            CHECK(ipc_test::check_dataset(*ds, producer, i).empty());
        } else {
            REQUIRE(ch.receive(reused, 20s) == Status::ok);
            CHECK(ipc_test::check_dataset(reused, producer, i).empty());
        }
    }
}

} // namespace

TEMPLATE_TEST_CASE("datasets of every shape cross from a sending process, by copy and by loan",
                   "[ipc]", ferry::spsc, ferry::mpmc) {
    const auto name = unique_name("msg-cross");
    const bool by_loan = GENERATE(false, true);
    INFO((by_loan ? "loan + receive_view" : "send + receive"));
    {
        auto ch = MessageChannel<TestType>::create(name, 4, k_test_max_message);
        REQUIRE(ch);
        auto sender = start(channel_args<TestType>("send", name, 4, k_test_max_message),
                            {"1", std::to_string(k_count), by_loan ? "loan" : "copy"});
        receive_and_check(*ch, 1, k_count, by_loan);
        REQUIRE(sender->wait_exit() == 0);
        CHECK(ch->size() == 0);
    }
    require_gone(name);
}

TEMPLATE_TEST_CASE("datasets sent here by copy and by loan are received in another process",
                   "[ipc]", ferry::spsc, ferry::mpmc) {
    const auto name = unique_name("msg-reverse");
    const bool by_view = GENERATE(false, true);
    {
        auto ch = MessageChannel<TestType>::create(name, 3, k_test_max_message);
        REQUIRE(ch);
        auto receiver = start(channel_args<TestType>("receive", name, 3, k_test_max_message),
                              {"2", std::to_string(k_count), by_view ? "view" : "copy"});
        for (std::size_t i = 0; i < k_count; ++i) {
            const Dataset ds = ipc_test::make_dataset(2, i);
            if (i % 2 == 0) {
                REQUIRE(ch->send(ds, 20s) == Status::ok);
                continue;
            }
            auto loan = ch->loan(*ferry::serialized_size(ds), 20s);
            REQUIRE(loan);
            const auto written = ferry::serialize_into(ds, loan->bytes());
            REQUIRE(written);
            REQUIRE(loan->publish(*written) == Status::ok);
        }
        CHECK(receiver->read_line() == "ok");
        REQUIRE(receiver->wait_exit() == 0);
    }
    require_gone(name);
}

TEST_CASE("mpmc: two producer processes, one by copy and one by loan, each arrive in order",
          "[ipc]") {
    const auto name = unique_name("msg-mpmc");
    {
        auto ch = MessageChannel<ferry::mpmc>::create(name, 4, k_test_max_message);
        REQUIRE(ch);
        const auto args = channel_args<ferry::mpmc>("send", name, 4, k_test_max_message);
        auto copier = start(args, {"1", std::to_string(k_count), "copy"});
        auto loaner = start(args, {"2", std::to_string(k_count), "loan"});
        std::size_t next[3] = {0, 0, 0};
        for (std::size_t n = 0; n < 2 * k_count; ++n) {
            auto view = ch->receive_view(20s);
            REQUIRE(view);
            auto ds = view->dataset();
            REQUIRE(ds);
            const unsigned producer = ds->name().rfind("p1.", 0) == 0 ? 1 : 2;
            INFO(ds->name());
            REQUIRE(next[producer] < k_count);
            CHECK(ipc_test::check_dataset(*ds, producer, next[producer]++).empty());
        }
        CHECK(next[1] == k_count);
        CHECK(next[2] == k_count);
        REQUIRE(copier->wait_exit() == 0);
        REQUIRE(loaner->wait_exit() == 0);
    }
    require_gone(name);
}

TEST_CASE("a loan dropped unpublished is skipped by receivers and blocks nothing", "[ipc]") {
    const auto name = unique_name("msg-drop");
    {
        auto ch = MessageChannel<>::create(name, 2, 4096);
        REQUIRE(ch);
        {
            auto loan = ch->loan(100);
            REQUIRE(loan);
            CHECK(loan->publish(101) == Status::invalid_param); // longer than the loan
            CHECK(loan->active());
        } // dropped: a cancelled marker takes its position
        CHECK(ch->size() == 1);
        CHECK(ch->receive(ferry::no_wait).status() == Status::empty);
        CHECK(ch->size() == 0);
        const auto before = Clock::now();
        CHECK(ch->receive(30ms).status() == Status::timed_out);
        CHECK(Clock::now() - before >= 30ms);

        // Across processes: the marker the other process left is skipped, its message arrives.
        auto sender = start(channel_args<ferry::spsc>("drop-loan-then-send", name, 2, 4096));
        REQUIRE(sender->wait_exit() == 0);
        auto got = ch->receive(ferry::no_wait);
        REQUIRE(got);
        CHECK(ipc_test::check_dataset(*got, 1, 0).empty());
        CHECK(ch->size() == 0);
    }
    require_gone(name);
}

TEST_CASE("a message channel of capacity N holds exactly N; its timeouts are never early",
          "[ipc]") {
    const auto name = unique_name("msg-capacity");
    {
        auto ch = MessageChannel<>::create(name, 3, 1024);
        REQUIRE(ch);
        CHECK(ch->capacity() == 3);
        const Dataset ds = one_u8_item(10);
        for (int i = 0; i < 3; ++i) {
            REQUIRE(ch->send(ds, ferry::no_wait) == Status::ok);
        }
        CHECK(ch->size() == 3);
        CHECK(ch->send(ds, ferry::no_wait) == Status::full);
        CHECK(ch->loan(1, ferry::no_wait).status() == Status::full);
        const auto before = Clock::now();
        CHECK(ch->send(ds, 40ms) == Status::timed_out);
        CHECK(Clock::now() - before >= 40ms);
        CHECK(ch->size() == 3);

        // A received view still occupies its cell: the channel stays full until it is released.
        auto view = ch->receive_view(ferry::no_wait);
        REQUIRE(view);
        CHECK(ch->send(ds, ferry::no_wait) == Status::full);
        view->release();
        CHECK(ch->send(ds, ferry::no_wait) == Status::ok);
        CHECK(ch->clear() == 3);
        CHECK(ch->size() == 0);
        const auto empty_since = Clock::now();
        CHECK(ch->receive_view(40ms).status() == Status::timed_out);
        CHECK(Clock::now() - empty_since >= 40ms);
    }
    require_gone(name);
}

TEST_CASE("a message larger than the channel's maximum is invalid_param and changes nothing",
          "[ipc]") {
    const auto name = unique_name("msg-oversize");
    {
        auto ch = MessageChannel<>::create(name, 2, 1024);
        REQUIRE(ch);
        // One item of one dim: a 128-byte header block, then the payload.
        const Dataset fits = one_u8_item(1024 - 128);
        const Dataset too_big = one_u8_item(1024 - 128 + 1);
        REQUIRE(*ferry::serialized_size(fits) == 1024);
        CHECK(ch->send(too_big, ferry::no_wait) == Status::invalid_param);
        CHECK(ch->loan(1025, ferry::no_wait).status() == Status::invalid_param);
        CHECK(ch->send(Dataset{}, ferry::no_wait) == Status::rt_param_invalid); // nothing to send
        CHECK(ch->size() == 0);
        CHECK(ch->receive(ferry::no_wait).status() == Status::empty);

        REQUIRE(ch->send(fits, ferry::no_wait) == Status::ok); // the boundary itself fits
        auto got = ch->receive(ferry::no_wait);
        REQUIRE(got);
        CHECK(*got == fits);
        Dataset mine = one_u8_item(1); // holds an item the caller added
        REQUIRE(ch->send(fits, ferry::no_wait) == Status::ok);
        CHECK(ch->receive(mine, ferry::no_wait) == Status::invalid_param);
        CHECK(ch->size() == 1); // refused before anything was dequeued
    }
    require_gone(name);
}

TEST_CASE("message channel geometry: bad values are invalid_param, a mismatch names both",
          "[ipc]") {
    const auto name = unique_name("msg-geometry");
    CHECK(MessageChannel<>::create(name, 1, 1024).status() == Status::invalid_param);
    CHECK(MessageChannel<>::create(name, 8193, 1024).status() == Status::invalid_param);
    CHECK(MessageChannel<>::create(name, 4, 0).status() == Status::invalid_param);
    CHECK(MessageChannel<>::create(name, 4, ferry::ipc::k_max_message_bytes + 1).status() ==
          Status::invalid_param);
    CHECK(MessageChannel<>::create("bad/name", 4, 1024).status() == Status::invalid_param);
    {
        auto ch = MessageChannel<>::create(name, 4, 1024);
        REQUIRE(ch);
        auto other = MessageChannel<>::open(name, 8, 1024);
        REQUIRE(other.status() == Status::mismatch);
        CHECK_THAT(other.error().message, Contains("ferry.msg.spsc.c4.m1024"));
        CHECK_THAT(other.error().message, Contains("ferry.msg.spsc.c8.m1024"));
        CHECK(MessageChannel<>::open(name, 4, 2048).status() == Status::mismatch);
        CHECK(MessageChannel<ferry::mpmc>::open(name, 4, 1024).status() == Status::mismatch);
        CHECK(MessageChannel<>::create(name, 4, 1024).status() == Status::failure); // in use
        auto same = MessageChannel<>::open(name, 4, 1024);
        REQUIRE(same);
        REQUIRE(ch->send(one_u8_item(3), ferry::no_wait) == Status::ok);
        CHECK(same->size() == 1);
    }
    require_gone(name);
}

TEST_CASE("stop from this process wakes a receiver blocked in another; drain after stop", "[ipc]") {
    const auto name = unique_name("msg-stop-here");
    {
        auto ch = MessageChannel<>::create(name, 4, 1024);
        REQUIRE(ch);
        auto receiver = start(channel_args<ferry::spsc>("receive-until-stopped", name, 4, 1024));
        REQUIRE(receiver->read_line() == "ready");
        const auto give_up = Clock::now() + 20s;
        while (ch->blocked() == 0 && Clock::now() < give_up) { // the child parked in its receive
            std::this_thread::sleep_for(1ms);                  // polls observable state
        }
        REQUIRE(ch->blocked() == 1);
        ch->stop();
        CHECK(receiver->read_line() == std::to_string(static_cast<int>(Status::stopped)));
        REQUIRE(receiver->wait_exit() == 0);
        CHECK(ch->stopped());
        CHECK(ch->send(one_u8_item(1), 1s) == Status::stopped);
        CHECK(ch->loan(1).status() == Status::stopped);
        ch->stop(); // idempotent
        CHECK(ch->stopped());
    }
    {
        auto ch = MessageChannel<>::create(name, 4, 1024);
        REQUIRE(ch);
        REQUIRE(ch->send(one_u8_item(1)) == Status::ok);
        REQUIRE(ch->send(one_u8_item(2)) == Status::ok);
        ch->stop();
        auto first = ch->receive(); // drained in order, without blocking
        auto second = ch->receive(1s);
        REQUIRE((first && second));
        CHECK((*first)[0].size() == 1);
        CHECK((*second)[0].size() == 2);
        CHECK(ch->receive().status() == Status::stopped);
        CHECK(ch->receive_view(ferry::no_wait).status() == Status::stopped);
    }
    require_gone(name);
}

TEST_CASE("stop from another process wakes a sender blocked here on a full channel", "[ipc]") {
    const auto name = unique_name("msg-stop-there");
    {
        auto ch = MessageChannel<ferry::mpmc>::create(name, 2, 1024);
        REQUIRE(ch);
        REQUIRE(ch->send(one_u8_item(1)) == Status::ok);
        REQUIRE(ch->send(one_u8_item(1)) == Status::ok);
        auto stopper = start(channel_args<ferry::mpmc>("stop-when-blocked", name, 2, 1024));
        // Blocks until the child sees this call parked and stops the channel.
        CHECK(ch->send(one_u8_item(1), 20s) == Status::stopped);
        REQUIRE(stopper->wait_exit() == 0);
        CHECK(ch->stopped());
        CHECK(ch->size() == 2); // still drainable
    }
    require_gone(name);
}

namespace {

// Runs `call` on a thread once the parent has made the other process hold its cell; waits until
// the call is parked (blocked()), then lets the child SIGKILL itself and measures how long after
// that the call answers. The child's death is at or after `released`, so the figure is an upper
// bound on kill -> peer_lost.
template <typename Policy, typename Call>
std::chrono::milliseconds time_to_answer(MessageChannel<Policy>& ch, Child& child, Call call,
                                         Status& answer) {
    std::atomic<bool> done{false};
    Clock::time_point answered{};
    std::thread waiter([&] {
        answer = call();
        answered = Clock::now();
        done.store(true);
    });
    while (ch.blocked() == 0 && !done.load()) {
        std::this_thread::sleep_for(1ms); // observable state: the call is parked
    }
    const auto released = Clock::now();
    child.release(); // the child raises SIGKILL at EOF
    waiter.join();
    CHECK(child.wait_exit() == 128 + SIGKILL);
    return std::chrono::duration_cast<std::chrono::milliseconds>(answered - released);
}

} // namespace

TEST_CASE("a sender killed while holding a loan: the blocked receiver gets peer_lost in 100 ms",
          "[ipc][concurrency]") {
    const auto name = unique_name("msg-loan-crash");
    {
        auto ch = MessageChannel<ferry::mpmc>::create(name, 2, 4096);
        REQUIRE(ch);
        auto sender = start(channel_args<ferry::mpmc>("loan-crash", name, 2, 4096));
        REQUIRE(sender->read_line() == "loaned");
        CHECK(ch->size() == 1); // claimed, not published: a receive waits for it
        Status answer = Status::ok;
        const auto took = time_to_answer(
            *ch, *sender, [&] { return ch->receive(20s).status(); }, answer);
        CHECK(answer == Status::peer_lost);
        CHECK(took < 100ms);
        CHECK(ch->send(one_u8_item(1), ferry::no_wait) == Status::peer_lost); // sticky
    }
    require_gone(name);
}

TEST_CASE("a receiver killed while holding a view: the blocked sender gets peer_lost in 100 ms",
          "[ipc][concurrency]") {
    const auto name = unique_name("msg-view-crash");
    {
        auto ch = MessageChannel<>::create(name, 2, 4096);
        REQUIRE(ch);
        REQUIRE(ch->send(one_u8_item(1)) == Status::ok);
        auto receiver = start(channel_args<ferry::spsc>("view-crash", name, 2, 4096));
        REQUIRE(receiver->read_line() == "holding");
        REQUIRE(ch->send(one_u8_item(2), ferry::no_wait) == Status::ok);
        // Full because of the held view: one message queued, one cell held by the child.
        REQUIRE(ch->send(one_u8_item(3), ferry::no_wait) == Status::full);
        Status answer = Status::ok;
        const auto took = time_to_answer(
            *ch, *receiver, [&] { return ch->send(one_u8_item(3), 20s); }, answer);
        CHECK(answer == Status::peer_lost);
        CHECK(took < 100ms);
    }
    require_gone(name);
}

TEST_CASE("a loan or view outlives its channel object; a closed channel answers uninitialized",
          "[ipc]") {
    const auto name = unique_name("msg-lifetime");
    {
        auto receiver = MessageChannel<>::create(name, 2, 256);
        REQUIRE(receiver);
        auto sender = MessageChannel<>::open(name, 2, 256);
        REQUIRE(sender);
        auto loan = sender->loan(4);
        REQUIRE(loan);
        REQUIRE(sender->close()); // the loan keeps the segment mapped
        CHECK(sender->send(one_u8_item(1)) == Status::uninitialized);
        CHECK(sender->loan(1).status() == Status::uninitialized);
        CHECK(sender->receive(ferry::no_wait).status() == Status::uninitialized);
        CHECK(sender->receive_view(ferry::no_wait).status() == Status::uninitialized);
        CHECK(sender->size() == 0);
        CHECK(sender->stopped());
        std::memcpy(loan->bytes().data(), "abcd", 4);
        REQUIRE(loan->publish() == Status::ok);
        CHECK_FALSE(loan->active());
        CHECK(loan->publish() == Status::invalid_param); // once only

        auto view = receiver->receive_view(ferry::no_wait);
        REQUIRE(view);
        REQUIRE(receiver->close());
        REQUIRE(view->bytes().size() == 4);
        CHECK(std::memcmp(view->bytes().data(), "abcd", 4) == 0);
        CHECK_FALSE(view->dataset()); // raw bytes, not a dataset's message
        view->release();
        CHECK(view->bytes().empty());
        CHECK(ipc_test::leftovers(name).empty()); // the last holder removed the name
    }
    require_gone(name);
}

TEST_CASE("a cell header no sender writes is refused, never read past", "[ipc]") {
    namespace detail = ferry::ipc::detail;
    alignas(64) std::byte cell[detail::k_cell_header_bytes + 64] = {};
    detail::write_cell_header(cell, detail::CellKind::message, 64);
    CHECK(detail::read_cell(cell, 64).valid);
    CHECK(detail::read_cell(cell, 64).bytes.size() == 64);
    CHECK_FALSE(detail::read_cell(cell, 63).valid); // longer than this reader's maximum
    detail::write_cell_header(cell, static_cast<detail::CellKind>(7), 1);
    CHECK_FALSE(detail::read_cell(cell, 64).valid);
    detail::write_cell_header(cell, detail::CellKind::cancelled, 0);
    CHECK(detail::read_cell(cell, 64).kind == detail::CellKind::cancelled);
    CHECK(detail::cell_bytes_for(1) == 128);
    CHECK(detail::cell_bytes_for(64) == 128);
    CHECK(detail::cell_bytes_for(65) == 192);
    CHECK(detail::cell_bytes_for(SIZE_MAX) == 0);
}
