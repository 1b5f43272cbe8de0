#pragma once
// ferry::Result<T> — a value or the Status that explains why there is none.
//
// C++20 has no std::expected (GCC 12 ships it only for C++23); this is the small subset ferry
// needs: construction from a value or a failing Status, checked access, and value_or.

#include <optional>
#include <type_traits>
#include <utility>

#include <ferry/core/contract.hpp>
#include <ferry/core/status.hpp>

namespace ferry {

template <typename T>
class [[nodiscard]] Result {
    static_assert(!std::is_reference_v<T> && !std::is_same_v<std::remove_cv_t<T>, Status>);

public:
    using value_type = T;

    Result(T value) noexcept(std::is_nothrow_move_constructible_v<T>) // NOLINT: implicit by design
        : value_(std::move(value)) {}
    Result(Status failure) noexcept : status_(failure) { // NOLINT: implicit by design
        FERRY_EXPECTS(failure != Status::ok);
    }

    [[nodiscard]] bool has_value() const noexcept { return value_.has_value(); }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] Status status() const noexcept { return status_; }

    [[nodiscard]] T& value() & noexcept {
        FERRY_EXPECTS(has_value());
        return *value_;
    }
    [[nodiscard]] const T& value() const& noexcept {
        FERRY_EXPECTS(has_value());
        return *value_;
    }
    [[nodiscard]] T&& value() && noexcept {
        FERRY_EXPECTS(has_value());
        return std::move(*value_);
    }
    T& operator*() & noexcept { return value(); }
    const T& operator*() const& noexcept { return value(); }
    T&& operator*() && noexcept { return std::move(*this).value(); }
    T* operator->() noexcept { return &value(); }
    const T* operator->() const noexcept { return &value(); }

    template <typename U>
    [[nodiscard]] T value_or(U&& fallback) const& {
        return value_ ? *value_ : static_cast<T>(std::forward<U>(fallback));
    }

private:
    std::optional<T> value_;
    Status status_ = Status::ok;
};

} // namespace ferry
