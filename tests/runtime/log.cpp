#include <catch2/catch.hpp>
#include <ferry/runtime/log.hpp>
#include <string>
#include <utility>
#include <vector>

TEST_CASE("log levels parse by name and digit", "[runtime][log]") {
    CHECK(ferry::parse_log_level("debug") == ferry::LogLevel::debug);
    CHECK(ferry::parse_log_level("warning") == ferry::LogLevel::warning);
    CHECK(ferry::parse_log_level("off") == ferry::LogLevel::off);
    CHECK(ferry::parse_log_level("0") == ferry::LogLevel::debug);
    CHECK(ferry::parse_log_level("4") == ferry::LogLevel::off);
    CHECK_FALSE(ferry::parse_log_level("5").has_value());
    CHECK_FALSE(ferry::parse_log_level("").has_value());
    CHECK_FALSE(ferry::parse_log_level("DEBUG").has_value());
}

TEST_CASE("only messages at or above the level reach the sink", "[runtime][log]") {
    std::vector<std::pair<ferry::LogLevel, std::string>> seen;
    const auto previous = ferry::set_log_sink(
        [&](ferry::LogLevel level, std::string_view text) { seen.emplace_back(level, text); });
    const ferry::LogLevel saved = ferry::log_level();

    CHECK(saved == ferry::LogLevel::error); // quiet by default
    ferry::log(ferry::LogLevel::info, "hidden");
    ferry::log(ferry::LogLevel::error, "shown");
    ferry::set_log_level(ferry::LogLevel::debug);
    ferry::log(ferry::LogLevel::debug, "now shown");
    ferry::set_log_level(ferry::LogLevel::off);
    ferry::log(ferry::LogLevel::error, "never");
    ferry::log(ferry::LogLevel::off, "never either");

    ferry::set_log_level(saved);
    ferry::set_log_sink(previous);
    REQUIRE(seen.size() == 2);
    CHECK(seen[0] == std::pair{ferry::LogLevel::error, std::string("shown")});
    CHECK(seen[1] == std::pair{ferry::LogLevel::debug, std::string("now shown")});
}
