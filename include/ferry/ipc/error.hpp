#pragma once
// ferry::ipc::Error and Expected<T> — a failure that says what went wrong in words.
//
// ferry::Result<T> carries a Status only. Shared-memory failures need more to be actionable
// ("in use by pid 4711", "made by a build with layout 'ring' v3"), so ipc operations return
// Expected<T>: a value, or an Error holding the Status a caller branches on, a message a person
// reads, and the errno of the system call that failed (0 when none did). The Status values each
// operation answers are listed in docs/processes.md, Errors.

#include <ferry/core/contract.hpp>
#include <ferry/core/status.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace ferry::ipc {

struct Error {
    Status status = Status::failure;
    std::string message;
    int error_number = 0; // errno of the failing system call; 0 when the failure is not one
};

template <typename T>
class [[nodiscard]] Expected {
public:
    using value_type = T;

    Expected(T value) noexcept(std::is_nothrow_move_constructible_v<T>) // NOLINT: implicit
        : state_(std::in_place_index<0>, std::move(value)) {}
    Expected(Error error) noexcept // NOLINT: implicit by design
        : state_(std::in_place_index<1>, std::move(error)) {
        FERRY_EXPECTS(std::get<1>(state_).status != Status::ok);
    }

    [[nodiscard]] bool has_value() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] Status status() const noexcept {
        return has_value() ? Status::ok : std::get<1>(state_).status;
    }
    // The failure; only when !has_value().
    [[nodiscard]] const Error& error() const& noexcept {
        FERRY_EXPECTS(!has_value());
        return *std::get_if<1>(&state_);
    }

    [[nodiscard]] T& value() & noexcept {
        FERRY_EXPECTS(has_value());
        return *std::get_if<0>(&state_);
    }
    [[nodiscard]] const T& value() const& noexcept {
        FERRY_EXPECTS(has_value());
        return *std::get_if<0>(&state_);
    }
    [[nodiscard]] T&& value() && noexcept {
        FERRY_EXPECTS(has_value());
        return std::move(*std::get_if<0>(&state_));
    }
    T& operator*() & noexcept { return value(); }
    T&& operator*() && noexcept { return std::move(*this).value(); }
    T* operator->() noexcept { return &value(); }
    const T* operator->() const noexcept { return &value(); }

private:
    std::variant<T, Error> state_;
};

// Success with no value, or an Error.
template <>
class [[nodiscard]] Expected<void> {
public:
    Expected() noexcept = default;
    Expected(Error error) noexcept : error_(std::move(error)) { // NOLINT: implicit by design
        FERRY_EXPECTS(error_.status != Status::ok);
    }

    [[nodiscard]] bool has_value() const noexcept { return error_.status == Status::ok; }
    explicit operator bool() const noexcept { return has_value(); }
    [[nodiscard]] Status status() const noexcept { return error_.status; }
    [[nodiscard]] const Error& error() const& noexcept {
        FERRY_EXPECTS(!has_value());
        return error_;
    }

private:
    Error error_{Status::ok, {}, 0};
};

} // namespace ferry::ipc
