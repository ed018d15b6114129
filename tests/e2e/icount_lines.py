#!/usr/bin/env python3
"""zesim-icount's counts per source line against binutils' reading of the line table.

    icount_lines.py --build BUILD -- PROGRAM ARGS...

Runs PROGRAM under `zesim-icount --json --save-modules` and, for every kernel it
counted, recomputes the count of each source line from the tool's per-block
executions and the module's line table as `objdump --dwarf=decodedline` decodes it
(the kernel's text section from `readelf -S`): each instruction takes the row with the
greatest address not above its own; blocks of other kernels' code that a kernel ran
through `calla` ("called_blocks") count on their own module's lines. The tool's own
DWARF reader must give the same lines and counts; the blocks must cover the kernel's
code exactly once; at least one line must be named (the program's modules are compiled
with clang -g or assembled with zesim-as -g).
"""
import argparse
import collections
import functools
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def fail(msg):
    print(f"icount_lines: FAIL: {msg}")
    sys.exit(1)


def out(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


@functools.lru_cache(maxsize=None)
def code(elf, kernel):
    """The kernel's text section (address, size) and the module's line rows (address, file, line)."""
    sec = re.search(r"\]\s+\.text\.%s\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)" % re.escape(kernel),
                    out(["readelf", "-W", "-S", elf]))
    rows = sorted((int(m.group(3), 16), m.group(1), int(m.group(2))) for m in re.finditer(
        r"^(\S+)\s+(\d+)\s+(0x[0-9a-f]+|0)\s", out(["objdump", "--wide", "--dwarf=decodedline", elf]), re.M))
    return int(sec.group(1), 16), int(sec.group(2), 16), rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("prog", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    prog = a.prog[1:] if a.prog[:1] == ["--"] else a.prog
    build = pathlib.Path(a.build).resolve()
    with tempfile.TemporaryDirectory(prefix="icount-lines.") as tmp:
        tmp = pathlib.Path(tmp)
        r = subprocess.run([str(ROOT / "zesim"), "run", "--preset", "tiny", "--", str(build / "tools" / "zesim-icount"),
                            "--out", str(tmp / "report.txt"), "--json", str(tmp / "c.jsonl"), "--save-modules", str(tmp),
                            "--"] + prog, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           env=dict(os.environ, ZESIM_BUILD=str(build)))
        if r.returncode:
            print(r.stdout[-3000:])
            fail(f"the program exits {r.returncode}")
        named = 0
        runs = [json.loads(line) for line in (tmp / "c.jsonl").read_text().splitlines()]
        kernels = [(r["pid"], k) for r in runs for k in r["kernels"]]
        if not kernels:
            fail("no kernel counted")
        files = {(pid, k["module"]): k["module_file"] for pid, k in kernels}
        for pid, k in kernels:
            want = collections.Counter()
            total = 0
            # Its own blocks, then other modules' code run on its behalf through calla
            # (called_blocks: [module, kernel, offset, instructions, executions]).
            for mod, name, blocks in [(k["module"], k["name"], k["blocks"])] + [
                    (m, n, [[off, ninst, execs]]) for m, n, off, ninst, execs in k.get("called_blocks", [])]:
                base, size, rows = code(files[pid, mod], name)
                covered = collections.Counter()
                for off, ninst, execs in blocks:
                    for i in range(ninst):
                        addr = base + off + 16 * i
                        covered[addr] += 1
                        total += execs
                        at = [row for row in rows if row[0] <= addr]
                        key = (pathlib.Path(at[-1][1]).name, at[-1][2]) if at else ("", 0)
                        want[key] += execs
                if blocks is k["blocks"] and (set(covered) != set(range(base, base + size, 16))
                                              or max(covered.values()) != 1):
                    fail(f"{k['name']}: the blocks do not cover its {size // 16} instructions exactly once")
            if total != k["instructions"]:
                fail(f"{k['name']}: blocks sum to {total}, the tool says {k['instructions']}")
            got = collections.Counter({(pathlib.Path(f).name if f else "", line): c for f, line, c in k["lines"] if c})
            want = collections.Counter({key: c for key, c in want.items() if c})
            if got != want:
                fail(f"{k['name']}: per line, the tool says {sorted(got.items())}, objdump's table gives "
                     f"{sorted(want.items())}")
            named += sum(1 for f, line in got if line)
            print(f"icount_lines: {k['name']}: {k['instructions']} instructions over {len(got)} lines, as objdump reads"
                  + (f" ({len(k['called_blocks'])} blocks of other kernels' code)" if k.get("called_blocks") else ""))
        if not named:
            fail("no source line named: were the modules compiled with -g?")
    print("icount_lines: ok")


if __name__ == "__main__":
    main()
