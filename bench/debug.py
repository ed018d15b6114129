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
import json

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "stimulus"))
import zedaemon  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ("--gpu", "--preload", "--driver", "--target", "--bench", "--elf"):
        ap.add_argument(opt, required=True)
    ap.add_argument("--preset", default="xe-lp")
    ap.add_argument("--threads", type=int, default=672, help="hardware threads of the preset (xe-lp: 96 EUs x 7)")
    ap.add_argument("--count", type=int, default=20000, help="loop iterations per thread (seconds of simulation)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = pathlib.Path(tmp, "d.json")
        cfg.write_text(json.dumps({"preset": a.preset, "job_timeout_ms": 600000}))
        with zedaemon.Daemon(a.gpu, "--config", str(cfg), test_channel=False) as d:
            env = dict(os.environ, ZESIM_SOCKET=d.path, LD_PRELOAD=a.preload, ZE_ENABLE_ALT_DRIVERS=a.driver,
                       ZET_ENABLE_PROGRAM_DEBUGGING="1")
            print("debug.py: %s, %d threads counting to %d ..." % (a.preset, a.threads, a.count), flush=True)
            t = subprocess.Popen([a.target, a.elf, "spin", str(a.threads), str(a.count)], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            pid = t.stdout.readline().split()[1]
            b = subprocess.Popen([a.bench, pid, str(a.threads)], env=env, stdout=subprocess.PIPE, text=True)
            if b.stdout.readline().strip() != "attached":
                sys.exit("debug.py: the bench did not attach")
            t.stdin.write("go\n")
            t.stdin.flush()
            for line in b.stdout:
                print("  " + line.rstrip(), flush=True)
            rc = b.wait(600)
            out, _ = t.communicate(timeout=600)
            vals = [l.split() for l in out.splitlines() if l.startswith("out ")]
            ok = len(vals) == a.threads * 8 and all(int(v) == a.count + int(i) for _, i, v in vals)
            print("debug.py: the target's results are %s" % ("right" if ok else "WRONG"))
            if rc or t.returncode or not ok:
                sys.exit(1)


if __name__ == "__main__":
    main()
