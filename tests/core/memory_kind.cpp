#include <ferry/core/memory_kind.hpp>

#include <catch2/catch.hpp>

namespace {
int device_marker = 0;
ferry::PointerLocation fake_locator(const void* p) noexcept {
    if (p == &device_marker) {
        return {ferry::Status::ok, ferry::MemoryKind::device};
    }
    return {ferry::Status::ok, ferry::MemoryKind::host};
}
} // namespace

TEST_CASE("without a locator every non-null pointer is host memory", "[core][memory_kind]") {
    int x = 0;
    CHECK(ferry::locate(&x).kind == ferry::MemoryKind::host);
    CHECK(ferry::locate(nullptr).kind == ferry::MemoryKind::unknown);
    CHECK(ferry::locate(&x).status == ferry::Status::ok);
}

TEST_CASE("an installed locator decides, and can be removed", "[core][memory_kind]") {
    const auto previous = ferry::set_pointer_locator(&fake_locator);
    int x = 0;
    CHECK(ferry::locate(&device_marker).kind == ferry::MemoryKind::device);
    CHECK(ferry::locate(&x).kind == ferry::MemoryKind::host);
    CHECK(ferry::locate(nullptr).kind == ferry::MemoryKind::unknown);
    CHECK(ferry::set_pointer_locator(previous) == &fake_locator);
    CHECK(ferry::locate(&device_marker).kind == ferry::MemoryKind::host);
}
