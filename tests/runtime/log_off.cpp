// ferry::log under FERRY_LOG_LEVEL=off (set in this test's environment by
// tests/runtime/meson.build, before the process starts): nothing at all reaches stderr — not the
// direct messages of any level, not the runtime's own (a failed boot logs at error), and without
// the runtime having booted first. stderr is captured into a temporary file for the check.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <ferry/runtime/log.hpp>
#include <ferry/runtime/runtime.hpp>
#include <string>
#include <string_view>
#include <unistd.h>

namespace {

// Redirects file descriptor 2 into a temporary file until finish(), which returns what was
// written.
class StderrCapture {
public:
    StderrCapture() : file_(std::tmpfile()), saved_(::dup(2)) {
        REQUIRE(file_ != nullptr);
        REQUIRE(saved_ >= 0);
        std::fflush(stderr);
        REQUIRE(::dup2(::fileno(file_), 2) == 2);
    }
    ~StderrCapture() { std::fclose(file_); }
    StderrCapture(const StderrCapture&) = delete;
    StderrCapture& operator=(const StderrCapture&) = delete;

    std::string finish() {
        std::fflush(stderr);
        ::dup2(saved_, 2);
        ::close(saved_);
        std::string text;
        std::rewind(file_);
        for (int c = std::fgetc(file_); c != EOF; c = std::fgetc(file_)) {
            text += static_cast<char>(c);
        }
        return text;
    }

private:
    std::FILE* file_;
    int saved_;
};

void log_every_level(std::string_view text) {
    for (auto level : {ferry::LogLevel::debug, ferry::LogLevel::info, ferry::LogLevel::warning,
                       ferry::LogLevel::error}) {
        ferry::log(level, text);
    }
}

} // namespace

TEST_CASE("FERRY_LOG_LEVEL=off silences every message, the runtime's included", "[runtime][log]") {
    const char* level = std::getenv("FERRY_LOG_LEVEL");
    REQUIRE(level != nullptr);
    REQUIRE(std::string_view(level) == "off");
    // An invalid setting makes the runtime's boot fail, which it logs at error.
    REQUIRE(::setenv("FERRY_KERNEL_THREADS", "0", 1) == 0);

    StderrCapture capture;
    log_every_level("must not appear");
    const auto booted = ferry::Runtime::instance();
    const std::string written = capture.finish();

    CHECK_FALSE(booted.has_value()); // the boot did fail, so it had something to log
    CHECK(ferry::log_level() == ferry::LogLevel::off);
    CHECK(written.empty());
}

TEST_CASE("the capture sees what an explicit level lets through", "[runtime][log]") {
    StderrCapture capture;
    ferry::set_log_level(ferry::LogLevel::debug); // overrides the environment
    log_every_level("visible");
    ferry::set_log_level(ferry::LogLevel::off);
    const std::string written = capture.finish();
    CHECK(written.find("ferry[debug]: visible") != std::string::npos);
    CHECK(written.find("ferry[error]: visible") != std::string::npos);
}
