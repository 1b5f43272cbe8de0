// aclDataTypeSize (docs/c-api.md, Data type sizes): bytes per element of an aclDataType.
//
// Whole-byte types give their element size. ACL_STRING (variable length), ACL_DT_UNDEFINED and
// values that are no aclDataType give 0, so a caller multiplying by it allocates nothing rather
// than a guess. The sub-byte types (ACL_INT4, ACL_UINT1, the FLOAT4 and FLOAT6 kinds) give 1, the
// byte one element occupies when stored unpacked — CANN's answer for ACL_INT4 and ACL_UINT1;
// packed storage needs ceil(count * bits / 8) bytes, which no per-element size can express.

#include "../c_enum.hpp"
#include "acl/acl_base.h"

#include <cstddef>
#include <ferry/core/dtype.hpp>

extern "C" {

ACL_FUNC_VISIBILITY size_t aclDataTypeSize(aclDataType dataType) {
    // The argument may hold any int: validate the raw value before treating it as a DType.
    const auto type = static_cast<ferry::DType>(ferry::acl::raw_value(dataType));
    if (!ferry::is_known(type)) {
        return 0;
    }
    const std::size_t bits = ferry::bit_width(type);
    if (bits == 0) {
        return 0; // undefined, string
    }
    return bits < 8 ? 1 : bits / 8;
}

} // extern "C"
