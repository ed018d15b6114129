#!/usr/bin/env python3
"""The OA block against the ground-truth ledger (docs/oa.md §4), through the daemon's
test channel: program the block by MMIO, run random programs (tests/stimulus/zegen.py)
as stimulus runs with stream markers and query reports (REPORT_PERF_COUNT) between
their walkers, then read every report from the OA buffer and the query buffer and
compare each counter with the ledger summed over [enable, report cycle) — with a
ledger window of one cycle, so every report's cycle is a window boundary.  The
expectation is computed here from the ledger and the rules of docs/oa.md (event lines
parsed from include/zs/oa_events.def), not from the model's code.

Also: a full buffer drops reports (OA_LOST, OA_STATUS) and keeps the ones written
intact; every timer report lands on its exact cycle and none is missing."""
import argparse
import json
import pathlib
import re
import struct
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "stimulus"))
import zedaemon  # noqa: E402
sys.path.insert(0, str(ROOT / "tests" / "rtl"))
import oa_waves  # noqa: E402
import zegen  # noqa: E402
import zetools  # noqa: E402

REGS = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^ZE_REG\((\w+),\s*(0x[0-9a-f]+)",
                                                                 (ROOT / "include/zs/gpu_regs.def").read_text(), re.M)}
LINES = [m.group(1) for m in re.finditer(r'^ZE_OA_EVENT\(\w+,\s*\d+,\s*"([\w.]+)"',
                                          (ROOT / "include/zs/oa_events.def").read_text(), re.M)]
assert len(LINES) == 30, LINES

CHECKED = [0]  # reports compared with the ledger
WAVES = [0]  # reports found in a waveform
MODULE_VA = zegen.MODULE_VA  # calla programs pass their functions' addresses there
QUERY_VA = 0x50000000
OA_BUF = 0x03f00000  # physical: the top MiB of the tiny preset's 64 MiB, above the runner's pages
CORE_MHZ, TS_KHZ = 1000, 12500
M40 = (1 << 40) - 1
M32 = (1 << 32) - 1

# B0-B7, C0-C7: (event, sub-slice mask)
BC_SEL = [(32, 0b01), (33, 0b01), (34, 0b10), (32, 0b11), (13, 0), (0xff, 0), (4, 0), (33, 0b10),
          (24, 0), (25, 0), (27, 0), (28, 0), (29, 0), (40, 0), (34, 0b11), (1, 0)]


def ts(cycle):
    return cycle * TS_KHZ // (CORE_MHZ * 1000)


def value(window, key):
    v = window
    parts = key.split(".", 1)
    v = v[parts[0]]
    if len(parts) == 2:
        v = v[parts[1]]
    return sum(v) if isinstance(v, list) else v


class Prefix:
    """Ledger sums over [0, c) for a cycle c at a window boundary."""

    def __init__(self, text, eus_per_ss):
        self.rows = [json.loads(x) for x in text.splitlines() if x.strip() and not x.startswith('{"dropped"')]
        self.eus_per_ss = eus_per_ss
        self.ends = {w["end"]: i + 1 for i, w in enumerate(self.rows)}
        self.ends[0] = 0
        self.end = self.rows[-1]["end"] if self.rows else 0

    def counters(self, c):
        """(A[0..29], per-sub-slice [active, stall, idle]) over [0, c)."""
        if c not in self.ends:
            raise AssertionError(f"cycle {c} is not a ledger window boundary")
        a = [0] * 30
        ss = {}
        for w in self.rows[:self.ends[c]]:
            for k, key in enumerate(LINES):
                a[k] += value(w, key)
            for j, kind in enumerate(("eu_active", "eu_stall", "eu_idle")):
                for e, n in enumerate(w[kind]):
                    ss.setdefault(e // self.eus_per_ss, [0, 0, 0])[j] += n
        return a, ss


def expected_bc(a, ss):
    out = []
    for ev, mask in BC_SEL:
        if ev < 30:
            out.append(a[ev] & M32)
        elif 32 <= ev <= 34:
            out.append(sum(v[ev - 32] for s, v in ss.items() if mask >> s & 1) & M32)
        else:
            out.append(0)
    return out


def decode(r):
    dw = struct.unpack("<64I", r)
    a = [dw[4 + i] | (r[160 + i] << 32 if i < 32 else 0) for i in range(36)]
    return {"id": dw[0], "reason": dw[0] >> 19 & 0x3f, "ts": dw[1], "ctx": dw[2], "ticks": dw[3], "a": a,
            "bc": list(dw[48:64])}


def check_report(rep, prefix, what, marker):
    """Problems of one report against the ledger's prefix sums at its cycle (ticks)."""
    c = rep["ticks"]
    a, ss = prefix.counters(c)
    probs = []
    if rep["ts"] != ts(c) & M32:
        probs.append(f"{what}: timestamp {rep['ts']} != {ts(c)} at cycle {c}")
    for k in range(30):
        if rep["a"][k] != a[k] & M40:
            probs.append(f"{what} at cycle {c}: A{k} ({LINES[k]}) {rep['a'][k]} != ledger {a[k] & M40}")
    for k in range(30, 35):
        if rep["a"][k]:
            probs.append(f"{what}: reserved A{k} = {rep['a'][k]}")
    if rep["a"][35] != marker:
        probs.append(f"{what}: A35 {rep['a'][35]:#x} != last marker {marker:#x}")
    want = expected_bc(a, ss)
    for i in range(16):
        if rep["bc"][i] != want[i]:
            probs.append(f"{what} at cycle {c}: {'BC'[i // 8]}{i % 8} (sel {BC_SEL[i]}) {rep['bc'][i]} != {want[i]}")
    return probs


def program(d, size_log2, exponent, threshold=1):
    d.mmio_write(REGS["OA_BUF_BASE_HI"], 0)
    d.mmio_write(REGS["OA_BUF_BASE_LO"], OA_BUF)
    d.mmio_write(REGS["OA_BUF_SIZE"], size_log2)
    d.mmio_write(REGS["OA_THRESHOLD"], threshold)
    for i, (ev, mask) in enumerate(BC_SEL):
        d.mmio_write(REGS["OA_BC_SEL0"] + 4 * i, ev | mask << 16)
    # ENABLE | TIMER | EXPONENT | BUFFER
    d.mmio_write(REGS["OA_CTL"], 1 | 2 | exponent << 2 | 1 << 8)


def read_buffer(d, size):
    tail, head = d.mmio_read(REGS["OA_TAIL"]), d.mmio_read(REGS["OA_HEAD"])
    n = ((tail - head) % size) // 256
    data = d.phys_read(OA_BUF, size)
    return [decode(data[(head + 256 * i) % size:(head + 256 * i) % size + 256]) for i in range(n)]


def check_waves(fst, reports, fst2vcd):
    """The OA block's waveform of the daemon's run (a clock per run of identical cycles
    while a waveform is open): at every clock that wrote a buffer report, buf_data and
    the counter flops hold that report, and these are the reports in the buffer."""
    top = "oa"
    vcd = oa_waves.read_vcd(fst2vcd, fst, lambda name: name.startswith(top + "."))
    times, values = vcd.changes[vcd.ids[top + ".buf_wr"]]
    writes = [t for t, v in zip(times, values) if v == 1]
    if len(writes) != len(reports):
        return [f"waves: {len(writes)} report writes in the waveform, {len(reports)} reports in the buffer"]
    WAVES[0] += len(reports)
    for n, (t, rep) in enumerate(zip(writes, reports)):
        data = vcd.at(top + ".buf_data", t)
        dws = [(data >> (32 * k)) & M32 for k in range(64)]
        if dws[3] != rep["ticks"] or dws[1] != rep["ts"]:
            return [f"waves: report write {n} at time {t} holds ticks {dws[3]}, the buffer's report {rep['ticks']}"]
        for k in range(30):
            flop = vcd.at(top + ".zs_oa.g_a[%d].cnt" % k, t)
            if flop != rep["a"][k]:
                return [f"waves: report {n} (cycle {rep['ticks']}): A{k} flop {flop} != report {rep['a'][k]}"]
    return []


def run_seed(gpu, asm, seed, tmp, mode, window, exponent, waves=None):
    """With a one-cycle ledger window every report is checked (the block is then clocked
    every cycle); with a longer window, the timer reports at window boundaries are (and
    the block is fed runs of identical cycles in one clock)."""
    text, setup, _ = zegen.generate(seed)
    src, mod, stim, ledger = tmp / "p.zeasm", tmp / "p.elf", tmp / "p.json", tmp / f"l{seed}.jsonl"
    src.write_text(text)
    r = zetools.assemble(asm, src, mod)
    if r.returncode:
        return [f"seed {seed}: does not assemble: {r.stderr}"]
    walker = {"cmd": "compute_walker", "kernel": setup["kernel"], "group_size": setup["group_size"],
              "groups": setup["groups"], "args": setup.get("args", ""), "local_sizes": setup.get("local_sizes", {})}
    rpc = lambda i: {"cmd": "raw", "dwords": [0x05000004, QUERY_VA + 256 * i, 0, 0x1000 + i]}  # noqa: E731
    marker = lambda v: {"cmd": "load_register_imm", "register": REGS["OA_MARKER"], "value": v}  # noqa: E731
    commands = [rpc(0), marker(0x1111), walker, rpc(1), marker(0x2222), walker, rpc(2)]
    stim.write_text(json.dumps({
        "buffers": [{"address": b["address"], "data": b["data"]} for b in setup["buffers"]] +
                   [{"address": hex(QUERY_VA), "size": 4096}],
        "modules": [{"path": str(mod), "address": hex(MODULE_VA)}],
        "commands": commands}))
    cfg = tmp / "cfg.json"
    cfg.write_text(json.dumps({"oa_block": mode, "ledger_window": window, "idle_time_ratio": 0}))
    problems = []
    wargs = ("--waves", str(tmp / "waves")) if waves else ()
    with zedaemon.Daemon(gpu, "--preset", "tiny", "--topology", "1x2x2x4", "--config", str(cfg),
                         "--ledger", str(ledger), *wargs) as d:
        program(d, 20, exponent)  # 1 MiB buffer, a timer report every 2^(exponent+1) ticks
        res = d.stimulus(stim)
        if res.get("engine_error") == 11:
            return None  # a faulting program halts the engine (the daemon's KMD sets FAULT_CTL): next seed
        if res.get("engine_error"):
            return [f"seed {seed}: engine error {res['engine_error']}: {res.get('error_text')}"]
        reports = read_buffer(d, 1 << 20)
        lost = d.mmio_read(REGS["OA_LOST"])
        d.mmio_write(REGS["OA_CTL"], 0)
    prefix = Prefix(ledger.read_text(), 2)
    end = prefix.end
    period = 80 << (exponent + 1)
    if lost:
        problems.append(f"{lost} reports lost with a 1 MiB buffer")
    timer = [r for r in reports if r["reason"] & 1]
    want_cycles = list(range(period, end, period))
    if [r["ticks"] for r in timer] != want_cycles[:len(timer)] or len(timer) < len(want_cycles) - 1:
        problems.append(f"timer reports at {[r['ticks'] for r in timer][:8]}..., expected every {period} cycles "
                        f"up to {end}")
    markers = [r for r in reports if r["reason"] & 2]
    if [r["a"][35] for r in markers] != [0x1111, 0x2222]:
        problems.append(f"marker reports hold {[hex(r['a'][35]) for r in markers]}")
    mark = 0
    for i, rep in enumerate(reports):
        if rep["reason"] & 2:
            mark = rep["a"][35]
        if rep["id"] & 0x1ff != 60 or rep["id"] >> 16 & 1:
            problems.append(f"report {i}: id {rep['id']:#x}: clock ratio 60, context not valid expected")
        if window == 1 or (rep["reason"] == 1 and rep["ticks"] in prefix.ends):
            problems += check_report(rep, prefix, f"report {i} (reason {rep['reason']})", mark)
            CHECKED[0] += 1
    if waves:
        problems += check_waves(tmp / "waves" / "oa.fst", reports, waves)
    if window != 1:
        return [f"seed {seed} (window {window}): {p}" for p in problems[:20]]
    qbuf = next(b for b in res["buffers"] if int(b["address"], 16) == QUERY_VA)
    qdata = bytes.fromhex(qbuf["data"])
    marks = [0, 0x1111, 0x2222]
    for i in range(3):
        rep = decode(qdata[256 * i:256 * i + 256])
        if rep["id"] != 0x1000 + i:
            problems.append(f"query report {i}: id {rep['id']:#x}")
        problems += check_report(rep, prefix, f"query report {i}", marks[i])
        CHECKED[0] += 1
    return [f"seed {seed}: {p}" for p in problems[:20]]


def overflow(gpu, asm, tmp, mode):
    """A 4 KiB buffer (15 reports) that nobody reads: reports beyond it are lost, counted,
    flagged; the ones written are intact and in order."""
    text, setup, _ = zegen.generate(3)
    src, mod, stim = tmp / "o.zeasm", tmp / "o.elf", tmp / "o.json"
    src.write_text(text)
    zetools.assemble(asm, src, mod)
    walker = {"cmd": "compute_walker", "kernel": setup["kernel"], "group_size": setup["group_size"],
              "groups": setup["groups"], "args": setup.get("args", ""), "local_sizes": setup.get("local_sizes", {})}
    stim.write_text(json.dumps({"buffers": [{"address": b["address"], "data": b["data"]} for b in setup["buffers"]],
                                "modules": [{"path": str(mod), "address": hex(MODULE_VA)}],
                                "commands": [walker] * 6}))
    cfg = tmp / "cfg.json"
    cfg.write_text(json.dumps({"oa_block": mode, "idle_time_ratio": 0}))
    with zedaemon.Daemon(gpu, "--preset", "tiny", "--config", str(cfg)) as d:
        program(d, 12, 0, threshold=4)
        d.stimulus(stim)
        reports = read_buffer(d, 4096)
        lost, written = d.mmio_read(REGS["OA_LOST"]), d.mmio_read(REGS["OA_REPORTS"])
        status = d.mmio_read(REGS["OA_STATUS"])
        irq = d.mmio_read(REGS["IRQ_STATUS"])
        irqs = d.kmd_stats().get("oa_irqs", 0)  # the KMD enables and acknowledges OA_BUFFER
        d.mmio_write(REGS["OA_STATUS"], 3)
        cleared = d.mmio_read(REGS["OA_STATUS"])
    problems = []
    if len(reports) != 15 or written != 15:
        problems.append(f"{len(reports)} reports readable, {written} written: 15 expected")
    if not lost:
        problems.append("no report lost")
    if status != 3 or cleared != 0:
        problems.append(f"OA_STATUS {status:#x} (3 expected), {cleared:#x} after clearing")
    if not irq & 0x10 and not irqs:
        problems.append(f"IRQ_STATUS {irq:#x}, KMD oa_irqs {irqs}: OA_BUFFER not raised")
    ticks = [r["ticks"] for r in reports]
    if ticks != list(range(160, 160 * 16, 160)):
        problems.append(f"the written reports are not the first 15 timer reports: {ticks}")
    return [f"overflow: {p}" for p in problems]


def idle_time(gpu, tmp, mode):
    """A periodic stream on an idle device: simulated time follows host time (ratio 1),
    so timer reports keep coming, one per period, with idle counters only; with
    idle_time_ratio 0 (the deterministic mode) no time passes and no report comes."""
    import time
    problems = []
    for ratio in (1.0, 0):
        cfg = tmp / "idle.json"
        cfg.write_text(json.dumps({"oa_block": mode, "idle_time_ratio": ratio}))
        with zedaemon.Daemon(gpu, "--preset", "tiny", "--config", str(cfg)) as d:
            program(d, 20, 10)  # a report every 2^11 ticks = 163840 cycles = 164 us
            time.sleep(0.3)
            reports = read_buffer(d, 1 << 20)
        if ratio == 0:
            if reports:
                problems.append(f"idle_time_ratio 0: {len(reports)} reports while idle")
            continue
        if len(reports) < 100:
            problems.append(f"{len(reports)} reports in 0.3 s of idle host time at ratio 1 (about 1800 expected)")
        period = 80 << 11
        for i, (r0, r1) in enumerate(zip(reports, reports[1:])):
            da = [(y - x) & M40 for x, y in zip(r0["a"], r1["a"])]
            want = [0] * 30
            want[6] = 2 * period  # EU_IDLE: both EUs idle every cycle
            if r1["reason"] != 1 or (r1["ticks"] - r0["ticks"]) & M32 != period or da[:30] != want:
                problems.append(f"idle report {i + 1}: reason {r1['reason']}, {r1['ticks'] - r0['ticks']} cycles, "
                                f"deltas {[(k, v) for k, v in enumerate(da[:30]) if v]}")
                break
    return [f"idle time: {p}" for p in problems]


def oa_off(gpu, asm, tmp):
    """oa_block off: no OA block (GT_UNITS.OA 0, its registers read 0 and ignore writes,
    and REPORT_PERF_COUNT still writes its report id (and the timestamp), with zeros for the
    counters."""
    src, mod, stim = tmp / "off.zeasm", tmp / "off.elf", tmp / "off.json"
    src.write_text(".kernel empty\n.simd 8\n        send.eot\n")
    r = zetools.assemble(asm, src, mod)
    if r.returncode:
        return [f"oa_block off: the empty kernel does not assemble: {r.stderr}"]
    walker = {"cmd": "compute_walker", "kernel": "empty", "group_size": [8, 1, 1], "groups": [4, 1, 1]}
    stim.write_text(json.dumps({
        "buffers": [{"address": hex(QUERY_VA), "size": 4096}],
        "modules": [{"path": str(mod), "address": hex(MODULE_VA)}],
        "commands": [walker, {"cmd": "raw", "dwords": [0x05000004, QUERY_VA, 0, 0x77]}]}))
    cfg = tmp / "off.cfg"
    cfg.write_text(json.dumps({"oa_block": "off"}))
    problems = []
    with zedaemon.Daemon(gpu, "--preset", "tiny", "--config", str(cfg)) as d:
        if d.mmio_read(REGS["GT_UNITS"]) & 1:
            problems.append("GT_UNITS.OA set with oa_block off")
        program(d, 20, 0)
        if d.mmio_read(REGS["OA_CTL"]) or d.mmio_read(REGS["OA_BUF_SIZE"]):
            problems.append("OA registers answer with oa_block off")
        res = d.stimulus(stim)
    if res.get("engine_error"):
        return [f"oa_block off: engine error {res['engine_error']}: {res.get('error_text')}"]
    q = next(b for b in res["buffers"] if int(b["address"], 16) == QUERY_VA)
    rep = decode(bytes.fromhex(q["data"])[:256])
    if rep["id"] != 0x77 or any(rep["a"]) or any(rep["bc"]) or rep["ticks"]:
        problems.append(f"query report without an OA block: id {rep['id']:#x}, ticks {rep['ticks']}, "
                        f"counters {sum(rep['a']) + sum(rep['bc'])} (the id and zeros expected)")
    return [f"oa_block off: {p}" for p in problems]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--as", dest="asm", required=True)
    ap.add_argument("--count", type=int, default=12)
    ap.add_argument("--mode", default="twin", help="oa_block mode (docs/config.md)")
    ap.add_argument("--fst2vcd", default="fst2vcd", help="gtkwave's fst2vcd (waveform checks in rtl/check modes)")
    a = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        seed = done = 0
        while done < a.count:
            r = run_seed(a.gpu, a.asm, seed, tmp, a.mode, 1, 0)
            if r is not None:
                # Timer period 1280 cycles, ledger window 2560: every other timer report is
                # at a window boundary (checked against the ledger); the others land on
                # their cycle only if the block asks for its own syncs.
                # Every other seed with a waveform open: the block then gets a clock per
                # run of identical cycles instead of one per sync (docs/oa.md §4.4).
                waves = a.fst2vcd if done % 2 and a.mode != "twin" else None
                failures += r + run_seed(a.gpu, a.asm, seed, tmp, a.mode, 80 << 5, 3, waves)
                done += 1
            seed += 1
        failures += overflow(a.gpu, a.asm, tmp, a.mode)
        failures += idle_time(a.gpu, tmp, a.mode)
        failures += oa_off(a.gpu, a.asm, tmp)
    for f in failures:
        print(f)
    if failures:
        print(f"test_oa_block: FAILED ({len(failures)} problems)")
        return 1
    print(f"test_oa_block: {a.count} programs, {CHECKED[0]} buffer and query reports equal the ledger ({a.mode}); "
          f"{WAVES[0]} reports found in the waveforms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
