/*
 * ferry-acl compat header: CANN's acl/acl.h. CANN's acl.h includes acl_rt.h, acl_op.h and
 * acl_mdl.h — not acl_tdt.h, which callers include themselves. ferry implements no acl_op /
 * acl_mdl functions, so this includes the runtime header only. Compiles as C11 and as C++.
 */
#ifndef INC_EXTERNAL_ACL_ACL_H_
#define INC_EXTERNAL_ACL_ACL_H_

#include "acl_rt.h"

#endif /* INC_EXTERNAL_ACL_ACL_H_ */
