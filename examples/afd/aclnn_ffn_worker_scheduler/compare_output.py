#!/usr/bin/env python3
"""Runs an example and compares its standard output with an expected file, line by line.

Usage: compare_output.py PROGRAM EXPECTED_FILE
"""
import difflib
import subprocess
import sys


def main() -> int:
    program, expected_path = sys.argv[1], sys.argv[2]
    result = subprocess.run([program], capture_output=True, text=True, timeout=60)
    sys.stderr.write(result.stderr)
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read().splitlines()
    actual = result.stdout.splitlines()
    if result.returncode != 0 or actual != expected:
        print(f"{program} exited with {result.returncode}; output differs from {expected_path}:")
        sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
            expected, actual, "expected", "actual", lineterm=""))
        return 1
    print(f"{len(actual)} lines as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
