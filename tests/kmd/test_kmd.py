#!/usr/bin/env python3
"""The fake KMD through the preload library, end to end: raw-ioctl clients
(tests/kmd/kmd_client.c) against a daemon.  Two processes at once; a client
killed mid-kernel leaves the daemon serving the other, and every object of
the dead client is freed (checked through the daemon's KMD statistics)."""
import json
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kmdenv import AS, GPU, CLIENT, PRELOAD, SPIN, assemble, needs_tools, vadd_source  # noqa: E402,F401



@needs_tools
class KmdTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        elf = assemble(cls.tmp.name, {"vadd": vadd_source(), "spin": SPIN})
        cls.vadd, cls.spin = elf["vadd"], elf["spin"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def setUp(self):
        self.daemon = zedaemon.Daemon(GPU, "--preset", "tiny")
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        self.env = {**os.environ, "ZESIM_SOCKET": self.daemon.path, "LD_PRELOAD": PRELOAD}

    def tearDown(self):
        self.daemon.close()

    def client(self, *args):
        return subprocess.Popen([CLIENT, *args], env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def stats(self):
        s = self.daemon.connect()
        t, body, _ = zedaemon.request(s, zedaemon.KMD_STATS)
        s.close()
        self.assertEqual(t, zedaemon.KMD_STATS, body)
        return json.loads(body)

    def test_probe(self):
        p = self.client("probe")
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("driver zesim", out)
        self.assertIn("bad pointer gives EFAULT", out)

    def test_two_processes_at_once(self):
        procs = [self.client("vadd", self.vadd, str(g)) for g in (3, 5)]
        for p, g in zip(procs, (3, 5)):
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, err)
            self.assertIn(f"{g * 16} results correct", out)
        st = self.stats()
        self.assertEqual(st["jobs_completed"], 2)
        self.assertEqual((st["files"], st["bos"], st["vms"], st["queues"], st["jobs"]), (0, 0, 0, 0, 0))

    def test_client_killed_mid_kernel(self):
        before = self.stats()
        spin = self.client("spin", self.spin, "2")
        self.assertIn("submitted", spin.stdout.readline())
        # Time slicing (docs/kmd.md §6): another client's work runs beside the
        # kernel that never ends.
        other = self.client("vadd", self.vadd, "4")
        out, err = other.communicate(timeout=120)
        self.assertEqual(other.returncode, 0, err)
        self.assertIn("64 results correct", out)
        self.assertIsNone(spin.poll())
        mid = self.stats()
        self.assertEqual(mid["files"], 1)
        self.assertGreater(mid["bo_bytes"], 0)
        self.assertGreaterEqual(mid["timeslices"], 1)
        spin.send_signal(signal.SIGKILL)
        spin.wait(30)
        spin.stdout.close()
        spin.stderr.close()
        self.assertTrue(self.daemon.alive())
        after = self.stats()
        self.assertEqual((after["files"], after["bos"], after["vms"], after["queues"], after["jobs"]), (0, 0, 0, 0, 0))
        self.assertEqual((after["bo_bytes"], after["pt_bytes"]), (0, 0))
        self.assertEqual(after["free_bytes"], before["free_bytes"])
        self.assertGreaterEqual(after["jobs_cancelled"], 1)
        self.assertGreaterEqual(after["engine_resets"], 1)

    def test_a_waiting_batch_yields_to_later_work(self):
        p = self.client("preempt")
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, out + err)
        self.assertIn("the waiter wrote 7", out)
        st = self.stats()
        self.assertGreaterEqual(st["preemptions"], 1)
        self.assertEqual(st["jobs_completed"], 2)

    def test_a_kernel_that_never_ends_times_out(self):
        # The job timeout (docs/kmd.md §6) on a daemon of its own: the raw wait
        # gets EIO, the client queued behind runs, the daemon counts it.
        cfg = pathlib.Path(self.tmp.name) / "timeout.json"
        cfg.write_text(json.dumps({"preset": "tiny", "job_timeout_ms": 500}))
        self.daemon.close()
        self.daemon = zedaemon.Daemon(GPU, "--config", str(cfg))
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        self.env["ZESIM_SOCKET"] = self.daemon.path
        start = time.monotonic()
        spin = self.client("spin", self.spin, "1")
        self.assertIn("submitted", spin.stdout.readline())
        other = self.client("vadd", self.vadd, "2")
        out, err = spin.communicate(timeout=60)
        self.assertEqual(spin.returncode, 1, out + err)
        self.assertIn("WAIT_USER_FENCE: Input/output error", err)
        self.assertGreaterEqual(time.monotonic() - start, 0.5)
        out, err = other.communicate(timeout=60)
        self.assertEqual(other.returncode, 0, err)
        self.assertIn("32 results correct", out)
        st = self.stats()
        self.assertEqual((st["jobs_timed_out"], st["jobs_completed"], st["engine_resets"]), (1, 1, 1))
        self.assertEqual((st["files"], st["bos"], st["jobs"]), (0, 0, 0))
        self.assertRegex(self.daemon.stderr(), r"job timeout: pid \d+, exec queue 1, context 1: .* 500 ms")

    def test_clients_are_isolated(self):
        spin = self.client("spin", self.spin, "1")  # a client holding objects with handles 1.. and offsets 2^32..
        self.assertIn("submitted", spin.stdout.readline())
        p = self.client("isolation")
        out, err = p.communicate(timeout=60)
        spin.kill()
        spin.communicate(timeout=30)
        self.assertEqual(p.returncode, 0, out + err)

    def test_random_ioctls_through_the_shim(self):
        p = self.client("fuzz", "7", "3000")
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err)
        self.assertIn("failed with a valid errno", out)
        self.assertTrue(self.daemon.alive())
        # The fuzzing client closed: nothing of it remains.
        st = self.stats()
        self.assertEqual((st["files"], st["bos"], st["vms"], st["queues"], st["jobs"], st["bo_bytes"]), (0,) * 6)

    def test_no_daemon_means_no_device(self):
        env = {**self.env, "ZESIM_SOCKET": "/nonexistent/gpu.sock"}
        p = subprocess.run([CLIENT, "probe"], env=env, capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 1)
        self.assertIn("open /dev/dri/renderD128", p.stderr)


if __name__ == "__main__":
    unittest.main()
