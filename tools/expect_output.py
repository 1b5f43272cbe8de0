#!/usr/bin/env python3
"""Runs a program and checks its exit status and that its output contains given lines.

Usage: expect_output.py [--status N] [--unset VAR]... [--set VAR=VALUE]... [--contains TEXT]...
                        [--lacks TEXT]... [--quiet-stderr] -- PROGRAM [ARGS...]

--status N      the exit status the program must end with (default 0)
--unset VAR     removes VAR from the program's environment (e.g. a secret, to see it refused)
--set VAR=V     sets VAR in the program's environment (e.g. FERRY_LOG_LEVEL=off)
--contains T    some line of stdout or stderr must contain T (each T checked on its own)
--lacks T       no line of stdout or stderr may contain T
--quiet-stderr  the program (children included) must write nothing to stderr
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
    parser.add_argument("--set", action="append", default=[])
    parser.add_argument("--contains", action="append", default=[])
    parser.add_argument("--lacks", action="append", default=[])
    parser.add_argument("--quiet-stderr", action="store_true")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k not in args.unset}
    for assignment in args.set:
        name, _, value = assignment.partition("=")
        env[name] = value
    run = subprocess.run(args.command, capture_output=True, text=True, env=env,
                         timeout=args.timeout)
    lines = (run.stdout + run.stderr).splitlines()
    problems = [] if run.returncode == args.status else [
        f"exit status {run.returncode}, expected {args.status}"]
    problems += [f"no line contains {text!r}" for text in args.contains
                 if not any(text in line for line in lines)]
    problems += [f"a line contains {text!r}" for text in args.lacks
                 if any(text in line for line in lines)]
    if args.quiet_stderr and run.stderr:
        problems.append("stderr is not empty")
    if problems:
        print("\n".join(problems))
        print(f"stdout:\n{run.stdout}stderr:\n{run.stderr}")
        return 1
    print(run.stdout + run.stderr, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
