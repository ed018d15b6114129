#!/usr/bin/env python3
"""The zesim-gpu daemon: socket set-up, the request protocol (docs/daemon.md),
the test-only side channel, and survival of every client mistake."""
import json
import mmap
import os
import pathlib
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402

AS = os.environ.get("ZESIM_AS")
GPU = os.environ.get("ZESIM_GPU")
from zedaemon import (ERROR, GET_PHYS, HELLO, LEDGER, MAGIC, MMIO_READ, SHUTDOWN, STIMULUS,  # noqa: E402
                      WAIT_IDLE, reply, request)


@unittest.skipUnless(AS and GPU, "ZESIM_AS and ZESIM_GPU must name the built tools")
class DaemonTest(unittest.TestCase):
    def start(self, *extra, test_channel=True, expect_running=True):
        self.tmp = tempfile.TemporaryDirectory()
        self.sock_path = os.path.join(self.tmp.name, "run", "gpu.sock")
        args = [GPU, "--preset", "tiny", "--socket", self.sock_path, *extra] + (["--test-channel"] if test_channel else [])
        self.proc = subprocess.Popen(args, stderr=subprocess.PIPE, text=True,
                                     env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        for _ in range(200):
            if os.path.exists(self.sock_path) or self.proc.poll() is not None:
                break
            time.sleep(0.02)
        if expect_running:
            self.assertIsNone(self.proc.poll(), self.proc.stderr.read() if self.proc.poll() is not None else "")

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.sock_path)
        s.settimeout(60)
        self.addCleanup(s.close)
        return s

    def tearDown(self):
        if getattr(self, "proc", None) and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        if getattr(self, "proc", None):
            self.proc.stderr.close()
        if getattr(self, "tmp", None):
            self.tmp.cleanup()

    def stimulus(self):
        d = pathlib.Path(self.tmp.name)
        name, text = zetools.doc_examples(pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md")[0]
        (d / "v.zeasm").write_text(text)
        self.assertEqual(zetools.assemble(AS, d / "v.zeasm", d / "v.elf").returncode, 0)
        xs = struct.pack("<16f", *range(16))
        (d / "s.json").write_text(json.dumps({
            "buffers": [{"address": "0x100000", "data": xs.hex()}, {"address": "0x200000", "data": xs.hex()},
                        {"address": "0x300000", "size": 64}],
            "modules": [{"path": str(d / "v.elf"), "address": "0x40000000"}],
            "commands": [{"cmd": "compute_walker", "kernel": "vadd", "group_size": [16, 1, 1], "groups": [1, 1, 1],
                          "args": struct.pack("<QQQ", 0x100000, 0x200000, 0x300000).hex()}]}))
        return str(d / "s.json").encode()

    def test_socket_directory_is_private(self):
        self.start()
        mode = os.stat(os.path.dirname(self.sock_path)).st_mode & 0o777
        self.assertEqual(mode, 0o700)

    def test_refuses_a_shared_directory(self):
        tmp = tempfile.TemporaryDirectory()
        os.chmod(tmp.name, 0o755)
        r = subprocess.run([GPU, "--preset", "tiny", "--socket", os.path.join(tmp.name, "g.sock")],
                           capture_output=True, text=True, timeout=30)
        tmp.cleanup()
        self.assertEqual(r.returncode, 1)
        self.assertIn("mode 0700", r.stderr)

    def test_protocol_and_side_channel(self):
        self.start()
        s = self.connect()
        t, body, _ = request(s, HELLO)
        self.assertEqual(t, HELLO)
        self.assertEqual(struct.unpack_from("<I", body)[0], 2)  # wire version 2: secondary fds
        self.assertIn(b"1x1x2x4", body)
        t, body, _ = request(s, MMIO_READ, struct.pack("<I", 0x0000))
        self.assertEqual(struct.unpack("<I", body)[0], 0x5A455349)
        t, body, _ = request(s, MMIO_READ, struct.pack("<I", 0x0008))
        self.assertEqual(struct.unpack("<I", body)[0], 1 << 24 | 1 << 16 | 2 << 8 | 4)
        t, body, _ = request(s, STIMULUS, self.stimulus())
        self.assertEqual(t, STIMULUS, body)
        res = json.loads(body)
        self.assertEqual(struct.unpack("<16f", bytes.fromhex(res["buffers"][2]["data"])), tuple(2.0 * i for i in range(16)))
        t, body, _ = request(s, LEDGER)
        windows = [json.loads(l) for l in body.decode().splitlines()]
        self.assertEqual(sum(w["threads_dispatched"] for w in windows), 1)
        s.sendall(struct.pack("<III", MAGIC, GET_PHYS, 0))
        t, body, fds = reply(s, fds=True)
        self.assertEqual(len(fds), 1)
        size = struct.unpack("<Q", body)[0]
        self.assertEqual(os.fstat(fds[0]).st_size, size)
        with mmap.mmap(fds[0], size) as m:
            self.assertGreater(len(m), 0)
        os.close(fds[0])
        t, body, _ = request(s, WAIT_IDLE)
        self.assertEqual(t, WAIT_IDLE)
        t, _, _ = request(s, SHUTDOWN)
        self.assertEqual(t, SHUTDOWN)
        self.assertEqual(self.proc.wait(20), 0)
        self.assertFalse(os.path.exists(self.sock_path))

    def test_survives_client_mistakes(self):
        self.start()
        bad = [b"GET / HTTP/1.0\r\n\r\n",
               struct.pack("<III", MAGIC, HELLO, 1 << 30),
               struct.pack("<III", MAGIC, 999, 0),
               struct.pack("<III", MAGIC, MMIO_READ, 2) + b"xx",
               struct.pack("<I", MAGIC)]  # half a header, then the client vanishes
        for payload in bad:
            s = self.connect()
            s.sendall(payload)
            if len(payload) >= 12:
                t, body, _ = reply(s)
                self.assertEqual(t, ERROR, payload)
                self.assertTrue(body)
            s.close()
        s = self.connect()
        t, body, _ = request(s, STIMULUS, b"/nonexistent/stimulus.json")
        self.assertEqual(t, ERROR)
        self.assertIn(b"cannot open", body)
        t, _, _ = request(s, HELLO)
        self.assertEqual(t, HELLO)
        self.assertIsNone(self.proc.poll())

    def test_side_channel_is_off_by_default(self):
        self.start(test_channel=False)
        s = self.connect()
        t, body, _ = request(s, MMIO_READ, struct.pack("<I", 0))
        self.assertEqual(t, ERROR)
        self.assertIn(b"--test-channel", body)

    def test_job_timeout_config(self):
        # job_timeout_ms (docs/config.md): default 10 min, 0 = none, shown at start-up.
        configs = tempfile.TemporaryDirectory()
        self.addCleanup(configs.cleanup)
        cfg = pathlib.Path(configs.name, "c.json")
        for value, want in ((None, "; job timeout 600000 ms; listening on"), (0, "; no job timeout; listening on"),
                            (1500, "; job timeout 1500 ms; listening on")):
            cfg.write_text(json.dumps({} if value is None else {"job_timeout_ms": value}))
            self.start("--config", str(cfg))
            self.assertIn(want, self.proc.stderr.readline())
            self.tearDown()
        cfg.write_text(json.dumps({"preset": "tiny", "job_timeout_ms": "soon"}))
        r = subprocess.run([GPU, "--config", str(cfg), "--socket", os.path.join(configs.name, "run", "g.sock")],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("c.json", r.stderr)

if __name__ == "__main__":
    unittest.main()
