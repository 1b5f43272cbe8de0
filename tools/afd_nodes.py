#!/usr/bin/env python3
"""Runs examples/net/afd_node as A attention and F FFN processes on 127.0.0.1.

Usage: afd_nodes.py AFD_NODE [--sessions A] [--ranks F] [--steps N] [--kill ffn|attention]

Without --kill: runs `AFD_NODE --role reference` (the same roles as threads in one process),
then starts F FFN ranks with `--listen 127.0.0.1:0`, reads each one's "listening HOST:PORT" line
(the real port), starts A attention nodes connected to all of them, and checks that every node
exits 0 with a report identical (digest, errors, rows) to the reference's, and that none of
them logged a lost peer: a run that ends well closes its connections, it loses none.

With --kill ffn (or attention): one FFN rank and one attention node; the victim is told
`--hold-after 3` and says "holding" when it stops; the script then kills it with SIGKILL and
checks that the survivor exits with status 4 (peer_lost) within BOUND_S, never hanging.

The environment carries the job's secret (FERRY_NET_SECRET) and UCX's settings (UCX_TLS=tcp).
Every wait is bounded; on any failure every process still running is killed.
"""
import argparse
import selectors
import signal
import subprocess
import sys
import tempfile
import time

LIMIT_S = 60  # a whole run
BOUND_S = 5.0  # peer loss: UCX reports a killed tcp peer in milliseconds, waits look every 20 ms
PEER_LOST = 4


class Job:
    def __init__(self, exe: str, common: list[str]):
        self.exe, self.common, self.procs, self.errs = exe, common, [], []
        self.deadline = time.monotonic() + LIMIT_S

    def start(self, args: list[str]) -> subprocess.Popen:
        # Unbuffered: a line read must not leave the next one in a buffer select() cannot see.
        err = tempfile.TemporaryFile()  # a file: a chatty process never blocks on a full pipe
        p = subprocess.Popen([self.exe, *args, *self.common], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=err, bufsize=0)
        self.procs.append(p)
        self.errs.append(err)
        return p

    def line(self, p: subprocess.Popen) -> str:
        """The next stdout line of p, or "" at EOF or when the run's time is up."""
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        if not sel.select(timeout=max(0.0, self.deadline - time.monotonic())):
            return ""
        return p.stdout.readline().decode(errors="replace").strip()

    def wait(self, p: subprocess.Popen, limit: float | None = None) -> int | None:
        left = self.deadline - time.monotonic() if limit is None else limit
        try:
            return p.wait(timeout=max(0.0, left))
        except subprocess.TimeoutExpired:
            return None

    def stderr_lines(self) -> list[str]:
        """What every process started so far wrote to stderr, line by line."""
        lines = []
        for err in self.errs:
            err.seek(0)
            lines += err.read().decode(errors="replace").splitlines()
        return lines

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()


def report(line: str) -> tuple[str, ...]:
    return tuple(line.split()[-3:]) if "report" in line else ("missing",)


def start_ffns(job: Job, ranks: int, sessions: int, hold: list[str]) -> list[str] | None:
    addresses = []
    for r in range(ranks):
        p = job.start(["--role", "ffn", "--listen", "127.0.0.1:0", "--rank", str(r),
                       "--ranks", str(ranks), "--sessions", str(sessions), *hold])
        line = job.line(p)
        if not line.startswith("listening "):
            print(f"ffn {r}: no address (got {line!r})")
            return None
        addresses.append(line.split()[1])
    return addresses


def run_pipeline(job: Job, sessions: int, ranks: int) -> bool:
    ref = subprocess.run([job.exe, "--role", "reference", "--sessions", str(sessions),
                          "--ranks", str(ranks), *job.common], capture_output=True, text=True,
                         timeout=LIMIT_S, check=False)
    expected = {" ".join(l.split()[:2]): report(l) for l in ref.stdout.splitlines()}
    if ref.returncode != 0:
        print(f"reference failed ({ref.returncode}): {ref.stdout}{ref.stderr}")
        return False
    addresses = start_ffns(job, ranks, sessions, [])
    if addresses is None:
        return False
    ffns = list(job.procs)
    atts = [job.start(["--role", "attention", "--connect", ",".join(addresses), "--session",
                       str(s), "--sessions", str(sessions)]) for s in range(sessions)]
    ok = True
    for who, p in [(f"session {s}", a) for s, a in enumerate(atts)] + \
                  [(f"ffn {r}", f) for r, f in enumerate(ffns)]:
        got = report(job.line(p))
        status = job.wait(p)
        same = status == 0 and got == expected.get(who) and got[1] == "0"
        print(f"  {who:10} digest {got[0]:>20} rows {got[-1]:>5} (reference "
              f"{expected.get(who, ('?',))[0]}) exit {status} -> {'identical' if same else 'DIFFERENT'}")
        ok = ok and same
    for line in job.stderr_lines():
        print(f"  stderr: {line}")
        if "lost peer" in line:
            print("  a node reported a lost peer in a run that ended well")
            ok = False
    return ok


def run_kill(job: Job, victim: str) -> bool:
    hold = ["--hold-after", "3"]
    addresses = start_ffns(job, 1, 1, hold if victim == "ffn" else [])
    if addresses is None:
        return False
    ffn = job.procs[0]
    att = job.start(["--role", "attention", "--connect", addresses[0], "--session", "0",
                     "--sessions", "1", *(hold if victim == "attention" else [])])
    dead, survivor = (ffn, att) if victim == "ffn" else (att, ffn)
    if job.line(dead) != "holding":
        print(f"{victim} did not hold")
        return False
    killed = time.monotonic()
    dead.send_signal(signal.SIGKILL)
    status = job.wait(survivor, BOUND_S)
    took = time.monotonic() - killed
    print(f"  {victim} killed: the survivor exited with {status} after {took * 1000:.0f} ms "
          f"(bound {BOUND_S * 1000:.0f} ms)")
    if status != PEER_LOST:
        print("\n".join(f"  stderr: {l}" for l in job.stderr_lines()))
    return status == PEER_LOST


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("exe")
    ap.add_argument("--sessions", type=int, default=2)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--kill", choices=["ffn", "attention"])
    a = ap.parse_args()
    steps = a.steps if a.kill is None else 100000  # a victim holds long before the end
    job = Job(a.exe, ["--steps", str(steps)])
    try:
        ok = run_kill(job, a.kill) if a.kill else run_pipeline(job, a.sessions, a.ranks)
    finally:
        job.kill_all()
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
