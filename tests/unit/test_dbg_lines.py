#!/usr/bin/python3
"""zesim-dbg's ELF and DWARF line reader (tools/dbg/zdbg_elf.c) against binutils.

    test_dbg_lines.py --dbg build/tools/zesim-dbg [--dbg-san build/tools/zesim-dbg-san]
                      --as build/tools/zesim-as --spirv build/tools/zesim-spirv SPV_G...

The expectation is objdump's decoding of the same files (`objdump --dwarf=decodedline`,
and `readelf -sW` for the symbols), never zesim-dbg's own code:
  * line tables of every DWARF version the reader claims (2 is what gcc -gdwarf-2 still
    writes as 3 at least; 3, 4, 5 and 64-bit DWARF 5 from gcc; DWARF 5 with MD5 and
    .debug_line_str from clang), of a zesim-as -g module with several kernels and
    functions, and of SPIR-V kernels translated with -g: every row (file, line,
    address, is_stmt, end of sequence) equal, in order;
  * the function symbols equal readelf's;
  * the command line's errors name the reason (exit 2 usage, 1 failure);
  * malformed files (truncated at many points, .debug_line bytes flipped) give a
    message and exit 1, never a crash or a sanitizer report (--dbg-san).
"""

import argparse
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

C_MAIN = r'''#include "t.h"
int f(int x)
{
	int y = x * 3;
	if (y > 10)
		y -= 4;
	return g(y);
}
int main(int argc, char **argv)
{
	(void)argv;
	return f(argc);
}
'''
C_HDR = r'''static inline int g(int v)
{
	return v + 1;
}
'''

ASM = r'''// two kernels, a function, lines from this file
.kernel first
.simd 8
.arg out global
        mov (8) r10:ud 1:ud
        add (8) r10:ud r10:ud 2:ud
        call helper
        send.eot
.func helper
        mov (8) r11:ud 3:ud
        ret

.kernel second
.simd 16
.arg out global
        mov (16) r10:ud 7:ud
        send.eot
'''


def fail(msg):
    print('FAIL: ' + msg)
    sys.exit(1)


def run(cmd, ok=(0,)):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode not in ok:
        fail('%s: exit %d\n%s%s' % (' '.join(map(str, cmd)), r.returncode, r.stdout, r.stderr))
    return r


def objdump_rows(path):
    """(basename, line or None at end of sequence, address, is_stmt) per row."""
    r = run(['objdump', '--wide', '--dwarf=decodedline', path])
    rows = []
    for ln in r.stdout.splitlines():
        m = re.match(r'^(\S+)\s+(\d+|-)\s+(0x[0-9a-f]+|0)(?:\s+\d+)?(\s+x)?\s*$', ln)
        if not m:
            continue
        end = m.group(2) == '-'
        rows.append((Path(m.group(1)).name, None if end else int(m.group(2)), int(m.group(3), 16),
                     None if end else bool(m.group(4))))
    return rows


def dbg_rows(dbg, path):
    rows = []
    for ln in run([dbg, '--lines', path]).stdout.splitlines():
        f = ln.split()
        if f[0] == '-':
            rows.append((None, None, int(f[2], 16), None))
        else:
            rows.append((Path(f[0]).name, int(f[1]), int(f[2], 16), len(f) == 3))
    return rows


def check_lines(dbg, path, what):
    want, got = objdump_rows(path), dbg_rows(dbg, path)
    if not want:
        fail('%s: objdump decodes no line rows from %s' % (what, path))
    # objdump names the file of an end-of-sequence row; zesim-dbg has none there.
    want = [(None, None, a, None) if ln is None else (f, ln, a, s) for f, ln, a, s in want]
    if want != got:
        for i, (w, g) in enumerate(zip(want, got)):
            if w != g:
                fail('%s: row %d: objdump %s, zesim-dbg %s' % (what, i, w, g))
        fail('%s: objdump has %d rows, zesim-dbg %d' % (what, len(want), len(got)))
    print('ok   %-34s %4d rows equal objdump\'s' % (what, len(got)))
    return got


def check_symbols(dbg, path, what):
    out = run(['readelf', '-sW', path]).stdout
    want, in_symtab = [], False
    for ln in out.splitlines():
        if ln.startswith('Symbol table'):
            in_symtab = "'.symtab'" in ln
            continue
        f = ln.split()
        if in_symtab and len(f) >= 8 and f[3] == 'FUNC':
            want.append((int(f[1], 16), int(f[2], 0), f[7], f[4] == 'GLOBAL'))
    got = []
    for ln in run([dbg, '--symbols', path]).stdout.splitlines():
        f = ln.split()
        got.append((int(f[0], 16), int(f[1]), f[2], len(f) == 3))
    # zesim-dbg: STB_GLOBAL only is "global"; readelf's WEAK ones count as not global.
    if sorted(want) != sorted(got):
        fail('%s: symbols differ:\nreadelf   %s\nzesim-dbg %s' % (what, sorted(want), sorted(got)))
    print('ok   %-34s %4d function symbols equal readelf\'s' % (what, len(got)))
    return got


def check_resolve(dbg, path, what, rows, syms):
    """break FILE:LINE for every line of every file: gdb's rule (the first line at or
    after it with code; in each function, that line's lowest address) computed from
    objdump's rows and readelf's symbols.  Modules only: one row per instruction."""
    def func_at(a):
        hits = [s for s in syms if s[0] <= a < s[0] + s[1]]
        hits.sort(key=lambda s: not s[3])
        return hits[0][2] if hits else None
    checked = 0
    for f in sorted({r[0] for r in rows if r[0]}):
        last = max(r[1] for r in rows if r[0] == f)
        for line in range(1, last + 2):
            cands = [r for r in rows if r[0] == f and r[1] is not None and r[1] >= line]
            want = {}
            if cands:
                best = min(r[1] for r in cands)
                for r in cands:
                    if r[1] == best:
                        fn = func_at(r[2])
                        want[fn] = min(want.get(fn, r[2]), r[2])
            r = run([dbg, '--resolve', path, '%s:%d' % (f, line)], ok=(0, 1))
            got = {}
            for ln in r.stdout.splitlines():
                a = int(ln.split()[0], 16)
                got[func_at(a)] = a
                m = re.search(r' at (\S+):(\d+)$', ln)
                if not m or m.group(1) != f or int(m.group(2)) != best:
                    fail('%s: --resolve %s:%d prints %r (line %d expected)' % (what, f, line, ln, best))
            if got != want:
                fail('%s: break %s:%d: zesim-dbg %s, expected %s' % (what, f, line,
                     {k: hex(v) for k, v in got.items()}, {k: hex(v) for k, v in want.items()}))
            checked += 1
    for s in syms:
        for off in (0, 16, s[1] - 16, s[1]):
            r = run([dbg, '--resolve', path, '%s+%d' % (s[2], off)], ok=(0, 1))
            ok = 0 <= off < s[1] and (s[3] or not [t for t in syms if t[2] == s[2] and t[3]])
            if ok and not r.stdout.startswith('0x%x %s+0x%x' % (s[0] + off, s[2], off)):
                fail('%s: --resolve %s+%d: %r' % (what, s[2], off, r.stdout + r.stderr))
            if not ok and off >= s[1] and r.returncode != 1:
                fail('%s: --resolve %s+%d past the end accepted' % (what, s[2], off))
    print('ok   %-34s break FILE:LINE at %d lines and KERNEL+OFFSET as expected' % (what, checked))


def section(path, name):
    """(offset, size) of a section, from readelf."""
    for ln in run(['readelf', '-SW', path]).stdout.splitlines():
        m = re.match(r'^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)', ln)
        if m and m.group(1) == name:
            return int(m.group(2), 16), int(m.group(3), 16)
    fail('%s has no %s' % (path, name))


def check_malformed(dbg_san, files, work):
    """Truncations and byte flips: exit 0 or 1 with a message, nothing else."""
    rnd = random.Random(14)
    env = dict(os.environ, ASAN_OPTIONS='exitcode=66', UBSAN_OPTIONS='exitcode=66:halt_on_error=1')
    count = 0
    for src in files:
        data = bytearray(Path(src).read_bytes())
        off, size = section(src, '.debug_line')
        cases = [bytes(data[:n]) for n in sorted({0, 4, 63, 64, len(data) // 2, off + 3, off + size // 2,
                                                   off + size - 1, len(data) - 1})]
        for _ in range(40):
            d = bytearray(data)
            for _ in range(rnd.randint(1, 4)):
                d[off + rnd.randrange(size)] = rnd.randrange(256)
            cases.append(bytes(d))
        for i, c in enumerate(cases):
            p = work / ('bad%d.elf' % count)
            p.write_bytes(c)
            count += 1
            for opt in ('--lines', '--symbols'):
                r = subprocess.run([str(dbg_san), opt, str(p)], capture_output=True, text=True, errors='replace', env=env)
                if r.returncode not in (0, 1) or 'Sanitizer' in r.stderr or 'runtime error' in r.stderr:
                    fail('%s %s (case %d of %s): exit %d\n%s' % (opt, p, i, src, r.returncode, r.stderr[-2000:]))
                if r.returncode == 1 and 'zesim-dbg:' not in r.stderr:
                    fail('%s %s: exit 1 without a message' % (opt, p))
    print('ok   %d malformed files: a message or a parse, no crash' % count)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--dbg', required=True)
    ap.add_argument('--dbg-san')
    ap.add_argument('--as', dest='asm', required=True)
    ap.add_argument('--spirv', required=True)
    ap.add_argument('spv', nargs='*')
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as td:
        work = Path(td)
        (work / 't.c').write_text(C_MAIN)
        (work / 't.h').write_text(C_HDR)
        files = []
        for name, cc, flags in [('gcc-dwarf2', 'gcc', ['-gdwarf-2']), ('gcc-dwarf3', 'gcc', ['-gdwarf-3']),
                                ('gcc-dwarf4', 'gcc', ['-gdwarf-4']), ('gcc-dwarf5', 'gcc', ['-gdwarf-5']),
                                ('gcc-dwarf5-64bit', 'gcc', ['-gdwarf-5', '-gdwarf64']),
                                ('clang-dwarf5-md5', 'clang-14', ['-gdwarf-5'])]:
            exe = work / name
            run([cc, '-O1'] + flags + ['-o', exe, work / 't.c'])
            rows = check_lines(a.dbg, exe, name)
            if not any(r[0] == 't.h' for r in rows):
                fail('%s: no row in the header t.h (the second file of the table)' % name)
            check_symbols(a.dbg, exe, name)
            files.append(exe)
        (work / 'k.zeasm').write_text(ASM)
        mod = work / 'k.elf'
        run([a.asm, '-g', '-o', mod, work / 'k.zeasm'])
        rows = check_lines(a.dbg, mod, 'zesim-as -g module')
        syms = check_symbols(a.dbg, mod, 'zesim-as -g module')
        if {s[2] for s in syms} != {'first', 'second', 'helper'}:
            fail('zesim-as module: symbols %s' % syms)
        # The written-down expectation of the source: "mov (16) r1" of kernel second is line 16.
        second = [s for s in syms if s[2] == 'second'][0]
        if (rows and ('k.zeasm', 16, second[0], True) not in rows):
            fail('zesim-as module: no row k.zeasm:16 at kernel second (0x%x): %s' % (second[0], rows))
        check_resolve(a.dbg, mod, 'zesim-as -g module', rows, syms)
        files.append(mod)
        for spv in a.spv:
            elf = work / (Path(spv).stem + '.elf')
            run([a.spirv, '-g', '-o', elf, spv])
            what = 'zesim-spirv -g ' + Path(spv).name
            rows = check_lines(a.dbg, elf, what)
            check_resolve(a.dbg, elf, what, rows, check_symbols(a.dbg, elf, what))
        # The command line: help, usage errors, a pid that does not exist (no device needed).
        for args, code, text in [(['--help'], 0, 'usage: zesim-dbg'), ([], 2, 'give either -p PID or -- PROGRAM'),
                                 (['-p', 'abc'], 2, '-p needs a process id, not "abc"'),
                                 (['-p', '1', '--', 'x'], 2, 'give either'), (['--frob'], 2, 'unknown option'),
                                 (['-p', '2147483646'], 1, 'no process with pid 2147483646'),
                                 (['--resolve', mod, 'nokernel+0x10'], 1, 'no such kernel'),
                                 (['--resolve', mod, 'first+0x11'], 2, 'not at an instruction')]:
            r = run([a.dbg] + args, ok=(code,))
            if text not in r.stdout + r.stderr:
                fail('zesim-dbg %s: %r without %r' % (' '.join(map(str, args)), r.stdout + r.stderr, text))
        print('ok   command-line errors: the usage, the reason, exit 2 or 1')
        r = run([a.dbg, '--lines', work / 't.c'], ok=(1,))
        if 'not an ELF file' not in r.stderr:
            fail('--lines on a C file: %r' % r.stderr)
        if a.dbg_san:
            check_malformed(a.dbg_san, files, work)
    print('PASS')


if __name__ == '__main__':
    main()
