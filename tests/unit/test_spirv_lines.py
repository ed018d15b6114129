#!/usr/bin/python3
"""-g: the SPIR-V front end maps OpLine positions to the module's DWARF line table.

    test_spirv_lines.py --spirv build/tools/zesim-spirv --dis build/tools/zesim-dis KERNEL_G.spv SOURCE.cl ...

Each KERNEL_G.spv is an OpenCL C kernel compiled with clang -g (tests/kernels/
kernels.cmake).  The expectation comes from the SPIR-V itself (spirv-dis: the
lines of its OpLine instructions) and from the source (the line of a marked
statement), not from the translator:
  * -g does not change the code (the debug instructions are ignored);
  * with -g the module has a .debug_line that objdump decodes without warnings;
    without -g it has none;
  * every row names the kernel's source file and a line that some OpLine of the
    module names (never line 0 once the first position is known);
  * rows cover the text from address 0 in increasing address order;
  * the statements marked `// LINE` in the source have code at their line.
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        fail('%s: exit %d\n%s%s' % (' '.join(map(str, cmd)), r.returncode, r.stdout, r.stderr))
    return r


def check(spirv_tool, dis_tool, spv, src, work):
    dis = run(['spirv-dis', spv]).stdout
    strings = dict(re.findall(r'(%\w+) = OpString "([^"]*)"', dis))
    oplines = set()
    for f, line in re.findall(r'OpLine (%\w+) (\d+) \d+', dis):
        oplines.add((strings.get(f, '?'), int(line)))
    if not oplines:
        fail('%s has no OpLine: not compiled with -g?' % spv)
    elf, plain = work / (Path(spv).stem + '.elf'), work / (Path(spv).stem + '.nog.elf')
    run([spirv_tool, '-g', '-o', elf, spv])
    run([spirv_tool, '-o', plain, spv])
    if '.debug_line' in run(['readelf', '-S', plain]).stdout:
        fail('%s: a .debug_line without -g' % spv)
    if run([dis_tool, elf]).stdout != run([dis_tool, plain]).stdout:
        fail('%s: -g changes the code' % spv)
    r = run(['objdump', '--wide', '--dwarf=decodedline', elf])
    if 'warning' in r.stderr.lower() or 'warning' in r.stdout.lower():
        fail('objdump warns on %s: %s' % (elf, r.stderr))
    rows = []
    for m in re.finditer(r'^(\S+)\s+(\d+)\s+(0x[0-9a-f]+|0)\s', r.stdout, re.M):
        rows.append((m.group(1), int(m.group(2)), int(m.group(3), 16)))
    if not rows:
        fail('%s: no rows in the line table:\n%s' % (elf, r.stdout))
    if rows[0][2] != 0:
        fail('%s: the first row is at %#x, not 0' % (elf, rows[0][2]))
    last = -1
    for name, line, addr in rows:
        if addr < last:
            fail('%s: addresses go back (%#x after %#x)' % (elf, addr, last))
        last = addr
        full = next((f for f, _ in oplines if f == name or f.endswith('/' + name) or f.endswith(name)), None)
        if full is None or (full, line) not in oplines:
            fail('%s: row %s:%d at %#x names no OpLine of the module' % (elf, name, line, addr))
    mapped = {line for _, line, _ in rows}
    marked = [i + 1 for i, text in enumerate(Path(src).read_text().splitlines()) if '// LINE' in text]
    if not marked:
        fail('%s has no statement marked // LINE' % src)
    for line in marked:
        if line not in mapped:
            fail('%s: no code at %s:%d (mapped lines: %s)' % (elf, src, line, sorted(mapped)))
    return len(rows), len(mapped)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--spirv', required=True)
    ap.add_argument('--dis', required=True)
    ap.add_argument('pairs', nargs='+', help='KERNEL_G.spv SOURCE.cl ...')
    a = ap.parse_args()
    if len(a.pairs) % 2:
        fail('give SPV and source pairs')
    with tempfile.TemporaryDirectory() as d:
        for spv, src in zip(a.pairs[0::2], a.pairs[1::2]):
            n, lines = check(a.spirv, a.dis, spv, src, Path(d))
            print('%s: %d rows, %d source lines' % (Path(spv).name, n, lines))
    print('ok')


if __name__ == '__main__':
    main()
