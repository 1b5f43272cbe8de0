// acltdt* steady state allocates nothing (spec/tdt.md §4, spec/quality.md: "zero heap
// allocations per message, count them in a test"). This one test is C++ because C cannot replace
// operator new: every allocation the shim makes (it is C++; it never calls malloc itself) goes
// through the replaced operators below while counting is on. Under AddressSanitizer or
// ThreadSanitizer, whose runtimes own operator new, the sanitizer's allocation hook counts
// instead (it sees every malloc and operator new).

#include "acl/acl_tdt.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FERRY_COUNT_WITH_SANITIZER_HOOK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FERRY_COUNT_WITH_SANITIZER_HOOK 1
#endif
#endif
#ifdef FERRY_COUNT_WITH_SANITIZER_HOOK
// From <sanitizer/allocator_interface.h>, which GCC does not install (libasan/libtsan export it).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             std::size_t),
                                                         void (*free_hook)(const volatile void*));
#endif

namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};

[[maybe_unused]] void* counted(std::size_t size, std::size_t align) {
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

#ifdef FERRY_COUNT_WITH_SANITIZER_HOOK
namespace {
void on_malloc(const volatile void*, std::size_t) {
    if (counting.load(std::memory_order_relaxed)) {
        allocations.fetch_add(1, std::memory_order_relaxed);
    }
}
void on_free(const volatile void*) {}
[[maybe_unused]] const int hooks_installed =
    __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
} // namespace
#else
void* operator new(std::size_t size) {
    return counted(size, 0);
}
void* operator new(std::size_t size, std::align_val_t align) {
    return counted(size, static_cast<std::size_t>(align));
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
#endif

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
