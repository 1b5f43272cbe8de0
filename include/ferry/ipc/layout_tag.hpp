#pragma once
// ferry::ipc::LayoutTag — what a segment's payload holds, so a build that lays it out
// differently is refused instead of misreading it.
//
//     constexpr auto tag = ferry::ipc::layout_tag_of<RingHeader>("ferry.ring", 3);
//     auto seg = ferry::ipc::Segment::create("jobs", bytes, tag);   // stores the tag
//     auto other = ferry::ipc::Segment::open("jobs", tag);          // must present the same tag
//
// A tag is a name (at most k_max_layout_name bytes), a version the owner of the layout bumps on
// every change, and a 64-bit hash. layout_tag_of<T> hashes the name, the version, sizeof(T) and
// alignof(T), so a changed struct size or alignment is caught even when nobody bumped the
// version; a change that keeps both (fields reordered) is caught only by the version.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ferry::ipc {

inline constexpr std::size_t k_max_layout_name = 47;

struct LayoutTag {
    std::string_view name;
    std::uint32_t version = 0;
    std::uint64_t hash = 0;

    friend constexpr bool operator==(const LayoutTag&, const LayoutTag&) = default;
};

namespace detail {
// FNV-1a: simple, constexpr, and stable across compilers and runs (std::hash is neither).
constexpr std::uint64_t fnv1a(std::uint64_t h, std::uint64_t word) noexcept {
    for (int i = 0; i < 8; ++i) {
        h ^= (word >> (8 * i)) & 0xffU;
        h *= 0x100000001b3ULL;
    }
    return h;
}
constexpr std::uint64_t fnv1a(std::uint64_t h, std::string_view text) noexcept {
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}
inline constexpr std::uint64_t k_fnv_offset = 0xcbf29ce484222325ULL;
} // namespace detail

// The tag of a payload that starts with a T (or is an array of T): name, version, size, alignment.
template <typename T>
[[nodiscard]] constexpr LayoutTag layout_tag_of(std::string_view name,
                                                std::uint32_t version) noexcept {
    std::uint64_t h = detail::fnv1a(detail::k_fnv_offset, name);
    h = detail::fnv1a(h, version);
    h = detail::fnv1a(h, sizeof(T));
    h = detail::fnv1a(h, alignof(T));
    return LayoutTag{name, version, h};
}

} // namespace ferry::ipc
