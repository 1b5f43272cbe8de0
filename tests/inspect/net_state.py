#!/usr/bin/env python3
"""Tests ferry/net's state files and `ferry-inspect net` against real processes.

Usage: net_state.py FERRY_INSPECT NET_STATE_HELPER   (environment: UCX settings, the secret)

1. A private directory (0700) is FERRY_NET_STATE_DIR. Two helpers each start two connected
   nodes, so four state files appear (ferry-net-<pid>-<n>.json), each listing one live peer;
   one node of each serves a channel holding 3 messages nobody took, the other sends on it;
   the second helper is then SIGKILLed: its files stay.
2. `net DIR --json`: the first helper's files are live, mode 0600, and their state names the
   peer alive with its address; the channels are listed: the receiver with queued == 3, the
   sender with the credits the helper saw it hold. The killed helper's files are stale. A file
   with another mode is reported as not trusted, without its text. `net` as text marks the
   stale ones and shows a line per channel.
3. The first helper exits normally: its nodes remove their files.
4. A directory others may write to is refused: each node logs why when it starts, and nothing
   is written there.
"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import time


def inspect(tool, *args):
    run = subprocess.run([tool, *args], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, f"ferry-inspect {args} exited {run.returncode}: {run.stderr}"
    return run.stdout


QUEUED = 3  # the messages the helper's receiver holds (net_state_helper.cpp)


def start_helper(helper, env, stderr=None):
    """Starts the helper; its line says "ready <sender credits> <receiver queue>"."""
    child = subprocess.Popen([helper], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=env, stderr=stderr)
    line = child.stdout.readline().split()
    assert len(line) == 3 and line[0] == "ready", f"helper said {line!r}"
    child.credits, child.queued = int(line[1]), int(line[2])
    assert child.queued == QUEUED and child.credits > 0, line
    return child


def files_of(directory, pid):
    return sorted(f for f in os.listdir(directory) if f.startswith(f"ferry-net-{pid}-"))


def wait_for(condition, what, limit=20.0):
    """Polls (bounded) for state the nodes publish every 500 ms: never a fixed sleep. `what`
    is a text, or a function giving one (called when the wait fails: what was seen last)."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, \
            f"timed out waiting for {what() if callable(what) else what}"
        time.sleep(0.05)


def states(tool, directory):
    return {r["file"]: r for r in json.loads(inspect(tool, "net", directory, "--json"))}


def channel_ends(states_of_helper):
    return {c["role"]: c for s in states_of_helper for c in s["channels"]}


def published_channels(tool, directory, child):
    found = [r["state"] for f, r in states(tool, directory).items()
             if f.startswith(f"ferry-net-{child.pid}-") and r["state"]]
    return [c for text in found for c in json.loads(text).get("channels", [])]


def settled(tool, directory, child):
    """Both files of the helper list their peer, and were written after its messages were
    queued: the receiver shows them, the sender the credits the helper saw it hold."""
    found = [r for f, r in states(tool, directory).items()
             if f.startswith(f"ferry-net-{child.pid}-")]
    if len(found) != 2 or not all(r["state"] for r in found):
        return False
    parsed = [json.loads(r["state"]) for r in found]
    ends = channel_ends(parsed)
    return (all(len(s["peers"]) == 1 and len(s["channels"]) == 1 for s in parsed) and
            sorted(ends) == ["receiver", "sender"] and
            ends["receiver"]["queued"] == child.queued and
            ends["sender"]["credits"] == child.credits)


def check_channels(states_of_holder):
    """The rest of what the channel ends say."""
    ends = channel_ends(states_of_holder)
    receiver, sender = ends["receiver"], ends["sender"]
    assert receiver["name"] == sender["name"] == "state-probe", ends
    assert receiver["capacity"] == sender["capacity"] == 8, ends
    # The receiver lent its senders the credits they hold: it keeps the rest.
    assert receiver["credits"] == 8 - QUEUED - sender["credits"], ends
    # Each names the other's node by its own peer id.
    assert len(receiver["peers"]) == 1 and len(sender["peers"]) == 1, ends
    for end in (receiver, sender):
        assert not end["stopped"] and not end["lost"], end


def check_live_and_stale(tool, directory, holder, victim):
    reports = states(tool, directory)
    holder_states = []
    for name in files_of(directory, holder.pid):
        r = reports[name]
        assert not r["stale"] and r["problem"] is None, r
        assert stat.S_IMODE(os.stat(os.path.join(directory, name)).st_mode) == 0o600, name
        state = json.loads(r["state"])
        assert state["pid"] == holder.pid, state
        peer = state["peers"][0]
        assert peer["alive"] and peer["address"] and peer["lost_reason"] == "", state
        holder_states.append(state)
    check_channels(holder_states)
    victim_files = files_of(directory, victim.pid)
    assert len(victim_files) == 2, victim_files
    for name in victim_files:
        assert reports[name]["stale"], reports[name]
    text = inspect(tool, "net", directory)
    assert f"{victim_files[0]}  pid {victim.pid}  stale" in text, text
    assert text.count('"role": "receiver"') == 2 and text.count('"role": "sender"') == 2, text


def check_untrusted(tool, directory):
    name = "ferry-net-1-9.json"
    path = os.path.join(directory, name)
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    os.write(fd, b'{"pid": 1}')
    os.close(fd)
    os.chmod(path, 0o644)
    r = states(tool, directory)[name]
    assert r["problem"] and "mode" in r["problem"] and r["state"] is None, r
    os.unlink(path)


def check_refused_directory(helper, env):
    with tempfile.TemporaryDirectory(prefix="ferry-net-open-") as open_dir:
        os.chmod(open_dir, 0o777)
        child = start_helper(helper, dict(env, FERRY_NET_STATE_DIR=open_dir), subprocess.PIPE)
        child.stdin.close()
        assert child.wait(timeout=30) == 0
        log = child.stderr.read()
        # Both nodes said so when they started, before any state would have been written.
        assert log.count("writable by others; this node publishes no state") == 2, log
        assert os.listdir(open_dir) == [], os.listdir(open_dir)


def main() -> int:
    tool, helper = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="ferry-net-state-") as directory:
        os.chmod(directory, 0o700)
        env = dict(os.environ, FERRY_NET_STATE_DIR=directory)
        holder = start_helper(helper, env)
        try:
            victim = start_helper(helper, env)
            for child in (holder, victim):
                wait_for(lambda: settled(tool, directory, child),
                         lambda: f"the files of {child.pid} to show its sender's {child.credits} "
                                 f"credits and its receiver's {child.queued} messages; they "
                                 f"say {published_channels(tool, directory, child)}")
            victim.kill()
            victim.wait()
            check_live_and_stale(tool, directory, holder, victim)
            check_untrusted(tool, directory)
        finally:
            holder.stdin.close()
            holder_status = holder.wait(timeout=30)
        assert holder_status == 0, f"the holder exited {holder_status}"
        assert files_of(directory, holder.pid) == [], "a closed node left its state file"
        check_refused_directory(helper, env)
    print("ferry-net state files: published, read, marked stale, removed at close")
    return 0


if __name__ == "__main__":
    sys.exit(main())
