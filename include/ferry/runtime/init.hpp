#pragma once
// aclInit / aclFinalize semantics, as in CANN's main library
// (docs/cann-contract/runtime.md#aclinit-and-aclfinalize):
// - initialize: under a global lock; when already initialized it increments the reference count
//   and returns repeat_initialize; otherwise it reads the config file (when a path is given; an
//   unreadable file → invalid_file), whose content must equal the first successful call's config
//   (else invalid_param), boots the runtime (its failure is returned and nothing changes), and
//   sets the count to 1.
// - finalize: repeat_finalize when already finalized; otherwise finalized = true, count = 0 no
//   matter how many initialize calls came before, and the runtime is shut down. A finalize with
//   no prior initialize runs this path and succeeds (the flag starts false). initialize →
//   finalize → initialize works.
// The aclrt device, memory and stream APIs do not require initialize: they boot the runtime
// lazily through Runtime::instance().

#include <cstdint>
#include <ferry/core/status.hpp>
#include <ferry/runtime/runtime.hpp>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>

namespace ferry {

namespace detail {
struct AclState {
    std::recursive_mutex mutex;
    std::uint64_t references = 0;
    bool finalized = false;
    std::optional<std::string> first_config; // content of the first successful initialize
};
inline AclState& acl_state() {
    static AclState* const state = new AclState; // leaked: usable during process exit
    return *state;
}
} // namespace detail

[[nodiscard]] inline Status initialize(const char* config_path = nullptr) {
    auto& state = detail::acl_state();
    std::lock_guard lock(state.mutex);
    if (state.references > 0) {
        ++state.references;
        return Status::repeat_initialize;
    }
    std::string config;
    if (config_path != nullptr && *config_path != '\0') {
        std::ifstream file(config_path, std::ios::binary);
        if (!file) {
            return Status::invalid_file;
        }
        try {
            config.assign(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
        } catch (const std::ios_base::failure&) { // e.g. a directory: it opens, reading fails
            return Status::invalid_file;
        }
    }
    if (state.first_config && *state.first_config != config) {
        return Status::invalid_param;
    }
    if (const auto runtime = Runtime::instance(); !runtime) {
        return runtime.status();
    }
    if (!state.first_config) {
        state.first_config = std::move(config);
    }
    state.finalized = false;
    state.references = 1;
    return Status::ok;
}

[[nodiscard]] inline Status finalize() {
    auto& state = detail::acl_state();
    std::lock_guard lock(state.mutex);
    if (state.finalized) {
        return Status::repeat_finalize;
    }
    state.finalized = true;
    state.references = 0;
    Runtime::shutdown();
    return Status::ok;
}

// The number of initialize calls since the last finalize (aclInit's reference count).
[[nodiscard]] inline std::uint64_t initialize_count() {
    auto& state = detail::acl_state();
    std::lock_guard lock(state.mutex);
    return state.references;
}

} // namespace ferry
