#pragma once
// ferry::RuntimeConfig — the runtime's configuration, read from FERRY_* environment variables.
//
// docs/cann-contract/runtime.md#configuration: safe defaults, validated; a bad value is a clear
// error at boot, never a silent default. Every variable is documented in docs/runtime.md.
//
//   FERRY_DEVICE_COUNT    emulated devices, 1..64 (RT_MAX_DEV_NUM)             default 1
//   FERRY_DEVICE_MEMORY   device memory limit per device, bytes with optional
//                         K/M/G/T suffix (powers of 1024), 1 .. 2^50           default 32G
//   FERRY_LOG_LEVEL       debug|info|warning|error|off or 0..4                 default error
//   FERRY_KERNEL_THREADS  worker threads that run kernel blocks, 1..256        default #cores
//   ASCEND_RT_VISIBLE_DEVICES  CANN's visible devices: a comma list of physical ids in ascending
//                         order, each < FERRY_DEVICE_COUNT, no duplicates or empty items; user
//                         device i is the i-th listed id (docs/runtime.md, Visible devices)
//                                                                              default all

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <ferry/core/status.hpp>
#include <ferry/runtime/log.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace ferry {

inline constexpr std::uint32_t k_max_devices = 64;                        // RT_MAX_DEV_NUM
inline constexpr std::uint32_t k_max_ts = 2;                              // RT_MAX_TS_NUM
inline constexpr std::uint64_t k_max_alloc_size = std::uint64_t{1} << 50; // MAX_ALLOC_SIZE
inline constexpr std::uint32_t k_max_kernel_threads = 256;

struct RuntimeConfig {
    std::uint32_t device_count = 1; // physical devices (FERRY_DEVICE_COUNT)
    std::uint64_t device_memory = std::uint64_t{32} << 30;
    LogLevel log_level = LogLevel::error;
    std::uint32_t kernel_threads = 0; // 0 in a default-constructed config: one per core
    // The physical id of each user device (ASCEND_RT_VISIBLE_DEVICES); empty: all, in order.
    std::vector<std::uint32_t> visible_devices;

    // The devices every API sees and takes ids of (aclrtGetDeviceCount).
    [[nodiscard]] std::uint32_t user_device_count() const noexcept {
        return visible_devices.empty() ? device_count
                                       : static_cast<std::uint32_t>(visible_devices.size());
    }
    // The physical device behind user device `user` (which must be < user_device_count()).
    [[nodiscard]] std::uint32_t physical_device(std::uint32_t user) const noexcept {
        return visible_devices.empty() ? user : visible_devices[user];
    }
};

// Looks a variable up; returns nullptr when it is unset. std::getenv by default; tests pass a map.
using Environment = std::function<const char*(const char*)>;

namespace detail {
inline std::optional<std::uint64_t> parse_unsigned(std::string_view text) noexcept {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) {
        return std::nullopt;
    }
    return value;
}

// "4096", "64K", "512M", "2G", "1T" (optionally "KiB", "MiB", ...): powers of 1024.
inline std::optional<std::uint64_t> parse_bytes(std::string_view text) noexcept {
    if (text.ends_with("iB") || text.ends_with("ib")) {
        text.remove_suffix(2);
    }
    int shift = 0;
    if (!text.empty()) {
        switch (text.back()) {
        case 'K':
        case 'k':
            shift = 10;
            break;
        case 'M':
        case 'm':
            shift = 20;
            break;
        case 'G':
        case 'g':
            shift = 30;
            break;
        case 'T':
        case 't':
            shift = 40;
            break;
        default:
            break;
        }
    }
    if (shift != 0) {
        text.remove_suffix(1);
    }
    const auto value = parse_unsigned(text);
    if (!value || *value > (~std::uint64_t{0} >> shift)) {
        return std::nullopt;
    }
    return *value << shift;
}

// ASCEND_RT_VISIBLE_DEVICES: "0", "1,3", ... Every item a decimal id below `physical`, strictly
// ascending (CANN refuses a list out of order), so also free of duplicates; no empty item.
// Returns the reason on failure.
inline std::optional<std::string> parse_visible_devices(std::string_view text,
                                                        std::uint32_t physical,
                                                        std::vector<std::uint32_t>& out) {
    std::vector<std::uint32_t> ids;
    for (;;) {
        const std::size_t comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        const auto id = parse_unsigned(item);
        if (item.empty()) {
            return std::string("an empty item");
        }
        if (!id) {
            return "'" + std::string(item) + "' is not a device id";
        }
        if (*id >= physical) {
            return "device " + std::string(item) + " does not exist (FERRY_DEVICE_COUNT is " +
                   std::to_string(physical) + ")";
        }
        if (!ids.empty() && *id == ids.back()) {
            return "device " + std::string(item) + " is listed twice";
        }
        if (!ids.empty() && *id < ids.back()) {
            return "device " + std::string(item) + " is out of ascending order";
        }
        ids.push_back(static_cast<std::uint32_t>(*id));
        if (comma == std::string_view::npos) {
            break;
        }
        text.remove_prefix(comma + 1);
    }
    out = std::move(ids);
    return std::nullopt;
}

inline std::string bad_variable(const char* name, const char* value, std::string_view expected) {
    return std::string(name) + "='" + value + "' is invalid: expected " + std::string(expected);
}
} // namespace detail

// Reads and validates the configuration. On failure returns rt_param_invalid and writes a message
// naming the variable, its value and what was expected into `message`; `out` is left unchanged.
[[nodiscard]] inline Status load_config(const Environment& env, RuntimeConfig& out,
                                        std::string& message) {
    RuntimeConfig config;
    const unsigned cores = std::thread::hardware_concurrency();
    config.kernel_threads = cores == 0 ? 1 : std::min(cores, k_max_kernel_threads);
    if (const char* v = env("FERRY_DEVICE_COUNT")) {
        const auto n = detail::parse_unsigned(v);
        if (!n || *n < 1 || *n > k_max_devices) {
            message = detail::bad_variable("FERRY_DEVICE_COUNT", v, "an integer in 1..64");
            return Status::rt_param_invalid;
        }
        config.device_count = static_cast<std::uint32_t>(*n);
    }
    if (const char* v = env("FERRY_DEVICE_MEMORY")) {
        const auto bytes = detail::parse_bytes(v);
        if (!bytes || *bytes < 1 || *bytes > k_max_alloc_size) {
            message = detail::bad_variable("FERRY_DEVICE_MEMORY", v,
                                           "bytes in 1..2^50, optional suffix K, M, G or T");
            return Status::rt_param_invalid;
        }
        config.device_memory = *bytes;
    }
    if (const char* v = env("FERRY_LOG_LEVEL")) {
        const auto level = parse_log_level(v);
        if (!level) {
            message = detail::bad_variable("FERRY_LOG_LEVEL", v,
                                           "debug, info, warning, error, off or 0..4");
            return Status::rt_param_invalid;
        }
        config.log_level = *level;
    }
    if (const char* v = env("FERRY_KERNEL_THREADS")) {
        const auto n = detail::parse_unsigned(v);
        if (!n || *n < 1 || *n > k_max_kernel_threads) {
            message = detail::bad_variable("FERRY_KERNEL_THREADS", v, "an integer in 1..256");
            return Status::rt_param_invalid;
        }
        config.kernel_threads = static_cast<std::uint32_t>(*n);
    }
    if (const char* v = env("ASCEND_RT_VISIBLE_DEVICES")) {
        if (const auto why =
                detail::parse_visible_devices(v, config.device_count, config.visible_devices)) {
            message =
                detail::bad_variable("ASCEND_RT_VISIBLE_DEVICES", v,
                                     "ascending physical device ids separated by commas; " + *why);
            return Status::rt_param_invalid;
        }
    }
    out = config;
    return Status::ok;
}

[[nodiscard]] inline Status load_config(RuntimeConfig& out, std::string& message) {
    return load_config([](const char* name) -> const char* { return std::getenv(name); }, out,
                       message);
}

} // namespace ferry
