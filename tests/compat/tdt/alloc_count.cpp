// acltdt* steady state allocates nothing (spec/tdt.md §4, spec/quality.md: "zero heap
// allocations per message, count them in a test"). This one test is C++ because C cannot replace
// operator new: every allocation the shim makes (it is C++; it never calls malloc itself) goes
// through the replaced operators below while counting is on.

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#include <catch2/catch.hpp>

#include "acl/acl_tdt.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

void* counted(std::size_t size, std::size_t align) {
    if (counting.load(std::memory_order_relaxed)) {
        allocations.fetch_add(1, std::memory_order_relaxed);
    }
    void* p = align > alignof(std::max_align_t)
                  ? std::aligned_alloc(align, (size + align - 1) / align * align)
                  : std::malloc(size == 0 ? 1 : size);
    if (p == nullptr) {
        throw std::bad_alloc();
    }
    return p;
}

// Counts the allocations `body` makes.
template <typename Body>
long allocations_in(Body&& body) {
    allocations.store(0);
    counting.store(true);
    body();
    counting.store(false);
    return allocations.load();
}
} // namespace

void* operator new(std::size_t size) { return counted(size, 0); }
void* operator new(std::size_t size, std::align_val_t align) {
    return counted(size, static_cast<std::size_t>(align));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {
struct Fixture {
    std::vector<float> payload = std::vector<float>(256 * 1024, 1.5f); // 1 MiB
    std::int64_t dims[2] = {256, 1024};
    acltdtDataItem* tensor = acltdtCreateDataItem(ACL_TENSOR_DATA_TENSOR, dims, 2, ACL_FLOAT,
                                                  payload.data(), payload.size() * sizeof(float));
    acltdtDataItem* eos = acltdtCreateDataItem(ACL_TENSOR_DATA_END_OF_SEQUENCE, nullptr, 0,
                                               ACL_DT_UNDEFINED, nullptr, 0);
    acltdtDataset* sent = acltdtCreateDataset();
    acltdtDataset* received = acltdtCreateDataset();

    Fixture() {
        REQUIRE(acltdtAddDataItem(sent, tensor) == ACL_SUCCESS);
        REQUIRE(acltdtAddDataItem(sent, eos) == ACL_SUCCESS);
    }
    ~Fixture() {
        acltdtDestroyDataset(sent);
        acltdtDestroyDataset(received);
        acltdtDestroyDataItem(tensor);
        acltdtDestroyDataItem(eos);
    }
    // `burst` sends then `burst` receives; false on any unexpected code or content.
    bool round(const acltdtChannelHandle* tx, const acltdtChannelHandle* rx, int burst,
               std::int32_t timeout) {
        bool ok = true;
        for (int i = 0; i < burst; ++i) {
            ok = ok && acltdtSendTensor(tx, sent, timeout) == ACL_SUCCESS;
        }
        for (int i = 0; i < burst; ++i) {
            ok = ok && acltdtReceiveTensor(rx, received, timeout) == ACL_SUCCESS &&
                 acltdtGetDatasetSize(received) == 2 &&
                 static_cast<const float*>(
                     acltdtGetDataAddrFromItem(acltdtGetDataItem(received, 0)))[1000] == 1.5f;
        }
        return ok;
    }
};
} // namespace

TEST_CASE("a steady queue-channel send/receive loop allocates nothing after warm-up") {
    Fixture f;
    acltdtChannelHandle* channel = acltdtCreateChannelWithCapacity(0, "alloc", 4);
    REQUIRE(channel != nullptr);
    for (int burst : {1, 3}) {
        CAPTURE(burst);
        for (int i = 0; i < 8; ++i) { // warm-up: the pool and the dataset get their buffers
            REQUIRE(f.round(channel, channel, burst, 0));
        }
        bool ok = true;
        const long n = allocations_in([&] {
            for (int i = 0; i < 500; ++i) {
                ok = f.round(channel, channel, burst, 0) && ok;
            }
        });
        CHECK(ok);
        CHECK(n == 0);
    }
    // The counter does count: a dataset creation is an allocation.
    acltdtDataset* extra = nullptr;
    CHECK(allocations_in([&] { extra = acltdtCreateDataset(); }) > 0);
    acltdtDestroyDataset(extra);
    REQUIRE(acltdtDestroyChannel(channel) == ACL_SUCCESS);
}

TEST_CASE("a steady legacy-channel send/receive loop allocates nothing after warm-up") {
    Fixture f;
    acltdtChannelHandle* tx = acltdtCreateChannel(0, "alloc-legacy");
    acltdtChannelHandle* rx = acltdtCreateChannel(0, "TF_RECEIVE_alloc-legacy");
    REQUIRE((tx != nullptr && rx != nullptr));
    for (int i = 0; i < 8; ++i) {
        REQUIRE(f.round(tx, rx, 2, -1));
    }
    bool ok = true;
    const long n = allocations_in([&] {
        for (int i = 0; i < 500; ++i) {
            ok = f.round(tx, rx, 2, -1) && ok;
        }
    });
    CHECK(ok);
    CHECK(n == 0);
    REQUIRE(acltdtDestroyChannel(tx) == ACL_SUCCESS);
    REQUIRE(acltdtDestroyChannel(rx) == ACL_SUCCESS);
}
