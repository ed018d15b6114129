#!/usr/bin/env python3
"""bench/sim_speed: simulation speed of zesim-gpu on the xe-lp preset with every
hardware thread busy, on a compute-bound and a memory-bound kernel.

Prints simulated GPU cycles per host second, SIMD instructions per host second,
lane operations per host second and the peak RSS of the simulator.  Counts come
from the model's ledger; host time is the wall time of the zesim-gpu process
(start-up included, which is < 10 ms)."""
import argparse
import json
import pathlib
import resource
import struct
import subprocess
import tempfile
import time

COMPUTE = """.kernel compute
.simd 16
        mov (16) r10:d r1:d
        mov (16) r11:d 1:d
        mov (16) r12:d 2:d
        mov (16) r13:d 3:d
        mov (1) r30.0:d {iters}:d
        do (16)
            add (16) r10:d r10:d 1:d
            add (16) r11:d r11:d 3:d
            xor (16) r12:d r12:d r10:d
            shl (16) r13:d r13:d 1:d
            add (16) r14:d r10:d r11:d
            and (16) r15:d r12:d r13:d
            add (1) r30.0:d r30.0:d -1:d
            cmp.gt.f0 (16) null r30.0:d 0:d
        (f0) while (16)
        send.eot
"""

MEMORY = """.kernel memory
.simd 16
.arg buf global
        // each thread streams its own {lines} lines: offset = (tid * {lines} + i) * 64 + lane * 4
        mul (1) r20.0:ud r0.0:ud {stride}:ud
        shl (16) r21:ud r1:ud 2:ud
        add (16) r21:ud r21:ud r20.0:ud
        mov (1) r30.0:d {lines}:d
        do (16)
            send.load.v4 (16) r40 r21 r7.0
            add (16) r21:ud r21:ud 64:ud
            add (1) r30.0:d r30.0:d -1:d
            cmp.gt.f0 (16) null r30.0:d 0:d
        (f0) while (16)
        send.eot
"""


def run(gpu, asm, tmp, name, source, groups, args=b"", buffers=()):
    src, mod, stim, ledger = (tmp / f"{name}.{e}" for e in ("zeasm", "elf", "json", "jsonl"))
    src.write_text(source)
    subprocess.run([asm, "-o", str(mod), str(src)], check=True)
    stim.write_text(json.dumps({
        "buffers": list(buffers),
        "modules": [{"path": str(mod), "address": "0x40000000"}],
        "commands": [{"cmd": "compute_walker", "kernel": name, "group_size": [16, 1, 1],
                      "groups": [groups, 1, 1], "args": args.hex()}]}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([gpu, "--preset", "xe-lp", "--stimulus", str(stim), "--ledger", str(ledger)],
                         check=True, capture_output=True, text=True, env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    host = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    res = json.loads(out.stdout)
    inst = lanes = 0
    for line in ledger.read_text().splitlines():
        w = json.loads(line)
        inst += sum(w["inst"].values())
        lanes += w["lane_ops"]
    return res["cycles"], inst, lanes, host, rss_mb, before


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--as", dest="asm", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--scale", type=float, default=1.0, help="work multiplier (CI uses a small one)")
    a = ap.parse_args()
    threads = 6 * 16 * 7
    iters = max(10, int(1600 * a.scale))
    lines = max(8, int(256 * a.scale))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        rows = [("compute-bound", *run(a.gpu, a.asm, tmp, "compute", COMPUTE.format(iters=iters), threads))]
        size = threads * lines * 64
        rows.append(("memory-bound", *run(
            a.gpu, a.asm, tmp, "memory", MEMORY.format(lines=lines, stride=lines * 64), threads,
            struct.pack("<Q", 0x100000000), [{"address": "0x100000000", "size": size}])))
    print(f"zesim-gpu on xe-lp (1x6x16x7 = {threads} threads, all busy); host time includes start-up")
    print(f"{'kernel':<14} {'GPU cycles':>11} {'SIMD inst':>11} {'host s':>7} {'Mcycles/s':>10} "
          f"{'M SIMD inst/s':>14} {'M lane-ops/s':>13} {'peak RSS MB':>12}")
    for name, cycles, inst, lanes, host, rss, _ in rows:
        print(f"{name:<14} {cycles:>11} {inst:>11} {host:>7.3f} {cycles / host / 1e6:>10.2f} "
              f"{inst / host / 1e6:>14.2f} {lanes / host / 1e6:>13.2f} {rss:>12.1f}")
    print("goals (issue 4): >= 10 M SIMD inst/s compute-bound, >= 1 M GPU cycles/s memory-bound")


if __name__ == "__main__":
    main()
