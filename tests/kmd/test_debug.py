#!/usr/bin/env python3
"""The EU debug connection through the preload library and the daemon (docs/uapi.md
"EU debug", docs/kmd.md §14): tests/kmd/dbg_client.c forks a target and debuggers,
real processes with their own DRM connections (the daemon knows them by
SO_PEERCRED); afterwards the daemon holds no file, connection or fd.

With the model's system routine: a vector add (kmd_client) with a breakpoint bit on its
add runs under a debugger (dbg_client attach): every thread stops once at the
breakpoint, the attention bitmap names it, its SSA slot read through the VM fd equals
the model's ledger snapshot of that stop (decoded with tests/model/test_debug_sip.py,
from zesim_ssa.h's offsets), RESUME lets the kernel complete with the right sums."""
import json
import os
import subprocess
import sys
import pathlib
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "model"))
from kmdenv import AS, CLIENT as KMD_CLIENT, assemble, vadd_source  # noqa: E402

GPU = os.environ.get("ZESIM_GPU")
CLIENT = os.environ.get("ZESIM_DBG_CLIENT")
PRELOAD = os.environ.get("ZESIM_PRELOAD")


def zedaemon_lines(body):
    text = body.decode() if isinstance(body, (bytes, bytearray)) else body
    return [ln for ln in text.splitlines() if ln.strip()]


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

    @unittest.skipUnless(AS and KMD_CLIENT, "needs ZESIM_AS and ZESIM_KMD_CLIENT")
    def test_breakpoint_stop_slot_resume(self):
        src = vadd_source().replace("add (16) r24:f r20:f r22:f", "add (16) r24:f r20:f r22:f {bp}")
        self.assertIn("{bp}", src)
        self.debug_run(src, "attach", reason=1)

    @unittest.skipUnless(AS and KMD_CLIENT, "needs ZESIM_AS and ZESIM_KMD_CLIENT")
    def test_interrupt_all_long_kernel(self):
        # The vector add with a delay loop before its store: INTERRUPT_ALL stops every
        # thread (all four resident on tiny's 8 thread slots) once, with reason halt.
        delay = ("        mov (16) r30:d 200000:d\n        do (16)\n            add (16) r30:d r30:d -1:d\n"
                 "            cmp.gt.f0 (16) null r30:d 0:d\n        (f0) while (16)\n")
        src = vadd_source().replace("        send.store", delay + "        send.store")
        self.assertIn("while", src)
        self.debug_run(src, "interrupt", reason=3)

    @unittest.skipUnless(AS and KMD_CLIENT, "needs ZESIM_AS and ZESIM_KMD_CLIENT")
    def test_debugger_killed_with_threads_stopped(self):
        # The breakpoint kernel; the debugger dies (SIGKILL) at its first EU_ATTENTION:
        # the KMD resumes the stopped threads, the kernel completes with the right sums.
        src = vadd_source().replace("add (16) r24:f r20:f r22:f", "add (16) r24:f r20:f r22:f {bp}")
        self.debug_run(src, "die", reason=1)

    def debug_run(self, src, mode, reason):
        from test_debug_sip import decode_slot, slot_vs_snapshot  # the model's test: offsets of zesim_ssa.h
        import tempfile
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        elf = assemble(tmp.name, {"k": src})["k"]
        groups = 4  # SIMD16, 16 work items a group: one thread each
        target = subprocess.Popen([KMD_CLIENT, "vadd", elf, str(groups)], env={**self.env, "KMD_CLIENT_GO_ON_STDIN": "1"},
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: target.poll() is None and target.kill())
        seen = []
        while True:
            line = target.stdout.readline()
            seen.append(line)
            if not line or line.startswith("ready "):
                break
        if not line:
            target.kill()
            self.fail("the target did not get ready: " + "".join(seen) + target.stderr.read())
        pid = int(line.split()[1])
        dbg = subprocess.Popen([CLIENT, mode, str(pid)], env=self.env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        self.addCleanup(lambda: dbg.poll() is None and dbg.kill())
        if dbg.stdout.readline().strip() != "connected":
            dbg.kill()
            self.fail("the debugger did not connect: " + dbg.stderr.read())
        target.stdin.write("go\n")
        target.stdin.flush()
        tout, terr = target.communicate(timeout=120)
        dout, derr = dbg.communicate(timeout=60)
        log = f"target:\n{tout}{terr}\ndebugger:\n{dout}{derr}\ndaemon:\n{self.daemon.stderr()[-3000:]}"
        self.assertEqual(target.returncode, 0, log)
        self.assertIn(f"{groups * 16} results correct", tout, log)
        if mode == "die":
            self.assertEqual(dbg.returncode, -9, log)
            self.assertIn("dying with threads stopped", dout, log)
            snaps = [json.loads(ln) for ln in zedaemon_lines(self.daemon.query(22))]
            stopped = {s["tid"] for s in snaps if s["kind"] == "stop"}
            self.assertEqual(len(stopped), groups, "every thread stops once at its breakpoint: " + log)
            self.assertEqual(sum(s["kind"] == "resume" for s in snaps), groups, "every thread resumed: " + log)
            st = self.daemon.kmd_stats()
            self.assertGreaterEqual(st["debug_resumes"], 1, st)
            print(f"die: {len(stopped)} threads stopped, the debugger killed, the KMD resumed "
                  f"{st['debug_resumes']} threads itself, kernel completed")
            return
        self.assertEqual(dbg.returncode, 0, log)
        stops = [(int(w[1]), w[2]) for w in (ln.split() for ln in dout.splitlines()) if w and w[0] == "stop"]
        snaps = [json.loads(ln) for ln in zedaemon_lines(self.daemon.query(22))]
        stop_snaps = {s["tid"]: s for s in snaps if s["kind"] == "stop"}
        self.assertEqual(len(stops), groups, log)
        self.assertEqual(len({t for t, _ in stops}), groups, "a thread stopped twice: " + log)
        self.assertEqual(sorted(stop_snaps), sorted(t for t, _ in stops), f"snapshots of {sorted(stop_snaps)}")
        for tid, hexslot in stops:
            snap = stop_snaps[tid]
            self.assertEqual(snap["reason"], reason, {k: snap[k] for k in ("tid", "reason", "ip")})
            self.assertEqual(tid, snap["eu"] * 8 + snap["slot"])
            probs = slot_vs_snapshot(decode_slot(hexslot), snap)
            self.assertEqual(probs, [], f"thread {tid}: the slot read through the VM fd differs from the ledger")
        print(f"{mode}: {len(stops)} threads stopped once each (reason {reason}), slots equal the ledger, kernel completed")


if __name__ == "__main__":
    unittest.main()
