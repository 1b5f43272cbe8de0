#!/usr/bin/env python3
"""Fails when README.md or a page under docs/ links a file or a heading that does not exist.

Usage:
  check_doc_links.py [--root DIR]   check README.md, CHANGELOG.md and docs/**/*.md under DIR
  check_doc_links.py --self-test    check the anchor rules on sample headings

A link [text](target) whose target is not a URL (http:, https:, mailto:) names a path relative to
the page (must exist, as a file or a folder) and optionally '#anchor'. An anchor into a Markdown
page (or '#anchor' alone, the page itself) must be one of that page's heading anchors, made as
GitHub makes them: the heading's text without its Markdown (code spans, links, emphasis),
lowercased, every character that is not a letter, digit, space, '-' or '_' dropped, spaces made
'-'; a repeated heading gets '-1', '-2', ... An explicit HTML anchor (<a id="name"></a> or
name="...") on the page counts too (docs/contributing.md marks differences from CANN so).
Fenced code blocks and code spans are skipped.
Prints one 'page:line: target: why' per broken link; exits 1 when there is any.
"""
import argparse
import pathlib
import re
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^()\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def text_lines(path: pathlib.Path):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        stripped = line.lstrip()
        marker = re.match(r"(`{3,}|~{3,})", stripped)
        if marker:
            if fence is None:
                fence = marker.group(1)[0] * len(marker.group(1))
            elif stripped.startswith(fence):
                fence = None
            continue
        if fence is None:
            yield number, line


def anchor_of(heading: str) -> str:
    text = CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: pathlib.Path, cache: dict) -> set:
    if path not in cache:
        seen, found = {}, set()
        for _, line in text_lines(path):
            found.update(HTML_ANCHOR.findall(CODE_SPAN.sub("", line)))
            match = HEADING.match(line)
            if not match:
                continue
            base = anchor_of(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
        cache[path] = found
    return cache[path]


def broken_links(page: pathlib.Path, root: pathlib.Path, cache: dict):
    for number, line in text_lines(page):
        line = CODE_SPAN.sub("", line)
        for match in [*LINK.finditer(line), *IMAGE.finditer(line)]:
            target = match.group(1)
            if URL.match(target):
                continue
            path_part, _, anchor = target.partition("#")
            path = (page.parent / path_part).resolve() if path_part else page
            if not path.exists():
                yield number, target, "no such file"
            elif anchor and path.suffix == ".md" and anchor not in anchors(path, cache):
                yield number, target, f"no heading with anchor #{anchor} in {path.name}"
            elif path_part and root not in path.parents and path != root:
                yield number, target, "points outside the repository"


def pages(root: pathlib.Path):
    found = [root / name for name in ("README.md", "CHANGELOG.md") if (root / name).exists()]
    return found + sorted((root / "docs").rglob("*.md"))


def self_test() -> int:
    samples = [
        ("Stale segments", "stale-segments"),
        ("The C API", "the-c-api"),
        ("`ferry/core`: Status, Result", "ferrycore-status-result"),
        ("Channels shared between processes", "channels-shared-between-processes"),
        ("What every C++ consumer must provide", "what-every-c-consumer-must-provide"),
        ("Run 6 (load 3-5)", "run-6-load-3-5"),
        ("[Timeout](core.md) and waits", "timeout-and-waits"),
        ("snake_case names", "snake_case-names"),
    ]
    failed = [(h, want, anchor_of(h)) for h, want in samples if anchor_of(h) != want]
    for heading, want, got in failed:
        print(f"anchor_of({heading!r}) = {got!r}, want {want!r}")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--root", default=".")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    root = pathlib.Path(args.root).resolve()
    cache, count = {}, 0
    for page in pages(root):
        for number, target, why in broken_links(page, root, cache):
            print(f"{page.relative_to(root)}:{number}: {target}: {why}")
            count += 1
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
