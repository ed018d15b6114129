#!/usr/bin/env python3
"""End-to-end check of the metrics (issue 13): every metric of every OA group, in query and
streamer mode, on four kernels (compute-bound, memory, SLM/barrier, atomics), through the
loader, the driver, the preload, the fake KMD and the model — against
tests/stimulus/metrics_ref.py: (a) evaluated from the same raw reports, (b) evaluated from
the daemon's ground-truth ledger over the cycles between the two reports.  Integers must
be equal, floats equal to the bit.

The daemon runs with a 1 GHz timestamp (timestamp_khz = core MHz * 1000: a report's
timestamp is its cycle), 1-cycle ledger windows (so every report boundary is a window
boundary) and idle_time_ratio 0 (deterministic).

    metrics_e2e.py --gpu zesim-gpu --preload libzesim_preload.so --driver libze_zesim.so.1
                   --program e2e_metrics_dump --kernels DIR [--work DIR]
Exit 77: no OA unit (the KMD or the model lacks it).
"""
import argparse
import json
import os
import pathlib
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import metrics_ref as mr  # noqa: E402

CORE_MHZ = 1000


def typed_values(path):
    """zet_typed_value_t: u32 type, pad, 8-byte value."""
    data = path.read_bytes()
    out = []
    for i in range(0, len(data), 16):
        t, v = struct.unpack_from("<I4xQ", data, i)
        if t == 2:  # FLOAT32
            out.append(("f", v & 0xFFFFFFFF))
        elif t == 0:  # UINT32
            out.append(("u", v & 0xFFFFFFFF))
        elif t == 4:  # BOOL8
            out.append(("u", v & 0xFF))
        else:
            out.append(("u", v))
    return out


def fmt(v):
    kind, x = v
    if kind == "f":
        return f"f {struct.unpack('<f', struct.pack('<I', x))[0]!r} (0x{x:08x})"
    return f"u {x}"


def start_daemon(a, work, config, ledger=None):
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o700)  # the daemon's socket directory must be private
    cfg = work / "daemon.json"
    cfg.write_text(json.dumps(config))
    sock = work / "gpu.sock"
    if sock.exists():
        sock.unlink()
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    log = open(work / "daemon.log", "w")
    cmd = [a.gpu, "--config", str(cfg), "--socket", str(sock)] + (["--ledger", str(ledger)] if ledger else [])
    daemon = subprocess.Popen(cmd, stderr=log, env=env)
    for _ in range(200):
        if sock.exists() or daemon.poll() is not None:
            break
        time.sleep(0.05)
    penv = dict(env, ZESIM_SOCKET=str(sock), LD_PRELOAD=a.preload, ZE_ENABLE_ALT_DRIVERS=a.driver)
    return daemon, log, penv


def cross_process(a):
    work = pathlib.Path(a.work or tempfile.mkdtemp(prefix="zesim-metrics-x-"))
    daemon, log, penv = start_daemon(a, work, {"preset": "tiny", "idle_time_ratio": 1, "job_timeout_ms": 120000})
    k = pathlib.Path(a.kernels)
    base = [a.program, str(k / "misc.elf"), str(k / "vadd.elf"), str(k / "reduce.elf")]
    try:
        # The streamer runs at least 3 s and until its stdin closes, after the other two
        # processes are done (on a loaded machine they may take longer than 3 s).
        streamer = subprocess.Popen(base + ["stream", "3"], env=penv, stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, text=True)
        first = streamer.stdout.readline()  # "streaming" once its streamer is open
        busy = subprocess.run(base + ["expect-busy"], env=penv, capture_output=True, text=True, timeout=300)
        worker = subprocess.run(base + ["work"], env=penv, capture_output=True, text=True, timeout=300)
        sout, _ = streamer.communicate(input="", timeout=300)
        sout = first + sout
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        log.close()
    sys.stdout.write(sout + worker.stdout + worker.stderr + busy.stdout + busy.stderr)
    if streamer.returncode == 77 or "UNSUPPORTED" in sout:
        return 77
    if streamer.returncode != 0 or worker.returncode != 0 or busy.returncode != 0:
        print(f"FAIL: streamer {streamer.returncode}, workload {worker.returncode}, "
              f"third process {busy.returncode}; daemon log:\n"
              f"{(work / 'daemon.log').read_text()}")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--preload", required=True)
    ap.add_argument("--driver", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--work")
    ap.add_argument("--oa-block", default=None,
                    help="the daemon's oa_block (docs/config.md): e.g. check = RTL and twin compared every clock")
    ap.add_argument("--cross-process", action="store_true",
                    help="a streamer in one process, the kernels in another (idle_time_ratio 1)")
    a = ap.parse_args()
    if a.cross_process:
        return cross_process(a)
    work = pathlib.Path(a.work or tempfile.mkdtemp(prefix="zesim-metrics-"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o700)  # the daemon's socket directory must be private
    out = work / "out"
    out.mkdir(exist_ok=True)
    cfg = work / "daemon.json"
    config = {"preset": "tiny", "timestamp_khz": CORE_MHZ * 1000, "ledger_window": 1, "idle_time_ratio": 0,
              "job_timeout_ms": 120000}
    if a.oa_block:
        config["oa_block"] = a.oa_block
    cfg.write_text(json.dumps(config))
    sock, ledger = work / "gpu.sock", work / "ledger.jsonl"
    for p in (sock, ledger):
        if p.exists():
            p.unlink()
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    log = open(work / "daemon.log", "w")
    daemon = subprocess.Popen([a.gpu, "--config", str(cfg), "--socket", str(sock), "--ledger", str(ledger)],
                              stderr=log, env=env)
    try:
        for _ in range(200):
            if sock.exists() or daemon.poll() is not None:
                break
            time.sleep(0.05)
        penv = dict(env, ZESIM_SOCKET=str(sock), LD_PRELOAD=a.preload, ZE_ENABLE_ALT_DRIVERS=a.driver)
        k = pathlib.Path(a.kernels)
        run = subprocess.run([a.program, str(k / "misc.elf"), str(k / "vadd.elf"), str(k / "reduce.elf"), str(out)],
                             env=penv, capture_output=True, text=True, timeout=600)
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
        log.close()
    if run.returncode == 77:
        print("skipped: no OA unit")
        return 77
    if run.returncode != 0:
        print(f"FAIL: the program exited with {run.returncode}; daemon log:\n{(work / 'daemon.log').read_text()}")
        return 1

    envv = [int(x) for x in (out / "env").read_text().split(",")]
    eus, subslices = envv[0], envv[1]
    ts_khz = envv[3] // 1000
    assert envv[3] == CORE_MHZ * 1_000_000 and envv[4] == CORE_MHZ, f"device clocks {envv}"
    groups = mr.load_groups()
    windows = [json.loads(line) for line in ledger.read_text().splitlines() if line.strip()]
    windows = [w for w in windows if "window" in w]
    sums = mr.LedgerSums(windows)
    print(f"ledger: {len(windows)} windows, cycles [{windows[0]['start']}, {windows[-1]['end']})")

    failures, checked, sets_total, ledger_checked = 0, 0, 0, 0
    for vals_path in sorted(out.glob("*.vals")):
        stem = vals_path.stem
        gi = int(stem.split("_")[1])
        g = groups[gi]
        raw = (out / (stem + ".raw")).read_bytes()
        got = typed_values(vals_path)
        want_sets = mr.evaluate_raw(g, raw, envv)
        n = len(g.metrics)
        if len(got) != n * len(want_sets):
            print(f"FAIL {stem}: {len(got)} values, reference {n * len(want_sets)}")
            failures += 1
            continue
        names = [m[0] for m in g.metrics]
        for s, want in enumerate(want_sets):
            sets_total += 1
            mine = got[s * n:(s + 1) * n]
            for i in range(n):
                checked += 1
                if mine[i] != want[i]:
                    failures += 1
                    if failures < 30:
                        print(f"FAIL {stem} set {s} {names[i]}: driver {fmt(mine[i])}, reference {fmt(want[i])}")
            if g.source != "oa":
                continue
            # (b) the ledger between the two reports' cycles.
            if g.sampling == "TIME_BASED":
                b, e = raw[256 * s:256 * (s + 1)], raw[256 * (s + 1):256 * (s + 2)]
            else:
                b, e = raw[:256], raw[256:512]
            c0, c1 = mr.dw(b, 1), mr.dw(e, 1)
            # Time goes forward: the end report after the begin report (with a kernel
            # between, for a query).  Without this, swapped reports would agree with the
            # ledger over a "negative" range, wrapped the same way.
            if not (c0 < c1 if g.sampling == "EVENT_BASED" else c0 <= c1):
                print(f"FAIL {stem} set {s}: the end report's cycle {c1} is not after the begin report's {c0}")
                failures += 1
                continue
            fields = {"ReportReason": mr.dw(e, 0) >> 19 & 0x3F, "ContextId": mr.dw(e, 2),
                      "StreamMarker": mr.dw(e, 4 + 35)}
            fields["A35"] = (mr.dw(e, 4 + 35) - mr.dw(b, 4 + 35)) & mr.M32
            try:
                op = sums.operands(c0, c1, g, eus // subslices, ts_khz, CORE_MHZ, fields)
            except ValueError as ex:
                print(f"FAIL {stem} set {s}: {ex}")
                failures += 1
                continue
            from_ledger = mr.evaluate(g, op, envv)
            for i in range(n):
                ledger_checked += 1
                if from_ledger[i] != mine[i]:
                    failures += 1
                    if failures < 30:
                        print(f"FAIL {stem} set {s} [{c0}, {c1}) {names[i]}: driver {fmt(mine[i])}, "
                              f"ledger {fmt(from_ledger[i])}")
    # The query's thread count must be what the launch dispatched (SIMD8 groups of 8).
    cb = next(i for i, g in enumerate(groups) if g.name == "ComputeBasic" and g.sampling == "EVENT_BASED")
    cs = [m[0] for m in groups[cb].metrics].index("CsThreads")
    for kname, want in (("busy", 2), ("inc", 16)):
        v = typed_values(out / f"q_{cb}_{kname}.vals")[cs]
        if v != ("u", want):
            print(f"FAIL ComputeBasic query around {kname}: CsThreads {fmt(v)}, want {want}")
            failures += 1
    print(f"{checked} values against the reference from the same reports, {ledger_checked} against the ledger, "
          f"{sets_total} result sets; {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
