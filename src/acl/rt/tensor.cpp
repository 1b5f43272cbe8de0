// aclCreateTensor / aclDestroyTensor: the aclTensor descriptor the aclnn API takes (CANN's
// aclnn/acl_meta.h). ferry keeps exactly what a caller gave — view shape, strides, offset, format,
// storage shape, data address — and checks it: a malformed description (null arrays with a
// non-zero length, negative sizes, more than 8 dimensions, an unknown data type, an element count
// that overflows 64 bits) gives nullptr instead of a tensor that later misleads an operator.

#include "../c_enum.hpp"
#include "aclnn/acl_meta.h"
#include "aclnn_tensor.hpp"
#include "boundary.hpp"

#include <cstdint>
#include <ferry/core/dtype.hpp>
#include <memory>
#include <optional>
#include <vector>

namespace ferry::acl {

HandleTable<aclTensor>& tensors() {
    // leaked: usable during process exit
    static auto* const table = new HandleTable<aclTensor>(HandleKind::tensor);
    return *table;
}

namespace {

constexpr std::uint64_t k_max_tensor_dims = 8; // CANN's op::MAX_DIM_NUM

std::optional<std::vector<std::int64_t>> copy_dims(const std::int64_t* dims, std::uint64_t count) {
    if (count > k_max_tensor_dims || (count > 0 && dims == nullptr)) {
        return std::nullopt;
    }
    std::vector<std::int64_t> copied(dims, dims + count);
    for (const std::int64_t d : copied) {
        if (d < 0) {
            return std::nullopt;
        }
    }
    return copied;
}

// Row-major strides of a contiguous tensor (used when the caller passes no stride array).
std::vector<std::int64_t> contiguous_strides(const std::vector<std::int64_t>& dims) {
    std::vector<std::int64_t> strides(dims.size(), 1);
    for (std::size_t i = dims.size(); i > 1; --i) {
        strides[i - 2] = strides[i - 1] * (dims[i - 1] == 0 ? 1 : dims[i - 1]);
    }
    return strides;
}

} // namespace

std::optional<std::uint64_t> element_count(const std::vector<std::int64_t>& dims) noexcept {
    std::uint64_t count = 1;
    for (const std::int64_t d : dims) {
        if (d != 0 && count > UINT64_MAX / static_cast<std::uint64_t>(d)) {
            return std::nullopt;
        }
        count *= static_cast<std::uint64_t>(d);
    }
    return count;
}

} // namespace ferry::acl

extern "C" {

ACL_FUNC_VISIBILITY aclTensor* aclCreateTensor(const int64_t* viewDims, uint64_t viewDimsNum,
                                               aclDataType dataType, const int64_t* stride,
                                               int64_t offset, aclFormat format,
                                               const int64_t* storageDims, uint64_t storageDimsNum,
                                               void* tensorData) {
    aclTensor* created = nullptr;
    const int code = ferry::acl::guarded("aclCreateTensor", [&] {
        using ferry::Status;
        auto view = ferry::acl::copy_dims(viewDims, viewDimsNum);
        auto storage = ferry::acl::copy_dims(storageDims, storageDimsNum);
        const auto dtype = static_cast<ferry::DType>(ferry::acl::raw_value(dataType));
        if (!view || !storage || offset < 0 || !ferry::is_known(dtype) ||
            dtype == ferry::DType::undefined || !ferry::acl::element_count(*view) ||
            !ferry::acl::element_count(*storage)) {
            return Status::invalid_param;
        }
        auto strides = stride != nullptr ? std::vector<std::int64_t>(stride, stride + viewDimsNum)
                                         : ferry::acl::contiguous_strides(*view);
        auto tensor = std::make_unique<aclTensor>(aclTensor{std::move(*view), std::move(strides),
                                                            std::move(*storage), dataType, format,
                                                            offset, tensorData});
        created = ferry::acl::to_handle<aclTensor>(ferry::acl::tensors().add(std::move(tensor)));
        return Status::ok;
    });
    return code == 0 ? created : nullptr;
}

// nullptr is accepted and ignored (CANN deletes it: a no-op); a handle that is not live (never
// created, already destroyed — even if a newer tensor got its address) is ACLNN_ERR_PARAM_INVALID
// instead of a double free.
ACL_FUNC_VISIBILITY aclnnStatus aclDestroyTensor(const aclTensor* tensor) {
    return ferry::acl::guarded(
        "aclDestroyTensor",
        [&] {
            if (tensor == nullptr) {
                return ACLNN_SUCCESS;
            }
            return ferry::acl::tensors().take(tensor) ? ACLNN_SUCCESS : ACLNN_ERR_PARAM_INVALID;
        },
        ACLNN_ERR_INNER, ACLNN_ERR_INNER);
}

} // extern "C"
