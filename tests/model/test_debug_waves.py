#!/usr/bin/env python3
"""`zesim-gpu --waves DIR` writes the EU debug unit's FST (DIR/debug.fst, docs/debug.md
section 1.7) for a model run: a kernel with a breakpoint in a loop, run with the system
routine, plus a halt-all request.  fst2vcd reads it; every signal of waves/debug.gtkw is
in it; the stop line pulsed once per stop the run reported, the interrupt pulsed as
often, and the MMIO writes of the resumes are there."""
import argparse
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "stimulus"))
sys.path.insert(0, str(ROOT / "tests" / "model"))
import zetools  # noqa: E402
from test_debug_sip import BP_KERNEL, MODULE_VA, OUT_VA, REGS  # noqa: E402


def fail(msg):
    print("test_debug_waves: FAILED: " + msg)
    sys.exit(1)


def rises(vcd, ident):
    return len(re.findall(r"^1" + re.escape(ident) + r"$", vcd, re.M))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--as", dest="asm", required=True)
    a = ap.parse_args()
    fst2vcd = shutil.which("fst2vcd")
    if not fst2vcd:
        fail("fst2vcd (Debian package gtkwave) is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        (tmp / "k.zeasm").write_text(BP_KERNEL)
        r = zetools.assemble(a.asm, tmp / "k.zeasm", tmp / "k.elf")
        if r.returncode:
            fail("does not assemble: " + r.stderr)
        (tmp / "s.json").write_text(json.dumps({
            "buffers": [{"address": hex(OUT_VA), "size": 4096}],
            "modules": [{"path": str(tmp / "k.elf"), "address": hex(MODULE_VA)}],
            "commands": [{"cmd": "compute_walker", "kernel": "bp", "group_size": [8, 1, 1], "groups": [4, 1, 1],
                          "args": struct.pack("<Q", OUT_VA).hex()}],
            "debug": {"mmio_at": [{"at": 300, "register": REGS["DBG_ALL"], "value": 1}]}}))
        p = subprocess.run([a.gpu, "--preset", "tiny", "--waves", str(tmp / "w"), "--stimulus", str(tmp / "s.json")],
                           capture_output=True, text=True, timeout=120, env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        if p.returncode:
            fail(f"zesim-gpu exited {p.returncode}: {p.stderr}")
        res = json.loads(p.stdout)
        stops = len(res["debug"]["stops"])
        fst = tmp / "w" / "debug.fst"
        if not fst.is_file():
            fail(f"no {fst}")
        vcd = subprocess.run([fst2vcd, str(fst)], capture_output=True, text=True).stdout
        ids = dict(re.findall(r"\$var \w+ \d+ (\S+) (\S+)", vcd)[::-1])
        names = {v: k for k, v in ids.items()}
        gtkw = (ROOT / "waves" / "debug.gtkw").read_text()
        for sig in re.findall(r"^dbg\.(?:zs_debug\.)?(\w+)", gtkw, re.M):
            if sig not in names:
                fail(f"signal {sig} of waves/debug.gtkw is not in the waveform")
        stop_rises, irq_rises, we_rises = (rises(vcd, names[s]) for s in ("stop_valid", "irq", "reg_we"))
        if stops < 8 or stop_rises != stops or irq_rises != stops:
            fail(f"{stops} stops reported; the stop line rose {stop_rises} times, the interrupt {irq_rises}")
        if we_rises < 1:
            fail("no MMIO write (the resumes) in the waveform")
        print(f"test_debug_waves: {fst.name}: {fst.stat().st_size} bytes; {stops} stops, the stop line and the "
              f"interrupt rose {stop_rises} times each, reg_we {we_rises} times")


if __name__ == "__main__":
    main()
