#!/usr/bin/env python3
"""Runs an example and compares its stdout with an expected file, line by line.

Usage: compare_output.py EXECUTABLE EXPECTED_FILE
Exit status 0 when the example exits 0 and prints exactly the expected lines; otherwise a diff.
"""
import difflib
import subprocess
import sys


def main() -> int:
    exe, expected_path = sys.argv[1], sys.argv[2]
    run = subprocess.run([exe], capture_output=True, text=True, timeout=120)
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read().splitlines()
    actual = run.stdout.splitlines()
    if run.returncode != 0 or actual != expected:
        print(f"{exe}: exit status {run.returncode}")
        sys.stdout.writelines(
            line + "\n"
            for line in difflib.unified_diff(expected, actual, "expected", "actual", lineterm="")
        )
        if run.stderr:
            print("stderr:\n" + run.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
