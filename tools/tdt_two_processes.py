#!/usr/bin/env python3
"""Runs a TDT sample as two processes and compares each one's stdout with its expected file.

Usage: tdt_two_processes.py EXECUTABLE SEND_EXPECTED RECEIVE_EXPECTED

The channel must be shared between processes (FERRY_TDT_SHARED in the environment, see
docs/c-api.md, Channels shared between processes). Order, by observable state only:
  1. start `EXECUTABLE receive` and read its stdout up to the line "Receiver ready" (it holds its
     channel handle, so the channel exists);
  2. run `EXECUTABLE send` to completion;
  3. write a line to the receiver's stdin (the sender is done) and collect the rest of its output.
Exit status 0 when both exit 0 and print exactly the expected lines; otherwise a diff.

Two runs at once would meet on the sample's fixed channel name, so a run holds an exclusive lock
(a file in the temporary directory) throughout.
"""
import difflib
import fcntl
import os
import selectors
import subprocess
import sys
import tempfile
import time

READY = "[INFO]  Receiver ready"
LIMIT_S = 60


def read_until_ready(receiver: subprocess.Popen) -> list[str]:
    """The receiver's lines up to and including READY; stops early at EOF or after LIMIT_S."""
    lines = []
    selector = selectors.DefaultSelector()
    selector.register(receiver.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + LIMIT_S
    while not lines or lines[-1] != READY:
        if not selector.select(timeout=max(0.0, deadline - time.monotonic())):
            break  # no ready line in time: the comparison below reports it
        line = receiver.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
    selector.close()
    return lines


def differs(name: str, expected_path: str, status: int, lines: list[str], stderr: str) -> bool:
    with open(expected_path, encoding="utf-8") as f:
        expected = f.read().splitlines()
    if status == 0 and lines == expected:
        return False
    print(f"{name}: exit status {status}")
    sys.stdout.writelines(
        line + "\n"
        for line in difflib.unified_diff(expected, lines, "expected", "actual", lineterm="")
    )
    if stderr:
        print("stderr:\n" + stderr)
    return True


def run(exe: str, send_expected: str, receive_expected: str) -> int:
    receiver = subprocess.Popen([exe, "receive"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    try:
        received = read_until_ready(receiver)
        sender = subprocess.run([exe, "send"], capture_output=True, text=True, timeout=LIMIT_S)
        rest, receiver_err = receiver.communicate("\n", timeout=LIMIT_S)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    received += rest.splitlines()
    bad_send = differs(exe + " send", send_expected, sender.returncode,
                       sender.stdout.splitlines(), sender.stderr)
    bad_receive = differs(exe + " receive", receive_expected, receiver.returncode, received,
                          receiver_err)
    return 1 if bad_send or bad_receive else 0


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    lock_path = os.path.join(tempfile.gettempdir(), f"ferry-tdt-two-processes-{os.getuid()}.lock")
    with open(lock_path, "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return run(*sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
