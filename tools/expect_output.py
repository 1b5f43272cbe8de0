#!/usr/bin/env python3
"""Runs a program and checks its exit status and that its output contains given lines.

Usage: expect_output.py [--status N] [--unset VAR]... [--contains TEXT]... -- PROGRAM [ARGS...]

--status N    the exit status the program must end with (default 0)
--unset VAR   removes VAR from the program's environment (e.g. a secret, to see it refused)
--contains T  some line of stdout or stderr must contain T (each T checked on its own)
Exit status 0 when every expectation holds; otherwise it prints what differed and the output.
"""
import argparse
import os
import subprocess
import sys


def main() -> int:
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--unset", action="append", default=[])
    parser.add_argument("--contains", action="append", default=[])
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in args.unset}
    run = subprocess.run(args.command, capture_output=True, text=True, env=env,
                         timeout=args.timeout)
    lines = (run.stdout + run.stderr).splitlines()
    problems = [] if run.returncode == args.status else [
        f"exit status {run.returncode}, expected {args.status}"]
    problems += [f"no line contains {text!r}" for text in args.contains
                 if not any(text in line for line in lines)]
    if problems:
        print("\n".join(problems))
        print(f"stdout:\n{run.stdout}stderr:\n{run.stderr}")
        return 1
    print(run.stdout + run.stderr, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
