"""Checks of the metrics reference (metrics_ref.py): the operands from two OA reports equal
the operands from the ledger windows between them, for every group, when the reports are
what the OA block of docs/oa.md section 4 would write over those windows (counters summing
the event lines, B/C per OA_BC_SEL, ticks = cycles, timestamp from the cycle boundary), with
40-bit and 32-bit wrap; hand-computed values of a few equations; the parser agrees with
the driver's generator on the groups."""
import pathlib
import random
import struct
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import metrics_ref as mr  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
SLICES, SS_PER_SLICE, EUS_PER_SS, THREADS = 1, 3, 2, 4
EUS = SLICES * SS_PER_SLICE * EUS_PER_SS
CORE_MHZ, TS_KHZ = 1000, 12500


def random_window(rnd, index, start, end):
    n = end - start
    w = {"window": index, "start": start, "end": end}
    w["gpu_busy"] = rnd.randint(0, n)
    w["thread_cycles"] = rnd.randint(0, n * EUS * THREADS)
    w["threads_dispatched"] = rnd.randint(0, 50)
    w["threads_retired"] = rnd.randint(0, 50)
    act = [rnd.randint(0, n) for _ in range(EUS)]
    stall = [rnd.randint(0, n - a) for a in act]
    w["eu_active"], w["eu_stall"] = act, stall
    w["eu_idle"] = [n - a - s for a, s in zip(act, stall)]
    w["inst"] = {k: rnd.randint(0, 3000) for k in ("ctrl", "alu", "mad", "math", "branch", "send")}
    w["lane_ops"] = rnd.randint(0, 50000)
    w["sends"] = {k: rnd.randint(0, 200) for k in ("load", "store", "atomic", "slm.load", "slm.store", "slm.atomic",
                                                   "barrier", "fence", "timestamp", "eot")}
    w["bytes"] = {k: rnd.randint(0, 1 << 20) for k in ("l3_read", "l3_write", "dram", "slm_read", "slm_write")}
    w["barriers"] = rnd.randint(0, 30)
    return w


class OaBlock:
    """What docs/oa.md section 4 says the block holds: sums of the lines since enabling."""

    def __init__(self, group, rnd):
        self.sel = group.select
        self.a = [rnd.choice([0, (1 << 40) - rnd.randint(1, 10 ** 7)]) for _ in range(30)] + [0] * 6
        self.bc = [rnd.choice([0, (1 << 32) - rnd.randint(1, 10 ** 6)]) for _ in range(16)]
        self.ticks = rnd.choice([0, (1 << 32) - 5000])
        self.cycle = 0
        self.by_line = {line: key for line, key in mr.load_events().values()}

    def feed(self, w):
        for k in range(30):
            self.a[k] = (self.a[k] + mr.ledger_value(w, self.by_line[k])) & mr.M40
        for i, s in enumerate(self.sel):
            ev, mask = s & 0xFF, s >> 16
            if ev < 30:
                v = mr.ledger_value(w, self.by_line[ev])
            elif ev in mr.SS_KEYS:
                v = sum(x for e, x in enumerate(w[mr.SS_KEYS[ev]]) if mask >> (e // EUS_PER_SS) & 1)
            else:
                v = 0
            self.bc[i] = (self.bc[i] + v) & mr.M32
        self.ticks = (self.ticks + w["end"] - w["start"]) & mr.M32
        self.cycle = w["end"]

    def report(self, marker=0):
        r = bytearray(256)
        ts = self.cycle * TS_KHZ // (CORE_MHZ * 1000)
        struct.pack_into("<IIII", r, 0, 1 << 19, ts & mr.M32, 0, self.ticks)
        for i in range(36):
            v = marker if i == 35 else self.a[i]
            struct.pack_into("<I", r, 16 + 4 * i, v & mr.M32)
            if i < 32:
                r[160 + i] = v >> 32 & 0xFF
        for i in range(16):
            struct.pack_into("<I", r, 192 + 4 * i, self.bc[i])
        return bytes(r)


class TestLedgerVsReports(unittest.TestCase):
    def test_every_group(self):
        env = [EUS, SLICES * SS_PER_SLICE, THREADS, TS_KHZ * 1000, CORE_MHZ]
        groups = [g for g in mr.load_groups() if g.source == "oa"]
        self.assertGreaterEqual(len(groups), 6)
        for seed in range(20):
            for g in groups:
                rnd = random.Random(seed * 100 + groups.index(g))
                blk = OaBlock(g, rnd)
                # The block was enabled at cycle 0: a first report, windows, a second report.
                wins, start = [], rnd.randint(0, 10 ** 9)
                for i in range(rnd.randint(1, 5)):
                    end = start + rnd.randint(1, 20000)
                    wins.append(random_window(rnd, i, start, end))
                    start = end
                blk.cycle = wins[0]["start"]
                begin = blk.report()
                for w in wins:
                    blk.feed(w)
                end = blk.report(marker=1234)
                from_reports = mr.operands_from_reports(begin, end, env[3])
                from_ledger = mr.operands_from_ledger(
                    wins, wins[0]["start"], wins[-1]["end"], g, EUS_PER_SS, TS_KHZ, CORE_MHZ,
                    {"ReportReason": 1, "StreamMarker": 1234})
                for k, v in from_ledger.items():
                    if k == "A35":  # the marker register, not a counter: no ledger key
                        continue
                    self.assertEqual(from_reports[k], v, f"{g.name} {g.sampling} seed {seed}: operand {k}")
                self.assertEqual(mr.evaluate(g, from_reports, env), mr.evaluate(g, from_ledger, env))

    def test_windows_must_tile(self):
        rnd = random.Random(1)
        wins = [random_window(rnd, 0, 0, 100), random_window(rnd, 1, 100, 200)]
        g = mr.load_groups()[0]
        with self.assertRaises(ValueError):
            mr.operands_from_ledger(wins, 0, 150, g, EUS_PER_SS, TS_KHZ, CORE_MHZ)
        with self.assertRaises(ValueError):
            mr.operands_from_ledger(wins[1:], 0, 200, g, EUS_PER_SS, TS_KHZ, CORE_MHZ)


class TestByHand(unittest.TestCase):
    """Values worked out by hand from docs/metrics.md, not from the evaluator."""

    def setUp(self):
        self.cb = next(g for g in mr.load_groups() if g.name == "ComputeBasic" and g.sampling == "EVENT_BASED")
        self.env = [96, 6, 7, 12_500_000, 1000]

    def value(self, ops, name):
        vals = mr.evaluate(self.cb, ops, self.env)
        return vals[[m[0] for m in self.cb.metrics].index(name)]

    def ops(self, **kw):
        op = {f"A{i}": 0 for i in range(36)}
        op.update({f"B{i}": 0 for i in range(8)}, **{f"C{i}": 0 for i in range(8)})
        op.update(GPU_CLOCK=0, TS=0, GPU_TIME=0, QueryBeginTime=0, ReportReason=0, ContextId=0, StreamMarker=0)
        op.update(kw)
        return op

    def test_values(self):
        # 1000 ticks at 12.5 MHz = 80 us; 80,000 core clocks; EUs active 25% of the time.
        op = self.ops(TS=1000, GPU_TIME=80000, GPU_CLOCK=80000, A4=96 * 20000, A0=40000, A7=3, A12=1)
        self.assertEqual(self.value(op, "GpuTime"), ("u", 80000))
        self.assertEqual(self.value(op, "AvgGpuCoreFrequencyMHz"), ("u", 1000))
        self.assertEqual(self.value(op, "EuActive"), ("f", 0x41C80000))  # 25.0f
        self.assertEqual(self.value(op, "XVE_ACTIVE"), ("f", 0x41C80000))
        self.assertEqual(self.value(op, "GpuBusy"), ("f", 0x42480000))  # 50.0f
        self.assertEqual(self.value(op, "EuAvgIpcRate"), ("f", mr.f32_bits(4 / (96 * 20000))))
        # No clocks: divisions by zero give 0.
        z = self.ops()
        self.assertEqual(self.value(z, "EuActive"), ("f", 0))
        self.assertEqual(self.value(z, "AvgGpuCoreFrequencyMHz"), ("u", 0))

    def test_wrap(self):
        b, e = bytearray(256), bytearray(256)
        struct.pack_into("<I", b, 16 + 4 * 4, 0xFFFFFFF0)
        b[160 + 4] = 0xFF  # A4 = 2^40 - 16
        struct.pack_into("<I", e, 16 + 4 * 4, 0x10)  # A4 = 16: delta 32 across the 40-bit wrap
        struct.pack_into("<I", b, 16 + 4 * 33, 0xFFFFFFFF)  # A33 32-bit: delta 1
        struct.pack_into("<I", b, 192, 0xFFFFFFFE)  # B0: delta 3
        struct.pack_into("<I", e, 192, 1)
        struct.pack_into("<I", e, 16 + 4 * 33, 0)
        b[160 + 33 - 32] = 0  # (A33 has no high byte; byte 161 is A1's)
        op = mr.operands_from_reports(bytes(b), bytes(e), 12_500_000)
        self.assertEqual(op["A4"], 32)
        self.assertEqual(op["A33"], 1)
        self.assertEqual(op["B0"], 3)


class TestAgreesWithGenerator(unittest.TestCase):
    def test_groups(self):
        sys.path.insert(0, str(ROOT / "driver/metrics"))
        import gen_metrics as gm
        gen = gm.build(gm.parse_table(ROOT / "driver/metrics/metrics.txt"), gm.read_events(mr.EVENTS),
                       gm.read_regs(ROOT / "include/zs/gpu_regs.def"))
        ref = mr.load_groups()
        self.assertEqual([(g["name"], g["sampling"], len(g["metrics"])) for g in gen],
                         [(g.name, g.sampling, len(g.metrics)) for g in ref])
        for g, r in zip(gen, ref):
            self.assertEqual(g["select"], r.select)
        names = [(g.name, g.sampling) for g in ref]
        self.assertIn(("ComputeBasic", "TIME_BASED"), names)
        self.assertIn(("ComputeBasic", "EVENT_BASED"), names)
        self.assertEqual({g.domain for g in ref}, {0, 1})


if __name__ == "__main__":
    unittest.main()
