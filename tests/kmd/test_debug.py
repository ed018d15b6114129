#!/usr/bin/env python3
"""The EU debug connection through the preload library and the daemon (docs/uapi.md
"EU debug", docs/kmd.md §14): tests/kmd/dbg_client.c forks a target and debuggers,
real processes with their own DRM connections (the daemon knows them by
SO_PEERCRED); afterwards the daemon holds no file, connection or fd."""
import os
import subprocess
import sys
import pathlib
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

GPU = os.environ.get("ZESIM_GPU")
CLIENT = os.environ.get("ZESIM_DBG_CLIENT")
PRELOAD = os.environ.get("ZESIM_PRELOAD")


@unittest.skipUnless(GPU and CLIENT and PRELOAD, "needs ZESIM_GPU, ZESIM_DBG_CLIENT, ZESIM_PRELOAD")
class DebugConnectionTest(unittest.TestCase):
    def setUp(self):
        self.daemon = zedaemon.Daemon(GPU, "--preset", "tiny")
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())
        self.addCleanup(self.daemon.close)
        self.env = {**os.environ, "ZESIM_SOCKET": self.daemon.path, "LD_PRELOAD": PRELOAD}

    def run_client(self, mode):
        p = subprocess.run([CLIENT, mode], env=self.env, capture_output=True, text=True, timeout=120)
        sys.stdout.write(p.stdout)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr + "\n--- daemon:\n" + self.daemon.stderr()[-3000:])
        # Every file, connection and fd is gone once the processes are (the daemon
        # notices a closed socket in its next loop).
        for _ in range(100):
            st = self.daemon.kmd_stats()
            if not st["files"] and not st["fds"]:
                break
            time.sleep(0.05)
        self.assertEqual((st["files"], st["fds"], st["debug_connections"], st["vms"], st["bos"]), (0, 0, 0, 0, 0), st)
        self.assertTrue(self.daemon.alive(), self.daemon.stderr())

    def test_rules_events_vm_fd_modules_detach(self):
        self.run_client("rules")

    def test_debugger_death(self):
        self.run_client("death")


if __name__ == "__main__":
    unittest.main()
