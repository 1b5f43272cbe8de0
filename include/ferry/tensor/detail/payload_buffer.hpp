#pragma once
// The heap storage an owning DataItem keeps its payload in: 64-byte aligned, the alignment the
// wire format gives every payload in a message (docs/data-model.md, DataItem, Payload storage).
//
// Why not new std::byte[]: glibc's malloc returns blocks 16 bytes past a 64-byte boundary
// (and mmap'd blocks 16 bytes past a page), while a payload parsed out of a message or a shared
// cell starts on a 64-byte boundary. On AMD CPUs glibc's memcpy runs an order of magnitude slower
// between addresses that differ modulo 64 by 16 (docs/data-model.md, Payload storage), so every
// copying receive paid that. Co-aligned, the copy runs at memcpy speed.

#include <cstddef>
#include <memory>
#include <new>

namespace ferry::detail {

inline constexpr std::size_t k_payload_alignment = 64;

struct PayloadDelete {
    void operator()(std::byte* p) const noexcept {
        ::operator delete[](p, std::align_val_t{k_payload_alignment});
    }
};

using PayloadBuffer = std::unique_ptr<std::byte[], PayloadDelete>;

// `bytes` uninitialised bytes, 64-byte aligned; throws std::bad_alloc.
[[nodiscard]] inline PayloadBuffer allocate_payload(std::size_t bytes) {
    return PayloadBuffer(
        static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{k_payload_alignment})));
}

} // namespace ferry::detail
