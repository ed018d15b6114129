#!/usr/bin/env python3
"""Mutation testing: do the tests catch small, plausible bugs?  (issue 18)

    tools/mutate.py [--list] [--check] [--only ID[,ID...]] [--scratch DIR] [--jobs N]

Applies each mutant of tools/mutants.py, one at a time, to a scratch copy of the
committed tree (a git worktree of HEAD, kept in --scratch between runs so that only the
first build is a full one), rebuilds, runs the mutant's CTest selection, and undoes the
mutant.  A mutant is *killed* when a selected test fails, *stillborn* when it does not
build, and *survives* otherwise.  Prints a progress line per mutant, a table, the kill
rate and every survivor with the reason its entry gives.  Exit status 1 if an
unexpected mutant survived (one whose `why` does not say "expected survivor").

--check only verifies that every mutant's text occurs exactly once (fast, no build);
it is part of the default test run (CTest `mutants_apply`) so the list cannot rot.
This is an offline habit before resolving an issue: it takes minutes per mutant on
two cores and is not part of the default test run.
"""
import argparse
import os
import pathlib
import shlex
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
from mutants import MUTANTS  # noqa: E402


def check(root):
    bad = []
    for m in MUTANTS:
        text = (root / m["file"]).read_text()
        n = text.count(m["find"])
        if n != 1:
            bad.append(f"{m['id']}: its text occurs {n} times in {m['file']}")
    return bad


def run(cmd, cwd, log):
    with open(log, "a") as f:
        f.write(f"$ {cmd}\n")
        f.flush()
        return subprocess.run(cmd, cwd=cwd, shell=True, stdout=f, stderr=subprocess.STDOUT).returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check", action="store_true", help="only check that every mutant applies (no build)")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--scratch", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "zesim-mutate"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    if a.list:
        for m in MUTANTS:
            print(f"{m['id']:<26} {m['file']:<38} {m['why']}")
        return 0
    bad = check(ROOT)
    if bad or a.check:
        for b in bad:
            print(f"mutate: {b}")
        print(f"mutate: {len(MUTANTS)} mutants, {len(MUTANTS) - len(bad)} apply cleanly")
        return 1 if bad else 0
    chosen = [m for m in MUTANTS if not a.only or m["id"] in a.only.split(",")]
    if not chosen:
        sys.exit("mutate: no mutant matches --only")
    scratch = pathlib.Path(a.scratch)
    log = scratch.with_suffix(".log")
    log.write_text("")
    if not (scratch / ".git").exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(scratch), "HEAD"], check=True)
    else:
        subprocess.run(["git", "-C", str(scratch), "checkout", "--detach", "-f",
                        subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                                       text=True).stdout.strip()], check=True)
    build = scratch / "build"
    print(f"mutate: scratch tree {scratch} at HEAD; first build (log {log})", flush=True)
    if not (build / "build.ninja").exists():
        run(f"cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo", scratch, log)
    if run(f"cmake --build build -j {a.jobs}", scratch, log):
        sys.exit(f"mutate: the unmutated tree does not build (see {log})")
    results = []
    for i, m in enumerate(chosen, 1):
        path = scratch / m["file"]
        orig = path.read_text()
        path.write_text(orig.replace(m["find"], m["repl"], 1))
        t0 = time.monotonic()
        print(f"mutate: [{i}/{len(chosen)}] {m['id']}: building ...", end="", flush=True)
        try:
            if run(f"cmake --build build -j {a.jobs}", scratch, log):
                verdict = "stillborn"
            else:
                print(" testing ...", end="", flush=True)
                rc = run(f"ctest --test-dir build -j {a.jobs} --timeout 300 --output-on-failure {m['tests']}", scratch, log)
                verdict = "killed" if rc else "SURVIVED"
        finally:
            path.write_text(orig)
        print(f" {verdict} ({time.monotonic() - t0:.0f} s)", flush=True)
        results.append((m, verdict))
    run(f"cmake --build build -j {a.jobs}", scratch, log)  # leave the scratch build unmutated
    print(f"\n{'mutant':<26} {'verdict':<10} tests")
    for m, v in results:
        print(f"{m['id']:<26} {v:<10} {m['tests']}")
    built = [r for r in results if r[1] != "stillborn"]
    killed = sum(1 for r in built if r[1] == "killed")
    print(f"\nmutate: {killed}/{len(built)} killed ({100 * killed / max(1, len(built)):.0f} %), "
          f"{len(results) - len(built)} stillborn")
    unexpected = 0
    for m, v in results:
        if v == "SURVIVED":
            expected = "expected survivor" in m["why"]
            unexpected += not expected
            print(f"  survivor {m['id']}: {m['why']}")
    return 1 if unexpected else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
