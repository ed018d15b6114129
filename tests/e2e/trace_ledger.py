#!/usr/bin/env python3
"""`zesim trace` on an e2e program, checked against the model's ground-truth ledger.

    trace_ledger.py --build BUILD [--keep DIR] [--preset-clocks] -- PROGRAM ARGS...

Starts a daemon of its own on the tiny preset with a config in which a timestamp tick
is one GT cycle (`timestamp_khz` = `core_mhz` x 1000, docs/config.md) and ledger windows
are one cycle long (`ledger_window` 1), writing the ledger (docs/oa.md §3) into a FIFO
that this script reads as the program runs (a line per cycle: gigabytes for the longer
programs, never stored), runs `zesim trace --out trace.json -- PROGRAM ARGS` on it, and checks:

1. the program exits 0 (these are the e2e programs: they check themselves);
2. trace.json passes tools/trace/trace_validate.py (the trace-event format; every B
   has its E; X events on a track nest or are disjoint);
3. the device times equal the ledger's. What the two record, from docs/commands.md §3
   and docs/oa.md §2: an append with a timestamp event is TIMESTAMP_WRITE (start),
   its walkers, TIMESTAMP_WRITE (end), STORE_DATA. A post-sync command is performed
   once the GT is idle; the next step starts in that cycle and queues the walker there,
   so the start timestamp is the first cycle the ledger counts in `gpu_busy` (a walker
   queued in cycle t counts from t). The end timestamp is written in the cycle the last
   thread retired — the last `gpu_busy` cycle — unless the streamer's own step (walker
   36 cycles + TIMESTAMP_WRITE 4) ends later, in which case it is that step's end. So
   for every piece of device work W with walkers, with B = its maximal run of busy
   cycles [b0, b1]:  start(W) = b0  and  end(W) = max(b1, b0 + 40),
   i.e. the device time is busy(W) − 1 cycles whenever W ran longer than 40 cycles.
   And the other way round: every busy run of the ledger is exactly one traced
   device operation (the program's kernels, copies and fills are the only walkers:
   nothing else made the GT busy). Work without walkers (an empty copy) has no busy
   cycle in [start, end].

--preset-clocks keeps the preset's timestamp clock (12.5 MHz, 80 cycles a tick), for
programs that check it (e2e_properties): the busy runs and the device operations are
then matched in order and compared as ticks, tick(c) = c × kHz / (MHz × 1000) rounded
down (docs/commands.md §3).
"""
import argparse
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tools" / "trace"))
import trace_validate  # noqa: E402

STEP_CYCLES = 36 + 4  # COMPUTE_WALKER + TIMESTAMP_WRITE (docs/commands.md §3)
CONFIG = {"preset": "tiny", "timestamp_khz": 1000000, "core_mhz": 1000, "ledger_window": 1,
          "job_timeout_ms": 120000}


def fail(msg):
    print(f"trace_ledger: FAIL: {msg}")
    sys.exit(1)


def busy_runs(ledger, out, inst=False):
    """Maximal runs [first, last] of cycles with gpu_busy, from a ledger of 1-cycle windows,
    appended to `out`; a problem is appended as a string. With `inst`, a run is
    [first, last, instructions]: the instructions the EUs executed in it (the sum of `inst`)."""
    pat = re.compile(r'"start":(\d+),"end":(\d+),"gpu_busy":(\d+),')
    inst_pat = re.compile(r'"inst":\{([^}]*)\}')
    cur = None
    with open(ledger) as f:
        for line in f:
            m = pat.match(line, line.find('"start"'))
            if not m:
                out.append(f"unexpected ledger line {line[:80]!r}")
                return
            start, end, busy = int(m.group(1)), int(m.group(2)), int(m.group(3))
            if busy and end - start != 1 or busy > end - start:
                out.append(f"ledger window [{start}, {end}) is not one cycle (gpu_busy {busy})")
                return
            if busy:
                if cur and cur[1] == start - 1:
                    cur[1] = start
                else:
                    cur = [start, start] + ([0] if inst else [])
                    out.append(cur)
                if inst:
                    cur[2] += sum(int(v.split(":")[1]) for v in inst_pat.search(line).group(1).split(","))


def device_work(doc, config):
    out = []
    for e in doc["traceEvents"]:
        if e["ph"] == "X" and e.get("cat") == "device":
            a = e["args"]
            if a["timer_hz"] != config["timestamp_khz"] * 1000:
                fail(f"{e['name']}: the device reports {a['timer_hz']} timestamp ticks/s, "
                     f"not the {config['timestamp_khz']} kHz the config sets")
            out.append((a["device_start_ticks"], a["device_end_ticks"], e["name"], a["api"]))
    return sorted(out)


def compare_ticks(work, runs, config):
    """As compare(), on the preset's coarser clock: in order, every operation with walkers."""
    tick = lambda c: c * config["timestamp_khz"] // (config["core_mhz"] * 1000)
    errs = []
    if len(work) != len(runs):
        errs.append(f"{len(work)} device operations but {len(runs)} busy runs in the ledger")
    for (s, e, name, api), r in zip(work, runs):
        want = (tick(r[0]), tick(max(r[1], r[0] + STEP_CYCLES)))
        if (s, e) != want:
            errs.append(f"{name} ({api}) device ticks [{s}, {e}]: the ledger's busy run [{r[0]}, {r[1]}] "
                        f"gives [{want[0]}, {want[1]}]")
    return errs, min(len(work), len(runs))


RENDEZVOUS_CYCLES = 8  # a host operation's STORE_DATA + SEMAPHORE_WAIT, 4 cycles each (docs/commands.md)


def compare(work, runs, rendezvous=False):
    """Problems between the traced device work and the ledger's busy runs (empty: exact).
    With `rendezvous` (programs with host-memory operations, driver/README.md "Host memory
    in copies"): an operation's end timestamp may follow k host rendezvous after its
    walkers, each RENDEZVOUS_CYCLES in which the GT is idle: end = the rule's + 8k."""
    errs = []
    by_start = {r[0]: r for r in runs}
    used = set()
    walkers = 0
    for s, e, name, api in work:
        r = by_start.get(s)
        if r is None:
            inside = [q for q in runs if s <= q[0] <= e or s <= q[1] <= e]
            if inside:
                errs.append(f"{name} ({api}) device [{s}, {e}]: the ledger's busy run {inside[0]} "
                            f"does not start at its start timestamp")
            continue  # no walker (e.g. an empty copy): nothing busy in [s, e]
        walkers += 1
        used.add(r)
        want_end = max(r[1], r[0] + STEP_CYCLES)
        if rendezvous and e > want_end and (e - want_end) % RENDEZVOUS_CYCLES == 0:
            want_end = e
        if e != want_end:
            errs.append(f"{name} ({api}) device [{s}, {e}] = {e - s} cycles: the ledger is busy in "
                        f"[{r[0]}, {r[1]}] ({r[1] - r[0] + 1} cycles), so the end should be {want_end}")
    for r in runs:
        if r not in used:
            errs.append(f"the ledger's busy run [{r[0]}, {r[1]}] ({r[1] - r[0] + 1} cycles) is no traced "
                        f"device operation")
    return errs, walkers


def check_summary(log, doc):
    """--summary's counts are the trace's: calls per API, operations per kernel name."""
    want_api, want_dev = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "B":
            want_api[e["name"]] = want_api.get(e["name"], 0) + 1
        elif e["ph"] == "X":
            want_dev[e["name"]] = want_dev.get(e["name"], 0) + 1
    got_api, got_dev, table = {}, {}, None
    for line in log.splitlines():
        if line.startswith("API call "):
            table = got_api
        elif line.startswith("device work (simulated)"):
            table = got_dev
        elif table is not None and re.fullmatch(r"\S+ +\d+ +[\d.]+ +[\d.]+ +[\d.]+", line):
            name, count = line.split()[:2]
            table[name] = int(count)
    if got_api != want_api or got_dev != want_dev:
        fail(f"--summary counts differ from the trace: API {got_api} vs {want_api}; device {got_dev} vs {want_dev}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", help="keep the trace, ledger and logs in this folder")
    ap.add_argument("--preset-clocks", action="store_true", help="keep the preset's timestamp clock")
    ap.add_argument("--host-rendezvous", action="store_true",
                    help="the program has host-memory operations: ends may follow host rendezvous")
    ap.add_argument("--inst-json", help="write each device operation's name, API and the instructions the "
                    "ledger counts in its busy run (JSON) to this file")
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    if not prog:
        ap.error("no program")
    build = pathlib.Path(a.build).resolve()
    tmp = tempfile.TemporaryDirectory(prefix="trace-ledger.")
    work = pathlib.Path(a.keep or tmp.name)
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o700)
    cfg = work / "config.json"
    config = dict(CONFIG)
    if a.preset_clocks:
        config["timestamp_khz"] = 12500  # the tiny preset's (docs/config.md)
    cfg.write_text(json.dumps(config))
    sock, ledger, trace = work / "gpu.sock", work / "ledger.jsonl", work / "trace.json"
    for p in (sock, ledger, trace):
        if p.exists():
            p.unlink()
    os.mkfifo(ledger)
    runs = []
    reader = threading.Thread(target=busy_runs, args=(ledger, runs, bool(a.inst_json)), daemon=True)
    reader.start()
    daemon = subprocess.Popen([str(build / "sim" / "zesim-gpu"), "--config", str(cfg), "--socket", str(sock),
                               "--ledger", str(ledger)], stderr=open(work / "daemon.log", "w"),
                              env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1"))
    try:
        for _ in range(200):
            if sock.exists():
                break
            time.sleep(0.05)
        else:
            fail("the daemon did not start: " + (work / "daemon.log").read_text())
        env = dict(os.environ, ZESIM_SOCKET=str(sock), ZESIM_BUILD=str(build))
        r = subprocess.run([str(ROOT / "zesim"), "trace", "--out", str(trace), "--summary", "--"] + prog,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        (work / "program.log").write_text(r.stdout)
        if r.returncode != 0:
            print(r.stdout[-4000:])
            fail(f"zesim trace exited with {r.returncode}")
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        if reader.is_alive():  # a daemon that never opened the FIFO leaves the reader in open()
            try:
                os.close(os.open(ledger, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
        reader.join(timeout=600)
    bad = [r for r in runs if isinstance(r, str)]
    if bad:
        fail(bad[0])
    runs = [tuple(r) for r in runs]
    errs = trace_validate.check_file(trace)
    if errs:
        fail("the trace is not valid trace-event JSON:\n  " + "\n  ".join(errs[:20]))
    doc = json.loads(trace.read_text())
    calls = sum(1 for e in doc["traceEvents"] if e["ph"] == "B")
    dw = device_work(doc, config)
    errs, walkers = compare_ticks(dw, runs, config) if a.preset_clocks else compare(dw, runs, a.host_rendezvous)
    if errs:
        fail(f"{len(errs)} difference(s) between the trace's device times and the ledger:\n  "
             + "\n  ".join(errs[:20]))
    if calls == 0:
        fail("no API call in the trace")
    if a.inst_json:
        by_start = {r[0]: r for r in runs}
        ops = [{"name": name, "api": api, "instructions": by_start[s][2]} for s, e, name, api in dw if s in by_start]
        pathlib.Path(a.inst_json).write_text(json.dumps(ops))
    check_summary((work / "program.log").read_text(), doc)
    print(f"trace_ledger: ok: {calls} API calls (every B with its E), {len(dw)} device operations, "
          f"{walkers} with walkers = the ledger's {len(runs)} busy runs, each start and end exact")


if __name__ == "__main__":
    main()
