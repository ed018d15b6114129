#!/usr/bin/env python3
"""bench/metrics: the cost of the OA block and of metric calculation, in one run.

1. Simulation speed on the bench/sim_speed.py kernels (xe-lp, every thread busy) with
   the OA block off and on (oa_block rtl: the Verilated RTL, no twin; counters enabled
   with timer reports every 2^6 timestamp ticks into a 16 MiB buffer), alternating
   runs, medians; the ratio on/off (goal <= 1.3x).
2. With --calc BIN (bench/metrics_calc.c): zetMetricGroupCalculateMetricValues throughput
   for ComputeBasic on one core, in reports per second (goal >= 5 M/s).
Speed is printed, never asserted."""
import argparse
import json
import os
import pathlib
import statistics
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "stimulus"))
import sim_speed  # noqa: E402
import zedaemon  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
import re  # noqa: E402
REGS = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^ZE_REG\((\w+),\s*(0x[0-9a-f]+)",
                                                                 (ROOT / "include/zs/gpu_regs.def").read_text(), re.M)}
OA_BUF = (256 - 16) << 20  # 16 MiB at 240 MiB of xe-lp's physical memory: the stimulus runner allocates from the bottom


def oa_mmio():
    w = [(REGS["OA_BUF_BASE_HI"], 0), (REGS["OA_BUF_BASE_LO"], OA_BUF), (REGS["OA_BUF_SIZE"], 24),
         (REGS["OA_THRESHOLD"], 0)]
    w += [(REGS["OA_BC_SEL0"] + 4 * i, (32 + i % 3) | 0x3f << 16) for i in range(16)]
    w.append((REGS["OA_CTL"], 1 | 2 | 5 << 2 | 1 << 8))
    return [{"register": hex(r), "value": hex(v)} for r, v in w]


def run(gpu, asm, tmp, name, source, groups, mode, args=b"", buffers=()):
    src, mod, stim, cfg = (tmp / f"{name}.{e}" for e in ("zeasm", "elf", "json", "cfg"))
    src.write_text(source)
    subprocess.run([asm, "-o", str(mod), str(src)], check=True)
    stim.write_text(json.dumps({
        "buffers": list(buffers),
        "modules": [{"path": str(mod), "address": "0x40000000"}],
        "mmio": oa_mmio() if mode != "off" else [],
        "commands": [{"cmd": "compute_walker", "kernel": name, "group_size": [16, 1, 1],
                      "groups": [groups, 1, 1], "args": args.hex()}]}))
    cfg.write_text(json.dumps({"oa_block": mode}))
    t0 = time.perf_counter()
    out = subprocess.run([gpu, "--preset", "xe-lp", "--config", str(cfg), "--stimulus", str(stim)],
                         check=True, capture_output=True, text=True, env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    host = time.perf_counter() - t0
    return json.loads(out.stdout)["cycles"], host


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--as", dest="asm", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--mode", default="rtl", help="the 'on' mode: rtl (default), twin or check")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scale", type=float, default=1.0, help="work multiplier (CI uses a small one)")
    ap.add_argument("--calc", help="the metrics_calc binary (needs --preload and --driver)")
    ap.add_argument("--preload")
    ap.add_argument("--driver", help="libze_zesim.so.1 (ZE_ENABLE_ALT_DRIVERS)")
    a = ap.parse_args()
    threads = 6 * 16 * 7
    iters = max(10, int(1600 * a.scale))
    lines = max(8, int(256 * a.scale))
    kernels = [("compute-bound", "compute", sim_speed.COMPUTE.format(iters=iters), (), b""),
               ("memory-bound", "memory", sim_speed.MEMORY.format(lines=lines, stride=lines * 64),
                [{"address": "0x100000000", "size": threads * lines * 64}], struct.pack("<Q", 0x100000000))]
    print(f"1. simulation speed, xe-lp ({threads} threads busy), OA block off vs {a.mode}; medians of {a.rounds}")
    print(f"{'kernel':<14} {'GPU cycles':>11} {'off s':>8} {a.mode + ' s':>8} {'ratio':>7}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for label, name, src, bufs, args in kernels:
            times = {"off": [], a.mode: []}
            cycles = {}
            for _ in range(a.rounds):
                for mode in ("off", a.mode):
                    c, h = run(a.gpu, a.asm, tmp, name, src, threads, mode, args, bufs)
                    times[mode].append(h)
                    cycles.setdefault(mode, c)
            if cycles["off"] != cycles[a.mode]:
                sys.exit(f"{label}: {cycles['off']} cycles with the OA block off, {cycles[a.mode]} on: "
                         "the block must not change timing")
            off, on = statistics.median(times["off"]), statistics.median(times[a.mode])
            print(f"{label:<14} {cycles['off']:>11} {off:>8.3f} {on:>8.3f} {on / off:>6.2f}x")
    print("goal (issue 13): <= 1.3x")
    if a.calc:
        print("2. zetMetricGroupCalculateMetricValues, ComputeBasic (time-based), one core")
        with zedaemon.Daemon(a.gpu, "--preset", "xe-lp", test_channel=False) as d:
            env = {**os.environ, "ZESIM_SOCKET": d.path, "LD_PRELOAD": a.preload, "ZET_ENABLE_METRICS": "1"}
            if a.driver:
                env["ZE_ENABLE_ALT_DRIVERS"] = a.driver
            rc = subprocess.run([a.calc], env=env).returncode
            if rc:
                sys.exit(rc)
        print("goal (issue 13): >= 5 M reports/s")


if __name__ == "__main__":
    main()
