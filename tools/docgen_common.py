"""Shared by the doc generators (gen_isa_doc.py, gen_hw_docs.py): fill the blocks between
`<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`, and the
`SCRIPT DOC [--check]` command line."""
import argparse
import difflib
import pathlib
import re
import sys


def block(name):
    return re.compile(rf"(<!-- BEGIN GENERATED: {name} -->\n).*?(<!-- END GENERATED: {name} -->)", re.S)


def fill(text, name, rows, tool):
    """Replace the body of block `name` by the table `rows`; exit if the page lacks it."""
    pattern = block(name)
    if not pattern.search(text):
        raise SystemExit(f"{tool}: no GENERATED block '{name}'")
    return pattern.sub(lambda m: m.group(1) + "\n".join(rows).replace("|  |", "| |") + "\n" + m.group(2), text)


def main(script, render):
    """`render(text)` returns (new text, name of the source file) for the page."""
    ap = argparse.ArgumentParser()
    ap.add_argument("doc")
    ap.add_argument("--check", action="store_true", help="fail if the page is out of date")
    a = ap.parse_args()
    path = pathlib.Path(a.doc)
    old = path.read_text()
    new, source = render(old, path) if render.__code__.co_argcount > 1 else render(old)
    if a.check:
        if old != new:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "doc", "generated"))
            sys.exit(f"{path} is out of date with {source}: run tools/{script} {path}")
        print(f"{path}: tables match {source}")
    elif old != new:
        path.write_text(new)
        print(f"{path}: tables regenerated")
