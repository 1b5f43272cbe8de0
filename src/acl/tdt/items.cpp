// acltdt* items and datasets (docs/cann-contract/tdt.md#data-model): argument checks and
// handle validation here, the rules themselves in ferry::DataItem / ferry::Dataset.

#include "../c_enum.hpp"
#include "acl/acl_tdt.h"
#include "boundary.hpp"
#include "handles.hpp"

#include <cstring>
#include <ferry/core/dtype.hpp>
#include <ferry/tensor/data_item.hpp>
#include <ferry/tensor/dataset.hpp>
#include <memory>
#include <utility>

using ferry::Status;
using ferry::acl::Shim;
using ferry::acl::to_handle;
using ferry::acl::to_token;
using ferry::acl::Token;

namespace {

// The item behind a C handle, or nullptr when it is not a live item (or designates an index a
// later receive left empty).
const ferry::DataItem* item_of(const acltdtDataItem* p) noexcept {
    const std::shared_ptr<acltdtDataItem> item = Shim::get().items.find(p);
    return item != nullptr ? item->get() : nullptr; // the table's reference keeps it alive
}

acltdtDataset* dataset_of(const acltdtDataset* p) noexcept {
    return Shim::get().datasets.find(p).get();
}

// Forwarding: `d` gets its own copy of `item`, an item of a received dataset whose bytes live in
// that dataset's message buffer (its next receive or its destruction reuses them). The copy is
// `d`'s item, and the handle `d` hands back for it designates that copy, so what
// acltdtGetDataItem describes and what a send carries agree for `d`'s whole life.
aclError add_forwarded(acltdtDataset& d, const ferry::DataItem& item) {
    ferry::Result<ferry::DataItem> copied = item.to_owning();
    if (!copied) {
        return ferry::acl::reject("acltdtAddDataItem", "copying a received item", copied.status());
    }
    d.owned.reserve(d.owned.size() + 1); // so that the push_backs below cannot fail
    auto copy = std::make_shared<acltdtDataItem>();
    copy->owner = &d;
    copy->index = d.data.size();
    const Token token = Shim::get().items.add(std::move(copy));
    if (const Status s = d.data.add(std::move(*copied)); ferry::failed(s)) {
        (void)Shim::get().items.take(token);
        return ferry::acl::reject("acltdtAddDataItem", ferry::name_of(s), s);
    }
    d.owned.push_back(token);
    d.added.push_back(token);
    return ACL_SUCCESS;
}

} // namespace

extern "C" {

acltdtTensorType acltdtGetTensorTypeFromItem(const acltdtDataItem* dataItem) {
    const ferry::DataItem* item = item_of(dataItem);
    return item != nullptr ? static_cast<acltdtTensorType>(item->kind())
                           : ACL_TENSOR_DATA_UNDEFINED;
}

aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem* dataItem) {
    const ferry::DataItem* item = item_of(dataItem);
    return item != nullptr ? static_cast<aclDataType>(item->dtype()) : ACL_DT_UNDEFINED;
}

void* acltdtGetDataAddrFromItem(const acltdtDataItem* dataItem) {
    const ferry::DataItem* item = item_of(dataItem);
    // void*: CANN hands out a mutable pointer to the (borrowed or received) payload.
    return item != nullptr ? const_cast<void*>(item->data()) : nullptr;
}

size_t acltdtGetDataSizeFromItem(const acltdtDataItem* dataItem) {
    const ferry::DataItem* item = item_of(dataItem);
    return item != nullptr ? item->size() : 0;
}

size_t acltdtGetDimNumFromItem(const acltdtDataItem* dataItem) {
    const ferry::DataItem* item = item_of(dataItem);
    return item != nullptr ? item->dim_num() : 0;
}

aclError acltdtGetSliceInfoFromItem(const acltdtDataItem* dataItem, size_t* sliceNum,
                                    size_t* sliceId) {
    const ferry::DataItem* item = item_of(dataItem);
    if (item == nullptr || sliceNum == nullptr || sliceId == nullptr) {
        return ferry::acl::reject(__func__, "null or stale item, or null output");
    }
    *sliceNum = item->slice().num;
    *sliceId = item->slice().id;
    return ACL_SUCCESS;
}

// docs/cann-contract/tdt.md#item-accessors: the checks in CANN's order; a larger dimNum than the
// item has is fine.
aclError acltdtGetDimsFromItem(const acltdtDataItem* dataItem, int64_t* dims, size_t dimNum) {
    const ferry::DataItem* item = item_of(dataItem);
    if (item == nullptr) {
        return ferry::acl::reject(__func__, "null or stale item");
    }
    if ((dims == nullptr) != (dimNum == 0)) {
        return ferry::acl::reject(__func__, "dims and dimNum disagree (one is null/zero)");
    }
    if (dimNum < item->dim_num()) {
        return ferry::acl::reject(__func__, "dimNum is smaller than the item's dim count");
    }
    if (item->dim_num() != 0) {
        std::memcpy(dims, item->dims().data(), item->dims().size_bytes());
    }
    return ACL_SUCCESS;
}

acltdtDataItem* acltdtCreateDataItem(acltdtTensorType tdtType, const int64_t* dims, size_t dimNum,
                                     aclDataType dataType, void* data, size_t size) {
    return ferry::acl::guarded_value<acltdtDataItem*>(__func__, nullptr, [&]() -> acltdtDataItem* {
        auto made = ferry::DataItem::borrow(
            static_cast<ferry::TensorKind>(ferry::acl::raw_value(tdtType)), dims, dimNum,
            static_cast<ferry::DType>(ferry::acl::raw_value(dataType)), data, size);
        if (!made) {
            ferry::acl::reject("acltdtCreateDataItem",
                               "dims/dimNum/kind rejected (CANN's creation rules)", made.status());
            return nullptr;
        }
        auto item = std::make_shared<acltdtDataItem>();
        item->own = std::move(made).value();
        return to_handle<acltdtDataItem>(Shim::get().items.add(std::move(item)));
    });
}

aclError acltdtDestroyDataItem(acltdtDataItem* dataItem) {
    // The ownership check and the removal are one step (no window for a second destroy).
    if (Shim::get().items.take_if(to_token(dataItem),
                                  [](const acltdtDataItem& i) { return i.owner == nullptr; })) {
        return ACL_SUCCESS;
    }
    if (Shim::get().items.find(dataItem) != nullptr) {
        // ferry differs: CANN deletes it and the dataset deletes it again (a double free).
        return ferry::acl::reject(__func__, "the item belongs to a dataset");
    }
    return ferry::acl::reject(__func__, "not a live item (null, stale or destroyed)");
}

acltdtDataset* acltdtCreateDataset(void) {
    return ferry::acl::guarded_value<acltdtDataset*>(__func__, nullptr, [&] {
        return to_handle<acltdtDataset>(
            Shim::get().datasets.add(std::make_shared<acltdtDataset>()));
    });
}

// Frees the dataset and its own items (received ones, forwarded copies); items the user added
// stay alive (CANN's freeSelf rule, docs/cann-contract/tdt.md#datasets: callers destroy those
// themselves).
aclError acltdtDestroyDataset(acltdtDataset* dataset) {
    const std::shared_ptr<acltdtDataset> d = Shim::get().datasets.take(dataset);
    if (d == nullptr) {
        return ferry::acl::reject(__func__, "not a live dataset (null, stale or destroyed)");
    }
    for (const auto* tokens : {&d->views, &d->owned}) {
        for (const Token token : *tokens) {
            (void)Shim::get().items.take(token);
        }
    }
    return ACL_SUCCESS;
}

acltdtDataItem* acltdtGetDataItem(const acltdtDataset* dataset, size_t index) {
    const acltdtDataset* d = dataset_of(dataset);
    if (d == nullptr || index >= d->data.size()) {
        return nullptr;
    }
    const std::vector<Token>& handles = d->data.filled_by_receive() ? d->views : d->added;
    return index < handles.size() ? to_handle<acltdtDataItem>(handles[index]) : nullptr;
}

aclError acltdtAddDataItem(acltdtDataset* dataset, acltdtDataItem* dataItem) {
    return ferry::acl::guarded(__func__, [&]() -> aclError {
        acltdtDataset* d = dataset_of(dataset);
        const std::shared_ptr<acltdtDataItem> handle = Shim::get().items.find(dataItem);
        const ferry::DataItem* item = handle != nullptr ? handle->get() : nullptr;
        if (d == nullptr || item == nullptr) {
            return ferry::acl::reject("acltdtAddDataItem", "null or stale dataset or item");
        }
        if (d->data.filled_by_receive()) {
            return ferry::acl::reject("acltdtAddDataItem", "the dataset was filled by a receive",
                                      Status::feature_unsupported);
        }
        d->added.reserve(d->added.size() + 1); // so that the push_back below cannot fail
        if (handle->owner != nullptr) {
            return add_forwarded(*d, *item);
        }
        // The dataset keeps a descriptor copy (the payload stays borrowed): invalid_param for host
        // and device payloads mixed (docs/cann-contract/tdt.md#datasets).
        if (const Status s = d->data.add(*item); ferry::failed(s)) {
            return ferry::acl::reject("acltdtAddDataItem", ferry::name_of(s), s);
        }
        d->added.push_back(to_token(dataItem));
        return ACL_SUCCESS;
    });
}

size_t acltdtGetDatasetSize(const acltdtDataset* dataset) {
    const acltdtDataset* d = dataset_of(dataset);
    return d != nullptr ? d->data.size() : 0;
}

const char* acltdtGetDatasetName(const acltdtDataset* dataset) {
    const acltdtDataset* d = dataset_of(dataset);
    return d != nullptr ? d->data.name().c_str() : nullptr;
}

} // extern "C"
