#!/usr/bin/env python3
"""Adds up the results of every `meson test` run in the given build directories and prints the
plain closing line 'N passed, N failed' (skipped tests are counted separately). An argument that
is a file is read as a log itself, in testlog.json's format (tools/run_consumers.py writes one)."""
import json
import pathlib
import sys

passed = failed = skipped = 0
for build in sys.argv[1:]:
    log = pathlib.Path(build)
    if not log.is_file():
        log = log / "meson-logs" / "testlog.json"
    if not log.exists():
        continue
    for line in log.read_text().splitlines():
        if not line.strip():
            continue
        result = json.loads(line).get("result", "")
        if result in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif result == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
