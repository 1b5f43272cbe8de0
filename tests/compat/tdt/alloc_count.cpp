// acltdt* steady state allocates nothing (docs/c-api.md, Channels: no allocation per message
// once warm), counted here rather than assumed. This one test is C++ because C cannot replace
// operator new: every allocation the shim makes (it is C++; it never calls malloc itself) goes
// through the test allocator's operator new (tests/compat/faults/alloc_hook.hpp, which also works
// under AddressSanitizer and ThreadSanitizer), counted on every thread while counting is on.

#include "../faults/alloc_hook.hpp"
#include "acl/acl_tdt.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

using ferry::test::alloc_hook::allocations_in;

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
