#pragma once
// Memory resolvers: how a scheduler turns the uint64 addresses in a ScheduleContext into memory.
//
// On a device the context holds device addresses and the kernel dereferences them blindly
// (docs/cann-contract/afd.md#validation-order: only non-null and the size *fields* are checked).
// TrustingResolver does the same with host addresses. RegistryResolver (registry_resolver.hpp)
// instead demands that each buffer lie inside one live runtime allocation, so a bad pointer is a
// clear PARAM_INVALID instead of a crash (docs/cann-contract/README.md#precedence, rule 4; the
// policy is described in docs/cann-contract/afd.md#policies-ferry-adds).

#include <concepts>
#include <cstddef>
#include <cstdint>

namespace ferry::afd {

// A buffer named by the context: which field, its address, how many bytes from it the operator
// will touch.
struct BufferRequest {
    const char* field = "";
    std::uint64_t address = 0;
    std::uint64_t bytes = 0;
};

// Either the memory, or why the address was refused (a static string).
struct ResolvedBuffer {
    std::byte* data = nullptr;
    const char* error = nullptr;
    [[nodiscard]] bool ok() const noexcept { return error == nullptr; }
};

template <typename R>
concept MemoryResolver = requires(R& r, const BufferRequest& request) {
    { r.resolve(request) } -> std::same_as<ResolvedBuffer>;
};

struct TrustingResolver {
    ResolvedBuffer resolve(const BufferRequest& request) const noexcept {
        return {reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(request.address)), nullptr};
    }
};

static_assert(MemoryResolver<TrustingResolver>);

} // namespace ferry::afd
