#pragma once
// A test allocator: replaces the global operator new / delete of the test program so a test can
// count the heap allocations an operation makes and make the k-th one fail (std::bad_alloc, or
// nullptr for the nothrow forms). Shared by tests/compat/tdt/alloc_count.cpp (counting) and the
// fault-injection tests of tests/compat/faults (failing).
//
// Include it in exactly ONE translation unit of a test program: it defines the replaceable
// allocation functions, which the C++ standard allows once per program. Every operator new in the
// process resolves to these, the ferry-acl shared library's and libstdc++'s included (the dynamic
// linker binds them to the program's definitions first).
//
// Why operator new and not malloc: the code under test is C++ and never calls malloc for the
// objects it creates (the one raw allocation, emulated device memory, is std::aligned_alloc and
// reports failure as ACL_ERROR_RT_MEMORY_ALLOCATION, not through the heap hook). Under
// AddressSanitizer and ThreadSanitizer the sanitizer runtime owns malloc, but a program's own
// operator new still takes precedence over the runtime's; these call malloc/free, which the
// sanitizer then tracks (leaks, overflows, use after free) as usual. In sanitizer builds the
// sanitizer's malloc hook is installed as well, so a test can prove that an operation makes no
// malloc call that bypasses operator new (raw_mallocs_in below).
//
// Counting is per thread for fault injection (a runtime thread allocating in the background must
// not take the k-th allocation of the operation under test) and process-wide for
// allocations_in (a steady loop must not allocate on any thread).

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>
#include <optional>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FERRY_ALLOC_HOOK_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FERRY_ALLOC_HOOK_SANITIZER 1
#endif
#endif
#ifdef FERRY_ALLOC_HOOK_SANITIZER
// From <sanitizer/allocator_interface.h>, which GCC does not install (libasan/libtsan export it).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*,
                                                                             std::size_t),
                                                         void (*free_hook)(const volatile void*));
#endif

namespace ferry::test::alloc_hook {

inline std::atomic<bool> count_all_threads{false};  // allocations_in
inline std::atomic<long> counted{0};                // allocations seen while counting
inline std::atomic<long> live{0};                   // operator new minus operator delete, ever
inline std::atomic<long> raw_mallocs{0};            // malloc calls seen by the sanitizer hook
inline thread_local bool count_this_thread = false; // fault injection
inline thread_local long fail_at = 0;               // 1-based; 0: never fail
inline thread_local long seen_here = 0;             // allocations on this thread while armed
inline thread_local bool injected_here = false;     // the armed failure happened
inline thread_local bool in_operator_new = false;   // our own malloc call, not a raw one

// Called by every replaced operator new; false: this allocation must fail.
inline bool admit() noexcept {
    if (count_all_threads.load(std::memory_order_relaxed)) {
        counted.fetch_add(1, std::memory_order_relaxed);
    }
    if (!count_this_thread) {
        return true;
    }
    ++seen_here;
    if (fail_at != 0 && seen_here == fail_at) {
        injected_here = true;
        return false;
    }
    return true;
}

inline void* allocate(std::size_t size, std::size_t align) noexcept {
    if (!admit()) {
        return nullptr;
    }
    in_operator_new = true;
    void* p = align > alignof(std::max_align_t)
                  ? std::aligned_alloc(align, (size + align - 1) / align * align)
                  : std::malloc(size == 0 ? 1 : size);
    in_operator_new = false;
    if (p != nullptr) {
        live.fetch_add(1, std::memory_order_relaxed);
    }
    return p;
}

// Out of line: inlined into a replaced operator delete, GCC would pair this free() with the
// operator new it sees at the call site and warn (-Wmismatched-new-delete).
[[gnu::noinline]] inline void release(void* p) noexcept {
    if (p != nullptr) {
        live.fetch_sub(1, std::memory_order_relaxed);
        std::free(p);
    }
}

// The number of allocations `body` makes, on any thread (counting only).
template <typename Body>
long allocations_in(Body&& body) {
    counted.store(0);
    count_all_threads.store(true);
    body();
    count_all_threads.store(false);
    return counted.load();
}

// Runs `body` on this thread with its `k`-th allocation failing (k = 0: none fails) and returns
// how many allocations it attempted, the failed one included.
template <typename Body>
long run_failing(long k, Body&& body) {
    seen_here = 0;
    fail_at = k;
    injected_here = false;
    count_this_thread = true;
    body();
    count_this_thread = false;
    fail_at = 0;
    return seen_here;
}

// Whether the last run_failing actually failed an allocation.
inline bool injected() noexcept {
    return injected_here;
}

// Net operator new allocations alive now (for leak checks: compare before and after a cycle).
inline long live_allocations() noexcept {
    return live.load(std::memory_order_relaxed);
}

#ifdef FERRY_ALLOC_HOOK_SANITIZER
inline void on_malloc(const volatile void*, std::size_t) {
    if (count_this_thread && !in_operator_new) {
        raw_mallocs.fetch_add(1, std::memory_order_relaxed);
    }
}
inline void on_free(const volatile void*) {}
inline const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
#endif

// Runs `body` on this thread and returns the calls to malloc (not through operator new) it made;
// nullopt where the build has no malloc hook to count them (only sanitizer builds have one).
template <typename Body>
std::optional<long> raw_mallocs_in(Body&& body) {
#ifdef FERRY_ALLOC_HOOK_SANITIZER
    (void)hooks_installed; // odr-use: the hook is installed before main
    raw_mallocs.store(0);
    run_failing(0, body);
    return raw_mallocs.load();
#else
    body();
    return std::nullopt;
#endif
}

} // namespace ferry::test::alloc_hook

// ---- the replaced allocation functions (one definition per program: see the top) ----
void* operator new(std::size_t size) {
    if (void* p = ferry::test::alloc_hook::allocate(size, 0)) {
        return p;
    }
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
    return operator new(size);
}
void* operator new(std::size_t size, std::align_val_t align) {
    if (void* p = ferry::test::alloc_hook::allocate(size, static_cast<std::size_t>(align))) {
        return p;
    }
    throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t align) {
    return operator new(size, align);
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
    return ferry::test::alloc_hook::allocate(size, 0);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
    return ferry::test::alloc_hook::allocate(size, 0);
}
void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
    return ferry::test::alloc_hook::allocate(size, static_cast<std::size_t>(align));
}
void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
    return ferry::test::alloc_hook::allocate(size, static_cast<std::size_t>(align));
}
void operator delete(void* p) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete[](void* p) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete(void* p, std::size_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    ferry::test::alloc_hook::release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
    ferry::test::alloc_hook::release(p);
}
