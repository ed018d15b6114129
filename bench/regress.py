#!/usr/bin/env python3
"""zesim regress throughput and overhead, in one run (README "Regressions at scale").

  - cases per minute of `zesim regress` with --jobs 1 and --jobs 2 on a suite of N copies of
    one case (goal: --jobs 2 >= 1.8x --jobs 1 on two cores);
  - the per-case overhead of the runner over the bare program: the same case N times in a
    plain loop that starts a daemon (no ledger file), waits for its socket, runs the program
    with the preload environment and stops the daemon (what `zesim run` does, minus bash),
    against the runner's --jobs 1 time per case: the sum of the cases' own times (with and
    without the ledger the runner keeps) and the whole command's wall time (Python start-up,
    reports) (goal <= 5 %).

Two programs by default: a short one (e2e_reduce, ~30 ms) and a typical one (e2e_spirv_math,
~0.6 s, 3.3 M cycles).

Rounds alternate bare / --jobs 1 / --jobs 2; medians are printed.

    python3 bench/regress.py [--build build] [--cases 12] [--rounds 3] [--program PROG ARGS...]"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parents[1]


def bare(build, program, n, tmp):
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1",
               LD_PRELOAD=str(build / "lib" / "libzesim_preload.so"),
               ZE_ENABLE_ALT_DRIVERS=str(build / "lib" / "libze_zesim.so.1"))
    t0 = time.monotonic()
    for i in range(n):
        d = tempfile.mkdtemp(prefix="zb.", dir=tmp)
        sock = os.path.join(d, "gpu.sock")
        gpu = subprocess.Popen([str(build / "sim" / "zesim-gpu"), "--preset", "tiny", "--socket", sock],
                               stderr=subprocess.DEVNULL, env=env)
        while not os.path.exists(sock):
            time.sleep(0.002)
        rc = subprocess.call(program, env=dict(env, ZESIM_SOCKET=sock), stdout=subprocess.DEVNULL)
        gpu.terminate()
        gpu.wait()
        shutil.rmtree(d)
        if rc != 0:
            sys.exit(f"bench: the bare program failed (exit {rc})")
    return time.monotonic() - t0


def runner(build, suite, jobs, out):
    """(wall time of the whole command, sum of the cases' own times in its summary)."""
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, str(HERE / "tools" / "regress" / "zesim_regress.py"), str(suite),
                        "--jobs", str(jobs), "--out", str(out)], env=dict(os.environ, ZESIM_BUILD=str(build)),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    if r.returncode != 0:
        sys.exit(f"bench: zesim regress failed:\n{r.stderr}")
    cases = json.loads((out / "summary.json").read_text())["cases"]
    return wall, sum(c["host_s"] for c in cases)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.environ.get("ZESIM_BUILD", str(HERE / "build")))
    ap.add_argument("--cases", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--program", nargs=argparse.REMAINDER, help="one case's program and arguments instead of "
                    "the two defaults (short: e2e_reduce, ~30 ms; typical: e2e_spirv_math, ~0.5 s)")
    a = ap.parse_args()
    build = pathlib.Path(a.build).resolve()
    programs = {"short": [str(build / "tests/e2e/e2e_reduce"), str(build / "tests/e2e/reduce.elf")],
                "typical": [str(build / "tests/e2e/e2e_spirv_math"), str(build / "tests/kernels")]}
    if a.program:
        programs = {"given": a.program}
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="zesim-bench-regress."))
    try:
        print(f"{a.cases} cases of each program on the tiny preset, median of {a.rounds} rounds, "
              f"{os.cpu_count()} CPUs, load average before: {os.getloadavg()[0]:.2f}")
        print("| case | bare loop s/case | --jobs 1 s/case (in the cases) | cases/min --jobs 1 | cases/min --jobs 2 "
              "| jobs 2 / jobs 1 | overhead per case | the same without the ledger | overhead incl. start-up and reports |")
        print("|---|---|---|---|---|---|---|---|---|")
        for kind, program in programs.items():
            suite = tmp / f"{kind}.json"
            suite.write_text(json.dumps({"defaults": {"preset": "tiny", "timeout": 300},
                                         "case": [{"name": kind, "program": program, "seeds": [1, a.cases]}]}))
            noledger = tmp / f"{kind}-noledger.json"
            noledger.write_text(json.dumps({"defaults": {"preset": "tiny", "timeout": 300, "ledger": False},
                                            "case": [{"name": kind, "program": program, "seeds": [1, a.cases]}]}))
            b, j1, in1, j2, nl = [], [], [], [], []
            for r in range(a.rounds):
                b.append(bare(build, program, a.cases, tmp))
                w, inner = runner(build, suite, 1, tmp / f"{kind}-j1-{r}")
                j1.append(w)
                in1.append(inner)
                j2.append(runner(build, suite, 2, tmp / f"{kind}-j2-{r}")[0])
                nl.append(runner(build, noledger, 1, tmp / f"{kind}-nl-{r}")[1])
                print(f"{kind} round {r + 1}/{a.rounds}: bare {b[-1]:.2f} s, --jobs 1 {j1[-1]:.2f} s "
                      f"({in1[-1]:.2f} s in cases), --jobs 2 {j2[-1]:.2f} s for {a.cases} cases", file=sys.stderr, flush=True)
            mb, m1, mi, m2, mn = (statistics.median(x) for x in (b, j1, in1, j2, nl))
            n = a.cases
            print(f"| {kind}: `{' '.join(pathlib.Path(p).name for p in program)}` | {mb / n:.3f} | {m1 / n:.3f} "
                  f"({mi / n:.3f}) | {60 * n / m1:.0f} | {60 * n / m2:.0f} | {m1 / m2:.2f}x | "
                  f"{100 * (mi - mb) / mb:+.1f} % ({(mi - mb) / n * 1000:+.1f} ms) | {100 * (mn - mb) / mb:+.1f} % | "
                  f"{100 * (m1 - mb) / mb:+.1f} % |")
        # What the machine allows now: a CPU-bound shell loop without a daemon, through the same runner.
        control = tmp / "control.json"
        loop = ["sh", "-c", "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"]
        control.write_text(json.dumps({"defaults": {"daemon": False, "timeout": 300},
                                       "case": [{"name": "cpu", "program": loop, "seeds": [1, a.cases]}]}))
        c1, c2 = [], []
        for r in range(a.rounds):
            c1.append(runner(build, control, 1, tmp / f"c1-{r}")[0])
            c2.append(runner(build, control, 2, tmp / f"c2-{r}")[0])
        print(f"| control: CPU-bound shell loop, no daemon | | {statistics.median(c1) / a.cases:.3f} | "
              f"{60 * a.cases / statistics.median(c1):.0f} | {60 * a.cases / statistics.median(c2):.0f} | "
              f"{statistics.median(c1) / statistics.median(c2):.2f}x | | | |")
        print(f"load average after: {os.getloadavg()[0]:.2f}")
        print("goals: jobs 2 / jobs 1 >= 1.8x; overhead per case <= 5 %. The control row is what two jobs "
              "can gain on this machine at this moment, whatever the runner.")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
