#pragma once
// Selection policies: which ready micro batch a group emits in grouped mode.
//
// docs/cann-contract/afd.md#grouped-mode: CANN scans mb = 0..M-1 and takes the lowest-numbered
// ready micro batch of each group, so a group whose micro batch 0 is always ready again can starve
// its others (an observation, not documented behaviour). LowestReady reproduces that and is the
// default; RoundRobin starts each group's scan just after the micro batch it emitted last, so every
// ready micro batch is served within M calls that serve the group.

#include <concepts>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace ferry::afd {

// select(group, M, ready) returns the micro batch to emit for `group`, or nullopt if none of the
// micro batches for which ready(mb) is true should be emitted. It may remember its choice.
template <typename P>
concept SelectionPolicy = requires(P p, std::uint32_t group, std::uint32_t m,
                                   const std::function<bool(std::uint32_t)>& ready) {
    { p.select(group, m, ready) } -> std::same_as<std::optional<std::uint32_t>>;
};

struct LowestReady {
    template <std::predicate<std::uint32_t> Ready>
    std::optional<std::uint32_t> select(std::uint32_t /*group*/, std::uint32_t micro_batches,
                                        Ready&& ready) const {
        for (std::uint32_t mb = 0; mb < micro_batches; ++mb) {
            if (ready(mb)) {
                return mb;
            }
        }
        return std::nullopt;
    }
};

class RoundRobin {
public:
    template <std::predicate<std::uint32_t> Ready>
    std::optional<std::uint32_t> select(std::uint32_t group, std::uint32_t micro_batches, Ready&& ready) {
        if (group >= next_.size()) {
            next_.resize(std::size_t{group} + 1, 0);
        }
        const std::uint32_t start = next_[group] % micro_batches;
        for (std::uint32_t i = 0; i < micro_batches; ++i) {
            const std::uint32_t mb = (start + i) % micro_batches;
            if (ready(mb)) {
                next_[group] = (mb + 1) % micro_batches;
                return mb;
            }
        }
        return std::nullopt;
    }

private:
    std::vector<std::uint32_t> next_; // per group: where the next scan starts
};

static_assert(SelectionPolicy<LowestReady> && SelectionPolicy<RoundRobin>);

} // namespace ferry::afd
