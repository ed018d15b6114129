#!/usr/bin/env python3
"""Program instrumentation checked from outside the driver (driver/README.md,
"Program instrumentation").

    instr_check.py --work DIR [--spirv-source SPV ...] -- ZESIM_RUN... e2e_instr MODULE...

Runs e2e_instr (tests/e2e/test_instr.c) with ZET_ENABLE_PROGRAM_INSTRUMENTATION=1,
which writes per module N: N.elf (the native binary), N.dbg.elf
(zetModuleGetDebugInfo) and N.free (each kernel's free-register token), then checks:

1. free registers: N.free equals this script's own reading of N.elf — the Python
   decoder of tests/stimulus/zeisa.py and the operand rules of docs/isa.md §2, §4, §6
   (a vector operand spans exec_size/8 registers, times the dwords per channel of a
   load's destination and a store's payload, times an atomic's payload elements; a
   scalar one register; the dispatch payload r0-r6 and the argument registers are
   never free), not the driver's code; and in the SPIR-V modules, built with
   REGISTER_REALLOCATION, r126-r127 are free in every kernel;
2. DWARF, read by binutils and LLVM: `llvm-dwarfdump --verify` finds no error;
   `readelf --debug-dump=info` and `llvm-dwarfdump` show one compile unit whose DW_AT_stmt_list is the line table, and a subprogram
   per kernel and function whose DW_AT_low_pc / DW_AT_high_pc are the symbol's value
   and size (`readelf -s`); `objdump --dwarf=decodedline` decodes the line table
   without warnings: every row's address lies in a kernel's text section
   (`readelf -S`), rows cover every instruction of every text section, and every
   (file, line) is one that an OpLine of the module's SPIR-V names (`spirv-dis`).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / 'tests' / 'stimulus'))
import zeisa  # noqa: E402

failures = 0


def fail(msg):
    global failures
    failures += 1
    print('instr_check: FAIL: ' + msg)


def run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print('instr_check: %s: exit %d\n%s%s' % (' '.join(map(str, cmd)), r.returncode, r.stdout, r.stderr))
        sys.exit(1)
    return r


def used_registers(ins):
    """GRFs one instruction reads or writes, from docs/isa.md."""
    span = max(1, ins.exec_size // 8)
    msg = ins.msg.name if ins.is_send else None
    used = set()
    for letter, slot in ins.letters():
        if slot is None:
            continue
        o = ins.operands[slot]
        if o.kind == zeisa.KIND_SCALAR:
            used.add(o.reg)
            continue
        if o.kind != zeisa.KIND_VEC:
            continue
        n = span
        if letter == 'd' and msg in ('load', 'slm.load'):
            n = span * ins.vsize
        elif letter == 'p':
            n = span * (ins.atomic.payload if ins.atomic else ins.vsize)
        used.update((o.reg + i) % zeisa.GRF_COUNT for i in range(n))
    return used


def free_sequences(kernel):
    used = set(range(7 + (kernel.arg_bytes + 31) // 32))
    text = kernel.text
    for off in range(0, len(text), 16):
        used |= used_registers(zeisa.decode(text[off:off + 16]))
    seqs, r = [], 0
    while r < zeisa.GRF_COUNT:
        if r in used:
            r += 1
            continue
        e = r
        while e < zeisa.GRF_COUNT and e not in used:
            e += 1
        seqs.append('%d:%d' % (r * 32, (e - r) * 32))
        r = e
    return ' '.join(seqs)


def check_free(n, work, realloc):
    module = zeisa.read_module(work / ('%d.elf' % n))
    got = {}
    for line in (work / ('%d.free' % n)).read_text().splitlines():
        name, _, regs = line.partition(' ')
        got[name] = regs.strip()
    if set(got) != set(module.kernels):
        fail('module %d: kernels %s in N.free, %s in the ELF' % (n, sorted(got), sorted(module.kernels)))
    total = 0
    for name, k in module.kernels.items():
        want = free_sequences(k)
        last = [int(v) for v in want.split()[-1].split(':')] if want else [0, 0]
        if realloc and (last[0] > 126 * 32 or sum(last) != 4096):
            fail('module %d kernel %s: built with REGISTER_REALLOCATION, r126-r127 are not free (%r)'
                 % (n, name, want))
        total += sum(int(s.split(':')[1]) for s in want.split()) // 32
        if got.get(name) != want:
            fail('module %d kernel %s: driver says free %r, the decoder %r' % (n, name, got.get(name), want))
    return len(module.kernels), total


def symbols(elf):
    """name -> (value, size) of the FUNC symbols."""
    out = {}
    for m in re.finditer(r'^\s*\d+:\s+([0-9a-f]+)\s+(\d+)\s+FUNC\s+\w+\s+\w+\s+\d+\s+(\S+)\s*$',
                         run(['readelf', '-W', '-s', elf]).stdout, re.M):
        out[m.group(3)] = (int(m.group(1), 16), int(m.group(2)))
    return out


def text_sections(elf):
    """[(addr, size)] of the .text.* sections."""
    out = []
    for m in re.finditer(r'\]\s+\.text\.(\S+)\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)',
                         run(['readelf', '-W', '-S', elf]).stdout):
        out.append((int(m.group(2), 16), int(m.group(3), 16)))
    return out


def oplines(spv):
    dis = run(['spirv-dis', spv]).stdout
    strings = dict(re.findall(r'(%\w+) = OpString "([^"]*)"', dis))
    return {(Path(strings.get(f, '?')).name, int(line)) for f, line in re.findall(r'OpLine (%\w+) (\d+) \d+', dis)}


def check_dwarf(n, work, spv):
    elf = work / ('%d.dbg.elf' % n)
    syms = symbols(elf)
    info = run(['readelf', '--debug-dump=info', elf])
    if 'warning' in (info.stdout + info.stderr).lower():
        fail('readelf warns on %s: %s' % (elf, info.stderr))
    if info.stdout.count('DW_TAG_compile_unit') != 1 or 'DW_AT_stmt_list' not in info.stdout:
        fail('%s: not one compile unit with a line table:\n%s' % (elf, info.stdout))
    subs = {}
    for m in re.finditer(r'DW_TAG_subprogram.*?DW_AT_name\s*:\s*(?:\(indirect string[^)]*\):\s*)?(\S+)\s*\n'
                         r'.*?DW_AT_low_pc\s*:\s*(0x[0-9a-f]+|\d+)\s*\n.*?DW_AT_high_pc\s*:\s*(0x[0-9a-f]+|\d+)',
                         info.stdout, re.S):
        subs[m.group(1)] = (int(m.group(2), 0), int(m.group(3), 0))
    if subs != syms:
        fail('%s: subprograms %s, symbols %s' % (elf, subs, syms))
    verify = run(['llvm-dwarfdump', '--verify', elf]).stdout
    if 'No errors.' not in verify:
        fail('llvm-dwarfdump --verify %s:\n%s' % (elf, verify))
    llvm = run(['llvm-dwarfdump', '--debug-info', elf]).stdout
    names = set(re.findall(r'DW_TAG_subprogram\s*\n\s*DW_AT_name\s*\("([^"]+)"\)', llvm))
    if names != set(syms):
        fail('%s: llvm-dwarfdump subprograms %s, symbols %s' % (elf, sorted(names), sorted(syms)))
    r = run(['objdump', '--wide', '--dwarf=decodedline', elf])
    if 'warning' in (r.stdout + r.stderr).lower():
        fail('objdump warns on %s: %s' % (elf, r.stderr))
    rows = [(m.group(1), int(m.group(2)), int(m.group(3), 16))
            for m in re.finditer(r'^(\S+)\s+(\d+)\s+(0x[0-9a-f]+|0)\s', r.stdout, re.M)]
    texts = text_sections(elf)
    covered = set()
    for f, line, addr in rows:
        if not any(a <= addr < a + s for a, s in texts):
            fail('%s: row %s:%d at 0x%x is in no text section %s' % (elf, f, line, addr, texts))
        covered.add(addr)
    want = {a + o for a, s in texts for o in range(0, s, 16)}
    if want - covered:
        fail('%s: %d instructions have no row, e.g. 0x%x' % (elf, len(want - covered), min(want - covered)))
    if spv:
        positions = oplines(spv)
        stray = {(Path(f).name, line) for f, line, _ in rows} - positions
        if stray:
            fail('%s: rows name positions no OpLine names: %s' % (elf, sorted(stray)[:5]))
    return len(rows), len(subs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', help='keep the outputs here (default: a temporary folder)')
    ap.add_argument('cmd', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == '--' else a.cmd
    modules = [c for c in cmd if c.endswith('.spv') or c.endswith('.elf')]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(a.work or tmp)
        work.mkdir(parents=True, exist_ok=True)
        prog = cmd.index(modules[0])
        env = dict(os.environ, ZET_ENABLE_PROGRAM_INSTRUMENTATION='1')
        r = subprocess.run(cmd[:prog] + [str(work)] + cmd[prog:], env=env, capture_output=True, text=True)
        print(r.stdout + r.stderr, end='')
        if r.returncode != 0:
            print('instr_check: FAIL: the program exits %d' % r.returncode)
            return 1
        for i, mod in enumerate(modules):
            n = i + 2  # e2e_instr numbers modules by their argv index
            kernels, free = check_free(n, work, mod.endswith('.spv'))
            # Modules compiled with clang -g (*_g.spv) have OpLines, hence a line table.
            rows, subs = check_dwarf(n, work, mod) if mod.endswith('_g.spv') else (0, 0)
            print('instr_check: %s: %d kernels, %d free GRFs; %d line rows, %d subprograms'
                  % (Path(mod).name, kernels, free, rows, subs))
    if failures:
        print('instr_check: %d failures' % failures)
        return 1
    print('instr_check: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
