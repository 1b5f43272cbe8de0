#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/tensor/dataset.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <vector>

using ferry::DataItem;
using ferry::Dataset;
using ferry::DType;
using ferry::MemoryKind;
using ferry::Status;
using ferry::TensorKind;

namespace {
// Pointers into device_block are "device memory"; bad_block makes the query itself fail.
std::byte device_block[64];
std::byte bad_block[64];
ferry::PointerLocation fake_locator(const void* p) noexcept {
    const auto* b = static_cast<const std::byte*>(p);
    if (b >= device_block && b < device_block + sizeof device_block) {
        return {Status::ok, MemoryKind::device};
    }
    if (b >= bad_block && b < bad_block + sizeof bad_block) {
        return {Status::rt_param_invalid, MemoryKind::unknown};
    }
    return {Status::ok, MemoryKind::host};
}

// Installs the fake locator for one test case.
struct LocatorScope {
    ferry::PointerLocator previous = ferry::set_pointer_locator(&fake_locator);
    ~LocatorScope() { ferry::set_pointer_locator(previous); }
};

std::byte host_block[64];

DataItem item_at(std::byte* data) {
    const std::int64_t dims[1] = {4};
    return *DataItem::borrow(TensorKind::tensor, dims, 1, DType::float32, data, data ? 16 : 0);
}
DataItem host() {
    return item_at(host_block);
}
DataItem device() {
    return item_at(device_block);
}
DataItem null() {
    return item_at(nullptr);
}

// Adds a then b; returns the second add's status.
Status add_pair(DataItem a, DataItem b) {
    Dataset ds;
    REQUIRE(ds.add(std::move(a)) == Status::ok);
    return ds.add(std::move(b));
}
} // namespace

TEST_CASE("a new dataset is empty, unnamed, of unknown memory kind", "[tensor][dataset]") {
    const Dataset ds;
    CHECK(ds.empty());
    CHECK(ds.size() == 0);
    CHECK(ds.name().empty());
    CHECK(ds.memory_kind() == MemoryKind::unknown);
    CHECK_FALSE(ds.filled_by_receive());
    CHECK(ds.accepts_receive());
    CHECK(ds.at(0) == nullptr);
    CHECK(ds.at(100) == nullptr);
}

TEST_CASE("items keep their order; at() is null out of range; the same item twice is fine",
          "[tensor][dataset]") {
    Dataset ds;
    const DataItem a = *DataItem::from(std::vector<int>{1});
    REQUIRE(ds.add(a) == Status::ok);
    REQUIRE(ds.add(a) == Status::ok);
    REQUIRE(ds.add(DataItem::end_of_sequence()) == Status::ok);
    CHECK(ds.size() == 3);
    CHECK(ds[0] == a);
    CHECK(ds[1] == a);
    CHECK(ds[2].kind() == TensorKind::end_of_sequence);
    CHECK(ds.at(0) == &ds[0]);
    CHECK(ds.at(3) == nullptr);
    CHECK(ds.at(999) == nullptr);
    int n = 0;
    for (auto& item : ds) {
        n += item.kind() == TensorKind::tensor ? 1 : 0;
    }
    CHECK(n == 2);
    CHECK_FALSE(ds.accepts_receive()); // user-added items: a receive must refuse it
}

TEST_CASE("host items fix the memory kind", "[tensor][dataset]") {
    Dataset ds;
    REQUIRE(ds.add(null()) == Status::ok);
    CHECK(ds.memory_kind() == MemoryKind::unknown); // no data: fixes nothing
    REQUIRE(ds.add(host()) == Status::ok);
    CHECK(ds.memory_kind() == MemoryKind::host);
}

// docs/cann-contract/tdt.md#datasets / CANN's unit tests acltdtAddDataItem*Ptr: every accepted and
// every rejected combination.
TEST_CASE("consistent memory kinds are accepted", "[tensor][dataset]") {
    const LocatorScope scope;
    CHECK(add_pair(host(), host()) == Status::ok);
    CHECK(add_pair(device(), device()) == Status::ok);
    CHECK(add_pair(null(), host()) == Status::ok);
    CHECK(add_pair(null(), device()) == Status::ok);
    CHECK(add_pair(host(), null()) == Status::ok);
    CHECK(add_pair(device(), null()) == Status::ok);
}

TEST_CASE("mixing host and device payloads is invalid_param", "[tensor][dataset]") {
    const LocatorScope scope;
    CHECK(add_pair(device(), host()) == Status::invalid_param);
    CHECK(add_pair(host(), device()) == Status::invalid_param);
    {
        Dataset ds; // NullDeviceHost, DeviceNullHost, NullHostDevice, HostNullDevice
        REQUIRE(ds.add(null()) == Status::ok);
        REQUIRE(ds.add(device()) == Status::ok);
        CHECK(ds.add(host()) == Status::invalid_param);
        CHECK(ds.size() == 2); // nothing changed
        CHECK(ds.memory_kind() == MemoryKind::device);
        REQUIRE(ds.add(null()) == Status::ok);
        CHECK(ds.add(host()) == Status::invalid_param);
    }
    {
        Dataset ds;
        REQUIRE(ds.add(null()) == Status::ok);
        REQUIRE(ds.add(host()) == Status::ok);
        REQUIRE(ds.add(null()) == Status::ok);
        DataItem d = device();
        CHECK(ds.add(std::move(d)) == Status::invalid_param);
        CHECK(d.data() == device_block); // a rejected rvalue item is not moved from
        CHECK(ds.memory_kind() == MemoryKind::host);
    }
}

TEST_CASE("a failing pointer query is passed through", "[tensor][dataset]") {
    const LocatorScope scope;
    Dataset ds;
    CHECK(ds.add(item_at(bad_block)) == Status::rt_param_invalid);
    CHECK(ds.empty());
}

TEST_CASE("a dataset filled by a receive takes no items", "[tensor][dataset]") {
    Dataset src;
    REQUIRE(src.add(DataItem::end_of_sequence()) == Status::ok);
    const auto msg = ferry::serialize(src);
    REQUIRE(msg);
    auto received = ferry::parse(*msg);
    REQUIRE(received);
    CHECK(received->filled_by_receive());
    CHECK(received->accepts_receive());
    CHECK(received->add(host()) == Status::feature_unsupported);
    CHECK(received->add(DataItem::end_of_sequence()) == Status::feature_unsupported);
    CHECK(received->size() == 1);
    received->clear();
    CHECK_FALSE(received->filled_by_receive());
    CHECK(received->add(host()) == Status::ok);
}

TEST_CASE("copies are deep and independent, moves keep payload addresses", "[tensor][dataset]") {
    Dataset ds;
    REQUIRE(ds.set_name("n") == Status::ok);
    REQUIRE(ds.add(*DataItem::from(std::vector<double>{1, 2, 3})) == Status::ok);
    Dataset copy = ds;
    CHECK(copy == ds);
    CHECK(copy[0].data() != ds[0].data());
    const void* payload = ds[0].data();
    Dataset moved = std::move(ds);
    CHECK(moved[0].data() == payload);
    CHECK(moved == copy);
    REQUIRE(copy.set_name("other") == Status::ok);
    CHECK_FALSE(copy == moved);
}

TEST_CASE("copying a zero-copy received dataset re-points its items at the copy",
          "[tensor][dataset]") {
    Dataset src;
    REQUIRE(src.add(*DataItem::from(std::vector<std::int32_t>{5, 6, 7})) == Status::ok);
    auto msg = ferry::serialize(src);
    REQUIRE(msg);
    Dataset received;
    REQUIRE(ferry::parse_into_adopting(received, *msg) == Status::ok);
    Dataset copy = received;
    received.clear(); // frees the message the original items pointed into
    REQUIRE(copy.size() == 1);
    CHECK(copy == src); // reads the copy's own bytes (ASan would flag a dangling pointer)
}
