#!/usr/bin/python3
"""Fences the SPIR-V back end leaves out before barriers are never needed.

    test_spirv_fences.py --spirv build/tools/zesim-spirv --dis build/tools/zesim-dis MODULE.spv ...

The back end drops a `send.fence` when nothing it would wait for can matter
(spv_backend.c, drop_idle_fences).  The model performs every send when it
issues, so running the kernels cannot tell a missing fence; this checks the
code instead.  Walking back from each `send.barrier` over straight-line code to
the previous `send.fence` (or to a label or control-flow instruction, where the
back end never drops one), there must be:
  * no store, atomic or timestamp (it could still be in flight);
  * no shared-local-memory load whose destination nothing reads before the
    barrier (a write another work item makes after the barrier could reach it).
Global loads in flight are allowed: the modules checked use only
barrier(CLK_LOCAL_MEM_FENCE), which does not order global memory.
Expectations besides: regress.spv's slm_war keeps its fence before the barrier
after the read in flight, and matmul.spv's matmul_tiled has a barrier without a
fence (the one after the products, whose loads were all read).
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


CONTROL = {'if', 'else', 'endif', 'do', 'while', 'break', 'cont', 'call', 'ret', 'jmpi'}


def kernels(text):
    """{name: (simd, [instruction lines])} from zesim-dis output."""
    out, name = {}, None
    for line in text.splitlines():
        m = re.match(r'\.kernel (\S+)', line)
        if m:
            name = m.group(1)
            out[name] = [16, []]
            continue
        if name is None:
            continue
        m = re.match(r'\.simd (\d+)', line)
        if m:
            out[name][0] = int(m.group(1))
            continue
        s = line.strip()
        if s and not s.startswith('.') and not s.startswith('//'):
            out[name][1].append(s)
    return out


def parse(inst, simd):
    """(mnemonic, [(first reg, count)] written, [(first reg, count)] read)."""
    s = re.sub(r'^\([!]?f[01](\.\d+)?\)\s*', '', inst)
    if s.endswith(':'):
        return ('label', [], [])
    parts = s.split()
    mnem = parts[0]
    ops = [p for p in parts[1:] if not p.startswith('(')]
    per = max(1, simd // 8)
    vec = 1
    m = re.search(r'\.v(\d)$', mnem)
    if m:
        vec = int(m.group(1))

    def regs(op, n=1):
        m = re.match(r'-?\(?(?:abs\()?r(\d+)(\.(\d+))?', op.lstrip('-'))
        if not m:
            return None
        if m.group(2):
            return (int(m.group(1)), 1)
        return (int(m.group(1)), per * n)

    base = mnem.split('.')[0]
    if base == 'send':
        kind = mnem.split('.')[1:]
        writes_dst = kind[0] in ('load', 'atomic') or kind[:2] in (['slm', 'load'], ['slm', 'atomic'])
        w, r = [], []
        for i, op in enumerate(ops):
            x = regs(op, vec if (i == 0 and writes_dst) or (i == 1 and not writes_dst) else 1)
            if x is None:
                continue
            (w if i == 0 and writes_dst else r).append(x)
        return (mnem, w, r)
    w, r = [], []
    for i, op in enumerate(ops):
        x = regs(op)
        if x is None:
            continue
        (w if i == 0 else r).append(x)
    return (mnem, w, r)


def overlaps(a, b):
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def check_kernel(mod, name, simd, code):
    """Returns (barriers, barriers with a fence of their own: one after the previous barrier)."""
    insts = [parse(i, simd) for i in code]
    barriers = fenced = 0
    for bi, (mnem, _, _) in enumerate(insts):
        if mnem != 'send.barrier':
            continue
        barriers += 1
        j, passed = bi, False  # passed: another barrier since this one
        while j > 0:
            j -= 1
            m, w, _ = insts[j]
            base = m.split('.')[0]
            if m == 'send.fence':
                fenced += not passed
                break
            if m == 'label' or base in CONTROL:
                break
            if not m.startswith('send.'):
                continue
            kind = m.split('.')[1:]
            if kind[0] == 'barrier':
                passed = True
                continue
            if kind[0] == 'load':
                continue  # global: not ordered by CLK_LOCAL_MEM_FENCE
            if kind[:2] == ['slm', 'load']:
                read = any(overlaps(d, s) for k in range(j + 1, bi) for s in insts[k][2] for d in w)
                if not read:
                    fail('%s %s: barrier (instruction %d) without a fence while the SLM load at %d '
                         'may be in flight:\n  %s' % (mod, name, bi, j, code[j]))
                continue
            fail('%s %s: barrier (instruction %d) without a fence after %s (instruction %d)' %
                 (mod, name, bi, code[j], j))
    return barriers, fenced


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--spirv', required=True)
    ap.add_argument('--dis', required=True)
    ap.add_argument('modules', nargs='+')
    a = ap.parse_args()
    seen = {}
    with tempfile.TemporaryDirectory() as tmp:
        for spv in a.modules:
            for simd8 in (False, True):
                elf = Path(tmp) / (Path(spv).stem + ('8' if simd8 else '') + '.elf')
                run([a.spirv] + (['-8'] if simd8 else []) + ['-o', str(elf), spv])
                for name, (simd, code) in kernels(run([a.dis, str(elf)]).stdout).items():
                    seen[(Path(spv).stem, name, simd8)] = check_kernel(spv, name, simd, code)
    checked = sum(1 for v in seen.values() if v[0])
    if not checked:
        fail('no kernel with a barrier')
    war = seen.get(('regress', 'slm_war', False))
    if war is None or war != (3, 3):
        fail('regress slm_war: %s barriers, fenced; expected 3 of 3' % (war,))
    tiled = seen.get(('matmul', 'matmul_tiled', False))
    if tiled is None or tiled[1] >= tiled[0]:
        fail('matmul matmul_tiled: %s barriers, fenced; expected a barrier without a fence' % (tiled,))
    print('fences: %d kernels with barriers checked (SIMD16 and SIMD8)' % checked)


if __name__ == '__main__':
    main()
