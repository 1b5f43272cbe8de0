#pragma once
// ferry-inspect net: the state files ferry/net nodes publish when FERRY_NET_STATE_DIR is set
// (docs/multi-node.md, Publishing a node's state), read without trusting them.
//
// Only files named ferry-net-<pid>-<n>.json are read; each must be a regular file (not a link)
// of this user with mode 0600 and at most k_max_state_bytes of printable text, read once. A file
// whose process is gone is stale (its node died without removing it). A file that fails a check
// is reported with the reason and its text is not shown.

#include <cstdint>
#include <string>
#include <vector>

namespace ferry::inspect {

inline constexpr std::size_t k_max_state_bytes = std::size_t{1} << 20;

struct NetStateReport {
    std::string file; // the name in the directory
    std::int32_t pid = 0;
    bool stale = false;  // no process with that pid
    std::string problem; // empty when every check passed
    std::string text;    // the node's JSON, as written (when trusted)
};

// Every ferry-net-*.json file of `dir`, sorted by name.
std::vector<NetStateReport> read_net_states(const std::string& dir);

std::string net_text(const std::vector<NetStateReport>& reports);
std::string net_json(const std::vector<NetStateReport>& reports);

} // namespace ferry::inspect
