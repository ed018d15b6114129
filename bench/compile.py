#!/usr/bin/env python3
"""bench/compile: the driver's SPIR-V front end, its speed and the quality of its code.

1. Compile time: host wall time of the SPIR-V -> ZE-ISA translation of every
   module in the kernels folder (build/tests/kernels/*.spv), the fastest of
   repeated runs of spv_compile (what zeModuleCreate runs; reading the file
   and uploading the module are not included).
2. Code quality: simulated GPU cycles of the naive and the tiled matrix
   multiply of tests/kernels/matmul.cl as compiled (and with the build flag
   -fno-unroll-loops, without the loop optimisations), against the same kernels
   hand-scheduled in ZE-ISA (bench/matmul.zeasm), through Level Zero kernel
   timestamps on `zesim run`, every result checked bit for bit against the
   host.  The daemon runs with timestamp_khz = core_mhz * 1000, so that one
   timestamp tick is one GT cycle (the default 12.5 MHz timer ticks every 80
   cycles); the first run of each kernel warms the L3 and is not counted.
"""
import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

GOAL = 1.5  # compiled / hand cycles


def translate(bench, kernels):
    files = sorted(p for p in pathlib.Path(kernels).glob("*.spv") if "unvalidated" not in p.name)
    if not files:
        sys.exit(f"compile.py: no .spv modules in {kernels}")
    out = subprocess.run([bench, "translate", *map(str, files)], check=True, capture_output=True, text=True)
    print(f"{'module':<28} {'bytes':>7} {'kernels':>7} {'ISA inst':>8} {'compile us':>10}")
    total = 0.0
    for line in out.stdout.splitlines():
        f = line.split(" ", 5)
        if f[2] == "refused":
            print(f"{f[0]:<28} {f[1]:>7} {'refused':>7} {'':>8} {float(f[3]):>10.1f}  ({f[4]} {f[5]})"
                  if len(f) > 5 else f"{f[0]:<28} {f[1]:>7} {'refused':>7} {'':>8} {float(f[3]):>10.1f}")
        else:
            total += float(f[4])
            print(f"{f[0]:<28} {f[1]:>7} {f[2]:>7} {f[3]:>8} {float(f[4]):>10.1f}")
    print(f"{'all translated modules':<28} {'':>7} {'':>7} {'':>8} {total:>10.1f}")


def cycles(a):
    cfg = {"preset": a.preset, "timestamp_khz": 1000 * 1000}  # core_mhz (1000 in every preset) * 1000
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "config.json"
        path.write_text(json.dumps(cfg))
        env = {**os.environ, "ZESIM_BUILD": a.build}
        out = subprocess.run([a.zesim, "run", "--config", str(path), "--", a.bench, "cycles", a.matmul, a.hand,
                              str(a.size), str(a.repeat)], env=env, capture_output=True, text=True)
    if out.returncode:
        sys.exit(f"compile.py: the cycles run failed:\n{out.stdout}{out.stderr}")
    rows = {}
    for line in out.stdout.splitlines():
        if line.startswith("#"):
            print(line[2:])
            continue
        *label, mean, least, most = line.split()
        rows[" ".join(label)] = (float(mean), int(least), int(most))
    print(f"{'kernel':<18} {'GPU cycles':>10} {'min':>9} {'max':>9}")
    for label, (mean, least, most) in rows.items():
        print(f"{label:<18} {mean:>10.0f} {least:>9} {most:>9}")
    for kind in ("naive", "tiled"):
        ratio = rows[f"{kind} compiled"][0] / rows[f"{kind} hand"][0]
        plain = rows[f"{kind} no-loop-opt"][0] / rows[f"{kind} hand"][0]
        print(f"{kind}: compiled / hand = {ratio:.2f}x (goal <= {GOAL}x; {plain:.2f}x with -fno-unroll-loops)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", required=True, help="the compile_bench binary")
    ap.add_argument("--kernels", required=True, help="folder of the compiled .spv modules")
    ap.add_argument("--hand", required=True, help="bench/matmul.zeasm assembled")
    ap.add_argument("--zesim", default=str(pathlib.Path(__file__).resolve().parents[1] / "zesim"))
    ap.add_argument("--build", required=True, help="the build folder (ZESIM_BUILD)")
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--size", type=int, default=64, help="matrices of SIZE x SIZE")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per kernel")
    a = ap.parse_args()
    a.matmul = str(pathlib.Path(a.kernels) / "matmul.spv")
    print("SPIR-V -> ZE-ISA translation (host wall time, fastest of repeated runs):")
    translate(a.bench, a.kernels)
    print()
    print(f"matrix multiply, simulated GPU cycles on {a.preset} (compiled from SPIR-V vs hand-written ZE-ISA):")
    cycles(a)


if __name__ == "__main__":
    main()
