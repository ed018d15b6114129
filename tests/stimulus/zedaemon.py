"""Start a zesim-gpu daemon for a test and talk its wire protocol
(docs/daemon.md): 12-byte header {magic, type, length} + payload."""
import os
import socket
import struct
import subprocess
import sys
import tempfile
import time

MAGIC = 0x4D49535A
HELLO, SHUTDOWN, WAIT_IDLE, OPEN, IOCTL, MMAP = 1, 2, 3, 8, 9, 10
MMIO_READ, MMIO_WRITE, GET_PHYS, LEDGER, STIMULUS, KMD_STATS, DEBUG_SNAPSHOTS, ERROR = 16, 17, 18, 19, 20, 21, 22, 0xFFFF


def request(sock, type_, payload=b""):
    sock.sendall(struct.pack("<III", MAGIC, type_, len(payload)) + payload)
    return reply(sock)


def reply(sock, fds=False):
    """(type, payload, fds); type None when the daemon closed the connection."""
    if fds:
        # recv_fds may return part of the header (the stream can be split anywhere):
        # the fd comes with the first byte, the rest of the header follows.
        head, got, _, _ = socket.recv_fds(sock, 12, 1)
        while head and len(head) < 12:
            more = sock.recv(12 - len(head), socket.MSG_WAITALL)
            if not more:
                break
            head += more
    else:
        head, got = sock.recv(12, socket.MSG_WAITALL), []
    if len(head) < 12:
        return None, b"", got
    magic, type_, n = struct.unpack("<III", head)
    if magic != MAGIC:
        raise AssertionError("bad magic in a reply")
    body = b""
    while len(body) < n:
        chunk = sock.recv(n - len(body))
        if not chunk:
            break
        body += chunk
    return type_, body, got


class DaemonError(AssertionError):
    pass


def fail(script, msg, daemon=None, tail=None):
    """A test script's failure: its name, the reason, the daemon's log (the last
    `tail` lines if given); exits 1."""
    print("%s: FAILED: %s" % (script, msg))
    if daemon is not None:
        log = daemon.stderr().splitlines()
        print("--- daemon stderr ---\n%s" % "\n".join(log[-tail:] if tail else log))
    sys.exit(1)


class Daemon:
    """zesim-gpu on a private socket; use as a context manager."""

    def __init__(self, gpu, *args, test_channel=True):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "run", "gpu.sock")
        cmd = [gpu, *args, "--socket", self.path] + (["--test-channel"] if test_channel else [])
        self.log = open(os.path.join(self.tmp.name, "daemon.log"), "w+")
        self.proc = subprocess.Popen(cmd, stderr=self.log, env={**os.environ, "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        for _ in range(400):
            if os.path.exists(self.path) or self.proc.poll() is not None:
                break
            time.sleep(0.025)

    def alive(self):
        return self.proc.poll() is None

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.path)
        s.settimeout(120)
        return s

    def stderr(self):
        self.log.seek(0)
        return self.log.read()

    def query(self, type_, payload=b""):
        """One request on a connection of its own; the reply's payload.  Raises
        DaemonError (with the daemon's log) when the reply is not of that type."""
        s = self.connect()
        try:
            t, body, _ = request(s, type_, payload)
        finally:
            s.close()
        if t != type_:
            raise DaemonError("request %d answered %r: %r\n--- daemon stderr ---\n%s" % (type_, t, body, self.stderr()))
        return body

    def kmd_stats(self):
        """The KMD's statistics (docs/kmd.md §10) through the test channel."""
        import json
        return json.loads(self.query(KMD_STATS))

    def debug_snapshots(self):
        """The model's debug stop / resume snapshots since the last call (docs/debug.md §2.6)."""
        import json
        return [json.loads(x) for x in self.query(DEBUG_SNAPSHOTS).decode().splitlines() if x.strip()]

    def mmio_read(self, offset):
        """A device register through the test channel."""
        return struct.unpack("<I", self.query(MMIO_READ, struct.pack("<I", offset)))[0]

    def mmio_write(self, offset, value):
        """Write a device register through the test channel."""
        self.query(MMIO_WRITE, struct.pack("<II", offset, value))

    def phys_read(self, addr, n):
        """n bytes of the device's physical memory (its own backing) at addr."""
        s = self.connect()
        try:
            s.sendall(struct.pack("<III", MAGIC, GET_PHYS, 0))
            t, body, fds = reply(s, fds=True)
        finally:
            s.close()
        if t != GET_PHYS or not fds:
            raise DaemonError("GET_PHYS answered %r: %r" % (t, body))
        try:
            return os.pread(fds[0], n, addr)
        finally:
            for fd in fds:
                os.close(fd)

    def stimulus(self, path):
        """Run a stimulus file (docs/stimulus.md) on the daemon's device: the result."""
        import json
        return json.loads(self.query(STIMULUS, str(path).encode()))

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(20)
        self.log.close()
        self.tmp.cleanup()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
