#!/usr/bin/env python3
"""Kills each role of examples/ipc/afd_processes mid-run and checks that the others end promptly.

Usage: afd_kill.py AFD_PROCESSES [STEPS] [SEED]

For each victim (the FFN, attention 0, attention 1), by observable state only:
  1. start the roles as afd_processes does (`ffn PREFIX STEPS norm`, `attention PREFIX STEPS S`)
     with AFD_PROGRESS set, read each one's "ready", then close the FFN's stdin;
  2. read the victim's progress lines up to "step K" (K drawn from SEED, different per victim;
     the victim, started with AFD_HOLD_AT=K, stops there) and SIGKILL it;
  3. every survivor must exit within LIMIT_S of the kill, with a non-zero status and a line on
     stderr naming the victim ("... attention 0 (pid N) was lost");
  4. nothing named after the run's prefix may be left in /dev/shm.
Exit status 0 when every case holds; otherwise the failures, one a line.
"""
import os
import random
import selectors
import signal
import subprocess
import sys
import time

LIMIT_S = float(os.environ.get("AFD_KILL_LIMIT_S", "1.0"))
START_S = 30.0  # bound on reaching "ready" and "step K"


class Role:
    def __init__(self, exe: str, name: str, args: list[str], hold_at: int | None = None):
        env = dict(os.environ, AFD_PROGRESS="1")
        if hold_at is not None:  # it stops after "step hold_at" until killed
            env["AFD_HOLD_AT"] = str(hold_at)
        self.name = name
        # Unbuffered bytes: a line read must not pull the next ones into a buffer that select()
        # cannot see (a victim holding at its step writes nothing more).
        self.proc = subprocess.Popen([exe] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, bufsize=0)

    def read_until(self, wanted: str, limit_s: float) -> bool:
        """Reads stdout lines until `wanted`; false at EOF or after limit_s."""
        selector = selectors.DefaultSelector()
        selector.register(self.proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + limit_s
        try:
            while selector.select(timeout=max(0.0, deadline - time.monotonic())):
                line = self.proc.stdout.readline().decode()
                if not line:
                    return False
                if line.rstrip("\n") == wanted:
                    return True
            return False
        finally:
            selector.close()


def run_case(exe: str, steps: int, victim: str, step: int, prefix: str) -> list[str]:
    def hold(name: str) -> int | None:
        return step if name == victim else None

    roles = {"ffn": Role(exe, "ffn", ["ffn", prefix, str(steps), "norm"], hold("ffn"))}
    failures = []
    try:
        if not roles["ffn"].read_until("ready", START_S):
            return [f"{victim}: the ffn did not get ready"]
        for s in (0, 1):
            name = f"attention {s}"
            roles[name] = Role(exe, name, ["attention", prefix, str(steps), str(s)], hold(name))
            if not roles[name].read_until("ready", START_S):
                return [f"{victim}: {name} did not get ready"]
        roles["ffn"].proc.stdin.close()
        if not roles[victim].read_until(f"step {step}", START_S):
            return [f"{victim}: it never reported step {step}"]
        roles[victim].proc.send_signal(signal.SIGKILL)
        killed_at = time.monotonic()
        roles[victim].proc.wait()
        for name, role in roles.items():
            if name == victim:
                continue
            try:  # its few progress lines fit in the pipe: waiting cannot block it
                role.proc.wait(timeout=max(0.0, killed_at + LIMIT_S - time.monotonic()))
                err = role.proc.stderr.read().decode()
            except subprocess.TimeoutExpired:
                failures.append(f"{victim} killed at step {step}: {name} still ran after "
                                f"{LIMIT_S} s")
                continue
            took = time.monotonic() - killed_at
            print(f"  {victim} killed at step {step}: {name} ended in {took:.3f} s, "
                  f"status {role.proc.returncode}: {err.strip()}")
            if role.proc.returncode == 0:
                failures.append(f"{victim} killed: {name} exited 0")
            if f"{victim} (pid {roles[victim].proc.pid}) was lost" not in err:
                failures.append(f"{victim} killed: {name} did not name it: {err.strip()!r}")
    finally:
        for role in roles.values():
            if role.proc.poll() is None:
                role.proc.kill()
            role.proc.wait()
    left = [e for e in os.listdir("/dev/shm") if e.startswith("ferry." + prefix)]
    for entry in left:
        failures.append(f"{victim} killed: /dev/shm/{entry} was left behind")
        os.unlink("/dev/shm/" + entry)
    return failures


def main() -> int:
    exe = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else random.randrange(1 << 30)
    print(f"seed {seed} (rerun with: {sys.argv[0]} {exe} {steps} {seed})")
    draw = random.Random(seed)
    failures = []
    for victim in ("ffn", "attention 0", "attention 1"):
        # A step with work left after it for every role: the survivors need the victim.
        step = draw.randrange(1, steps - 4)
        prefix = f"afd-kill-{os.getpid()}-{victim.replace(' ', '')}"
        failures += run_case(exe, steps, victim, step, prefix)
    for f in failures:
        print("FAILED: " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
