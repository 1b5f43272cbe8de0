// UCX's own diagnostics through ferry::log (ferry/net/detail/ucx_log.hpp): the level mapping,
// a message UCX dispatches reaching ferry's sink as one line, the threshold applied, and UCX's
// own (printing) handlers below ferry's never reached. The end-to-end check, a real UCX warning
// from a Node's start silenced by FERRY_LOG_LEVEL=off, is examples/net_hello-ucx-*.

#include <catch2/catch.hpp>
#include <ferry/net/detail/ucx_log.hpp>
#include <stdexcept>
#include <string>
#include <ucs/config/global_opts.h>
#include <vector>

namespace {

namespace nd = ferry::net::detail;

// Stands for UCX's default handler: a handler pushed before ferry's. It counts what reaches it.
int below_ferry_calls = 0;
ucs_log_func_rc_t count_below_ferry(const char*, unsigned, const char*, ucs_log_level_t,
                                    const ucs_log_component_config_t*, const char*, va_list) {
    ++below_ferry_calls;
    return UCS_LOG_FUNC_RC_CONTINUE;
}

struct Captured {
    ferry::LogLevel level;
    std::string text;
};

// Installs a capturing sink at `threshold` for one scope; restores the previous sink and level.
class SinkCapture {
public:
    explicit SinkCapture(ferry::LogLevel threshold)
        : level_(ferry::log_level()),
          previous_(ferry::set_log_sink([this](ferry::LogLevel level, std::string_view text) {
              lines.push_back({level, std::string(text)});
          })) {
        ferry::set_log_level(threshold);
    }
    SinkCapture(const SinkCapture&) = delete;
    SinkCapture& operator=(const SinkCapture&) = delete;
    ~SinkCapture() {
        ferry::set_log_sink(previous_);
        ferry::set_log_level(level_);
    }
    std::vector<Captured> lines;

private:
    ferry::LogLevel level_;
    ferry::LogSink previous_;
};

// The routing is once per process: the stand-in for UCX's own handler is pushed before it, once
// (Catch runs the test case's body once per section).
void route_over_stand_in() {
    static const bool done = [] {
        ucs_log_push_handler(&count_below_ferry);
        const unsigned handlers = ucs_log_num_handlers();
        nd::route_ucx_log();
        nd::route_ucx_log(); // a second Node: no second handler
        REQUIRE(ucs_log_num_handlers() == handlers + 1);
        return true;
    }();
    (void)done;
}

} // namespace

TEST_CASE("UCX's levels map onto ferry's") {
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_FATAL) == ferry::LogLevel::error);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_ERROR) == ferry::LogLevel::error);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_WARN) == ferry::LogLevel::warning);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_DIAG) == ferry::LogLevel::info);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_INFO) == ferry::LogLevel::info);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_DEBUG) == ferry::LogLevel::debug);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_TRACE_POLL) == ferry::LogLevel::debug);
    STATIC_REQUIRE(nd::ucx_log_level(UCS_LOG_LEVEL_PRINT) == ferry::LogLevel::debug);
}

TEST_CASE("UCX's messages reach ferry's sink, at its threshold, and stop there") {
    route_over_stand_in();
    auto* component = &ucs_global_opts.log_component;

    SECTION("a warning becomes one ferry line at warning, with UCX's file and line") {
        SinkCapture sink(ferry::LogLevel::warning);
        ucs_log_dispatch("src/ucs/sys/probe.c", 42, "probe", UCS_LOG_LEVEL_WARN, component,
                         "unused env variable: %s (%d)", "UCX_PROBE", 7);
        REQUIRE(sink.lines.size() == 1);
        CHECK(sink.lines[0].level == ferry::LogLevel::warning);
        const auto& text = sink.lines[0].text;
        CHECK(text.rfind("ferry/net: ucx", 0) == 0);
        CHECK(text.find("probe.c:42: unused env variable: UCX_PROBE (7)") != std::string::npos);
        CHECK(text.find("src/ucs/sys/") == std::string::npos); // the file's name, not its path
    }
    SECTION("below the threshold nothing is written") {
        SinkCapture sink(ferry::LogLevel::error);
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_WARN, component, "quiet");
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_DIAG, component, "quiet");
        CHECK(sink.lines.empty());
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_ERROR, component, "loud");
        REQUIRE(sink.lines.size() == 1);
        CHECK(sink.lines[0].level == ferry::LogLevel::error);
    }
    SECTION("off silences UCX as well") {
        SinkCapture sink(ferry::LogLevel::off);
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_FATAL, component, "fatal");
        CHECK(sink.lines.empty());
    }
    SECTION("a message longer than the line buffer is cut and marked") {
        SinkCapture sink(ferry::LogLevel::warning);
        const std::string long_text(3 * nd::k_ucx_line_max, 'x');
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_WARN, component, "%s",
                         long_text.c_str());
        REQUIRE(sink.lines.size() == 1);
        CHECK(sink.lines[0].text.size() < 2 * nd::k_ucx_line_max);
        CHECK(sink.lines[0].text.find("[truncated]") != std::string::npos);
    }
    SECTION("a sink that throws does not unwind into UCX") {
        SinkCapture level(ferry::LogLevel::warning);
        const auto previous = ferry::set_log_sink(
            [](ferry::LogLevel, std::string_view) { throw std::runtime_error("sink failed"); });
        ucs_log_dispatch(__FILE__, __LINE__, "probe", UCS_LOG_LEVEL_WARN, component, "thrown");
        ferry::set_log_sink(previous);
        SUCCEED("the dispatch returned");
    }
    // Every message above stopped at ferry's handler.
    CHECK(below_ferry_calls == 0);
}
