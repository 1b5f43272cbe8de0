#pragma once
// Reading a C enum argument without trusting it.
//
// A C caller may pass any int as an enum parameter (CANN's checks exist for exactly that: a bad
// aclrtMemcpyKind → ACL_ERROR_INVALID_PARAM). In C++, loading an enum object that holds a value
// outside the enum's range is undefined behaviour (UBSan: "not a valid value for type"), so the
// shim copies the argument's bytes into its underlying integer type and validates that instead.

#include <cstring>
#include <type_traits>

namespace ferry::acl {

template <typename Enum>
    requires std::is_enum_v<Enum>
[[nodiscard]] std::underlying_type_t<Enum> raw_value(const Enum& argument) noexcept {
    std::underlying_type_t<Enum> value;
    std::memcpy(&value, &argument, sizeof value);
    return value;
}

} // namespace ferry::acl
