#!/usr/bin/env python3
"""Compare the README's figures of two builds in one run (issue 12: "measured again after the
change, in the same run as the previous commit's build").

    bench/compare.py --old OLD_SRC:OLD_BUILD --new NEW_SRC:NEW_BUILD [--rounds 3] [--limit 5]

Runs, alternating old and new --rounds times so that both see the same machine load:
bench/sim_speed.py (M SIMD instructions/s compute-bound, M GPU cycles/s memory-bound),
bench/api_latency.py (pinned: bare round trip, ioctl, empty kernel) and bench/compile.py
(translation time of all modules; compiled matrix-multiply cycles).  Prints the median of
each figure for both builds and the new/old ratio, oriented so that > 1 is worse, and exits 1
if a figure is worse by more than --limit percent.  Each build runs its own scripts and
binaries (SRC is the source tree the build came from).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys


def run(cmd, cwd):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"compare: {' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def figures(src, build):
    f = {}
    out = run([sys.executable, f"{src}/bench/sim_speed.py", "--as", f"{build}/tools/zesim-as", "--gpu",
               f"{build}/sim/zesim-gpu"], build)
    for line in out.splitlines():
        m = re.match(r"(compute-bound|memory-bound)\s+\d+\s+\d+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", line)
        if m:
            if m.group(1) == "compute-bound":
                f["sim: compute-bound M SIMD inst/s (higher is better)"] = float(m.group(3))
            else:
                f["sim: memory-bound M GPU cycles/s (higher is better)"] = float(m.group(2))
    out = run([sys.executable, f"{src}/bench/api_latency.py", "--as", f"{build}/tools/zesim-as", "--gpu",
               f"{build}/sim/zesim-gpu", "--bench", f"{build}/tests/api_latency", "--preload",
               f"{build}/lib/libzesim_preload.so", "--iterations", "2000"], build)
    pinned = out.split("unpinned:")[0]
    for key, label in (("bare unix-socket round trip", "api: bare round trip us"),
                       ("ioctl through the shim", "api: ioctl us"),
                       ("empty kernel, submit to done", "api: empty kernel us")):
        m = re.search(re.escape(key) + r"\s+([\d.]+) us", pinned)
        if m:
            f[label] = float(m.group(1))
    out = run([sys.executable, f"{src}/bench/compile.py", "--bench", f"{build}/tests/e2e/compile_bench",
               "--kernels", f"{build}/tests/kernels", "--hand", f"{build}/bench/matmul.elf", "--build", build], build)
    m = re.search(r"all translated modules\s+([\d.]+)", out)
    if m:
        f["compile: all modules us"] = float(m.group(1))
    for kind in ("naive", "tiled"):
        m = re.search(r"^%s\S*\s+compiled\S*\s+(\d+)" % kind, out, re.M) or \
            re.search(r"^(?:compiled )?%s\S*\s+(\d+)" % kind, out, re.M)
        if m:
            f[f"compile: {kind} matmul cycles"] = float(m.group(1))
    return f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="SRC:BUILD of the previous commit")
    ap.add_argument("--new", required=True, help="SRC:BUILD of this commit")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--limit", type=float, default=5.0, help="percent a figure may get worse")
    a = ap.parse_args()
    builds = {"old": a.old.split(":", 1), "new": a.new.split(":", 1)}
    got = {"old": [], "new": []}
    for r in range(a.rounds):
        for which in ("old", "new") if r % 2 == 0 else ("new", "old"):
            print(f"compare: round {r + 1}/{a.rounds}: {which} build", file=sys.stderr, flush=True)
            got[which].append(figures(*builds[which]))
    worse = []
    print(f"{'figure':<52} {'old':>10} {'new':>10} {'new/old':>8}")
    for key in got["old"][0]:
        if not all(key in g for g in got["old"] + got["new"]):
            continue
        old = statistics.median(g[key] for g in got["old"])
        new = statistics.median(g[key] for g in got["new"])
        higher_better = "higher is better" in key
        ratio = (old / new if higher_better else new / old) if old and new else 1.0
        flag = ""
        if ratio > 1 + a.limit / 100:
            worse.append(key)
            flag = "  WORSE"
        print(f"{key:<52} {old:>10.2f} {new:>10.2f} {ratio:>7.3f}x{flag}")
    print(f"(ratio oriented so that > 1 is worse; medians of {a.rounds} alternating rounds; limit {a.limit}%)")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main())
