// acltdt* items and datasets (tdt_facts.md §2.1–§2.3, spec/tdt.md §1 and §4): argument checks and
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

using ferry::Status;
using ferry::acl::HandleKind;
using ferry::acl::Shim;

namespace {

// The item behind a C pointer, or nullptr when it is not a live item (or a view whose item a
// later receive dropped).
const ferry::DataItem* item_of(const acltdtDataItem* p) noexcept {
    return Shim::get().live(p, HandleKind::item) ? p->get() : nullptr;
}

acltdtDataset* dataset_of(const acltdtDataset* p) noexcept {
    return Shim::get().live(p, HandleKind::dataset) ? const_cast<acltdtDataset*>(p) : nullptr;
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

// tdt_facts.md §2.1: the checks in CANN's order; a larger dimNum than the item has is fine.
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
        auto made = ferry::DataItem::borrow(static_cast<ferry::TensorKind>(ferry::acl::raw_value(tdtType)), dims, dimNum,
                                            static_cast<ferry::DType>(ferry::acl::raw_value(dataType)), data, size);
        if (!made) {
            ferry::acl::reject("acltdtCreateDataItem",
                               "dims/dimNum/kind rejected (CANN's creation rules)", made.status());
            return nullptr;
        }
        auto item = std::make_unique<acltdtDataItem>();
        item->own = std::move(made).value();
        Shim::get().add(item.get(), HandleKind::item);
        return item.release();
    });
}

aclError acltdtDestroyDataItem(acltdtDataItem* dataItem) {
    if (!Shim::get().live(dataItem, HandleKind::item)) {
        return ferry::acl::reject(__func__, "not a live item (null, stale or destroyed)");
    }
    if (dataItem->owner != nullptr) {
        // ferry differs: CANN deletes it and the dataset deletes it again (a double free).
        return ferry::acl::reject(__func__, "the item belongs to a received dataset");
    }
    Shim::get().remove(dataItem);
    delete dataItem;
    return ACL_SUCCESS;
}

acltdtDataset* acltdtCreateDataset(void) {
    return ferry::acl::guarded_value<acltdtDataset*>(__func__, nullptr, [&] {
        auto dataset = std::make_unique<acltdtDataset>();
        Shim::get().add(dataset.get(), HandleKind::dataset);
        return dataset.release();
    });
}

// Frees the dataset and the items a receive put in it; items the user added stay alive (CANN's
// freeSelf rule, tdt_facts.md §2.3: callers destroy those themselves).
aclError acltdtDestroyDataset(acltdtDataset* dataset) {
    acltdtDataset* d = dataset_of(dataset);
    if (d == nullptr) {
        return ferry::acl::reject(__func__, "not a live dataset (null, stale or destroyed)");
    }
    for (const auto& view : d->views) {
        Shim::get().remove(view.get());
    }
    Shim::get().remove(d);
    delete d;
    return ACL_SUCCESS;
}

acltdtDataItem* acltdtGetDataItem(const acltdtDataset* dataset, size_t index) {
    const acltdtDataset* d = dataset_of(dataset);
    if (d == nullptr || index >= d->data.size()) {
        return nullptr;
    }
    if (d->data.filled_by_receive()) {
        return index < d->views.size() ? d->views[index].get() : nullptr;
    }
    return index < d->added.size() ? d->added[index] : nullptr;
}

aclError acltdtAddDataItem(acltdtDataset* dataset, acltdtDataItem* dataItem) {
    return ferry::acl::guarded(__func__, [&]() -> aclError {
        acltdtDataset* d = dataset_of(dataset);
        const ferry::DataItem* item = item_of(dataItem);
        if (d == nullptr || item == nullptr) {
            return ferry::acl::reject("acltdtAddDataItem", "null or stale dataset or item");
        }
        d->added.reserve(d->added.size() + 1); // so the push_back below cannot fail
        // The dataset keeps a descriptor copy (the payload stays borrowed): feature_unsupported
        // after a receive, invalid_param for host and device payloads mixed (tdt_facts.md §2.3).
        // An item of a received dataset lives in that dataset's message buffer, which its next
        // receive or its destruction reuses; ferry copies such a payload (CANN keeps a pointer
        // that dangles then).
        ferry::DataItem copy;
        if (dataItem->owner != nullptr) {
            ferry::Result<ferry::DataItem> copied = item->to_owning();
            if (!copied) {
                return ferry::acl::reject("acltdtAddDataItem", "copying a received item",
                                          copied.status());
            }
            copy = std::move(*copied);
            item = &copy;
        }
        const Status s = dataItem->owner != nullptr ? d->data.add(std::move(copy))
                                                    : d->data.add(*item);
        if (ferry::failed(s)) {
            return ferry::acl::reject("acltdtAddDataItem", ferry::name_of(s), s);
        }
        d->added.push_back(dataItem);
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
