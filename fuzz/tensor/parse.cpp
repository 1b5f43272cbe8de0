// libFuzzer target for the message parser, which is total (docs/cann-contract/tdt.md#parser; fuzzed
// in CI, docs/cann-contract/quality.md#fuzzing).
// Any input must parse or be rejected with a Status — no crash, no out-of-bounds read (ASan), no
// UB (UBSan). When it parses, the forms must agree and the result must survive a second trip:
// serialize(parse(m)) parses back equal (or is refused for a kind a sender may not send).

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ferry/tensor/wire_format.hpp>
#include <span>

namespace {
void check(bool ok) {
    if (!ok) {
        std::abort(); // a property broke: let libFuzzer record the input
    }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // A heap copy of exactly `size` bytes, so ASan sees a read one byte past the end.
    ferry::MessageBuffer message(reinterpret_cast<const std::byte*>(data),
                                 reinterpret_cast<const std::byte*>(data) + size);
    const auto owned = ferry::parse(message);
    const auto view = ferry::parse_view(message);
    check(owned.has_value() == view.has_value());
    if (!owned) {
        check(owned.status() == view.status());
        ferry::Dataset target;
        check(ferry::parse_into_adopting(target, message) == owned.status());
        return 0;
    }
    check(*owned == *view);

    ferry::Dataset reused;
    check(ferry::parse_into(reused, std::span<const std::byte>(message)) == ferry::Status::ok);
    check(reused == *owned);

    const auto again = ferry::serialize(*owned);
    if (again) {
        const auto back = ferry::parse(*again);
        check(back.has_value() && *back == *owned);
    } else {
        check(again.status() == ferry::Status::invalid_param ||
              again.status() == ferry::Status::rt_param_invalid);
    }
    return 0;
}
