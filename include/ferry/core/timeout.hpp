#pragma once
// ferry::Timeout — how long a blocking operation may wait.
//
// docs/cann-contract/tdt.md#blocking-timeouts-and-wake-up: -1 waits forever, 0 never blocks, a
// positive value waits that long. In C++ any std::chrono duration converts implicitly; the C shim
// uses from_milliseconds for its int32 ms. Deadlines are on the steady clock, so a wall-clock
// change never shortens or stretches a wait.

#include <chrono>
#include <cstdint>
#include <optional>

namespace ferry {

class Timeout {
public:
    using clock = std::chrono::steady_clock;

private:
    template <typename Rep, typename Period>
    static constexpr clock::duration to_clock_duration(std::chrono::duration<Rep, Period> d) noexcept {
        using wide = std::chrono::duration<long double, std::nano>;
        if (d <= std::chrono::duration<Rep, Period>::zero()) {
            return clock::duration::zero();
        }
        if (std::chrono::duration_cast<wide>(d) >= std::chrono::duration_cast<wide>(clock::duration::max())) {
            return clock::duration::max();
        }
        return std::chrono::ceil<clock::duration>(d);
    }

public:
    // Waits forever.
    constexpr Timeout() noexcept = default;

    // Negative durations mean "do not wait"; durations beyond the clock's range saturate.
    template <typename Rep, typename Period>
    constexpr Timeout(std::chrono::duration<Rep, Period> d) noexcept // NOLINT: implicit by design
        : duration_(to_clock_duration(d)) {}

    [[nodiscard]] static constexpr Timeout forever() noexcept { return Timeout{}; }
    [[nodiscard]] static constexpr Timeout no_wait() noexcept {
        return Timeout{clock::duration::zero()};
    }

    // The C API's encoding: -1 forever, 0 no wait, > 0 milliseconds. Other negative values are
    // not timeouts at all; callers validate them before converting (std::nullopt here).
    [[nodiscard]] static constexpr std::optional<Timeout> from_milliseconds(std::int32_t ms) noexcept {
        if (ms == -1) {
            return forever();
        }
        if (ms < 0) {
            return std::nullopt;
        }
        return Timeout{std::chrono::milliseconds(ms)};
    }

    [[nodiscard]] constexpr bool is_forever() const noexcept { return !duration_.has_value(); }
    [[nodiscard]] constexpr bool is_no_wait() const noexcept {
        return duration_.has_value() && *duration_ == clock::duration::zero();
    }
    // Only meaningful when !is_forever().
    [[nodiscard]] constexpr clock::duration duration() const noexcept {
        return duration_.value_or(clock::duration::max());
    }
    // The absolute deadline for a wait starting at `start`; time_point::max() for forever.
    [[nodiscard]] clock::time_point deadline_from(clock::time_point start) const noexcept {
        if (!duration_) {
            return clock::time_point::max();
        }
        const auto room = clock::time_point::max() - start;
        return *duration_ >= room ? clock::time_point::max() : start + *duration_;
    }

    friend constexpr bool operator==(const Timeout&, const Timeout&) noexcept = default;

private:
    std::optional<clock::duration> duration_;
};

inline constexpr Timeout forever = Timeout::forever();
inline constexpr Timeout no_wait = Timeout::no_wait();

} // namespace ferry
