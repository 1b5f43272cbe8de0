#pragma once
// The false-sharing range the rings pad their indices to.
//
// 128 bytes, not 64: on x86 the adjacent-line prefetcher pairs cache lines, so two hot indices
// 64 bytes apart still interfere (folly CacheLocality.h kFalseSharingRange).

#include <cstddef>

namespace ferry::detail {
inline constexpr std::size_t k_false_sharing_range = 128;
} // namespace ferry::detail
