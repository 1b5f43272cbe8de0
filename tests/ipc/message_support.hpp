#pragma once
// Shared by tests/ipc/message_channel.cpp and its helper: the datasets the two processes
// exchange, and how the receiving side checks one.
//
// Message `index` of producer `producer` is rebuilt identically on both sides, so the receiver
// compares what arrived with what was sent item by item. Its shape cycles through five kinds —
// no items (just a name), an end-of-sequence marker, one small tensor, several tensors, and one
// of 1 to 3 MiB — and every dataset with payloads ends with a checksum tensor (FNV-1a over the
// dims and bytes of the items before it), which the receiver recomputes over what it received.

#include <cstddef>
#include <cstdint>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <span>
#include <string>
#include <vector>

namespace ipc_test {

inline constexpr std::size_t k_kinds = 5;
inline constexpr std::size_t k_big_max = 3u << 20;
// Room for the largest dataset above, its headers and its name.
inline constexpr std::size_t k_test_max_message = k_big_max + 4096;

inline std::uint64_t fnv(std::uint64_t h, std::span<const std::byte> bytes) {
    for (const std::byte b : bytes) {
        h ^= static_cast<std::uint64_t>(b);
        h *= 0x100000001b3ULL;
    }
    return h;
}

inline std::uint64_t checksum_of(const ferry::Dataset& ds, std::size_t items) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (std::size_t i = 0; i < items; ++i) {
        h = fnv(h, std::as_bytes(ds[i].dims()));
        h = fnv(h, ds[i].bytes());
    }
    return h;
}

// Deterministic bytes for (producer, index, item): xorshift64.
inline std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint64_t seed) {
    std::vector<std::uint8_t> out(bytes);
    std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
    for (auto& b : out) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<std::uint8_t>(x);
    }
    return out;
}

inline void add(ferry::Dataset& ds, ferry::Result<ferry::DataItem> item) {
    if (!item || ds.add(std::move(*item)) != ferry::Status::ok) {
        std::abort(); // a broken generator, not a channel failure
    }
}

inline void add_u8(ferry::Dataset& ds, std::size_t bytes, std::uint64_t seed) {
    const auto data = pattern(bytes, seed);
    add(ds, ferry::DataItem::from(data));
}

inline ferry::Dataset make_dataset(unsigned producer, std::size_t index) {
    ferry::Dataset ds;
    if (ds.set_name("p" + std::to_string(producer) + "." + std::to_string(index)) !=
        ferry::Status::ok) {
        std::abort();
    }
    const std::uint64_t seed = (std::uint64_t{producer} << 32) ^ index;
    switch (index % k_kinds) {
    case 0:
        return ds; // no items: the name alone travels
    case 1:
        add(ds, ferry::DataItem::end_of_sequence());
        return ds;
    case 2: {
        const std::vector<float> v(15, static_cast<float>(index));
        add(ds, ferry::DataItem::from(v, {3, 5}));
        break;
    }
    case 3: {
        add_u8(ds, 1, seed);
        const std::vector<float> f(1000, 0.5f * static_cast<float>(index));
        add(ds, ferry::DataItem::from(f));
        const std::vector<std::int64_t> m(12, static_cast<std::int64_t>(index));
        add(ds, ferry::DataItem::from(m, {4, 3}));
        add_u8(ds, 65536 + index % 977, seed + 1);
        break;
    }
    default:
        add_u8(ds, (1u << 20) + (index * 611953u) % (k_big_max - (1u << 20)), seed);
        break;
    }
    const std::vector<std::uint64_t> sum{checksum_of(ds, ds.size())};
    add(ds, ferry::DataItem::from(sum));
    return ds;
}

// "" when `got` is message `index` of `producer`; otherwise what differs.
inline std::string check_dataset(const ferry::Dataset& got, unsigned producer, std::size_t index) {
    const ferry::Dataset want = make_dataset(producer, index);
    if (got.name() != want.name()) {
        return "name '" + got.name() + "', expected '" + want.name() + "'";
    }
    if (got.size() != want.size()) {
        return want.name() + ": " + std::to_string(got.size()) + " items, expected " +
               std::to_string(want.size());
    }
    if (got.size() >= 2 && got[got.size() - 1].kind() == ferry::TensorKind::tensor) {
        const auto sum = got[got.size() - 1].values<std::uint64_t>();
        if (!sum || sum->size() != 1 || (*sum)[0] != checksum_of(got, got.size() - 1)) {
            return want.name() + ": checksum mismatch";
        }
    }
    if (!(got == want)) {
        return want.name() + ": items differ";
    }
    return "";
}

} // namespace ipc_test
