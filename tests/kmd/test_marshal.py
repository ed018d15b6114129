#!/usr/bin/env python3
"""Byte-exact marshalling through the preload library: tests/kmd/kmd_marshal.c
runs under LD_PRELOAD against a daemon and makes every ioctl that writes back
both through the shim and on a KMD in its own process (fake hardware with the
daemon's parameters), with out buffers prefilled with a pattern, and compares
the arguments, the out buffers (and 64 guard bytes past them) and the return
values byte for byte."""
import os
import pathlib
import subprocess
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zedaemon  # noqa: E402

GPU = os.environ.get("ZESIM_GPU")
CLIENT = os.environ.get("ZESIM_KMD_MARSHAL")
PRELOAD = os.environ.get("ZESIM_PRELOAD")


@unittest.skipUnless(GPU and CLIENT and PRELOAD, "needs ZESIM_GPU, ZESIM_KMD_MARSHAL, ZESIM_PRELOAD")
class MarshalTest(unittest.TestCase):
    def test_every_ioctl_byte_exact_through_the_shim(self):
        for preset in ("tiny", "xe-lp"):
            with self.subTest(preset=preset):
                daemon = zedaemon.Daemon(GPU, "--preset", preset)
                try:
                    self.assertTrue(daemon.alive(), daemon.stderr())
                    env = {**os.environ, "ZESIM_SOCKET": daemon.path, "LD_PRELOAD": PRELOAD}
                    r = subprocess.run([CLIENT], env=env, capture_output=True, text=True, timeout=120)
                    print(r.stdout, end="")
                    self.assertEqual(r.returncode, 0, r.stderr)
                    self.assertIn("identical byte for byte", r.stdout)
                finally:
                    daemon.close()


if __name__ == "__main__":
    unittest.main()
