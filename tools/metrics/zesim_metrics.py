#!/usr/bin/env python3
"""zesim metrics: collect a metric group while a Level Zero program runs on the simulated GPU.

    zesim metrics [--group G] [--period NS] [--out DIR] [--preset P] [--config F] -- PROGRAM ARGS...

Starts the simulator, opens a time-based metric streamer for group G (default ComputeBasic)
in a collector process of its own (tools/metrics/collect.c, the public Level Zero API
only), runs the program, and when it exits writes:
  DIR/metrics.csv   one row per OA report: every metric of the group (zetMetricGroupCalculateMetricValues)
  DIR/timeline.png  the group's percentage metrics over time (python3-matplotlib)
  DIR/raw.bin       the raw reports (zetMetricStreamerReadData)
and prints a summary per kernel: each kernel, copy and fill of the program (recorded by the
`zesim trace` tool library, tools/trace/) with its device time and the metrics of the
reports that overlap it, and per busy interval of the GPU.
Exit status: the program's; 1 if the collection failed.
"""
import argparse
import csv
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def parse(argv):
    if "--" in argv:
        i = argv.index("--")
        opts, prog = argv[:i], argv[i + 1:]
    else:
        opts, prog = argv, []
    ap = argparse.ArgumentParser(prog="zesim metrics", description=__doc__.split("\n\n")[0],
                                 epilog="example: ./zesim metrics --group ComputeBasic --period 100000 --out m -- "
                                        "build/tests/e2e/demo build/tests/kernels/vadd.spv")
    ap.add_argument("--group", default="ComputeBasic", help="metric group (a time-based one; default ComputeBasic)")
    ap.add_argument("--period", type=int, default=100000, help="sampling period in ns (default 100000)")
    ap.add_argument("--out", default="zesim-metrics", help="output folder (default ./zesim-metrics)")
    ap.add_argument("--preset", help="device preset (docs/config.md)")
    ap.add_argument("--config", help="device config file (docs/config.md)")
    ap.add_argument("--build", default=os.environ.get("ZESIM_BUILD", "build"), help=argparse.SUPPRESS)
    a = ap.parse_args(opts)
    if not prog:
        ap.error("no program: zesim metrics [options] -- PROGRAM ARGS...")
    if a.period <= 0:
        ap.error("--period must be > 0 ns")
    return a, prog


def plot(rows, names, out):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("zesim metrics: python3-matplotlib is not installed: no timeline.png", file=sys.stderr)
        return
    t = times(rows)
    pct = [n for n in ("GpuBusy", "EuActive", "EuStall", "EuThreadOccupancy") if n in names]
    busy = [i for i, r in enumerate(rows) if "GpuBusy" in r and float(r["GpuBusy"]) > 0]
    # The whole run, and (when the GPU was busy) the busy part with a few reports around it.
    views = [(0, len(rows))] + ([(max(0, busy[0] - 5), min(len(rows), busy[-1] + 6))] if busy else [])
    fig, axes = plt.subplots(len(views), 1, figsize=(10, 3.5 * len(views)), squeeze=False)
    for ax, (a, b) in zip(axes[:, 0], views):
        for n in pct:
            ax.plot([x / 1e3 for x in t[a:b]], [float(r[n]) for r in rows[a:b]], label=n, drawstyle="steps-post")
        ax.set_xlabel("time (us of GPU time)")
        ax.set_ylabel("percent")
        ax.set_ylim(0, 105)
        ax.legend(loc="upper right")
    axes[0, 0].set_title(f"zesim metrics: {len(rows)} reports" + (", below: the busy part" if busy else ""))
    fig.tight_layout()
    fig.savefig(out)


def times(rows):
    """Start of each report interval in ns: QueryBeginTime if the group has it, else summed GpuTime."""
    if rows and "QueryBeginTime" in rows[0]:
        t0 = int(rows[0]["QueryBeginTime"])
        return [int(r["QueryBeginTime"]) - t0 for r in rows]
    t, acc = [], 0
    for r in rows:
        t.append(acc)
        acc += int(r.get("GpuTime", 0))
    return t


def summary(rows, names):
    if "GpuBusy" not in names:
        print("zesim metrics: the group has no GpuBusy: no per-interval summary")
        return
    t = times(rows)
    spans, cur = [], None
    for i, r in enumerate(rows):
        busy = float(r["GpuBusy"]) > 0
        if busy and cur is None:
            cur = [i, i]
        elif busy:
            cur[1] = i
        elif cur is not None:
            spans.append(cur)
            cur = None
    if cur is not None:
        spans.append(cur)
    cols = [n for n in ("GpuCoreClocks", "EuActive", "EuStall", "EuThreadOccupancy", "EuAvgIpcRate") if n in names]
    print(f"{'#':>3} {'start us':>10} {'reports':>8} " + " ".join(f"{c:>17}" for c in cols))
    for k, (a, b) in enumerate(spans):
        sel = rows[a:b + 1]
        vals = []
        for c in cols:
            xs = [float(r[c]) for r in sel]
            vals.append(sum(xs) if c == "GpuCoreClocks" else sum(xs) / len(xs))
        print(f"{k:>3} {t[a] / 1e3:>10.1f} {len(sel):>8} " + " ".join(f"{v:>17.2f}" for v in vals))
    if not spans:
        print("zesim metrics: no report saw the GPU busy (a program shorter than one period?)")


def device_work(trace_dir):
    """The program's device operations (name, start ns, end ns) from the records of the
    zesim trace tool library (tools/trace): device ticks at the device's timer."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "trace"))
    import json
    import zesim_trace
    parts = []
    for f in sorted(pathlib.Path(trace_dir).glob("*.json")):
        try:
            parts.append(json.loads(f.read_text()))
        except (OSError, ValueError):
            pass
    if not parts:
        return []
    events, _, _ = zesim_trace.convert(parts)
    work = []
    for e in events:
        args = e.get("args", {})
        if e.get("ph") == "X" and e.get("cat") == "device" and "device_start_ticks" in args:
            hz = args.get("timer_hz") or 1
            work.append((e["name"], args["device_start_ticks"] * 1e9 / hz, args["device_end_ticks"] * 1e9 / hz))
    return sorted(work, key=lambda w: w[1])


def kernel_summary(rows, names, work):
    """Per device operation: the reports whose interval overlaps it, their metrics (percentages
    averaged over the overlap, clocks summed). A report that also covers idle time dilutes a
    short kernel: a shorter --period sharpens it."""
    if not work or "QueryBeginTime" not in names or "GpuTime" not in names:
        return
    cols = [n for n in ("EuActive", "EuStall", "EuThreadOccupancy", "GpuBusy") if n in names]
    span = [(int(r["QueryBeginTime"]), int(r["QueryBeginTime"]) + int(r["GpuTime"])) for r in rows]
    t0 = span[0][0] if span else 0  # times as in the busy-interval table: from the first report
    print(f"{'kernel':<24} {'start us':>10} {'device us':>10} {'reports':>8} " + " ".join(f"{c:>17}" for c in cols))
    for name, a, b in work:
        # Report timestamps are 32-bit: compare within one wrap (about 5.7 min at 12.5 MHz).
        over = [(i, min(b, e) - max(a, s)) for i, (s, e) in enumerate(span) if s < max(b, a + 1) and e > a]
        over = [(i, max(w, 1e-9)) for i, w in over]
        tot = sum(w for _, w in over) or 1
        vals = [sum(float(rows[i][c]) * w for i, w in over) / tot for c in cols]
        print(f"{name[:24]:<24} {(a - t0) / 1e3:>10.1f} {(b - a) / 1e3:>10.3f} {len(over):>8} " +
              " ".join(f"{v:>17.2f}" for v in vals))


def main(argv):
    a, prog = parse(argv)
    build = pathlib.Path(a.build).resolve()
    gpu, collector = build / "sim" / "zesim-gpu", build / "tools" / "zesim-metrics-collect"
    for f in (gpu, collector):
        if not f.exists():
            sys.exit(f"zesim metrics: {f} is missing: run ./zesim build first")
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="zesim-metrics.")
    os.chmod(tmp, 0o700)
    sock = os.path.join(tmp, "gpu.sock")
    log = open(os.path.join(tmp, "daemon.log"), "w+")
    gargs = [str(gpu), "--socket", sock]
    if a.preset:
        gargs += ["--preset", a.preset]
    if a.config:
        gargs += ["--config", a.config]
    env = {**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
    daemon = subprocess.Popen(gargs, stderr=log, env=env)
    coll = None
    try:
        for _ in range(200):
            if os.path.exists(sock) or daemon.poll() is not None:
                break
            time.sleep(0.05)
        if not os.path.exists(sock):
            log.seek(0)
            sys.exit("zesim metrics: the simulator did not start:\n" + log.read())
        cenv = {**env, "ZESIM_SOCKET": sock, "ZET_ENABLE_METRICS": "1",
                "LD_PRELOAD": str(build / "lib" / "libzesim_preload.so"),
                "ZE_ENABLE_ALT_DRIVERS": str(build / "lib" / "libze_zesim.so.1")}
        coll = subprocess.Popen([str(collector), "--group", a.group, "--period", str(a.period),
                                 "--csv", str(out / "metrics.csv"), "--raw", str(out / "raw.bin")],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=cenv, text=True)
        if coll.stdout.readline().strip() != "ready":
            coll.wait()
            sys.exit(f"zesim metrics: the collector could not open a streamer for '{a.group}' (above)")
        print(f"zesim metrics: collecting {a.group} every {a.period} ns; running {' '.join(prog)}", file=sys.stderr)
        # The program runs with the zesim trace tool library: its kernels' device times
        # name the per-kernel summary.
        trace_dir = os.path.join(tmp, "trace")
        os.mkdir(trace_dir)
        penv = {k: v for k, v in cenv.items() if k != "ZET_ENABLE_METRICS"}
        tracelib = build / "lib" / "libzesim_trace.so"
        if tracelib.exists():
            penv.update(ZESIM_TRACE_DIR=trace_dir, ZE_ENABLE_TRACING_LAYER="1",
                        LD_PRELOAD=f"{tracelib}:{penv['LD_PRELOAD']}")
        try:
            rc = subprocess.call(prog, env=penv)
        except OSError as e:
            print(f"zesim metrics: cannot run {prog[0]}: {e}", file=sys.stderr)
            rc = 127
        coll.stdin.close()
        if coll.wait(timeout=600):
            print("zesim metrics: the collector failed (above)", file=sys.stderr)
            return 1
        work = device_work(trace_dir)
    finally:
        if coll and coll.poll() is None:
            coll.send_signal(signal.SIGTERM)
            coll.wait(30)
        daemon.terminate()
        daemon.wait(30)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    with open(out / "metrics.csv") as f:
        rows = list(csv.DictReader(f))
        names = rows[0].keys() if rows else []
    plot(rows, names, out / "timeline.png")
    print(f"zesim metrics: {len(rows)} reports in {out}/metrics.csv, plot {out}/timeline.png")
    kernel_summary(rows, names, work)
    summary(rows, names)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
