#!/usr/bin/env python3
"""Program snapshots, end to end: e2e_snapshot through `zesim run`, then each stage's
snapshot re-parsed by the stage's own reader where one exists, and zesim-spirv's
--stage output compared with the driver's.

    snapshot_check.py --build BUILD --kernels KERNEL_DIR -- ZESIM_RUN_COMMAND... E2E_SNAPSHOT

- spirv, spirv-translated (matmul.spv) and the linked module's spirv-translated:
  `spirv-val` accepts them and `spirv-dis` disassembles them;
- zeisa text: `zesim-as` assembles it into exactly the zeisa binary, which
  e2e_snapshot already found equal to zeModuleGetNativeBinary;
- IR stages (no reader exists): the driver's text equals `zesim-spirv --stage`'s for
  the same module, as do the other stages (the tool is the same front end).
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

STAGES = ["spirv", "spirv-translated", "ir-lowered", "ir-loops", "ir-scheduled", "ir-allocated", "zeisa"]


def fail(msg):
    print(f"snapshot_check: FAIL: {msg}")
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kw)
    return r.returncode, r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--kernels", required=True)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    build = pathlib.Path(a.build)
    with tempfile.TemporaryDirectory(prefix="snapshot.") as tmp:
        out = pathlib.Path(tmp)
        rc, text = run(cmd + [a.kernels, str(out)])
        sys.stdout.write(text.decode(errors="replace"))
        if rc:
            fail(f"e2e_snapshot exited with {rc}")
        files = {p.name: p for p in out.iterdir()}
        want = {"spirv.bin", "spirv-translated.bin", "ir-lowered.txt", "ir-loops.txt", "ir-scheduled.txt",
                "ir-allocated.txt", "zeisa.bin", "zeisa.txt", "linked-spirv-translated.bin"}
        if set(files) != want:
            fail(f"snapshot files {sorted(files)}, expected {sorted(want)}")
        for name in ("spirv.bin", "spirv-translated.bin", "linked-spirv-translated.bin"):
            rc, msg = run(["spirv-val", str(files[name])])
            if rc:
                fail(f"{name}: spirv-val: {msg.decode(errors='replace')}")
            rc, msg = run(["spirv-dis", "-o", str(out / (name + ".spvasm")), str(files[name])])
            if rc:
                fail(f"{name}: spirv-dis: {msg.decode(errors='replace')}")
        rc, msg = run([str(build / "tools" / "zesim-as"), "-o", str(out / "reassembled.elf"), str(files["zeisa.txt"])])
        if rc:
            fail(f"zeisa.txt: zesim-as: {msg.decode(errors='replace')}")
        if (out / "reassembled.elf").read_bytes() != files["zeisa.bin"].read_bytes():
            fail("zesim-as on the zeisa text does not give the zeisa binary byte for byte")
        tool = build / "tools" / "zesim-spirv"
        spv = pathlib.Path(a.kernels) / "matmul.spv"
        for stage in STAGES:
            for fmt, ext in (("text", "txt"), ("binary", "bin")):
                mine = files.get(f"{stage}.{ext}")
                if mine is None:
                    continue
                rc, got = run([str(tool), "--stage", stage, "--format", fmt, str(spv)])
                if rc:
                    fail(f"zesim-spirv --stage {stage} --format {fmt}: {got.decode(errors='replace')}")
                if got != mine.read_bytes():
                    fail(f"zesim-spirv --stage {stage} --format {fmt} differs from the driver's snapshot")
        # The stages really differ where the pipeline changes the code.
        # The stages really differ where the pipeline changes the code (the kernel
        # header lines, which name the stage, left out).
        ir = ["\n".join(l for l in files[f"{s}.txt"].read_text().splitlines() if not l.startswith("kernel "))
              for s in STAGES[2:6]]
        if len(set(ir)) != 4:
            fail("two IR stages of matmul.spv have the same code")
    print("snapshot_check: ok: SPIR-V stages pass spirv-val and spirv-dis, the zeisa text re-assembles into "
          "the zeisa binary, zesim-spirv prints every stage as the driver captures it")


if __name__ == "__main__":
    main()
