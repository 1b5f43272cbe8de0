#pragma once
// The shim's aclTensor (opaque to C callers) and its handle table (../handle_table.hpp).

#include "../handle_table.hpp"
#include "aclnn/acl_meta.h"

#include <cstdint>
#include <optional>
#include <vector>

struct aclTensor {
    std::vector<std::int64_t> view_dims;
    std::vector<std::int64_t> strides;
    std::vector<std::int64_t> storage_dims;
    aclDataType data_type = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_UNDEFINED;
    std::int64_t offset = 0; // in elements
    void* data = nullptr;
};

namespace ferry::acl {

HandleTable<aclTensor>& tensors();

// The product of `dims` (1 for none); nullopt when it overflows 64 bits.
std::optional<std::uint64_t> element_count(const std::vector<std::int64_t>& dims) noexcept;

} // namespace ferry::acl
