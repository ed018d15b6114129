#!/usr/bin/env python3
"""`zesim metrics` as a user runs it (README example): on the demo program it writes a
CSV with one row per report and every metric of the group, the raw reports (a whole
number of 256-byte reports, one more than the rows), a PNG, and a summary with the
demo's busy interval; the rows' GpuTime add up to the time the reports span. Bad use
gets a clear error: an unknown group, no program. The per-kernel summary names the demo's
kernel (vadd) with the reports that overlap it."""
import argparse
import csv
import os
import pathlib
import re
import subprocess
import sys
import tempfile


def fail(msg):
    print("zesim_metrics_cli: FAILED: " + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--demo", required=True)
    ap.add_argument("--module", required=True)
    a = ap.parse_args()
    env = {**os.environ, "ZESIM_BUILD": a.build, "ZESIM_SKIP_APT": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "m"
        r = subprocess.run([a.zesim, "metrics", "--out", str(out), "--", a.demo, a.module], env=env,
                           capture_output=True, text=True, timeout=300)
        if r.returncode:
            fail(f"exit {r.returncode}:\n{r.stdout}\n{r.stderr}")
        rows = list(csv.DictReader(open(out / "metrics.csv")))
        raw = (out / "raw.bin").stat().st_size
        if not rows or raw != 256 * (len(rows) + 1):
            fail(f"{len(rows)} rows and {raw} bytes of raw reports (256 x (rows + 1) expected)")
        for need in ("GpuTime", "GpuBusy", "EuActive", "XVE_ACTIVE", "QueryBeginTime"):
            if need not in rows[0]:
                fail(f"no column {need}")
        busy = [x for x in rows if float(x["GpuBusy"]) > 0]
        if not busy:
            fail("no report saw the demo's kernels")
        t = [int(x["QueryBeginTime"]) for x in rows]
        if any(b <= a for a, b in zip(t, t[1:])):
            fail("QueryBeginTime does not increase")
        if not (out / "timeline.png").read_bytes().startswith(b"\x89PNG"):
            fail("timeline.png is not a PNG")
        if "start us" not in r.stdout or "OK: 4096 of 4096" not in r.stdout:
            fail("no summary table or the demo's own output missing:\n" + r.stdout)
        kern = [m for m in (re.match(r"vadd\s+[\d.]+\s+([\d.]+)\s+(\d+)\s", x) for x in r.stdout.splitlines()) if m]
        if len(kern) != 1 or float(kern[0].group(1)) <= 0 or int(kern[0].group(2)) < 1:
            fail("the per-kernel summary has no line for the demo's kernel vadd with its reports:\n" + r.stdout)
        bad = subprocess.run([a.zesim, "metrics", "--group", "NoSuchGroup", "--out", str(out), "--", a.demo,
                              a.module], env=env, capture_output=True, text=True, timeout=300)
        if bad.returncode == 0 or "no time-based metric group 'NoSuchGroup'" not in bad.stderr:
            fail(f"an unknown group: exit {bad.returncode}, stderr:\n{bad.stderr}")
        none = subprocess.run([a.zesim, "metrics"], env=env, capture_output=True, text=True, timeout=60)
        if none.returncode != 2 or "no program" not in none.stderr:
            fail(f"no program: exit {none.returncode}, stderr:\n{none.stderr}")
    print(f"zesim_metrics_cli: {len(rows)} reports, {len(busy)} busy, PNG and summary written; errors clear")


if __name__ == "__main__":
    main()
