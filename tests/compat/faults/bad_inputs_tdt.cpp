// The bad-input rows of acltdt* (codes: docs/c-api.md, TDT). A pointer that is not a live handle
// of the expected kind is ACL_ERROR_INVALID_PARAM, or UNDEFINED / NULL / 0 from the accessors.

#include "bad_inputs.hpp"

#include <climits>
#include <cstdint>
#include <string>

namespace ferry::test {
namespace {

constexpr aclError kIP = ACL_ERROR_INVALID_PARAM;
constexpr aclError kUnsupported = ACL_ERROR_FEATURE_UNSUPPORTED;

std::vector<Row> item_rows(World& w) {
    acltdtDataItem* as_item = World::as<acltdtDataItem>(w.dataset);
    acltdtDataItem* channel_as_item = World::as<acltdtDataItem>(w.queue);
    acltdtDataItem* view = acltdtGetDataItem(w.received, 0); // owned by `received`
    std::vector<Row> rows;
    for (const auto& [what, bad] :
         {std::pair{"NULL", static_cast<acltdtDataItem*>(nullptr)},
          std::pair{"destroyed", w.dead_item}, std::pair{"a dataset", as_item},
          std::pair{"a channel", channel_as_item}}) {
        acltdtDataItem* const p = bad;
        rows.insert(
            rows.end(),
            {
                BAD_INPUT(acltdtGetTensorTypeFromItem, what, ACL_TENSOR_DATA_UNDEFINED, p),
                BAD_INPUT(acltdtGetDataTypeFromItem, what, ACL_DT_UNDEFINED, p),
                BAD_INPUT(acltdtGetDataAddrFromItem, what, 0, p),
                BAD_INPUT(acltdtGetDataSizeFromItem, what, 0, p),
                BAD_INPUT(acltdtGetDimNumFromItem, what, 0, p),
                BAD_INPUT(acltdtGetSliceInfoFromItem, what, kIP, p, &w.out_size, &w.out_size2),
                BAD_INPUT(acltdtGetDimsFromItem, what, kIP, p, w.out_dims, 4),
                BAD_INPUT(acltdtDestroyDataItem, what, kIP, p),
            });
    }
    rows.insert(
        rows.end(),
        {
            BAD_INPUT(acltdtGetSliceInfoFromItem, "NULL sliceNum", kIP, w.item, nullptr,
                      &w.out_size2),
            BAD_INPUT(acltdtGetSliceInfoFromItem, "NULL sliceId", kIP, w.item, &w.out_size,
                      nullptr),
            BAD_INPUT(acltdtGetDimsFromItem, "NULL dims, dimNum 4", kIP, w.item, nullptr, 4),
            BAD_INPUT(acltdtGetDimsFromItem, "dimNum 0", kIP, w.item, w.out_dims, 0),
            BAD_INPUT(acltdtGetDimsFromItem, "dimNum 1 < 2 dims", kIP, w.item, w.out_dims, 1),
            BAD_INPUT(acltdtDestroyDataItem, "an item of a received dataset", kIP, view),
            BAD_INPUT(acltdtCreateDataItem, "NULL dims, dimNum 2", 0, ACL_TENSOR_DATA_TENSOR,
                      nullptr, 2, ACL_FLOAT, w.payload, sizeof w.payload),
            BAD_INPUT(acltdtCreateDataItem, "dims, dimNum 0", 0, ACL_TENSOR_DATA_TENSOR, w.dims, 0,
                      ACL_FLOAT, w.payload, sizeof w.payload),
            BAD_INPUT(acltdtCreateDataItem, "dimNum 129", 0, ACL_TENSOR_DATA_TENSOR, w.dims, 129,
                      ACL_FLOAT, w.payload, sizeof w.payload),
            BAD_INPUT(acltdtCreateDataItem, "dimNum SIZE_MAX", 0, ACL_TENSOR_DATA_TENSOR, w.dims,
                      SIZE_MAX, ACL_FLOAT, w.payload, sizeof w.payload),
            BAD_INPUT(acltdtCreateDataItem, "dims on END_OF_SEQUENCE", 0,
                      ACL_TENSOR_DATA_END_OF_SEQUENCE, w.dims, 2, ACL_DT_UNDEFINED, nullptr, 0),
        });
    return rows;
}

std::vector<Row> dataset_rows(World& w) {
    acltdtDataset* as_dataset = World::as<acltdtDataset>(w.item);
    acltdtDataset* channel_as_dataset = World::as<acltdtDataset>(w.queue);
    acltdtDataItem* dataset_as_item = World::as<acltdtDataItem>(w.dataset);
    std::vector<Row> rows;
    for (const auto& [what, bad] :
         {std::pair{"NULL", static_cast<acltdtDataset*>(nullptr)},
          std::pair{"destroyed", w.dead_dataset}, std::pair{"an item", as_dataset},
          std::pair{"a channel", channel_as_dataset}}) {
        acltdtDataset* const p = bad;
        rows.insert(rows.end(), {
                                    BAD_INPUT(acltdtDestroyDataset, what, kIP, p),
                                    BAD_INPUT(acltdtGetDataItem, what, 0, p, 0),
                                    BAD_INPUT(acltdtAddDataItem, what, kIP, p, w.item),
                                    BAD_INPUT(acltdtGetDatasetSize, what, 0, p),
                                    BAD_INPUT(acltdtGetDatasetName, what, 0, p),
                                    BAD_INPUT(acltdtSendTensor, what, kIP, w.queue, p, 0),
                                    BAD_INPUT(acltdtReceiveTensor, what, kIP, w.queue, p, 0),
                                });
    }
    rows.insert(
        rows.end(),
        {
            NO_BAD_INPUT(acltdtCreateDataset, "takes no argument"),
            BAD_INPUT(acltdtGetDataItem, "index 1 of 1", 0, w.dataset, 1),
            BAD_INPUT(acltdtGetDataItem, "index SIZE_MAX", 0, w.dataset, SIZE_MAX),
            BAD_INPUT(acltdtAddDataItem, "NULL item", kIP, w.dataset, nullptr),
            BAD_INPUT(acltdtAddDataItem, "destroyed item", kIP, w.dataset, w.dead_item),
            BAD_INPUT(acltdtAddDataItem, "a dataset as the item", kIP, w.dataset, dataset_as_item),
            BAD_INPUT(acltdtAddDataItem, "into a received dataset", kUnsupported, w.received,
                      w.item),
        });
    return rows;
}

std::vector<Row> channel_rows(World& w) {
    static const std::string long_name(128, 'n');
    const char* name128 = long_name.c_str();
    acltdtChannelHandle* as_channel = World::as<acltdtChannelHandle>(w.dataset);
    std::vector<Row> rows;
    for (const auto& [what, bad] :
         {std::pair{"NULL", static_cast<acltdtChannelHandle*>(nullptr)},
          std::pair{"destroyed", w.dead_channel}, std::pair{"a dataset", as_channel}}) {
        acltdtChannelHandle* const p = bad;
        rows.insert(rows.end(), {
                                    BAD_INPUT(acltdtStopChannel, what, kIP, p),
                                    BAD_INPUT(acltdtDestroyChannel, what, kIP, p),
                                    BAD_INPUT(acltdtCleanChannel, what, kIP, p),
                                    BAD_INPUT(acltdtQueryChannelSize, what, kIP, p, &w.out_size),
                                    BAD_INPUT(acltdtSendTensor, what, kIP, p, w.dataset, 0),
                                    BAD_INPUT(acltdtReceiveTensor, what, kIP, p, w.received, 0),
                                });
    }
    rows.insert(
        rows.end(),
        {
            BAD_INPUT(acltdtCreateChannel, "NULL name", 0, 0, nullptr),
            BAD_INPUT(acltdtCreateChannel, "device UINT32_MAX", 0, UINT32_MAX, "x"),
            BAD_INPUT(acltdtCreateChannel, "device count (2)", 0, 2, "x"),
            BAD_INPUT(acltdtCreateChannel, "a 128-character name", 0, 0, name128),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "NULL name", 0, 0, nullptr, 4),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "capacity 0", 0, 0, "x", 0),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "capacity 1", 0, 0, "x", 1),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "capacity 8193", 0, 0, "x", 8193),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "capacity 2^33 + 4", 0, 0, "x",
                      (size_t{1} << 33) + 4),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "capacity SIZE_MAX", 0, 0, "x", SIZE_MAX),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "device UINT32_MAX", 0, UINT32_MAX, "x", 4),
            BAD_INPUT(acltdtCreateChannelWithCapacity, "a 128-character name", 0, 0, name128, 4),
            BAD_INPUT(acltdtCleanChannel, "a legacy channel", kUnsupported, w.sender),
            BAD_INPUT(acltdtQueryChannelSize, "NULL size", kIP, w.queue, nullptr),
            BAD_INPUT(acltdtQueryChannelSize, "a legacy channel", kUnsupported, w.sender,
                      &w.out_size),
        });
    return rows;
}

// Timeouts at the int32 edges, and datasets a send or receive must refuse before touching a queue.
std::vector<Row> transfer_rows(World& w) {
    std::vector<Row> rows{
        BAD_INPUT(acltdtSendTensor, "an empty dataset", ACL_ERROR_RT_PARAM_INVALID, w.queue,
                  w.empty, 0),
        BAD_INPUT(acltdtReceiveTensor, "a dataset holding user items, INT32_MAX", kIP, w.queue,
                  w.dataset, INT32_MAX),
        BAD_INPUT(acltdtReceiveTensor, "a legacy send handle, -1", kIP, w.sender, w.received, -1),
    };
    if (w.huge_item != nullptr) {
        rows.push_back(
            BAD_INPUT(acltdtSendTensor, "an item of SIZE_MAX bytes", kIP, w.queue, w.huge, 0));
    }
    // acltdtCreateDataItem takes any tensor type (CANN checks it only at send): the World holds
    // items of types 99 and INT_MIN, and sending them is the bad input.
    for (acltdtDataset* d : w.odd) {
        rows.push_back(
            BAD_INPUT(acltdtSendTensor, "an item of an unknown tensor type", kIP, w.queue, d, 0));
    }
    for (const std::int32_t t : {0, 1, INT32_MAX, INT32_MIN, -2}) {
        const std::string timeout = "legacy channel, timeout " + std::to_string(t);
        rows.push_back(BAD_INPUT(acltdtSendTensor, timeout, kIP, w.sender, w.dataset, t));
        rows.push_back(BAD_INPUT(acltdtReceiveTensor, timeout, kIP, w.receiver, w.received, t));
    }
    for (const std::int32_t t : {0, 1, INT32_MAX, -1, INT32_MIN}) {
        const std::string timeout = "stopped channel, timeout " + std::to_string(t);
        rows.push_back(BAD_INPUT(acltdtSendTensor, "full " + timeout, ACL_ERROR_RT_QUEUE_FULL,
                                 w.stopped_full, w.dataset, t));
        rows.push_back(BAD_INPUT(acltdtReceiveTensor, "empty " + timeout, ACL_ERROR_RT_QUEUE_EMPTY,
                                 w.stopped_empty, w.received, t));
    }
    return rows;
}

} // namespace

std::vector<Row> tdt_rows(World& w) {
    std::vector<Row> rows;
    for (auto* part : {item_rows, dataset_rows, channel_rows, transfer_rows}) {
        for (Row& r : part(w)) {
            rows.push_back(std::move(r));
        }
    }
    return rows;
}

} // namespace ferry::test
