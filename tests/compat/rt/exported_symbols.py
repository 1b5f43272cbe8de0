#!/usr/bin/env python3
"""ferry-acl's shared library exports the C API and ferry's process state, nothing else.

Usage: exported_symbols.py NM LIBRARY

Allowed defined dynamic symbols (src/acl/rt/ferry-acl.map says why):
  - C symbols starting with "acl" (acl*, aclrt*, acltdt*, aclnn*), each a function (T);
  - the ferry process-state objects listed in PROCESS_STATE (rt/process_state.hpp);
  - function-local statics of the C++ standard library (_ZZ...St / _ZGVZ...St), which are
    process-unique by design.
Anything else (a ferry function, a Boost or std template instantiation, a stray C symbol) fails,
and so does a missing entry point of the C API.
"""
import re
import subprocess
import sys

PROCESS_STATE = {
    "_ZZN5ferry6detail6keeperEvE8instance", "_ZGVZN5ferry6detail6keeperEvE8instance",
    "_ZZN5ferry6detail9acl_stateEvE5state", "_ZGVZN5ferry6detail9acl_stateEvE5state",
    "_ZZN5ferry6detail9log_stateEvE5state", "_ZGVZN5ferry6detail9log_stateEvE5state",
    "_ZZN5ferry8profilerEvE8instance", "_ZGVZN5ferry8profilerEvE8instance",
    "_ZZN5ferry16message_channelsEvE8instance", "_ZGVZN5ferry16message_channelsEvE8instance",
    "_ZN5ferry6detail13log_thresholdE", "_ZN5ferry6detail15pointer_locatorE",
    "_ZN5ferry6detail19profilers_recordingE",
    "_ZN5ferry6detail15current_contextE", "_ZTHN5ferry6detail15current_contextE",
    "_ZTWN5ferry6detail15current_contextE",
}
STD_LOCAL_STATIC = re.compile(r"^_Z(GV)?ZN?K?St")
REQUIRED = [
    "aclInit", "aclFinalize", "aclrtSetDevice", "aclrtResetDevice", "aclrtResetDeviceForce",
    "aclrtGetDevice", "aclrtGetDeviceCount", "aclrtSynchronizeDevice", "aclrtCreateContext",
    "aclrtDestroyContext", "aclrtSetCurrentContext", "aclrtGetCurrentContext", "aclrtCreateStream",
    "aclrtDestroyStream", "aclrtSynchronizeStream", "aclrtCreateEvent", "aclrtDestroyEvent",
    "aclrtRecordEvent", "aclrtSynchronizeEvent", "aclrtMalloc", "aclrtFree", "aclrtMallocHost",
    "aclrtFreeHost", "aclrtMemcpy", "aclrtMemcpyAsync", "aclrtMemset", "aclCreateTensor",
    "aclDestroyTensor", "aclnnInplaceFfnWorkerSchedulerGetWorkspaceSize",
    "aclnnInplaceFfnWorkerScheduler", "aclGetRecentErrMsg", "aclDataTypeSize", "aclrtResetEvent",
    "aclrtSubscribeReport", "aclrtLaunchCallback", "aclrtProcessReport", "aclrtUnSubscribeReport",
]


def main() -> int:
    nm, library = sys.argv[1], sys.argv[2]
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            symbols[fields[2]] = fields[1]
    bad = []
    for name, kind in sorted(symbols.items()):
        if name.startswith("acl"):
            if kind != "T":
                bad.append(f"{name} ({kind}): a C API symbol that is not a function")
        elif name in PROCESS_STATE or STD_LOCAL_STATIC.match(name):
            continue
        else:
            bad.append(f"{name} ({kind})")
    missing = [name for name in REQUIRED if symbols.get(name) != "T"]
    for name in bad:
        print(f"unexpected export: {name}")
    for name in missing:
        print(f"missing export: {name}")
    c_api = sum(1 for name in symbols if name.startswith("acl"))
    print(f"{len(symbols)} exported symbols: {c_api} C API functions, "
          f"{len(symbols) - c_api} process-state objects")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
