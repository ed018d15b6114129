#!/usr/bin/env python3
"""Program-debug latency on xe-lp with every thread resident (issue 14): host time from
zetDebugInterrupt(all) to the last THREAD_STOPPED, to read every register set of one
stopped thread, and of zetDebugResume(all).

    python3 bench/debug.py --gpu build/sim/zesim-gpu --preload build/lib/libzesim_preload.so \\
        --driver build/lib/libze_zesim.so.1 --target build/tests/e2e/e2e_debug_target \\
        --bench build/tests/debug_bench --elf build/tests/e2e/debug.elf

The target (tests/e2e/test_debug_target.c, spin mode) runs one SIMD8 thread per group,
as many groups as the preset has hardware threads (672 on xe-lp), each counting to
--count; debug_bench (bench/debug_bench.c) attaches, interrupts and times."""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time
import json
import re
import statistics

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "stimulus"))
import zedaemon  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ("--gpu", "--preload", "--driver", "--target", "--bench", "--elf"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--preset", default="xe-lp")
    ap.add_argument("--threads", type=int, default=672, help="hardware threads of the preset (xe-lp: 96 EUs x 7)")
    ap.add_argument("--count", type=int, default=20000, help="loop iterations per thread (seconds of simulation)")
    ap.add_argument("--rounds", type=int, default=3, help="fresh daemon and target each")
    a = ap.parse_args()
    figures = {"interrupt": [], "registers": [], "resume": []}
    with tempfile.TemporaryDirectory() as tmp:
        cfg = pathlib.Path(tmp, "d.json")
        cfg.write_text(json.dumps({"preset": a.preset, "job_timeout_ms": 600000}))
        for rnd in range(a.rounds):
            with zedaemon.Daemon(a.gpu, "--config", str(cfg), test_channel=False) as d:
                env = dict(os.environ, ZESIM_SOCKET=d.path, LD_PRELOAD=a.preload, ZE_ENABLE_ALT_DRIVERS=a.driver,
                           ZET_ENABLE_PROGRAM_DEBUGGING="1")
                print("debug.py: round %d of %d: %s, %d threads counting to %d ..." %
                      (rnd + 1, a.rounds, a.preset, a.threads, a.count), flush=True)
                # The target's output (a line per item) goes to a file: a pipe nobody reads
                # while the bench runs would fill and stop it before it exits.
                tout = open(pathlib.Path(tmp, "target.out"), "w+")
                t = subprocess.Popen([a.target, a.elf, "spin", str(a.threads), str(a.count)], env=env,
                                     stdin=subprocess.PIPE, stdout=tout, text=True)
                pid = None
                for _ in range(600):
                    tout.seek(0)
                    first = tout.readline()
                    if first.endswith("\n"):
                        pid = first.split()[1]
                        break
                    time.sleep(0.05)
                if not pid:
                    sys.exit("debug.py: the target did not start")
                b = subprocess.Popen([a.bench, pid, str(a.threads)], env=env, stdout=subprocess.PIPE, text=True)
                if b.stdout.readline().strip() != "attached":
                    sys.exit("debug.py: the bench did not attach")
                t.stdin.write("go\n")
                t.stdin.flush()
                for line in b.stdout:
                    print("  " + line.rstrip(), flush=True)
                    m = re.match(r"interrupt-all to the last THREAD_STOPPED: ([0-9.]+) ms \((\d+) of", line)
                    if m and int(m.group(2)) == a.threads:
                        figures["interrupt"].append(float(m.group(1)))
                    m = re.match(r"every register set .*: ([0-9.]+) ms", line)
                    if m:
                        figures["registers"].append(float(m.group(1)))
                    m = re.match(r"resume-all of \d+ threads: ([0-9.]+) ms", line)
                    if m:
                        figures["resume"].append(float(m.group(1)))
                rc = b.wait(600)
                t.wait(600)
                tout.seek(0)
                out = tout.read()
                tout.close()
                vals = [l.split() for l in out.splitlines() if l.startswith("out ")]
                ok = len(vals) == a.threads * 8 and all(int(v) == a.count + int(i) for _, i, v in vals)
                if rc or t.returncode or not ok:
                    sys.exit("debug.py: round %d failed (bench %r, target %r, results %s)" %
                             (rnd + 1, rc, t.returncode, "right" if ok else "WRONG"))
    for k, what, goal in (("interrupt", "interrupt-all to the last THREAD_STOPPED", "goal <= 100 ms"),
                          ("registers", "every register set of one thread", "goal <= 1 ms"),
                          ("resume", "resume-all until every slot moved on", "no goal")):
        v = figures[k]
        if v:
            print("debug.py: %s: median %.3f ms, min %.3f, max %.3f over %d rounds (%s)" %
                  (what, statistics.median(v), min(v), max(v), len(v), goal))
    print("debug.py: the target's results were right in every round")


if __name__ == "__main__":
    main()
