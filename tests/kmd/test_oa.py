#!/usr/bin/env python3
"""OA streams through the preload library and the daemon (docs/uapi.md "Observation",
docs/kmd.md §13): raw-ioctl clients (tests/kmd/kmd_client.c oa, oa-hold, oa-open)
against a daemon whose OA block is the model's (docs/oa.md §4).

- A periodic stream over a vector add: a blocking read while the kernel runs returns
  (the OA-buffer interrupt woke it); a context-switch report; timer reports one period apart (timestamps
  2^(exp+1) ticks apart), DW0 as docs/oa.md §4.2 says, and between two consecutive
  timer reports every A counter's delta equals the daemon's ledger over the same
  cycles (ledger window = the period, so timer reports fall on window boundaries),
  B0/B1/C0/C1 as the metric set selects them; the final report of DISABLE has reason
  MMIO.
- Blocking reads with a period of five run-loop quanta: only the OA-buffer interrupt
  wakes the reader.
- Query mode (the exec queue, no SAMPLE_OA): no buffer, and the batch's two
  REPORT_PERF_COUNT reports differ by the ledger over the cycles between them.
- A slow reader: a 128 KiB buffer that the kernel overfills before the first read:
  read gives -EIO once, STATUS says REPORT_LOST|OVERFLOW, later reads return intact
  reports (the 511 that fit, consecutive timer reports).
- A client killed with its stream open: a second opener got EBUSY meanwhile; after
  the death the next open succeeds and the KMD's statistics show no stream left."""
import json
import os
import pathlib
import re
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kmdenv import CLIENT, GPU, PRELOAD, assemble, needs_tools, vadd_source  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
LINES = [m.group(1) for m in re.finditer(r'^ZE_OA_EVENT\(\w+,\s*\d+,\s*"([\w.]+)"',
                                          (ROOT / "include/zs/oa_events.def").read_text(), re.M)]
M40, M32 = (1 << 40) - 1, (1 << 32) - 1
TIMER, MMIO, CTX_SWITCH = 1, 4, 8
EUS_PER_SS = 2  # --topology 1x2x2x4: sub-slice 0 is EUs 0 and 1


def decode(r):
    dw = struct.unpack("<64I", r)
    a = [dw[4 + i] | (r[160 + i] << 32 if i < 32 else 0) for i in range(36)]
    return {"id": dw[0], "reason": dw[0] >> 19 & 0x3f, "ts": dw[1], "ticks": dw[3], "a": a, "bc": list(dw[48:64])}


def value(window, key):
    parts = key.split(".", 1)
    v = window[parts[0]]
    if len(parts) == 2:
        v = v[parts[1]]
    return sum(v) if isinstance(v, list) else v


@needs_tools
class OaStreamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.vadd = assemble(cls.tmp.name, {"vadd": vadd_source()})["vadd"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def daemon(self, exponent, ratio=80, window=None):
        """A daemon whose ledger windows are one timer period long (or `window` cycles)."""
        cfg = pathlib.Path(self.tmp.name) / "cfg.json"
        cfg.write_text(json.dumps({"oa_block": "twin", "ledger_window": window or ratio << (exponent + 1),
                                   "idle_time_ratio": 0}))
        d = zedaemon.Daemon(GPU, "--preset", "tiny", "--topology", "1x2x2x4", "--config", str(cfg))
        self.assertTrue(d.alive(), d.stderr())
        self.addCleanup(d.close)
        self.env = {**os.environ, "ZESIM_SOCKET": d.path, "LD_PRELOAD": PRELOAD}
        return d

    def run_client(self, *args, timeout=120):
        r = subprocess.run([CLIENT, *args], env=self.env, capture_output=True, text=True, timeout=timeout)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        return r.stdout

    def reports(self, path):
        data = pathlib.Path(path).read_bytes()
        self.assertEqual(len(data) % 256, 0)
        return [decode(data[i:i + 256]) for i in range(0, len(data), 256)]

    def test_periodic_stream_matches_the_ledger(self):
        exp = 3
        d = self.daemon(exp)
        out_file = pathlib.Path(self.tmp.name) / "periodic.bin"
        out = self.run_client("oa", self.vadd, "2048", str(exp), str(1 << 20), str(out_file))
        m = re.search(r"oa: core (\d+) Hz, timestamp (\d+) Hz", out)
        self.assertTrue(m, out)
        ratio = int(m.group(1)) // int(m.group(2))
        self.assertEqual(ratio * int(m.group(2)), int(m.group(1)), "cycles per tick must be whole for this test")
        self.assertEqual(ratio, 80, "the daemon's ledger window assumed 80 cycles per tick")
        self.assertIn("oa: blocking reads: 10 reports", out)
        self.assertIn("oa: poll says readable", out)
        self.assertIn("oa: short read ENOSPC", out)
        self.assertIn(", 0 EIO, status 0", out)
        reps = self.reports(out_file)
        timer = [r for r in reps if r["reason"] & TIMER]
        self.assertGreater(len(timer), 8, out)
        self.assertEqual(reps[-1]["reason"], MMIO, "the last report is DISABLE's")
        period = 2 << exp
        ctx = [r for r in reps if r["reason"] & CTX_SWITCH]
        self.assertTrue(ctx, "no context-switch report (OA_CTL.CTX_SWITCH)")
        self.assertTrue(all(r["id"] & 1 << 16 for r in ctx), "a context-switch report without context valid")
        for r in reps:
            self.assertEqual(r["id"] & 0x1ff, 60, "clock ratio of 1 GHz")
            self.assertEqual(r["id"] >> 19 & ~0xf, 0, "unknown reason bits")
        for r0, r1 in zip(timer, timer[1:]):
            self.assertEqual(r1["ts"] - r0["ts"], period, "timer reports one period apart")
            self.assertEqual(r0["ts"] % period, 0)
            self.assertEqual((r1["ticks"] - r0["ticks"]) & M32, period * ratio)
        # The ledger: windows of one period, so each pair of consecutive timer reports
        # spans whole windows.
        text = d.query(zedaemon.LEDGER).decode()  # the retained windows (test channel)
        self.assertNotIn("dropped", text)
        rows = [json.loads(x) for x in text.splitlines() if x.strip()]
        by_start = {w["start"]: w for w in rows}
        self.assertEqual(len(rows[0]["eu_active"]), 4, "topology 1x2x2x4")
        checked = busy = 0
        for r0, r1 in zip(timer, timer[1:]):
            c0, c1 = r0["ts"] * ratio, r1["ts"] * ratio
            w = by_start.get(c0)
            self.assertIsNotNone(w, f"no ledger window starts at cycle {c0}")
            self.assertEqual(w["end"], c1, f"ledger window {w['window']} is not one period")
            for k, key in enumerate(LINES):
                self.assertEqual((r1["a"][k] - r0["a"][k]) & M40, value(w, key) & M40,
                                 f"A{k} ({key}) over [{c0}, {c1})")
            db = [(r1["bc"][i] - r0["bc"][i]) & M32 for i in range(16)]
            self.assertEqual(db[0], w["gpu_busy"] & M32, "B0 = GPU_BUSY")
            self.assertEqual(db[1], w["lane_ops"] & M32, "B1 = LANE_OPS")
            self.assertEqual(db[8], sum(w["eu_active"][:EUS_PER_SS]) & M32, "C0 = EU active of sub-slice 0")
            self.assertEqual(db[9], sum(w["eu_stall"]) & M32, "C1 = EU stall of all")
            self.assertEqual(db[2:8] + db[10:16], [0] * 12, "unselected B/C count nothing")
            checked += 1
            busy += w["gpu_busy"] > 0
        self.assertGreater(busy, 4, "the kernel ran across several periods")
        st = d.kmd_stats()
        self.assertGreater(st["oa_irqs"], 0, "no OA_BUFFER interrupt reached the KMD")
        self.assertEqual(st["oa_reports_read"], len(reps))
        self.assertEqual(st["oa_streams"], 0)
        print(f"periodic: {len(reps)} reports, {checked} periods compared with the ledger ({busy} busy), "
              f"{st['oa_irqs']} OA interrupts")

    def test_blocking_reader_is_woken(self):
        """A period of five run-loop quanta: the reader finds the buffer empty and waits in
        the preload; only the OA-buffer interrupt (the KMD notifying the fd) wakes it."""
        exp = 7  # 20480 cycles
        self.daemon(exp)
        out_file = pathlib.Path(self.tmp.name) / "blocking.bin"
        out = self.run_client("oa", self.vadd, "8192", str(exp), str(1 << 20), str(out_file), "4", timeout=60)
        self.assertIn("oa: blocking reads: 4 reports in 4 reads", out)
        reps = self.reports(out_file)
        self.assertGreaterEqual(len([r for r in reps[:4] if r["reason"] & TIMER]), 3, "timer reports")
        print("blocking reader: woken for each of 4 reports")

    def test_query_mode(self):
        """A stream in query mode (the exec queue, no SAMPLE_OA): no buffer (INFO 0, read
        EINVAL), the counters on, so the batch's REPORT_PERF_COUNT before and after the
        walker differ by the ledger over the cycles between them (ledger window 1)."""
        d = self.daemon(0, window=1)
        out_file = pathlib.Path(self.tmp.name) / "query.bin"
        out = self.run_client("oa-query", self.vadd, "8", str(out_file))
        self.assertIn("oa-query: stream open, INFO buffer 0, read EINVAL", out)
        r0, r1 = self.reports(out_file)
        self.assertEqual((r0["id"], r1["id"]), (0x1000, 0x1001))
        text = d.query(zedaemon.LEDGER).decode()
        self.assertNotIn("dropped", text)
        rows = [json.loads(x) for x in text.splitlines() if x.strip()]
        self.assertEqual([w["start"] for w in rows], list(range(len(rows))), "one window per cycle from 0")
        # The stream was enabled before any cycle ran: a report's cycle is its ticks.
        c0, c1 = r0["ticks"], r1["ticks"]
        self.assertEqual(r0["ts"], c0 * 12500 // 1000000, "report 0's timestamp is not at its ticks")
        self.assertEqual(r1["ts"], c1 * 12500 // 1000000, "report 1's timestamp is not at its ticks")
        self.assertLess(c0, c1)
        span = rows[c0:c1]
        for k, key in enumerate(LINES):
            self.assertEqual((r1["a"][k] - r0["a"][k]) & M40, sum(value(w, key) for w in span) & M40,
                             f"A{k} ({key}) over [{c0}, {c1})")
        self.assertEqual(r1["a"][2] - r0["a"][2], 8, "8 threads dispatched between the reports")
        db = [(r1["bc"][i] - r0["bc"][i]) & M32 for i in range(16)]
        self.assertEqual(db[0], sum(w["gpu_busy"] for w in span) & M32, "B0 = GPU_BUSY")
        self.assertEqual(db[8], sum(sum(w["eu_active"][:EUS_PER_SS]) for w in span) & M32, "C0")
        self.assertEqual(d.kmd_stats()["oa_streams"], 0)
        print(f"query mode: two query reports, [{c0}, {c1}) equal to the ledger")

    def test_slow_reader(self):
        exp = 0  # a report every 160 cycles: 128 KiB hold 511
        self.daemon(exp)
        out_file = pathlib.Path(self.tmp.name) / "slow.bin"
        out = self.run_client("oa", self.vadd, "8192", str(exp), str(128 << 10), str(out_file))
        self.assertIn("oa: read -EIO after 0 reports, STATUS 0x3", out)
        self.assertIn(", 1 EIO, status 0x3", out)
        first = int(re.search(r"oa: blocking reads: (\d+) reports", out).group(1))
        reps = self.reports(out_file)
        self.assertEqual(len(reps), first + 511, out)
        reps = reps[first:]  # after the loss: the 511 that fit
        timer = [r for r in reps if r["reason"] & TIMER]
        for r0, r1 in zip(timer, timer[1:]):
            self.assertEqual(r1["ts"] - r0["ts"], 2, "intact, consecutive timer reports")
            self.assertEqual(r1["ticks"] - r0["ticks"], 160)
        print(f"slow reader: -EIO, STATUS REPORT_LOST|OVERFLOW, then {len(reps)} intact reports")

    def test_client_dies_with_its_stream(self):
        d = self.daemon(10)
        holder = subprocess.Popen([CLIENT, "oa-hold"], env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.assertEqual(holder.stdout.readline().strip(), "oa: opened", holder.stderr)
        self.assertEqual(d.kmd_stats()["oa_streams"], 1)
        r = subprocess.run([CLIENT, "oa-open"], env=self.env, capture_output=True, text=True, timeout=60)
        self.assertIn("oa: EBUSY", r.stdout, r.stderr)
        holder.kill()
        holder.wait(30)
        for _ in range(200):
            if d.kmd_stats()["oa_streams"] == 0:
                break
            time.sleep(0.05)
        self.assertEqual(d.kmd_stats()["oa_streams"], 0, "the dead client's stream is still open")
        out = self.run_client("oa-open")
        self.assertIn("oa: opened", out)
        self.assertEqual(d.kmd_stats()["oa_streams"], 0)
        self.assertEqual(d.mmio_read(0x4000), 0, "OA_CTL after the last stream closed")
        print("client death: its stream torn down, the next open succeeds")


if __name__ == "__main__":
    unittest.main()
