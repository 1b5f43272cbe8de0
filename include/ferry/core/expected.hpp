#pragma once
// ferry::Error and Expected<T> — a failure that says what went wrong in words.
//
// ferry::Result<T> carries a Status only. Opening, creating and connecting need more to be
// actionable ("in use by pid 4711", "node 10.0.0.2:4000 serves no channel 'jobs'"), so every
// open / create / connect of ferry/ipc and ferry/net returns Expected<T>: a value, or an Error
// holding the Status a caller branches on, a message a person reads, and the errno of the system
// call that failed (0 when none did). docs/core.md, Expected, lists which call answers what.

#include <algorithm>
#include <chrono>
#include <ferry/core/contract.hpp>
#include <ferry/core/result.hpp>
#include <ferry/core/status.hpp>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>

namespace ferry {

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
    // A failing Status alone (its name is the message): code that answered Result<T> with a
    // bare Status compiles unchanged.
    Expected(Status failure) // NOLINT: implicit by design
        : Expected(Error{failure, name_of(failure), 0}) {}

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
    const T& operator*() const& noexcept { return value(); }
    T&& operator*() && noexcept { return std::move(*this).value(); }
    T* operator->() noexcept { return &value(); }
    const T* operator->() const noexcept { return &value(); }

    template <typename U>
    [[nodiscard]] T value_or(U&& fallback) const& {
        return has_value() ? *std::get_if<0>(&state_) : static_cast<T>(std::forward<U>(fallback));
    }

    // The value or the bare Status, for code written against Result<T> (calls that answered
    // Result before they answered Expected); the message is dropped.
    operator Result<T>() && { // NOLINT: implicit, for source compatibility
        return has_value() ? Result<T>(std::move(*std::get_if<0>(&state_)))
                           : Result<T>(std::get_if<1>(&state_)->status);
    }
    operator Result<T>() const& requires std::is_copy_constructible_v<T> { // NOLINT: as above
        return has_value() ? Result<T>(*std::get_if<0>(&state_))
                           : Result<T>(std::get_if<1>(&state_)->status);
    }

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
    Expected(Status failure) // NOLINT: implicit by design; as Expected<T>'s
        : Expected(Error{failure, name_of(failure), 0}) {}

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

// ---- lifecycle helpers shared by the handles (docs/core.md, One lifecycle) --------------------

// Calls `attempt(left)` — an open given the time left — until it answers anything but not_found
// or `wait` has passed: then not_found, also when the last attempt, given only what was left,
// timed out (the name was still missing when last seen). Looks again after 1 ms, backing off to
// 20 ms: a name that appears is seen within about 20 ms.
template <typename Attempt>
[[nodiscard]] auto retry_while_not_found(std::chrono::milliseconds wait, Attempt attempt)
    -> decltype(attempt(wait)) {
    using clock = std::chrono::steady_clock;
    const auto now = clock::now();
    const auto deadline = wait >= std::chrono::duration_cast<std::chrono::milliseconds>(
                                      clock::time_point::max() - now)
                              ? clock::time_point::max() // saturated: as good as forever
                              : now + wait;
    auto pause = std::chrono::milliseconds(1);
    std::optional<decltype(attempt(wait))> missing;
    for (;;) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(
            std::max(deadline - clock::now(), clock::duration::zero()));
        auto answer = attempt(left);
        const bool over = clock::now() >= deadline;
        if (missing && over && answer.status() == Status::timed_out) {
            return std::move(*missing);
        }
        if (answer.status() != Status::not_found || over) {
            return answer;
        }
        missing.emplace(std::move(answer));
        std::this_thread::sleep_for(std::min(pause, left));
        pause = std::min(pause * 2, std::chrono::milliseconds(20));
    }
}

// Opens; when there is no such name, creates; when that create loses the race to another
// process's (failure: "in use by pid N"), opens what that one made. Whatever else open or
// create answer is the answer.
template <typename Open, typename Create>
[[nodiscard]] auto open_or_create_with(Open open, Create create) -> decltype(open()) {
    constexpr int k_rounds = 3; // each lost race means a live creator: the next open finds it
    for (int round = 0; round < k_rounds; ++round) {
        auto opened = open();
        if (opened || opened.status() != Status::not_found) {
            return opened;
        }
        auto created = create();
        if (created || created.status() != Status::failure) {
            return created;
        }
    }
    return open();
}

} // namespace ferry
