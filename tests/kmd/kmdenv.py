"""What the daemon-level KMD tests (test_kmd.py, test_stall.py, test_daemon_memory.py)
share: the tools CTest passes in the environment, the skip rule when they are missing,
and the kernels they assemble (the vector add of docs/isa.md, a kernel that never ends)."""
import os
import pathlib
import sys
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402

AS = os.environ.get("ZESIM_AS")
GPU = os.environ.get("ZESIM_GPU")
CLIENT = os.environ.get("ZESIM_KMD_CLIENT")
PRELOAD = os.environ.get("ZESIM_PRELOAD")

needs_tools = unittest.skipUnless(AS and GPU and CLIENT and PRELOAD,
                                  "needs ZESIM_AS, ZESIM_GPU, ZESIM_KMD_CLIENT, ZESIM_PRELOAD")

SPIN = """.kernel spin
.simd 16
.arg a global
.arg b global
.arg c global
loop:
        jmpi loop
        send.eot
"""


def vadd_source():
    """The first example of docs/isa.md: a vector add."""
    return zetools.doc_examples(pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md")[0][1]


def assemble(folder, sources):
    """Assemble {name: source} into folder; returns {name: path of the ELF}."""
    d = pathlib.Path(folder)
    out = {}
    for name, text in sources.items():
        (d / f"{name}.zeasm").write_text(text)
        r = zetools.assemble(AS, d / f"{name}.zeasm", d / f"{name}.elf")
        assert r.returncode == 0, r.stderr
        out[name] = str(d / f"{name}.elf")
    return out
