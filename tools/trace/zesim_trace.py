#!/usr/bin/env python3
"""zesim trace: record a Level Zero program's API calls and device work as a Chrome trace.

    zesim trace [--out trace.json] [--summary] [--preset P] [--config F] [--topology T] -- PROGRAM ARGS...

Runs PROGRAM on the simulated GPU (as `zesim run`) with the loader's tracing layer on
and the tool library build/lib/libzesim_trace.so preloaded, which records every API
call (CLOCK_MONOTONIC_RAW at entry and exit, thread, result) and the device start and
end of every kernel, copy and fill (kernel timestamps). Writes Chrome trace-event JSON
that Perfetto (ui.perfetto.dev) and chrome://tracing open; --summary prints a table
per API (count, total, mean, max) and per kernel (count, device time) on stderr.
Exit status: the program's; 2 for a usage error, 1 if no trace could be written.
"""
import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile

GPU_TID_BASE = 1 << 30  # device tracks: tids no thread has (Linux pids are < 2^22)


def say(msg):
    print(f"zesim trace: {msg}", file=sys.stderr)


def parse(argv):
    if "--" in argv:
        i = argv.index("--")
        opts, prog = argv[:i], argv[i + 1:]
    else:
        opts, prog = argv, []
    ap = argparse.ArgumentParser(prog="zesim trace", description=__doc__.split("\n\n")[0],
                                 epilog="example: ./zesim trace --out vadd.json --summary -- "
                                        "build/tests/e2e/zesim_l0_demo build/tests/kernels/vadd.spv")
    ap.add_argument("--out", default="trace.json", help="the Chrome trace file (default ./trace.json)")
    ap.add_argument("--summary", action="store_true", help="print the per-API and per-kernel table on stderr")
    ap.add_argument("--preset", help="device preset (docs/config.md), passed to zesim run")
    ap.add_argument("--config", help="device config file (docs/config.md), passed to zesim run")
    ap.add_argument("--topology", help="SxSSxEUxT, passed to zesim run")
    ap.add_argument("--timeout", help="job timeout in seconds, passed to zesim run")
    a = ap.parse_args(opts)
    if not prog:
        ap.error("no program: zesim trace [options] -- PROGRAM ARGS...")
    return a, prog


def host_mapper(pairs):
    """Device ticks -> host ns for one device, from its (host ns, ticks) pairs.

    Simulated device time advances only while the device works, so there is no single
    clock ratio: tick t is placed after the latest pair whose device time is <= t, by
    t's distance from it at the device's tick length, and never past the next pair's
    host time (so the mapping is monotonic and work of one queue never overlaps). The
    end of an interval (`end=True`) is placed after the latest pair strictly before it:
    an interval that ends when the device went idle ends there, not at the next
    submission that finds the device at that same time."""
    pairs = sorted(pairs)
    mono, top = [], 0
    for h, d in pairs:
        top = max(top, d)
        mono.append((h, top))

    def to_host(t, ns_per_tick, end=False):
        lo, hi = 0, len(mono) - 1
        if not mono:
            return t * ns_per_tick
        if t < mono[0][1]:
            return mono[0][0] - (mono[0][1] - t) * ns_per_tick
        while lo < hi:  # the last i with mono[i].ticks <= t (< t for an end)
            mid = (lo + hi + 1) // 2
            if mono[mid][1] < t or (mono[mid][1] == t and not end):
                lo = mid
            else:
                hi = mid - 1
        h, d = mono[lo]
        v = h + (t - d) * ns_per_tick
        if lo + 1 < len(mono):
            v = min(v, mono[lo + 1][0])
        return v
    return to_host


def convert(parts):
    """The per-process records -> (Chrome trace events, API stats, kernel stats)."""
    events = []
    api_stats = collections.defaultdict(list)
    kern_stats = collections.defaultdict(list)
    for p in parts:
        pid, apis = p["pid"], p["apis"]
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": f"{os.path.basename(p['program'])} (pid {pid})"}})
        by_tid = collections.defaultdict(list)
        for tid, api, t0, t1, res in p["calls"]:
            by_tid[tid].append((t0, t1, apis[api], res))
        for tid, calls in sorted(by_tid.items()):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": f"host thread {tid}"}})
            calls.sort()
            for t0, t1, name, res in calls:
                events.append({"ph": "B", "cat": "api", "name": name, "pid": pid, "tid": tid, "ts": t0 / 1000})
                events.append({"ph": "E", "cat": "api", "name": name, "pid": pid, "tid": tid, "ts": t1 / 1000,
                               "args": {"result": res}})
                api_stats[name].append(t1 - t0)
        devs = p["devices"]
        mappers = {d: host_mapper([(h, t) for dd, h, t in p["pairs"] if dd == d]) for d in range(len(devs))}
        for tr in p["tracks"]:
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": GPU_TID_BASE + tr["id"],
                           "args": {"name": f"GPU {tr['dev']}: {tr['kind']} {tr['id']}"}})
            events.append({"ph": "M", "name": "thread_sort_index", "pid": pid, "tid": GPU_TID_BASE + tr["id"],
                           "args": {"sort_index": -1000 + tr["id"]}})
        for w in p["device_work"]:
            dev = devs[w["dev"]]
            mask = (1 << dev["valid_bits"]) - 1 if 0 < dev["valid_bits"] < 64 else (1 << 64) - 1
            ticks = (w["end"] - w["start"]) & mask
            ns_per_tick = 1e9 / dev["freq"] if dev["freq"] else 1.0
            dev_ns = ticks * ns_per_tick
            start = mappers[w["dev"]](w["start"], ns_per_tick)
            end = mappers[w["dev"]](w["start"] + ticks, ns_per_tick, end=ticks > 0)
            args = {"api": w["api"], "device_start_ticks": w["start"], "device_end_ticks": w["end"],
                    "device_ticks": ticks, "device_ns": round(dev_ns, 3), "timer_hz": dev["freq"]}
            if "groups" in w:
                args["groups"] = w["groups"]
            events.append({"ph": "X", "cat": "device", "name": w["name"], "pid": pid,
                           "tid": GPU_TID_BASE + w["track"], "ts": start / 1000, "dur": max(0.0, end - start) / 1000,
                           "args": args})
            kern_stats[w["name"]].append(dev_ns)
        if p.get("unread"):
            say(f"pid {pid}: {p['unread']} device operation(s) never completed or could not be read: not in the trace")
    return events, api_stats, kern_stats


def summary(api_stats, kern_stats, out=sys.stderr):
    us = lambda ns: f"{ns / 1000:.3f}"
    w = max([len(n) for n in list(api_stats) + list(kern_stats)] + [24])
    print(f"{'API call':<{w}} {'count':>8} {'total us':>12} {'mean us':>10} {'max us':>10}", file=out)
    for name, d in sorted(api_stats.items(), key=lambda kv: -sum(kv[1])):
        print(f"{name:<{w}} {len(d):>8} {us(sum(d)):>12} {us(sum(d) / len(d)):>10} {us(max(d)):>10}", file=out)
    print(f"\n{'device work (simulated)':<{w}} {'count':>8} {'total us':>12} {'mean us':>10} {'max us':>10}", file=out)
    for name, d in sorted(kern_stats.items(), key=lambda kv: -sum(kv[1])):
        print(f"{name:<{w}} {len(d):>8} {us(sum(d)):>12} {us(sum(d) / len(d)):>10} {us(max(d)):>10}", file=out)
    if not kern_stats:
        print("(none)", file=out)


def main(argv):
    a, prog = parse(argv)
    here = pathlib.Path(__file__).resolve().parents[2]
    build = pathlib.Path(os.environ.get("ZESIM_BUILD", here / "build"))
    lib = build / "lib" / "libzesim_trace.so"
    if not lib.exists():
        say(f"{lib} is missing: build it first (cmake --build {build} --target zesim_trace)")
        return 1
    run = [str(here / "zesim"), "run"]
    for opt in ("preset", "config", "topology", "timeout"):
        if getattr(a, opt):
            run += [f"--{opt}", getattr(a, opt)]
    with tempfile.TemporaryDirectory(prefix="zesim-trace.") as tmp:
        env = dict(os.environ, ZESIM_BUILD=str(build), ZESIM_TRACE_DIR=tmp, ZE_ENABLE_TRACING_LAYER="1",
                   LD_PRELOAD=f"{lib}:{os.environ['LD_PRELOAD']}" if os.environ.get("LD_PRELOAD") else str(lib))
        say(f"tracing {' '.join(prog)}")
        rc = subprocess.call(run + ["--"] + prog, env=env)
        parts = []
        for f in sorted(pathlib.Path(tmp).glob("*.json")):
            try:
                parts.append(json.loads(f.read_text()))
            except (OSError, ValueError) as e:
                say(f"{f.name}: unreadable record of a process ({e}): left out")
    if not parts:
        say("no process recorded anything (did the program call zeInit?): no trace written")
        return rc if rc else 1
    events, api_stats, kern_stats = convert(parts)
    doc = {"traceEvents": events, "displayTimeUnit": "ns",
           "otherData": {"tool": "zesim trace", "clock": "CLOCK_MONOTONIC_RAW",
                         "device_time": "simulated; placed on the host clock at global-timestamp pairs"}}
    try:
        with open(a.out, "w") as f:
            json.dump(doc, f, separators=(",", ":"))
    except OSError as e:
        say(f"cannot write {a.out}: {e}")
        return 1
    ncalls = sum(len(v) for v in api_stats.values())
    nwork = sum(len(v) for v in kern_stats.values())
    say(f"{ncalls} API calls, {nwork} device operations from {len(parts)} process(es) -> {a.out}"
        f" (program exit status {rc})")
    if a.summary:
        summary(api_stats, kern_stats)
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
