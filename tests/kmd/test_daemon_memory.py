#!/usr/bin/env python3
"""The daemon's memory does not grow with simulated time, and the ledger's
consumers still get every window (docs/oa.md §3.5, docs/daemon.md §2).

- A kernel that never ends keeps the daemon busy (kmd_client spin, xe-lp);
  after a warm-up (the ledger's retention ring is full: 2x ledger_keep windows
  simulated, and at least 2 s), the daemon's VmRSS is sampled every 0.5 s for
  ZESIM_BUSY_SECONDS (default 10; the `soak` label runs 60): the largest
  sample must stay within 5 % of the smallest.
- With a retention of 4 windows, a subscribed test-channel consumer and
  `--ledger FILE` both receive every window of a long launch: the same lines,
  windows 0..n-1 with contiguous cycle ranges.
- A reader that did not subscribe gets the retained windows only, after a
  {"dropped":N} line that counts the others.
- The default device memory (4 GiB, xe-lp) costs the daemon only what is
  touched: a client holding 2 GiB of fresh GEM objects (all its share) leaves
  the physical memory's memfd empty and the daemon's RSS small (docs/kmd.md
  §2)."""
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kmdenv import AS, GPU, CLIENT, PRELOAD, SPIN, assemble, needs_tools, vadd_source  # noqa: E402,F401

BUSY_SECONDS = float(os.environ.get("ZESIM_BUSY_SECONDS", "10"))


# vadd (docs/isa.md) after a loop of ITER iterations: a launch of many windows
# that ends, with checked results.
LOOP_VADD = """.kernel vadd
.simd 16
.arg a global
.arg b global
.arg c global
        mov (1) r30.0:ud 0:ud
spin:
        add (1) r30.0:ud r30.0:ud 1:ud
        cmp.ne.f0 (1) null r30.0:ud {iters}:ud
        (f0) jmpi spin
        mul (1) r10.0:ud r0.0:ud r0.4:ud
        add (16) r11:ud r1:ud r10.0:ud
        shl (16) r13:ud r11:ud 2:ud
        send.load (16) r20 r13 r7.0
        send.load (16) r22 r13 r7.2
        add (16) r24:f r20:f r22:f
        send.store (16) r13 r24 r7.4
        send.eot
"""

GT_CYCLES_LO, GT_CYCLES_HI = 0x28, 0x2C


def phys_memfd_kib(pid):
    """Host memory the device's physical memory (memfd "zesim-phys") holds."""
    for fd in pathlib.Path(f"/proc/{pid}/fd").iterdir():
        try:
            if "zesim-phys" in os.readlink(fd):
                return os.stat(fd).st_blocks // 2
        except OSError:
            continue
    raise AssertionError("no zesim-phys memfd")


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


@needs_tools
class DaemonMemoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        elf = assemble(cls.tmp.name, {"spin": SPIN, "loop": LOOP_VADD.format(iters=20000)})
        cls.spin, cls.loop = elf["spin"], elf["loop"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, *args):
        self.daemon = zedaemon.Daemon(GPU, *args)
        self.addCleanup(self.daemon.close)
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        self.env = {**os.environ, "ZESIM_SOCKET": self.daemon.path, "LD_PRELOAD": PRELOAD}
        self.sock = self.daemon.connect()
        self.addCleanup(self.sock.close)

    def client(self, *args):
        p = subprocess.Popen([CLIENT, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def stop():
            if p.poll() is None:
                p.kill()
            p.communicate(timeout=30)
        self.addCleanup(stop)
        return p

    def cycles(self):
        t, lo, _ = zedaemon.request(self.sock, zedaemon.MMIO_READ, struct.pack("<I", GT_CYCLES_LO))
        self.assertEqual(t, zedaemon.MMIO_READ, lo)
        _, hi, _ = zedaemon.request(self.sock, zedaemon.MMIO_READ, struct.pack("<I", GT_CYCLES_HI))
        return struct.unpack("<I", lo)[0] | struct.unpack("<I", hi)[0] << 32

    def ledger(self, payload=b""):
        t, body, _ = zedaemon.request(self.sock, zedaemon.LEDGER, payload)
        self.assertEqual(t, zedaemon.LEDGER, body)
        return [json.loads(line) for line in body.decode().splitlines()]

    def test_rss_flat_during_a_busy_launch(self):
        # Defaults: the test channel is on, so the daemon keeps its default
        # retention ring (4096 windows of 10000 cycles on xe-lp).
        self.start("--preset", "xe-lp")
        spin = self.client("spin", self.spin, "1")
        self.assertIn("submitted", spin.stdout.readline())
        warm_cycles, t0 = 2 * 4096 * 10000, time.monotonic()
        while self.cycles() < warm_cycles or time.monotonic() - t0 < 2:
            self.assertLess(time.monotonic() - t0, 300, "the busy launch did not warm up")
            time.sleep(0.2)
        c0, t1, samples = self.cycles(), time.monotonic(), []
        while time.monotonic() - t1 < BUSY_SECONDS:
            samples.append((time.monotonic() - t1, rss_kib(self.daemon.proc.pid)))
            time.sleep(0.5)
        c1 = self.cycles()
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        lo, hi = min(s[1] for s in samples), max(s[1] for s in samples)
        figures = ", ".join(f"{t:.0f}s {kib / 1024:.1f}" for t, kib in samples[::max(1, len(samples) // 8)])
        print(f"\ndaemon RSS over {BUSY_SECONDS:.0f} s busy after {t1 - t0:.1f} s warm-up, "
              f"{(c1 - c0) / 1e6:.0f} M cycles ({(c1 - c0) // 10000} windows): MiB {figures}; "
              f"min {lo / 1024:.1f} max {hi / 1024:.1f}", file=sys.stderr)
        self.assertGreater(c1 - c0, 100 * 10000, "the daemon simulated too little to tell")
        self.assertLessEqual(hi, lo * 1.05, f"daemon RSS grew from {lo} KiB to {hi} KiB while busy: {samples}")

    def test_large_device_memory_costs_only_what_is_touched(self):
        self.start("--preset", "xe-lp")
        pid = self.daemon.proc.pid
        p = subprocess.Popen([CLIENT, "hog", "gem", str(256 << 20)], env=self.env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.wait(timeout=30), p.stdout.close(),
                                 p.stderr.close()))
        line = p.stdout.readline()
        # Half of 4 GiB per client, less its page tables: 7 objects of 256 MiB.
        self.assertRegex(line, r"hog: 7 gem objects \(1879048192 bytes of GEM\), then ENOSPC", p.stderr.read()
                         if p.poll() is not None else line)
        held = phys_memfd_kib(pid), rss_kib(pid)
        p.stdin.close()
        p.wait(timeout=30)
        t, _, _ = zedaemon.request(self.sock, zedaemon.WAIT_IDLE)
        freed = phys_memfd_kib(pid), rss_kib(pid)
        print(f"\n4 GiB device, 1.75 GiB of GEM objects held: physical memfd {held[0] / 1024:.1f} MiB, "
              f"daemon RSS {held[1] / 1024:.1f} MiB; after the client exits: {freed[0] / 1024:.1f} MiB, "
              f"{freed[1] / 1024:.1f} MiB", file=sys.stderr)
        self.assertLess(held[0], 1024, "allocating GEM objects wrote the device's own backing")
        self.assertLess(held[1], 64 * 1024)
        self.assertLess(freed[0], 1024)

    def run_loop_client(self, groups=8):
        p = self.client("vadd", self.loop, str(groups))
        return p

    def file_lines(self, path):
        return pathlib.Path(path).read_text().splitlines(keepends=True)

    def assert_contiguous(self, windows):
        self.assertTrue([w["window"] for w in windows] == list(range(len(windows))),
                        f"window indices not 0..{len(windows) - 1}: {[w['window'] for w in windows]}")
        self.assertEqual(windows[0]["start"], 0)
        for a, b in zip(windows, windows[1:]):
            self.assertEqual(b["start"], a["end"], (a, b))
        for w in windows:
            self.assertEqual(w["end"] - w["start"], 1000, w)

    def test_every_window_reaches_the_file_and_the_subscriber(self):
        path = os.path.join(self.tmp.name, "sub.jsonl")
        self.start("--preset", "tiny", "--ledger", path, "--ledger-keep", "4")
        self.assertEqual(self.ledger(b"subscribe"), [])
        p = self.run_loop_client()
        text, reads, most = "", 0, 0
        while p.poll() is None:
            t, body, _ = zedaemon.request(self.sock, zedaemon.LEDGER)
            self.assertEqual(t, zedaemon.LEDGER, body)
            text += body.decode()
            reads += 1
            most = max(most, body.count(b"\n"))
            time.sleep(0.02)  # a slow consumer: the daemon must wait for it, not drop
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("128 results correct", out)
        t, body, _ = zedaemon.request(self.sock, zedaemon.WAIT_IDLE)
        self.assertEqual(t, zedaemon.WAIT_IDLE)
        cycles = struct.unpack("<Q", body)[0]
        text += "".join(json.dumps(w, separators=(",", ":")) + "\n" for w in self.ledger())
        windows = [json.loads(line) for line in text.splitlines()]
        lost = [line for line in text.splitlines() if line.startswith('{"dropped"')]
        self.assertFalse(lost, "the subscribed consumer lost windows")
        self.assertGreater(len(windows), 25 * 4, "too few windows to test a retention of 4")
        self.assert_contiguous(windows)
        # Every window that closed, and nothing else: the open one ends after now.
        self.assertEqual(windows[-1]["end"], cycles // 1000 * 1000)
        # The backlog stays bounded: 4 retained + at most one quantum (4096 cycles) more.
        self.assertLessEqual(most, 4 + 5)
        self.assertGreater(reads, len(windows) // 9)
        # The file holds the same lines, byte for byte.
        file_text = "".join(self.file_lines(path))
        self.assertTrue(file_text == text, f"the file ({file_text.count(chr(10))} lines) and the consumer "
                        f"({text.count(chr(10))} lines) differ")
        self.assertGreater(sum(w["threads_dispatched"] for w in windows), 0)

    def test_a_reader_without_subscription_gets_the_newest_windows_and_a_drop_count(self):
        path = os.path.join(self.tmp.name, "ring.jsonl")
        self.start("--preset", "tiny", "--ledger", path, "--ledger-keep", "4")
        p = self.run_loop_client()
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err)
        t, body, _ = zedaemon.request(self.sock, zedaemon.WAIT_IDLE)
        self.assertEqual(t, zedaemon.WAIT_IDLE)
        t, body, _ = zedaemon.request(self.sock, zedaemon.LEDGER)
        self.assertEqual(t, zedaemon.LEDGER, body)
        lines = body.decode().splitlines(keepends=True)
        file_lines = self.file_lines(path)
        self.assertGreater(len(file_lines), 25 * 4)
        self.assert_contiguous([json.loads(line) for line in file_lines])
        self.assertEqual(json.loads(lines[0]), {"dropped": len(file_lines) - 4})
        self.assertEqual(lines[1:], file_lines[-4:])
        self.assertEqual(self.ledger(), [])  # drained: nothing new, nothing dropped
