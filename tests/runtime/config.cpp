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

TEST_CASE("ASCEND_RT_VISIBLE_DEVICES maps user ids to physical ids", "[runtime][config]") {
    FakeEnvironment env{{{"FERRY_DEVICE_COUNT", "4"}, {"ASCEND_RT_VISIBLE_DEVICES", "1,3"}}};
    ferry::RuntimeConfig config;
    std::string message;
    REQUIRE(load(env, config, message) == ferry::Status::ok);
    CHECK(config.device_count == 4);
    CHECK(config.user_device_count() == 2);
    CHECK(config.physical_device(0) == 1);
    CHECK(config.physical_device(1) == 3);

    FakeEnvironment unset{{{"FERRY_DEVICE_COUNT", "3"}}};
    ferry::RuntimeConfig all;
    REQUIRE(load(unset, all, message) == ferry::Status::ok);
    CHECK(all.user_device_count() == 3);
    CHECK(all.physical_device(2) == 2);
}

TEST_CASE("a bad visible-device list is a clear error and changes nothing", "[runtime][config]") {
    // FERRY_DEVICE_COUNT=4 in every case; each list is wrong in exactly one way.
    const std::pair<const char*, const char*> bad[] = {
        {"", "an empty item"},
        {"0,,1", "an empty item"},
        {"0,1,", "an empty item"},
        {",0", "an empty item"},
        {"0,x", "'x' is not a device id"},
        {"-1", "'-1' is not a device id"},
        {" 1", "' 1' is not a device id"},
        {"0,4", "device 4 does not exist"},
        {"99999999999999999999", "is not a device id"},
        {"1,1", "device 1 is listed twice"},
        {"2,1", "device 1 is out of ascending order"},
    };
    for (const auto& [list, why] : bad) {
        FakeEnvironment env{{{"FERRY_DEVICE_COUNT", "4"}, {"ASCEND_RT_VISIBLE_DEVICES", list}}};
        ferry::RuntimeConfig config;
        config.device_count = 7; // a marker: must survive the failed load
        std::string message;
        INFO("ASCEND_RT_VISIBLE_DEVICES=" << list << " -> " << message);
        CHECK(load(env, config, message) == ferry::Status::rt_param_invalid);
        CHECK(config.device_count == 7);
        CHECK(config.visible_devices.empty());
        CHECK(message.find(std::string("ASCEND_RT_VISIBLE_DEVICES='") + list + "'") !=
              std::string::npos);
        CHECK(message.find(why) != std::string::npos);
    }
}
