// Property tests of the wire format: random datasets (random kinds, dtypes, dims, sizes
// including 0 and sizes that are not a multiple of 64, names) survive serialize → parse in every
// parse form, and random corruptions of valid messages are rejected or parsed, never crash.

#include <catch2/catch.hpp>
#include <cstdint>
#include <ferry/tensor/print.hpp>
#include <ferry/tensor/wire_format.hpp>
#include <random>
#include <string>
#include <vector>

using ferry::DataItem;
using ferry::Dataset;
using ferry::DType;
using ferry::MessageBuffer;
using ferry::Status;
using ferry::TensorKind;

namespace {
using Rng = std::mt19937_64;

std::size_t pick(Rng& rng, std::size_t n) {
    return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

std::size_t random_size(Rng& rng) {
    switch (pick(rng, 6)) {
    case 0:
        return 0;
    case 1:
        return 64 * (1 + pick(rng, 4)); // a multiple of 64
    case 2:
        return 1 + pick(rng, 63);
    default:
        return pick(rng, 3000); // mostly not a multiple of 64
    }
}

DataItem random_tensor(Rng& rng) {
    std::vector<std::int64_t> dims(pick(rng, 8) == 0 ? 128 : pick(rng, 9));
    for (auto& d : dims) {
        d = static_cast<std::int64_t>(pick(rng, 1000)) - 1; // -1 (unknown) is allowed on the wire
    }
    std::vector<std::byte> bytes(random_size(rng));
    for (auto& b : bytes) {
        b = static_cast<std::byte>(pick(rng, 256));
    }
    const DType dtype = ferry::all_dtypes[pick(rng, std::size(ferry::all_dtypes))];
    auto item = DataItem::copy_of(TensorKind::tensor, dims, dtype, bytes);
    REQUIRE(item);
    return std::move(*item);
}

Dataset random_dataset(Rng& rng) {
    Dataset ds;
    if (pick(rng, 3) == 0) {
        std::string name(1 + pick(rng, 100), 'n');
        name[0] = static_cast<char>('a' + pick(rng, 26));
        REQUIRE(ds.set_name(name) == Status::ok);
    }
    const std::size_t n = 1 + pick(rng, 6);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t k = pick(rng, 5);
        DataItem item = k == 0   ? DataItem::end_of_sequence()
                        : k == 1 ? DataItem::abnormal()
                                 : random_tensor(rng);
        REQUIRE(ds.add(std::move(item)) == Status::ok);
    }
    return ds;
}

// Every payload of a serialized message starts on a 64-byte boundary of the message.
bool payloads_aligned(const Dataset& view, const MessageBuffer& msg) {
    for (const DataItem& item : view) {
        if (item.has_data() &&
            (static_cast<const std::byte*>(item.data()) - msg.data()) % 64 != 0) {
            return false;
        }
    }
    return true;
}
} // namespace

TEST_CASE("random datasets round-trip through every parse form", "[tensor][wire][property]") {
    const auto seed = GENERATE(take(4, random(0u, 1000000u)));
    CAPTURE(seed);
    Rng rng(seed);
    Dataset reused_copy;
    Dataset reused_adopt;
    MessageBuffer spare;
    for (int round = 0; round < 60; ++round) {
        const Dataset ds = random_dataset(rng);
        CAPTURE(round, ds);
        const auto size = ferry::serialized_size(ds);
        REQUIRE(size);
        MessageBuffer msg = *ferry::serialize(ds);
        REQUIRE(msg.size() == *size);

        const auto owned = ferry::parse(msg);
        REQUIRE(owned);
        CHECK(*owned == ds);
        const auto view = ferry::parse_view(msg);
        REQUIRE(view);
        CHECK(*view == ds);
        CHECK(payloads_aligned(*view, msg));

        REQUIRE(ferry::parse_into(reused_copy, msg) == Status::ok);
        CHECK(reused_copy == ds);
        spare = msg; // the adopting form consumes its buffer
        REQUIRE(ferry::parse_into_adopting(reused_adopt, spare) == Status::ok);
        CHECK(reused_adopt == ds);

        // A re-serialized parse is byte-identical: the format has one encoding per dataset.
        CHECK(*ferry::serialize(*owned) == msg);
    }
}

TEST_CASE("random corruptions of valid messages never crash", "[tensor][wire][property]") {
    Rng rng(20261130);
    int rejected = 0;
    for (int round = 0; round < 400; ++round) {
        MessageBuffer msg = *ferry::serialize(random_dataset(rng));
        const std::size_t flips = 1 + pick(rng, 4);
        for (std::size_t f = 0; f < flips; ++f) {
            msg[pick(rng, msg.size())] = static_cast<std::byte>(pick(rng, 256));
        }
        if (pick(rng, 4) == 0) {
            msg.resize(pick(rng, msg.size() + 1));
        }
        const auto parsed = ferry::parse(msg);
        const auto viewed = ferry::parse_view(msg);
        CHECK(parsed.has_value() == viewed.has_value());
        if (parsed) {
            CHECK(*parsed == *viewed);
        } else {
            CHECK(parsed.status() == viewed.status());
            ++rejected;
        }
    }
    CHECK(rejected > 0); // the corruptions do hit the checks
}
