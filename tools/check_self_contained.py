#!/usr/bin/env python3
"""Fails when a file of the repository cites something a reader of the repository cannot open.

Usage:
  check_self_contained.py [--root DIR] [--summary]   scan the tracked files (git ls-files, or
                                                     every file under DIR outside a git checkout)
  check_self_contained.py --self-test                check the patterns on sample lines

Flagged: paths into material kept outside the repository (a spec/<name>.md, anything under
reference/, a <name>_facts.md, ../shared), numbered seeds ("seed 003") and issue numbers
("issue 7"). Cite a docs/ section or CANN's API by name instead. Other projects' issue numbers
("concurrentqueue #66") are fine: they can be looked up. Binary files and this script (whose
samples would match) are skipped. Prints one 'path:line: text' per mention, or with --summary only
the count per file; exits 1 when there is any.
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys

PATTERNS = [
    ("outside spec", re.compile(r"\bspec/[\w.-]+\.md\b")),
    ("outside reference", re.compile(r"(?<![\w.-])reference/")),
    ("outside facts file", re.compile(r"\b\w+_facts\.md\b")),
    ("outside shared folder", re.compile(r"(?:\.\./)+shared\b")),
    ("seed number", re.compile(r"\bseeds?\s+0\d\d\b", re.IGNORECASE)),
    ("issue number", re.compile(r"\bissues?\s+#?\d+\b", re.IGNORECASE)),
]

# (line, whether it must be flagged)
SAMPLES = [
    ("Contract: `spec/tdt.md` §1-2", True),
    ("CANN's behaviour: `reference/tdt_facts.md` §2.2", True),
    ("see args_runtime_facts.md part B", True),
    ("copied from ../shared/style.md", True),
    ("(seed 000 §4.1: timeout 0 never blocks)", True),
    ("Sources: Seed 001 (the Runtime's design)", True),
    ("// Issue 7, \"one process, one runtime\"", True),
    ("results that meet issue 3's targets", True),
    ("fixed in issues 12 and 13", True),
    ("docs/channel.md, Stop: a stopped channel drains first", False),
    ("see https://en.cppreference.com/w/cpp/atomic/atomic/wait", False),
    ("no lost wake-up (poco #5213)", False),
    ("file an issue on the tracker", False),
    ("seeded with 0x5eed", False),
    ("the 128-entry spec table", False),
    ("a reference to the item", False),
    ("docs/specification.md", False),
]


def mentions(line: str) -> list[str]:
    return [what for what, pattern in PATTERNS if pattern.search(line)]


def tracked_files(root: pathlib.Path) -> list[pathlib.Path]:
    """git ls-files; outside a git checkout, every file not under a hidden folder."""
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True).stdout
        return [root / p for p in out.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = [d for d in subfolders if not d.startswith(".")]
        files += [pathlib.Path(folder) / name for name in names]
    return files


def scan(root: pathlib.Path) -> list[tuple[str, int, str]]:
    me = pathlib.Path(__file__).resolve()
    found = []
    for path in tracked_files(root):
        if not path.is_file() or path.resolve() == me:
            continue
        data = path.read_bytes()
        if b"\0" in data:
            continue
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            if mentions(line):
                found.append((path.relative_to(root).as_posix(), number, line.strip()))
    return found


def self_test() -> int:
    wrong = [(line, want) for line, want in SAMPLES if bool(mentions(line)) != want]
    for line, want in wrong:
        print(f"{'missed' if want else 'wrongly flagged'}: {line!r}")
    print(f"{len(SAMPLES)} samples, {len(wrong)} wrong")
    return 1 if wrong else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    found = scan(pathlib.Path(args.root).resolve())
    per_file: dict[str, int] = {}
    for path, number, text in found:
        per_file[path] = per_file.get(path, 0) + 1
        if not args.summary:
            print(f"{path}:{number}: {text}")
    if args.summary:
        for path, count in sorted(per_file.items()):
            print(f"{count:4} {path}")
    print(f"self-contained check: {len(found)} mention(s) of material outside the repository "
          f"in {len(per_file)} file(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
