#!/usr/bin/env python3
"""Tests ferry-inspect against segments made by real processes.

Usage: inspect.py FERRY_INSPECT INSPECT_HELPER

1. Two helpers each create a typed channel and say "ready"; the second is then SIGKILLed (and
   reaped), which leaves its channel stale.
2. `list --json`: the live channel shows the first helper's pid alive and is not stale; the
   stale one shows the killed pid dead and is stale. A foreign file (ferry.<name> holding no
   ferry header) is listed with a problem, not trusted.
   Both channels show the counters their helper kept in the segment: one item sent (a total
   derived from the ring) and one receive that found it empty (in the helper's slot).
3. `show --json` on the stale one gives every header field and every counter of the killed
   helper's slot; `show` as text prints them too.
4. `gc NAMES --json` (only this test's names: /dev/shm is shared with other tests) removes the
   stale one and nothing else; the live one and the foreign file are still there.
5. The live helper closes its channel and exits 0, which removes the name.
6. Name domains: a helper run with FERRY_NAMESPACE makes /dev/shm/ferry@<domain>.<name>; `list`
   shows it under its domain (and the default domain's segments under ""), `show DOMAIN/NAME`
   reads it.
"""
import json
import os
import signal
import subprocess
import sys

SHM = "/dev/shm"


def inspect(tool, *args):
    run = subprocess.run([tool, *args], capture_output=True, text=True, timeout=30)
    return run.returncode, run.stdout, run.stderr


def start_holder(helper, name, domain=None):
    env = dict(os.environ)
    env.pop("FERRY_NAMESPACE", None)
    if domain:
        env["FERRY_NAMESPACE"] = domain
    child = subprocess.Popen([helper, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, env=env)
    line = child.stdout.readline().strip()
    assert line == "ready", f"helper for {name} said {line!r}"
    return child


def by_name(reports, name, domain=""):
    found = [r for r in reports if r["name"] == name and r["namespace"] == domain]
    assert len(found) == 1, f"{name} listed {len(found)} times"
    return found[0]


def check_list(tool, live, stale, foreign, holder, victim):
    status, out, err = inspect(tool, "list", "--json")
    assert status == 0, f"list exited {status}: {err}"
    reports = json.loads(out)
    r = by_name(reports, live)
    assert r["kind"] == "typed channel" and r["problem"] is None, r
    assert not r["stale"] and r["ring"]["capacity"] == 4 and r["ring"]["queued"] == 1, r
    assert [(p["pid"], p["alive"]) for p in r["participants"]] == [(holder.pid, True)], r
    assert r["counters"]["total"]["sent"] == 1 and r["counters"]["total"]["sent_bytes"] == 8, r
    assert r["counters"]["total"]["received"] == 0, r
    r = by_name(reports, stale)
    assert r["stale"] and r["kind"] == "typed channel", r
    assert [(p["pid"], p["alive"]) for p in r["participants"]] == [(victim.pid, False)], r
    assert r["counters"]["total"]["sent"] == 1, r
    r = by_name(reports, foreign)
    assert r["problem"] and "not a ferry segment" in r["problem"] and r["header"] is None, r


def check_show(tool, stale, victim):
    status, out, err = inspect(tool, "show", stale, "--json")
    assert status == 0, f"show exited {status}: {err}"
    report = json.loads(out)
    h = report["header"]
    assert h["creator_pid"] == victim.pid and h["layout_name"] == "ferry.ipc.channel", h
    assert h["ready"] == "ready" and h["same_boot"] and h["payload_offset"] == 12288, h
    slots = report["counters"]["by_slot"]
    assert len(slots) == 1 and slots[0]["slot"] == 0, slots
    # A typed channel's slot blocks hold no message totals (those come from its ring).
    expected = {"slot": 0, "sent": 0, "sent_bytes": 0, "received": 0, "received_bytes": 0,
                "full": 0, "empty": 1, "send_blocked_ns": 0, "receive_blocked_ns": 0,
                "high_water": 0, "dropped_by_clear": 0, "refused": 0}
    assert slots[0] == expected, slots
    assert report["counters"]["total"]["sent"] == 1, report["counters"]
    assert report["counters"]["total"]["empty"] == 1, report["counters"]
    status, out, err = inspect(tool, "show", stale)
    assert status == 0 and "counters, all processes: sent 1 sent_bytes 8" in out, out + err
    assert "counters, slot 0: sent 0 sent_bytes 0 received 0 received_bytes 0 full 0 empty 1" \
        in out, out + err


def check_domain(tool, helper, name):
    domain = f"job-{os.getpid()}"
    holder = start_holder(helper, name, domain)
    try:
        assert os.path.exists(os.path.join(SHM, f"ferry@{domain}.{name}")), "not in its domain"
        assert not os.path.exists(os.path.join(SHM, "ferry." + name)), "in the default domain"
        status, out, err = inspect(tool, "list", "--json")
        assert status == 0, f"list exited {status}: {err}"
        r = by_name(json.loads(out), name, domain)
        assert r["kind"] == "typed channel" and r["problem"] is None, r
        status, out, err = inspect(tool, "list")
        assert any(line.split()[:2] == [domain, name] for line in out.splitlines()), out
        status, out, err = inspect(tool, "show", f"{domain}/{name}", "--json")
        assert status == 0 and json.loads(out)["namespace"] == domain, f"{status} {out} {err}"
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=30) == 0, "the helper in a domain failed"
    assert not os.path.exists(os.path.join(SHM, f"ferry@{domain}.{name}")), "left behind"


def main() -> int:
    tool, helper = sys.argv[1], sys.argv[2]
    base = f"inspect-{os.getpid()}"
    live, stale, foreign = base + "-live", base + "-stale", base + "-foreign"
    foreign_path = os.path.join(SHM, "ferry." + foreign)
    fd = os.open(foreign_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    os.write(fd, b"not a segment header" * 200)
    os.close(fd)
    holder = start_holder(helper, live)
    try:
        victim = start_holder(helper, stale)
        victim.kill()
        victim.wait()
        check_list(tool, live, stale, foreign, holder, victim)
        check_show(tool, stale, victim)
        status, out, err = inspect(tool, "gc", live, stale, foreign, "--json")
        assert status == 0, f"gc exited {status}: {out} {err}"
        assert json.loads(out) == {"removed": [stale], "kept": []}, out
        assert not os.path.exists(os.path.join(SHM, "ferry." + stale)), "stale one still there"
        assert os.path.exists(os.path.join(SHM, "ferry." + live)), "gc removed the live one"
        assert os.path.exists(foreign_path), "gc removed the foreign file"
    finally:
        holder.stdin.close()
        holder_status = holder.wait(timeout=30)
        os.unlink(foreign_path)
        if os.path.exists(os.path.join(SHM, "ferry." + stale)):  # a failed run: leave nothing
            os.unlink(os.path.join(SHM, "ferry." + stale))
    assert holder_status == 0, f"the live helper exited {holder_status}"
    assert not os.path.exists(os.path.join(SHM, "ferry." + live)), "live one left behind"
    check_domain(tool, helper, base + "-domain")
    print("ferry-inspect: live, stale and foreign segments reported; gc removed the stale one")
    return 0


if __name__ == "__main__":
    sys.exit(main())
