#!/usr/bin/env python3
"""Fails when a documented difference from CANN is missing from docs/differences-from-cann.md.

Usage:
  check_differences.py [--docs DIR]   check DIR (default: docs/ next to this script's parent)
  check_differences.py --self-test    check that the rules catch what they must, on sample pages

The convention (docs/contributing.md, "Differences from CANN"):
- A module page (docs/*.md, the index itself excepted) states a difference from CANN either in a
  section whose heading starts with "Differences from CANN", or in a labelled statement:
      <a id="differs-NAME"></a>**Differs from CANN:** ...
  The label and an anchor whose id starts with "differs-" always go together on one line.
- The index links to every such section and every labelled statement: page.md#anchor.
- Every link of the index to page.md#anchor names an anchor that exists on that page.
Prints one line per problem and exits 1 when there is any.
"""
import argparse
import pathlib
import re
import sys
import tempfile

INDEX = "differences-from-cann.md"
LABEL = "Differs from CANN:"
ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
LINK = re.compile(r"\]\(([\w./-]+\.md)#([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def scan_page(path):
    """(anchors on the page, required anchors, problems)."""
    anchors, required, problems = set(), set(), []
    in_code = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        ids = ANCHOR.findall(line)
        anchors.update(ids)
        heading = HEADING.match(line)
        if heading:
            anchors.add(slug(heading.group(2)))
            if heading.group(2).startswith("Differences from CANN"):
                required.add(slug(heading.group(2)))
        differs = [i for i in ids if i.startswith("differs-")]
        where = f"{path.name}:{number}"
        if LABEL in line and not differs:
            problems.append(f"{where}: '{LABEL}' without an <a id=\"differs-…\"></a> anchor")
        if differs and LABEL not in line:
            problems.append(f"{where}: anchor {differs[0]} without the '{LABEL}' label")
        if LABEL in line:
            required.update(differs)
    return anchors, required, problems


def check(docs):
    index = docs / INDEX
    if not index.is_file():
        return [f"{index}: missing"]
    linked = {(page, anchor) for page, anchor in LINK.findall(index.read_text(encoding="utf-8"))}
    problems, pages = [], {}
    for page in sorted(docs.glob("*.md")):
        if page.name == INDEX:
            continue
        anchors, required, found = scan_page(page)
        pages[page.name] = anchors
        problems += found
        for anchor in sorted(required):
            if (page.name, anchor) not in linked:
                problems.append(f"{INDEX}: no row links {page.name}#{anchor}")
    for page, anchor in sorted(linked):
        if "/" in page:
            continue  # cann-contract/ is CANN's contract, not a module page
        if page not in pages:
            problems.append(f"{INDEX}: links {page}#{anchor}, and {page} does not exist")
        elif anchor not in pages[page]:
            problems.append(f"{INDEX}: links {page}#{anchor}, and {page} has no such anchor")
    return problems


def self_test():
    page = (
        "# mod\n\n## Differences from CANN\n\n- one\n\n"
        '<a id="differs-x"></a>**Differs from CANN:** x.\n'
    )
    full_index = "| x | [mod](mod.md#differences-from-cann) [x](mod.md#differs-x) |\n"
    cases = [
        ("complete index", page, full_index, 0),
        ("row removed", page, "| [mod](mod.md#differences-from-cann) |\n", 1),
        ("section unlinked", page, "| [x](mod.md#differs-x) |\n", 1),
        ("label without anchor", page + "**Differs from CANN:** y.\n", full_index, 1),
        ("anchor without label", page + '<a id="differs-z"></a> z.\n', full_index, 1),
        ("broken link", page, full_index + "[gone](mod.md#differs-gone)\n", 1),
        ("link to a missing page", page, full_index + "[m](nope.md#a)\n", 1),
        ("label inside a code block is ignored", page + "```\n**Differs from CANN:**\n```\n",
         full_index, 0),
    ]
    failures = 0
    for name, text, index_text, expected in cases:
        with tempfile.TemporaryDirectory() as tmp:
            root = pathlib.Path(tmp)
            (root / "mod.md").write_text(text, encoding="utf-8")
            (root / INDEX).write_text(index_text, encoding="utf-8")
            got = len(check(root))
        if (got > 0) != (expected > 0):
            print(f"self-test '{name}': {got} problem(s), expected {'some' if expected else 'none'}")
            failures += 1
    if slug("Differences from CANN — runtime and aclnn") != "differences-from-cann--runtime-and-aclnn":
        print("self-test: slug of an em-dash heading")
        failures += 1
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parent.parent / "docs")
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    problems = check(args.docs)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
