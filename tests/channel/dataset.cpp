// Channel<Dataset, 64> works out of the box: datasets move through without copying their
// payloads, a failed send hands the dataset back intact, and a receive can refill an existing
// dataset.
#include <catch2/catch.hpp>
#include <ferry/channel.hpp>
#include <ferry/tensor.hpp>
#include <vector>

using ferry::Status;

namespace {
ferry::Dataset make_dataset(float first) {
    const std::vector<float> values{first, first + 1, first + 2, first + 3};
    auto item = ferry::DataItem::from(values, {2, 2});
    REQUIRE(item.has_value());
    ferry::Dataset ds;
    REQUIRE(ds.add(std::move(*item)) == Status::ok);
    REQUIRE(ds.set_name("batch") == Status::ok);
    return ds;
}
} // namespace

TEMPLATE_TEST_CASE("Channel<Dataset, 64>: FIFO, payloads moved not copied", "", ferry::spsc,
                   ferry::mpmc) {
    ferry::Channel<ferry::Dataset, 64, TestType> ch;
    std::vector<const void*> payloads;
    for (int i = 0; i < 64; ++i) {
        ferry::Dataset ds = make_dataset(static_cast<float>(i));
        payloads.push_back(ds[0].data());
        REQUIRE(ch.send(std::move(ds)) == Status::ok);
    }
    CHECK(ch.size() == 64);
    for (int i = 0; i < 64; ++i) {
        auto r = ch.receive();
        REQUIRE(r.has_value());
        CHECK(*r == make_dataset(static_cast<float>(i)));
        CHECK((*r)[0].data() == payloads[static_cast<std::size_t>(i)]); // same buffer: no copy
        CHECK(r->name() == "batch");
    }
}

TEST_CASE("Channel<Dataset, 64>: a failed send hands the dataset back intact") {
    ferry::Channel<ferry::Dataset, 64> ch;
    for (int i = 0; i < 64; ++i) {
        REQUIRE(ch.try_send(make_dataset(0)) == Status::ok);
    }
    ferry::Dataset mine = make_dataset(42);
    const void* payload = mine[0].data();
    CHECK(ch.try_send(std::move(mine)) == Status::full);
    CHECK(ch.send_for(std::move(mine), std::chrono::milliseconds(1)) == Status::timed_out);
    ch.stop();
    CHECK(ch.send(std::move(mine)) == Status::stopped);
    CHECK(mine == make_dataset(42));
    CHECK(mine[0].data() == payload);
}

TEST_CASE("Channel<Dataset, 64>: receive into an existing dataset") {
    ferry::Channel<ferry::Dataset, 64> ch;
    REQUIRE(ch.send(make_dataset(5)) == Status::ok);
    ferry::Dataset out = make_dataset(0);
    REQUIRE(ch.receive(out) == Status::ok);
    CHECK(out == make_dataset(5));
    CHECK(ch.receive(out, ferry::no_wait) == Status::empty);
    CHECK(out == make_dataset(5)); // untouched on failure
}
