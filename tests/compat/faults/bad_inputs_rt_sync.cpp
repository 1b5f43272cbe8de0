// The bad-input rows of the runtime's synchronisation and diagnostics calls: exception info,
// notifies and profiling (codes: docs/c-api.md).

#include "bad_inputs.hpp"

#include <cstdint>

namespace ferry::test {
namespace {

constexpr std::uint32_t kNoInfo = 0xFFFFFFFFU;

std::vector<Row> exception_info_rows(World& w) {
    return {
        BAD_INPUT(aclrtSetExceptionInfoCallback, "NULL (unregisters; nothing was registered)",
                  ACL_SUCCESS, nullptr),
        BAD_INPUT(aclrtGetTaskIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetStreamIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetThreadIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetDeviceIdFromExceptionInfo, "NULL", kNoInfo, nullptr),
        BAD_INPUT(aclrtGetErrorCodeFromExceptionInfo, "NULL", kNoInfo, nullptr),
    };
}

} // namespace

std::vector<Row> runtime_sync_rows(World& w) {
    std::vector<Row> rows;
    for (auto* part : {exception_info_rows}) {
        for (Row& r : part(w)) {
            rows.push_back(std::move(r));
        }
    }
    return rows;
}

} // namespace ferry::test
