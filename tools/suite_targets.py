#!/usr/bin/env python3
"""Prints the ninja targets (paths relative to the build directory) that the tests of one suite
need, so CI can build just those: `ninja -C BUILD $(tools/suite_targets.py BUILD SUITE)`."""
import json
import os
import subprocess
import sys

build, suite = sys.argv[1], sys.argv[2]


def introspect(what):
    out = subprocess.run(["meson", "introspect", build, what], check=True, capture_output=True)
    return json.loads(out.stdout)


files_by_id = {t["id"]: t["filename"] for t in introspect("--targets")}
wanted = set()
for test in introspect("--tests"):
    if not any(s == suite or s.endswith(":" + suite) for s in test["suite"]):
        continue
    for target_id in test["depends"]:
        for path in files_by_id.get(target_id, []):
            wanted.add(os.path.relpath(path, os.path.abspath(build)))
print(" ".join(sorted(wanted)))
