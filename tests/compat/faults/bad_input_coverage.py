#!/usr/bin/env python3
"""Every C function ferry-acl exports has rows in the bad-input table, and every row names an
exported function.

Usage: bad_input_coverage.py NM LIBRARY TABLE_SOURCE...

The exported functions are the library's defined dynamic `acl*` symbols (nm -D); the table's
functions are the first argument of each BAD_INPUT(...) / NO_BAD_INPUT(...) in the sources
(bad_inputs.hpp). A newly exported function without rows fails this test.
"""
import re
import subprocess
import sys

ROW = re.compile(r"\b(?:NO_)?BAD_INPUT\(\s*(\w+)\s*,")


def main() -> int:
    nm, library, sources = sys.argv[1], sys.argv[2], sys.argv[3:]
    out = subprocess.run([nm, "-D", "--defined-only", library], check=True, capture_output=True,
                         text=True).stdout
    exported = set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[1] == "T" and fields[2].startswith("acl"):
            exported.add(fields[2])
    rows = {}
    for path in sources:
        with open(path, encoding="utf-8") as f:
            for name in ROW.findall(f.read()):
                if name != "fn":  # the macros' own definitions
                    rows[name] = rows.get(name, 0) + 1
    missing = sorted(exported - rows.keys())
    unknown = sorted(rows.keys() - exported)
    for name in missing:
        print(f"exported but no bad-input row: {name}")
    for name in unknown:
        print(f"row for a function the library does not export: {name}")
    print(f"{len(exported)} exported functions, {len(rows)} in the table, "
          f"{sum(rows.values())} row sites")
    return 1 if missing or unknown or not exported else 0


if __name__ == "__main__":
    sys.exit(main())
