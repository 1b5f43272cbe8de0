#pragma once
// ferry::afd::RegistryResolver — trust a ScheduleContext's addresses only as far as the runtime's
// allocation registry vouches for them.
//
// docs/cann-contract/afd.md#policies-ferry-adds: every buffer named by the context must lie inside
// one live runtime allocation of at least the required size, else PARAM_INVALID with a message. The
// required size is what the operator will touch (BufferRequest::bytes: e.g. A·M·(8+4·BS·K) for the
// FFN descriptor table), so a size field that claims more than was allocated cannot lead the
// scheduler past the allocation's end. The C API (aclnnInplaceFfnWorkerScheduler) uses this.

#include <cstddef>
#include <cstdint>

#include <ferry/afd/memory_resolver.hpp>
#include <ferry/runtime/allocation_registry.hpp>

namespace ferry::afd {

class RegistryResolver {
public:
    explicit RegistryResolver(const AllocationRegistry& registry) noexcept : registry_(&registry) {}

    [[nodiscard]] ResolvedBuffer resolve(const BufferRequest& request) const {
        const auto* address = reinterpret_cast<const void*>(static_cast<std::uintptr_t>(request.address));
        if (!registry_->find(address)) {
            return {nullptr, "does not point into a live runtime allocation"};
        }
        if (request.bytes > SIZE_MAX || !registry_->find(address, static_cast<std::size_t>(request.bytes))) {
            return {nullptr, "overruns its allocation: fewer bytes remain than the operator needs"};
        }
        return {static_cast<std::byte*>(const_cast<void*>(address)), nullptr};
    }

private:
    const AllocationRegistry* registry_;
};

static_assert(MemoryResolver<RegistryResolver>);

} // namespace ferry::afd
