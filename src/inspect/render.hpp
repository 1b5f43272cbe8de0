#pragma once
// ferry-inspect: segment reports as text for people and as JSON for scripts.

#include "segment_report.hpp"

#include <string>
#include <vector>

namespace ferry::inspect {

// One line per segment (list).
std::string list_text(const std::vector<SegmentReport>& reports);
// Every field, one per line (show).
std::string show_text(const SegmentReport& report);
// A JSON array of segment objects (list --json), or one object (show --json).
std::string to_json(const std::vector<SegmentReport>& reports);
std::string to_json(const SegmentReport& report);
// A JSON string literal: quotes, backslashes, control and non-ASCII bytes escaped (\u00XX), so
// that any file name yields valid JSON.
std::string json_string(const std::string& text);

} // namespace ferry::inspect
