#pragma once
// Shared by the counter tests of every channel family (tests/channel/stats.cpp,
// tests/ipc/channel_counters.cpp): a policy without counters, and whether a channel has stats().

#include <ferry/channel/policy.hpp>

namespace stats_test {

struct uncounted : ferry::spsc {
    static constexpr bool counters = false;
};

template <typename Channel>
concept HasStats = requires(const Channel& ch) {
    ch.stats();
};

} // namespace stats_test
