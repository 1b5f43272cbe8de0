#include <catch2/catch.hpp>
#include <ferry/runtime/config.hpp>
#include <map>
#include <string>

namespace {
struct FakeEnvironment {
    std::map<std::string, std::string> values;
    ferry::Environment reader() const {
        return [this](const char* name) -> const char* {
            const auto it = values.find(name);
            return it == values.end() ? nullptr : it->second.c_str();
        };
    }
};

ferry::Status load(const FakeEnvironment& env, ferry::RuntimeConfig& config, std::string& message) {
    return ferry::load_config(env.reader(), config, message);
}
} // namespace

TEST_CASE("defaults when nothing is set", "[runtime][config]") {
    FakeEnvironment env;
    ferry::RuntimeConfig config;
    std::string message;
    REQUIRE(load(env, config, message) == ferry::Status::ok);
    CHECK(config.device_count == 1);
    CHECK(config.device_memory == (std::uint64_t{32} << 30));
    CHECK(config.log_level == ferry::LogLevel::error);
    CHECK(config.kernel_threads >= 1);
    CHECK(config.kernel_threads <= ferry::k_max_kernel_threads);
    CHECK(message.empty());
}

TEST_CASE("valid values are taken", "[runtime][config]") {
    FakeEnvironment env{{{"FERRY_DEVICE_COUNT", "64"},
                         {"FERRY_DEVICE_MEMORY", "512M"},
                         {"FERRY_LOG_LEVEL", "debug"},
                         {"FERRY_KERNEL_THREADS", "3"}}};
    ferry::RuntimeConfig config;
    std::string message;
    REQUIRE(load(env, config, message) == ferry::Status::ok);
    CHECK(config.device_count == 64);
    CHECK(config.device_memory == (std::uint64_t{512} << 20));
    CHECK(config.log_level == ferry::LogLevel::debug);
    CHECK(config.kernel_threads == 3);
}

TEST_CASE("memory sizes accept plain bytes and binary suffixes", "[runtime][config]") {
    const std::pair<const char*, std::uint64_t> cases[] = {
        {"4096", 4096},
        {"64K", 64u << 10},
        {"64KiB", 64u << 10},
        {"2g", std::uint64_t{2} << 30},
        {"1T", std::uint64_t{1} << 40},
        {"1", 1},
        {"1024T", std::uint64_t{1} << 50},
    };
    for (const auto& [text, bytes] : cases) {
        FakeEnvironment env{{{"FERRY_DEVICE_MEMORY", text}}};
        ferry::RuntimeConfig config;
        std::string message;
        INFO(text);
        REQUIRE(load(env, config, message) == ferry::Status::ok);
        CHECK(config.device_memory == bytes);
    }
}

TEST_CASE("a bad value is a clear error and changes nothing", "[runtime][config]") {
    const std::pair<const char*, const char*> bad[] = {
        {"FERRY_DEVICE_COUNT", "0"},      {"FERRY_DEVICE_COUNT", "65"},
        {"FERRY_DEVICE_COUNT", "two"},    {"FERRY_DEVICE_COUNT", ""},
        {"FERRY_DEVICE_COUNT", "-1"},     {"FERRY_DEVICE_COUNT", "1 "},
        {"FERRY_DEVICE_MEMORY", "0"},     {"FERRY_DEVICE_MEMORY", "12X"},
        {"FERRY_DEVICE_MEMORY", "1025T"}, {"FERRY_DEVICE_MEMORY", "99999999999999999999"},
        {"FERRY_DEVICE_MEMORY", "G"},     {"FERRY_LOG_LEVEL", "verbose"},
        {"FERRY_LOG_LEVEL", "5"},         {"FERRY_KERNEL_THREADS", "0"},
        {"FERRY_KERNEL_THREADS", "257"},
    };
    for (const auto& [name, value] : bad) {
        FakeEnvironment env{{{name, value}}};
        ferry::RuntimeConfig config;
        config.device_count = 7; // a marker: must survive the failed load
        std::string message;
        INFO(name << "=" << value);
        CHECK(load(env, config, message) == ferry::Status::rt_param_invalid);
        CHECK(config.device_count == 7);
        CHECK(message.find(name) != std::string::npos);
        CHECK(message.find(std::string("'") + value + "'") != std::string::npos);
    }
}
