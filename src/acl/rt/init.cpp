// aclInit / aclFinalize over ferry::initialize / ferry::finalize (runtime/init.hpp), which hold
// CANN's semantics (docs/cann-contract/runtime.md#aclinit-and-aclfinalize): a repeated aclInit
// counts and returns ACL_ERROR_REPEAT_INITIALIZE; one aclFinalize ends everything whatever the
// count; a second one returns ACL_ERROR_REPEAT_FINALIZE.

#include "acl/acl_rt.h"
#include "boundary.hpp"

#include <ferry/runtime/init.hpp>

extern "C" {

ACL_FUNC_VISIBILITY aclError aclInit(const char* configPath) {
    return ferry::acl::guarded("aclInit", [&] { return ferry::initialize(configPath); });
}

ACL_FUNC_VISIBILITY aclError aclFinalize(void) {
    return ferry::acl::guarded("aclFinalize", [] { return ferry::finalize(); });
}

} // extern "C"
