/*
 * ferry-acl compat header: CANN's acl/acl_tdt.h — the 23 acltdt* functions with CANN's spellings,
 * prototypes and enum values (docs/cann-contract/tdt.md#functions-and-enums). Written for ferry;
 * no CANN source is reproduced.
 *
 * Unlike CANN's header this one compiles as C11 as well as C++: CANN declares a plain
 * `enum acltdtTensorType` and then uses the bare name in prototypes, which only C++ accepts; here
 * the enum is also typedef'd (docs/cann-contract/tdt.md#functions-and-enums). Behaviour, and where
 * ferry differs from CANN: docs/c-api.md ("TDT").
 */
#ifndef INC_EXTERNAL_ACL_ACL_TDT_H_
#define INC_EXTERNAL_ACL_ACL_TDT_H_

#include "acl/acl_base.h"

#ifdef __cplusplus
extern "C" {
#endif

enum acltdtTensorType {
    ACL_TENSOR_DATA_UNDEFINED = -1,
    ACL_TENSOR_DATA_TENSOR = 0,
    ACL_TENSOR_DATA_END_OF_SEQUENCE = 1,
    ACL_TENSOR_DATA_ABNORMAL = 2,
    ACL_TENSOR_DATA_SLICE_TENSOR = 3,
    ACL_TENSOR_DATA_END_TENSOR = 4
};
typedef enum acltdtTensorType acltdtTensorType;

typedef struct acltdtDataItem acltdtDataItem;
typedef struct acltdtDataset acltdtDataset;
typedef struct acltdtChannelHandle acltdtChannelHandle;

/* Item accessors. A null (or not live) item gives UNDEFINED / ACL_DT_UNDEFINED / NULL / 0. */
ACL_FUNC_VISIBILITY acltdtTensorType acltdtGetTensorTypeFromItem(const acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY aclDataType acltdtGetDataTypeFromItem(const acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY void *acltdtGetDataAddrFromItem(const acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY size_t acltdtGetDataSizeFromItem(const acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY size_t acltdtGetDimNumFromItem(const acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY aclError acltdtGetSliceInfoFromItem(const acltdtDataItem *dataItem,
                                                        size_t *sliceNum, size_t *sliceId);
ACL_FUNC_VISIBILITY aclError acltdtGetDimsFromItem(const acltdtDataItem *dataItem, int64_t *dims,
                                                   size_t dimNum);

/* Items borrow `data` (not copied, not owned); a send copies it into the message. */
ACL_FUNC_VISIBILITY acltdtDataItem *acltdtCreateDataItem(acltdtTensorType tdtType,
                                                         const int64_t *dims, size_t dimNum,
                                                         aclDataType dataType, void *data,
                                                         size_t size);
ACL_FUNC_VISIBILITY aclError acltdtDestroyDataItem(acltdtDataItem *dataItem);

/* Datasets. Destroying one frees the items a receive put in it, never the items a user added. */
ACL_FUNC_VISIBILITY acltdtDataset *acltdtCreateDataset(void);
ACL_FUNC_VISIBILITY aclError acltdtDestroyDataset(acltdtDataset *dataset);
ACL_FUNC_VISIBILITY acltdtDataItem *acltdtGetDataItem(const acltdtDataset *dataset, size_t index);
ACL_FUNC_VISIBILITY aclError acltdtAddDataItem(acltdtDataset *dataset, acltdtDataItem *dataItem);
ACL_FUNC_VISIBILITY size_t acltdtGetDatasetSize(const acltdtDataset *dataset);
ACL_FUNC_VISIBILITY const char *acltdtGetDatasetName(const acltdtDataset *dataset);

/* Channels. Timeouts are in ms: -1 waits forever, 0 never waits. */
ACL_FUNC_VISIBILITY aclError acltdtStopChannel(acltdtChannelHandle *handle);
ACL_FUNC_VISIBILITY acltdtChannelHandle *acltdtCreateChannel(uint32_t deviceId, const char *name);
ACL_FUNC_VISIBILITY acltdtChannelHandle *acltdtCreateChannelWithCapacity(uint32_t deviceId,
                                                                         const char *name,
                                                                         size_t capacity);
ACL_FUNC_VISIBILITY aclError acltdtDestroyChannel(acltdtChannelHandle *handle);
ACL_FUNC_VISIBILITY aclError acltdtCleanChannel(acltdtChannelHandle *handle);
ACL_FUNC_VISIBILITY aclError acltdtSendTensor(const acltdtChannelHandle *handle,
                                              const acltdtDataset *dataset, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtReceiveTensor(const acltdtChannelHandle *handle,
                                                 acltdtDataset *dataset, int32_t timeout);
ACL_FUNC_VISIBILITY aclError acltdtQueryChannelSize(const acltdtChannelHandle *handle,
                                                    size_t *size);

#ifdef __cplusplus
}
#endif

#endif /* INC_EXTERNAL_ACL_ACL_TDT_H_ */
