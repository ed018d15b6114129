#!/usr/bin/env python3
"""Run bench/api_latency against a fresh daemon (xe-lp) and print its figures,
twice: with the daemon and the client pinned to one CPU (the cost of our
software path) and unpinned (adds the cross-CPU wake-up of this machine,
which on a 2-vCPU VM is tens of microseconds per round trip)."""
import argparse
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "stimulus"))
import zedaemon  # noqa: E402
import zetools  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--bench", required=True, help="the api_latency binary")
    ap.add_argument("--preload", required=True)
    ap.add_argument("--iterations", type=int, default=4000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src, mod = pathlib.Path(tmp) / "empty.zeasm", pathlib.Path(tmp) / "empty.elf"
        src.write_text(".kernel empty\n.simd 8\n        send.eot\n")
        r = zetools.assemble(a.as_path, src, mod)
        if r.returncode:
            sys.exit(r.stderr)
        cpu = str(max(os.sched_getaffinity(0)))
        for pinned in (True, False):
            pin = ["taskset", "-c", cpu] if pinned else []
            print("pinned to CPU " + cpu + ":" if pinned else "unpinned:", flush=True)
            with zedaemon.Daemon(pin[0] if pin else a.gpu, *(pin[1:] + [a.gpu] if pin else []), "--preset", "xe-lp",
                                 test_channel=False) as d:
                env = {**os.environ, "ZESIM_SOCKET": d.path, "LD_PRELOAD": a.preload}
                rc = subprocess.run(pin + [a.bench, str(mod), str(a.iterations)], env=env).returncode
                if rc:
                    sys.exit(rc)


if __name__ == "__main__":
    main()
