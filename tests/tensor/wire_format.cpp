#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ferry/tensor/wire_format.hpp>
#include <new>
#include <string>
#include <vector>

using ferry::DataItem;
using ferry::Dataset;
using ferry::DType;
using ferry::MessageBuffer;
using ferry::Status;
using ferry::TensorKind;
using ferry::detail::WireItemHeader;

// Counts every allocation of this test program, so the steady-state receive loop below can show
// that it allocates nothing (no heap allocation per message in steady state,
// docs/cann-contract/tdt.md#receive-buffers).
namespace {
std::atomic<long> allocations{0};
} // namespace
// The standard replacement pair (malloc/free); GCC 12 mistakes it for a mismatch once inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void* operator new(std::size_t n) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = std::malloc(n == 0 ? 1 : n)) {
        return p;
    }
    throw std::bad_alloc();
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    allocations.fetch_add(1, std::memory_order_relaxed);
    return std::malloc(n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
    std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
    std::free(p);
}
// Payload buffers are allocated 64-byte aligned (the align_val_t forms): counted the same way.
void* operator new(std::size_t n, std::align_val_t a) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    const auto align = static_cast<std::size_t>(a);
    if (void* p =
            std::aligned_alloc(align, (n + align - 1) / align * align + (n == 0 ? align : 0))) {
        return p;
    }
    throw std::bad_alloc();
}
void operator delete(void* p, std::align_val_t) noexcept {
    std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
    std::free(p);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace {
WireItemHeader header_at(const MessageBuffer& m, std::size_t offset) {
    WireItemHeader h;
    std::memcpy(&h, m.data() + offset, sizeof h);
    return h;
}

// A raw message writer for hostile and CANN-shaped inputs.
struct RawMessage {
    MessageBuffer bytes;
    void header(WireItemHeader h) { append(&h, sizeof h); }
    void dims(std::initializer_list<std::int64_t> d) {
        for (std::int64_t v : d) {
            append(&v, sizeof v);
        }
    }
    void fill(std::size_t n, std::uint8_t value) {
        bytes.insert(bytes.end(), n, static_cast<std::byte>(value));
    }
    void append(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        bytes.insert(bytes.end(), b, b + n);
    }
};

WireItemHeader make_header(std::uint32_t cur, std::uint32_t cnt, TensorKind kind, DType dtype,
                           std::uint32_t dim_num, std::uint32_t dbs, std::uint64_t len) {
    WireItemHeader h{};
    h.kind = static_cast<std::int32_t>(kind);
    h.cur_cnt = cur;
    h.cnt = cnt;
    h.dtype = static_cast<std::int32_t>(dtype);
    h.dim_num = dim_num;
    h.dynamic_bit_size = dbs;
    h.data_len = len;
    return h;
}

Dataset sample() {
    Dataset ds;
    REQUIRE(ds.add(*DataItem::from(std::vector<float>{1, 2, 3, 4}, {1, 4})) == Status::ok);
    REQUIRE(ds.add(*DataItem::from(std::vector<std::int8_t>{1, 2, 3}, {3})) == Status::ok);
    REQUIRE(ds.add(DataItem::end_of_sequence()) == Status::ok);
    return ds;
}
} // namespace

TEST_CASE("the writer lays items out as CANN does, with zeroed padding", "[tensor][wire]") {
    const Dataset ds = sample();
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    // item 0: header 0..64, dims 64..80, padding 80..128, payload 128..144
    // item 1: header 144..208, dims 208..216, padding 216..256, payload 256..259
    // item 2: header 259..323, padding 323..384, no payload
    REQUIRE(msg->size() == 384);
    CHECK(*ferry::serialized_size(ds) == 384);

    const WireItemHeader h0 = header_at(*msg, 0);
    CHECK(h0.version == 0);
    CHECK(h0.kind == 0);
    CHECK(h0.cur_cnt == 0);
    CHECK(h0.cnt == 3);
    CHECK(h0.dtype == 0); // ACL_FLOAT
    CHECK(h0.dim_num == 2);
    CHECK(h0.dynamic_bit_size == 128 - 64);
    CHECK(h0.slice_num == 0);
    CHECK(h0.slice_id == 0);
    CHECK(std::all_of(h0.reserved.begin(), h0.reserved.end(), [](auto b) { return b == 0; }));
    CHECK(h0.data_len == 16);
    std::int64_t d[2];
    std::memcpy(d, msg->data() + 64, 16);
    CHECK(d[0] == 1);
    CHECK(d[1] == 4);
    float first = 0;
    std::memcpy(&first, msg->data() + 128, 4);
    CHECK(first == 1.0F);

    const WireItemHeader h1 = header_at(*msg, 144);
    CHECK(h1.cur_cnt == 1);
    CHECK(h1.dtype == 2); // ACL_INT8
    CHECK(h1.dynamic_bit_size == 256 - 144 - 64);
    CHECK(h1.data_len == 3);

    const WireItemHeader h2 = header_at(*msg, 259);
    CHECK(h2.kind == 1);
    CHECK(h2.cur_cnt == 2);
    CHECK(h2.dtype == -1);
    CHECK(h2.dim_num == 0);
    CHECK(h2.dynamic_bit_size == 384 - 259 - 64);
    CHECK(h2.data_len == 0);

    auto zero = [&](std::size_t from, std::size_t to) {
        return std::all_of(msg->begin() + static_cast<std::ptrdiff_t>(from),
                           msg->begin() + static_cast<std::ptrdiff_t>(to),
                           [](std::byte b) { return b == std::byte{0}; });
    };
    CHECK(zero(80, 128));
    CHECK(zero(216, 256));
    CHECK(zero(323, 384));
}

TEST_CASE("serialize_into writes into a caller's buffer and checks its size", "[tensor][wire]") {
    const Dataset ds = sample();
    MessageBuffer out(1000, std::byte{0xAB});
    const auto n = ferry::serialize_into(ds, out);
    REQUIRE(n);
    CHECK(*n == 384);
    CHECK(out[384] == std::byte{0xAB}); // nothing past the message
    CHECK(std::equal(out.begin(), out.begin() + 384, ferry::serialize(ds)->begin()));
    MessageBuffer small(383);
    CHECK(ferry::serialize_into(ds, small).status() == Status::invalid_param);
}

TEST_CASE("only TENSOR, END_OF_SEQUENCE and ABNORMAL are sent; nothing is written otherwise",
          "[tensor][wire]") {
    for (const auto kind : {TensorKind::undefined, TensorKind::slice_tensor, TensorKind::end_tensor,
                            static_cast<TensorKind>(7)}) {
        Dataset ds = sample();
        REQUIRE(ds.add(*DataItem::borrow(kind, nullptr, 0, DType::undefined, nullptr, 0)) ==
                Status::ok);
        MessageBuffer out(1000, std::byte{0x5A});
        CHECK(ferry::serialized_size(ds).status() == Status::invalid_param);
        CHECK(ferry::serialize_into(ds, out).status() == Status::invalid_param);
        CHECK(
            std::all_of(out.begin(), out.end(), [](std::byte b) { return b == std::byte{0x5A}; }));
        CHECK(ferry::serialize(ds).status() == Status::invalid_param);
    }
}

TEST_CASE("a size without data cannot be sent; an empty message is rt_param_invalid",
          "[tensor][wire]") {
    Dataset ds;
    REQUIRE(ds.add(*DataItem::borrow(TensorKind::tensor, nullptr, 0, DType::float32, nullptr, 4)) ==
            Status::ok);
    CHECK(ferry::serialize(ds).status() == Status::invalid_param);
    CHECK(ferry::serialize(Dataset{}).status() == Status::rt_param_invalid);
}

TEST_CASE("a dataset of END_OF_SEQUENCE and ABNORMAL items round-trips", "[tensor][wire]") {
    Dataset ds;
    REQUIRE(ds.add(DataItem::end_of_sequence()) == Status::ok);
    REQUIRE(ds.add(DataItem::abnormal()) == Status::ok);
    REQUIRE(ds.add(DataItem::end_of_sequence()) == Status::ok);
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    CHECK(msg->size() == 3 * 64);
    const auto back = ferry::parse(*msg);
    REQUIRE(back);
    CHECK(*back == ds);
    CHECK((*back)[1].kind() == TensorKind::abnormal);
    CHECK((*back)[1].dtype() == DType::undefined);
}

TEST_CASE("the dataset name travels as a version-1 item", "[tensor][wire]") {
    Dataset ds = sample();
    REQUIRE(ds.set_name("queue-7") == Status::ok);
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    const WireItemHeader name = header_at(*msg, 0);
    CHECK(name.version == 1);
    CHECK(name.kind == 0);
    CHECK(name.cnt == 4);
    CHECK(name.data_len == 7);
    CHECK(std::memcmp(msg->data() + 64, "queue-7", 7) == 0);
    const auto back = ferry::parse(*msg);
    REQUIRE(back);
    CHECK(back->name() == "queue-7");
    CHECK(back->size() == 3); // the name item adds no item
    CHECK(*back == ds);

    Dataset only_name;
    REQUIRE(only_name.set_name("x") == Status::ok);
    const auto named = ferry::parse(*ferry::serialize(only_name));
    REQUIRE(named);
    CHECK(named->empty());
    CHECK(named->name() == "x");
}

TEST_CASE("parse copies, parse_view borrows", "[tensor][wire]") {
    const Dataset ds = sample();
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    const auto owned = ferry::parse(*msg);
    const auto view = ferry::parse_view(*msg);
    REQUIRE(owned);
    REQUIRE(view);
    CHECK(*owned == ds);
    CHECK(*view == ds);
    CHECK((*owned)[0].is_owning());
    CHECK((*view)[0].data() == msg->data() + 128);
    CHECK(owned->filled_by_receive());
    CHECK(owned->memory_kind() == ferry::MemoryKind::host);
}

// Owned payloads start on a 64-byte boundary, as they do in the message: glibc's memcpy runs
// many times slower between buffers that differ modulo 64 (docs/data-model.md, Payload storage). A
// 4 MiB payload comes from mmap, 16 bytes past a page, unless the storage is aligned on purpose.
TEST_CASE("owned payloads keep the message's 64-byte alignment", "[tensor][wire]") {
    Dataset ds = sample();
    REQUIRE(ds.add(*DataItem::from(std::vector<std::uint8_t>(std::size_t{4} << 20, 7),
                                   {std::int64_t{4} << 20})) == Status::ok);
    const auto msg = ferry::serialize(ds);
    REQUIRE(msg);
    const auto aligned = [](const Dataset& d) {
        return std::all_of(d.begin(), d.end(), [](const DataItem& item) {
            return reinterpret_cast<std::uintptr_t>(item.data()) % 64 == 0;
        });
    };
    const auto parsed = ferry::parse(*msg);
    REQUIRE(parsed);
    CHECK(aligned(*parsed));
    Dataset refilled;
    REQUIRE(ferry::parse_into(refilled, *msg) == Status::ok);
    CHECK(aligned(refilled));
    const Dataset copied = *parsed; // deep copies of owning items
    CHECK(aligned(copied));
    CHECK(copied == ds);
    const auto owning = ds[3].to_owning();
    REQUIRE(owning);
    CHECK(reinterpret_cast<std::uintptr_t>(owning->data()) % 64 == 0);
}

TEST_CASE("parse_into reuses item storage: no new payload buffers after warm-up",
          "[tensor][wire]") {
    const auto msg = ferry::serialize(sample());
    REQUIRE(msg);
    Dataset ds;
    REQUIRE(ferry::parse_into(ds, *msg) == Status::ok);
    const void* first_payload = ds[0].data();
    REQUIRE(ferry::parse_into(ds, *msg) == Status::ok);
    CHECK(ds[0].data() == first_payload); // the same buffer, refilled in place
    CHECK(ds == sample());
}

TEST_CASE("a receive loop allocates nothing after warm-up", "[tensor][wire]") {
    Dataset named = sample();
    REQUIRE(named.set_name("loop") == Status::ok);
    const MessageBuffer msg = *ferry::serialize(named);
    MessageBuffer in_flight; // what a channel hands over; comes back as the previous buffer
    Dataset adopting;
    Dataset copying;
    auto one_message = [&] {
        // The producer refills the returned buffer in place (serialize_into: no allocation
        // once the buffer is big enough).
        in_flight.resize(msg.size());
        const auto written = ferry::serialize_into(named, in_flight);
        const Status adopted = ferry::parse_into_adopting(adopting, in_flight);
        const Status copied = ferry::parse_into(copying, std::span<const std::byte>(msg));
        return written && succeeded(adopted) && succeeded(copied);
    };
    // Warm-up: the first messages size the two buffers that then go back and forth.
    for (int warm_up = 0; warm_up < 3; ++warm_up) {
        REQUIRE(one_message());
    }
    const long before = allocations.load();
    bool all_ok = true;
    for (int round = 0; round < 100; ++round) {
        all_ok = one_message() && all_ok;
    }
    CHECK(all_ok);
    CHECK(allocations.load() == before);
    CHECK(adopting == named);
    CHECK(copying == named);
}

TEST_CASE("parse_into with a message buffer adopts it and hands back the previous one",
          "[tensor][wire]") {
    MessageBuffer a = *ferry::serialize(sample());
    MessageBuffer b = a;
    const std::byte* a_bytes = a.data();
    const std::byte* b_bytes = b.data();
    Dataset ds;
    REQUIRE(ferry::parse_into_adopting(ds, a) == Status::ok);
    CHECK(a.empty()); // the dataset took it; the fresh dataset had no buffer to give back
    CHECK(ds[0].data() == a_bytes + 128); // zero copy: items point into the adopted buffer
    REQUIRE(ferry::parse_into_adopting(ds, b) == Status::ok);
    CHECK(b.data() == a_bytes); // the previous message comes back for reuse
    CHECK(ds[0].data() == b_bytes + 128);
    CHECK(ds == sample());
}

TEST_CASE("parse_into refuses a dataset holding user items and changes nothing", "[tensor][wire]") {
    MessageBuffer msg = *ferry::serialize(sample());
    Dataset ds;
    REQUIRE(ds.add(DataItem::abnormal()) == Status::ok);
    CHECK(ferry::parse_into_adopting(ds, msg) == Status::invalid_param);
    CHECK(ferry::parse_into(ds, std::span<const std::byte>(msg)) == Status::invalid_param);
    CHECK(msg.size() == 384); // the message is kept
    CHECK(ds.size() == 1);
}

TEST_CASE("a bad message leaves the destination dataset unchanged", "[tensor][wire]") {
    MessageBuffer good = *ferry::serialize(sample());
    MessageBuffer bad(good.begin(), good.begin() + 100); // truncated inside item 1
    Dataset ds;
    REQUIRE(ferry::parse_into_adopting(ds, good) == Status::ok);
    CHECK(ferry::parse_into_adopting(ds, bad) == Status::failure);
    CHECK(bad.size() == 100);
    CHECK(ferry::parse_into(ds, std::span<const std::byte>(bad)) == Status::failure);
    CHECK(ds == sample());
}

TEST_CASE("every truncation of a message is an error, never a crash", "[tensor][wire]") {
    Dataset ds = sample();
    REQUIRE(ds.set_name("abc") == Status::ok);
    const MessageBuffer msg = *ferry::serialize(ds);
    for (std::size_t n = 0; n < msg.size(); ++n) {
        // A fresh heap copy of exactly n bytes, so ASan sees any read past the end.
        const MessageBuffer cut(msg.begin(), msg.begin() + static_cast<std::ptrdiff_t>(n));
        CAPTURE(n);
        CHECK_FALSE(ferry::parse(cut));
        CHECK_FALSE(ferry::parse_view(cut));
    }
    MessageBuffer longer = msg;
    longer.push_back(std::byte{0});
    CHECK(ferry::parse(longer).status() == Status::failure); // trailing bytes
}

TEST_CASE("inconsistent or hostile headers are rejected", "[tensor][wire]") {
    const MessageBuffer good = *ferry::serialize(sample());
    auto patched = [&](std::size_t offset, auto value) {
        MessageBuffer m = good;
        std::memcpy(m.data() + offset, &value, sizeof value);
        return ferry::parse(m).status();
    };
    CHECK(patched(0, std::int32_t{2}) == Status::failure);               // version
    CHECK(patched(144, std::int32_t{-1}) == Status::failure);            // version of item 1
    CHECK(patched(4, std::int32_t{5}) == Status::unsupported_data_type); // kind
    CHECK(patched(4, std::int32_t{-1}) == Status::unsupported_data_type);
    CHECK(patched(8, std::uint32_t{1}) == Status::failure);           // cur_cnt
    CHECK(patched(144 + 12, std::uint32_t{2}) == Status::failure);    // cnt disagrees
    CHECK(patched(12, std::uint32_t{0}) == Status::failure);          // no items
    CHECK(patched(12, std::uint32_t{0xFFFFFFFF}) == Status::failure); // cnt beyond the buffer
    CHECK(patched(20, std::uint32_t{129}) == Status::failure);        // dim_num
    CHECK(patched(20, std::uint32_t{9}) == Status::failure);          // dims beyond the block
    CHECK(patched(24, std::uint32_t{8}) == Status::failure);          // block shorter than dims
    CHECK(patched(24, std::uint32_t{16 + 64}) == Status::failure);    // padding ≥ one unit
    CHECK(patched(56, std::uint64_t{UINT64_MAX}) == Status::failure); // data_len overflow
    CHECK(patched(56, std::uint64_t{17}) == Status::failure);         // payload shifted
    CHECK(patched(56, std::uint64_t{15}) == Status::failure);
}

TEST_CASE("CANN's unpadded layout (dynamic_bit_size 0) and slice items are read",
          "[tensor][wire]") {
    // UT UnpackageRecvDataInfoSuccess: 64 + 8 + 100 bytes, cnt 1, dimNum 1, dataLen 100; CANN
    // reads the payload right after the dims.
    RawMessage m;
    m.header(make_header(0, 1, TensorKind::tensor, DType::uint8, 1, 0, 100));
    m.dims({100});
    m.fill(100, 3);
    const auto ds = ferry::parse_view(m.bytes);
    REQUIRE(ds);
    REQUIRE(ds->size() == 1);
    CHECK((*ds)[0].data() == m.bytes.data() + 72);
    CHECK((*ds)[0].size() == 100);

    // A SLICE_TENSOR keeps dims and dtype and its slice info; a marker keeps its dataLen.
    RawMessage s;
    WireItemHeader h = make_header(0, 2, TensorKind::slice_tensor, DType::int16, 1, 8, 4);
    h.slice_num = 2;
    h.slice_id = 1;
    s.header(h);
    s.dims({2});
    s.fill(4, 1);
    s.header(make_header(1, 2, TensorKind::end_of_sequence, DType::float32, 0, 0, 2));
    s.fill(2, 9);
    const auto sliced = ferry::parse(s.bytes);
    REQUIRE(sliced);
    CHECK((*sliced)[0].kind() == TensorKind::slice_tensor);
    CHECK((*sliced)[0].slice() == ferry::SliceInfo{2, 1});
    CHECK((*sliced)[0].dims()[0] == 2);
    CHECK((*sliced)[0].dtype() == DType::int16);
    CHECK((*sliced)[1].dtype() == DType::undefined);
    CHECK((*sliced)[1].size() == 2);
    // A received slice cannot be sent on (docs/cann-contract/tdt.md#send).
    CHECK(ferry::serialize(*sliced).status() == Status::invalid_param);
}

// A message in shared memory can change between the parser's two passes (docs/processes.md,
// Reading shared memory): the first pass counts the items, the second fills them. fill_dataset
// is called here with the first pass's summary of an earlier state of the bytes, which is what
// a peer rewriting a header between the passes produces. Wrong contents are acceptable; a write
// past the items the first pass sized never is.
TEST_CASE("a message rewritten between the parser's passes is an error, never an overflow",
          "[tensor][wire]") {
    Dataset named = sample();
    REQUIRE(named.set_name("queue-7") == Status::ok);
    MessageBuffer msg = *ferry::serialize(named);
    auto set_version = [&msg](std::size_t item_offset, std::int32_t version) {
        std::memcpy(msg.data() + item_offset + offsetof(WireItemHeader, version), &version,
                    sizeof version);
    };
    for (const auto mode : {ferry::detail::PayloadMode::copy, ferry::detail::PayloadMode::borrow}) {
        // More items on the second pass: the name item turns into a tensor item.
        ferry::detail::WireSummary counted;
        REQUIRE(ferry::detail::summarize_message(msg, counted) == Status::ok);
        REQUIRE(counted.items == 3);
        set_version(0, ferry::detail::k_wire_version_item);
        Dataset grown;
        CHECK(ferry::detail::fill_dataset(grown, msg, counted, mode) == Status::failure);
        CHECK(grown.empty());
        // Fewer items on the second pass: the first tensor item turns into a name item.
        REQUIRE(ferry::detail::summarize_message(msg, counted) == Status::ok);
        REQUIRE(counted.items == 4);
        set_version(0, ferry::detail::k_wire_version_name);
        Dataset shrunk;
        CHECK(ferry::detail::fill_dataset(shrunk, msg, counted, mode) == Status::failure);
        CHECK(shrunk.empty());
    }
}
