#!/usr/bin/env python3
"""A daemon no client can stall (docs/daemon.md §5): a client that never reads
its replies, thousands of idle connections, a client that creates objects
until refused, and garbage on the wire must not slow down or break another
program, whose launch latency (kmd_client latency: EXEC + WAIT_USER_FENCE of a
one-group kernel, median of many) is compared with its quiet value in the
same run.  Latency ratios are medians over up to three rounds (quiet, loaded):
the host is shared and noisy, a real stall is 10-1000x."""
import json
import os
import pathlib
import re
import resource
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kmdenv import AS, GPU, CLIENT, PRELOAD, SPIN, assemble, needs_tools, vadd_source  # noqa: E402,F401

LAUNCHES = 5000  # per latency measurement
MAX_RATIO = 2.0
ROUNDS = 3


def hello():
    return struct.pack("<III", zedaemon.MAGIC, zedaemon.HELLO, 0)


@needs_tools
class StallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.vadd = assemble(cls.tmp.name, {"vadd": vadd_source()})["vadd"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def start(self, *args, nofile=None):
        """A daemon (tiny); `nofile` lowers its RLIMIT_NOFILE (soft and hard)."""
        gpu, pre = GPU, []
        if nofile:
            gpu, pre = sys.executable, ["-c", "import os, resource, sys; resource.setrlimit(resource.RLIMIT_NOFILE, "
                                        f"({nofile}, {nofile})); os.execv(sys.argv[1], sys.argv[1:])", GPU]
        self.daemon = zedaemon.Daemon(gpu, *pre, "--preset", "tiny", *args)
        self.addCleanup(self.daemon.close)
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        self.env = {**os.environ, "ZESIM_SOCKET": self.daemon.path, "LD_PRELOAD": PRELOAD}

    def client(self, *args, **kw):
        return subprocess.Popen([CLIENT, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, **kw)

    def latency(self, timeout=30):
        """Median host time (us) of one launch, over LAUNCHES launches."""
        p = self.client("latency", self.vadd, str(LAUNCHES))
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            self.fail(f"{LAUNCHES} launches took more than {timeout} s: the daemon stalls")
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("16 results correct", out)
        return float(re.search(r"median ([0-9.]+) us", out).group(1))

    def stats(self):
        s = self.daemon.connect()
        t, body, _ = zedaemon.request(s, zedaemon.KMD_STATS)
        s.close()
        self.assertEqual(t, zedaemon.KMD_STATS, body)
        return json.loads(body)

    def assert_latency_kept(self, load, unload):
        """Rounds of quiet and loaded medians until one ratio is within MAX_RATIO."""
        figures = []
        for _ in range(ROUNDS):
            quiet = self.latency()
            load()
            try:
                loaded = self.latency()
            finally:
                unload()
            figures.append((quiet, loaded))
            if loaded <= MAX_RATIO * quiet:
                break
        print(f"\n{self.id()}: launch latency quiet/loaded (us): {figures}", file=sys.stderr)
        self.assertLessEqual(min(l / q for q, l in figures), MAX_RATIO, figures)

    def test_a_client_that_never_reads(self):
        """Clients stream HELLOs and never read a reply (reconnecting when
        dropped): another program's launches keep their latency, each
        non-reader is disconnected once 16 MiB (the default) of its replies
        are unread, and nothing of the daemon's state is touched."""
        self.start()
        stop, drops, sent = threading.Event(), [0], [0]
        burst = hello() * 4096

        def flood():
            while not stop.is_set():
                s = self.daemon.connect()
                try:
                    while not stop.is_set():
                        s.sendall(burst)
                        sent[0] += len(burst)
                except (BrokenPipeError, ConnectionResetError):
                    drops[0] += 1
                finally:
                    s.close()

        threads, mark = [], [0, 0]

        def load():
            stop.clear()
            threads[:] = [threading.Thread(target=flood, daemon=True) for _ in range(2)]
            for t in threads:
                t.start()
            t0 = sent[0]
            deadline = time.monotonic() + 10
            while sent[0] < t0 + (1 << 20) and time.monotonic() < deadline:
                time.sleep(0.01)
            mark[:] = [sent[0], drops[0]]

        def unload():
            print(f"\nnon-readers while loaded: {(sent[0] - mark[0]) >> 20} MiB of requests sent, "
                  f"{drops[0] - mark[1]} dropped", file=sys.stderr)
            # Keep it going until it has been dropped at least once.
            deadline = time.monotonic() + 30
            while drops[0] == 0 and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            for t in threads:
                t.join(30)

        self.assert_latency_kept(load, unload)
        self.assertGreaterEqual(drops[0], 1, "a client that never reads was never disconnected")
        self.assertRegex(self.daemon.stderr(), r"dropped: \d+ bytes of replies unread \(limit 16777216")
        self.assertTrue(self.daemon.alive())
        st = self.stats()
        self.assertEqual((st["files"], st["bos"], st["jobs"]), (0, 0, 0))

    def test_buffered_replies_keep_their_fds(self):
        """Replies that wait in the daemon's buffer (the client reads only
        after sending everything) arrive complete and in order, and each
        file descriptor arrives with the first byte of its own reply."""
        self.start()
        s = self.daemon.connect()
        getphys = struct.pack("<III", zedaemon.MAGIC, zedaemon.GET_PHYS, 0)
        plan = []
        for _ in range(8):
            plan += [zedaemon.HELLO] * 3000 + [zedaemon.GET_PHYS]
        # More than the socket holds: the daemon must buffer, not block.
        s.sendall(b"".join(getphys if t == zedaemon.GET_PHYS else hello() for t in plan))
        for i, want in enumerate(plan):
            t, body, fds = zedaemon.reply(s, fds=True)
            self.assertEqual(t, want, f"reply {i}")
            if want == zedaemon.GET_PHYS:
                self.assertEqual(len(fds), 1, f"reply {i}: its memfd must come with its header")
                self.assertEqual(os.fstat(fds[0]).st_size, struct.unpack("<Q", body)[0])
                os.close(fds[0])
            else:
                self.assertEqual(fds, [], f"reply {i}: a HELLO carries no fd")
                self.assertIn(b"1x1x2x4", body)
        s.close()
        self.assertTrue(self.daemon.alive())

    def test_idle_connections_cost_nothing(self):
        """5,000 connections that never send: another program's launch
        latency stays within 2x of its quiet value."""
        n = 5000
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if hard != resource.RLIM_INFINITY and hard < n + 200:
            self.skipTest(f"RLIMIT_NOFILE hard limit {hard} < {n + 200}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        self.addCleanup(resource.setrlimit, resource.RLIMIT_NOFILE, (soft, hard))
        self.start()
        m = re.search(r"limits: (\d+) clients", self.daemon.stderr())
        if m and int(m.group(1)) < n + 10:
            self.skipTest(f"the daemon takes {m.group(1)} clients")
        idle = []

        def load():
            for _ in range(n):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(self.daemon.path)
                idle.append(s)
            # All accepted: one more round trip after the last connect.
            s = self.daemon.connect()
            self.assertEqual(zedaemon.request(s, zedaemon.HELLO)[0], zedaemon.HELLO)
            s.close()

        def unload():
            for s in idle:
                s.close()
            idle.clear()

        self.assert_latency_kept(load, unload)
        self.assertTrue(self.daemon.alive())

    def hog(self, kind, size=4096):
        p = self.client("hog", kind, str(size), stdin=subprocess.PIPE)
        self.addCleanup(lambda: (p.poll() is None and p.kill(), p.communicate(timeout=30)))
        line = p.stdout.readline()
        self.assertTrue(line.startswith("hog:"), line + (p.stderr.read() if p.poll() is not None else ""))
        return p, line

    def vadd_runs(self):
        p = self.client("vadd", self.vadd, "2")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("32 results correct", out)

    def test_an_object_hog_is_refused(self):
        """A client creating GEM objects in a loop is refused with EMFILE at
        4096 objects; one creating 1 MiB objects with ENOSPC at half the
        device's memory; VMs and queues at their limits.  While they hold
        everything they got, a new client connects, opens and runs a kernel."""
        self.start()
        _, line = self.hog("gem", 4096)
        self.assertIn("hog: 4096 gem objects (16777216 bytes of GEM), then EMFILE", line)
        _, line = self.hog("gem", 1 << 20)
        self.assertRegex(line, r"hog: (31|32) gem objects .*then ENOSPC")
        _, line = self.hog("vm")
        self.assertIn("hog: 255 vm objects", line)  # + the hog's own first VM
        self.assertIn("EMFILE", line)
        _, line = self.hog("queue")
        self.assertIn("hog: 1024 queue objects", line)
        self.assertIn("EMFILE", line)
        self.vadd_runs()
        self.assertEqual(self.stats()["files"], 4)

    def test_the_daemons_fds_are_budgeted(self):
        """With RLIMIT_NOFILE 1024, one client gets at most half of the GEM
        fd budget (EMFILE), and a new client still connects and runs a kernel."""
        self.start(nofile=1024)
        m = re.search(r"limits: (\d+) clients, (\d+) GEM objects in all; per client (\d+) objects", self.daemon.stderr())
        self.assertIsNotNone(m, self.daemon.stderr())
        clients, total, per_file = map(int, m.groups())
        self.assertEqual((clients, total, per_file), (384, 384, 192))
        _, line = self.hog("gem", 4096)
        self.assertIn(f"hog: {per_file} gem objects", line)
        self.assertIn("EMFILE", line)
        self.vadd_runs()
        # A second hog gets the rest of the budget in all (VMs and queues hold no fd).
        _, line = self.hog("gem", 4096)
        self.assertIn(f"hog: {total - per_file} gem objects", line)
        self.assertIn("EMFILE", line)
        # Everything spent: a new client still connects and opens; its objects are refused cleanly.
        s = self.daemon.connect()
        self.assertEqual(zedaemon.request(s, zedaemon.HELLO)[0], zedaemon.HELLO)
        s.close()
        p = self.client("vadd", self.vadd, "2")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn("GEM_CREATE: Too many open files", err)

    def test_garbage_from_one_client_does_not_reach_others(self):
        """While one program launches kernels, other connections send garbage,
        oversized headers, unknown types, half messages and vanish: the
        program's results and the daemon are unaffected."""
        self.start()
        p = self.client("latency", self.vadd, "5000")
        garbage = [b"GET / HTTP/1.0\r\n\r\n", os.urandom(4096), struct.pack("<III", zedaemon.MAGIC, zedaemon.HELLO, 1 << 30),
                   struct.pack("<III", zedaemon.MAGIC, 999, 0), struct.pack("<III", zedaemon.MAGIC, zedaemon.IOCTL, 3) + b"abc",
                   struct.pack("<III", zedaemon.MAGIC, zedaemon.HELLO, 100) + b"x" * 10, struct.pack("<I", zedaemon.MAGIC)]
        held = []
        for i in range(200):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(self.daemon.path)
            try:
                s.sendall(garbage[i % len(garbage)])
            except (BrokenPipeError, ConnectionResetError):
                pass
            if i % 3 == 0:
                held.append(s)  # stays connected, with its garbage unanswered or half a message
            else:
                s.close()
        out, err = p.communicate(timeout=60)
        for s in held:
            s.close()
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("16 results correct", out)
        self.assertTrue(self.daemon.alive())
        s = self.daemon.connect()
        self.assertEqual(zedaemon.request(s, zedaemon.HELLO)[0], zedaemon.HELLO)
        s.close()
        st = self.stats()
        self.assertEqual((st["files"], st["bos"], st["jobs"]), (0, 0, 0))


if __name__ == "__main__":
    unittest.main()
