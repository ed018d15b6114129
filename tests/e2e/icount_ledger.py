#!/usr/bin/env python3
"""zesim-icount's counts against the model's ground-truth ledger.

    icount_ledger.py --build BUILD [--keep DIR] [TRACE_LEDGER_OPTIONS] -- PROGRAM ARGS...

1. trace_ledger.py --inst-json runs PROGRAM under `zesim trace` on a daemon with 1-cycle
   ledger windows (with all of its own checks) and gives, for each device operation, the
   instructions the ledger counts in its busy run — the model's own count, kernel by
   kernel, with no instrumentation in the code. PROGRAM runs there under
   `zesim-icount --no-rewrite`: its modules are built with the build flags the tool adds
   (-g, which changes no code, and -zet-profile-flags 0x3, whose REGISTER_REALLOCATION
   keeps r126-r127 free and so changes the code of kernels that used them), so both runs
   execute the same kernels;
2. PROGRAM runs again under `zesim-icount --json` (tiny preset, as in 1), which rewrites
   every kernel to count its basic blocks and reports the instructions each kernel
   executed;
3. per kernel name, the sum over the program's launches must be equal, exactly, and
   every kernel the program launched must be counted.
"""
import argparse
import collections
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
LAUNCH_APIS = ("zeCommandListAppendLaunchKernel", "zeCommandListAppendLaunchCooperativeKernel")


def fail(msg):
    print(f"icount_ledger: FAIL: {msg}")
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", help="keep the outputs in this folder")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a, trace_opts = ap.parse_known_args()  # e.g. --preset-clocks: trace_ledger.py's
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    build = pathlib.Path(a.build).resolve()
    with tempfile.TemporaryDirectory(prefix="icount-ledger.") as tmp:
        work = pathlib.Path(a.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        ops_file, counts_file = work / "ledger_ops.json", work / "icount.jsonl"
        if counts_file.exists():
            counts_file.unlink()
        r = subprocess.run([sys.executable, str(HERE / "trace_ledger.py"), "--build", str(build), "--keep",
                            str(work / "trace"), "--inst-json", str(ops_file)] + trace_opts
                           + ["--", str(build / "tools" / "zesim-icount"), "--no-rewrite", "--"] + prog,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout, end="")
        if r.returncode:
            fail("trace_ledger.py failed")
        cfg = work / "daemon.json"
        cfg.write_text('{"job_timeout_ms": 120000}\n')
        r = subprocess.run([str(ROOT / "zesim"), "run", "--preset", "tiny", "--config", str(cfg), "--",
                            str(build / "tools" / "zesim-icount"), "--out", str(work / "icount.txt"),
                            "--json", str(counts_file), "--"] + prog,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(__import__("os").environ, ZESIM_BUILD=str(build)))
        (work / "icount.log").write_text(r.stdout)
        if r.returncode:
            print(r.stdout[-4000:])
            fail(f"the program under zesim-icount exits {r.returncode}")
        if "not instrumented" in r.stdout or "not counted" in r.stdout:
            print(r.stdout[-4000:])
            fail("a module or kernel was left uninstrumented")
        ledger = collections.Counter()
        launches = collections.Counter()
        for op in json.loads(ops_file.read_text()):
            if op["api"] in LAUNCH_APIS:
                ledger[op["name"]] += op["instructions"]
                launches[op["name"]] += 1
        counted = collections.Counter()
        for line in counts_file.read_text().splitlines():
            for k in json.loads(line)["kernels"]:
                counted[k["name"]] += k["instructions"]
        if not ledger:
            fail("the program launched no kernel")
        bad = 0
        for name in sorted(ledger):
            if counted.get(name) != ledger[name]:
                print(f"icount_ledger: FAIL: kernel {name}: zesim-icount counts {counted.get(name)}, "
                      f"the ledger {ledger[name]} ({launches[name]} launches)")
                bad += 1
        extra = {n for n, c in counted.items() if c and n not in ledger}
        if extra:
            print(f"icount_ledger: FAIL: zesim-icount counted kernels the trace never saw: {sorted(extra)}")
            bad += 1
        if bad:
            sys.exit(1)
        print(f"icount_ledger: ok: {len(ledger)} kernels, {sum(launches.values())} launches, "
              f"{sum(ledger.values())} instructions, each kernel's count equal to the ledger's")


if __name__ == "__main__":
    main()
