#!/usr/bin/python3
"""The loop optimisations of the SPIR-V back end (driver/spirv/spv_loops.c) shape
the code as intended.

    test_spirv_loop_code.py --spirv build/tools/zesim-spirv --dis build/tools/zesim-dis \
        matmul.spv invariant.spv

Running the kernels (e2e_spirv_matmul, e2e_spirv_invariant, e2e_spirv_loops) shows the
results stay exact; this shows the transformations happen, so that a change that
silently turns one off fails here rather than only in bench/compile's cycles:
  * matmul_naive is unrolled: a loop holds a 4-dword vector load of A, four `mad`s
    and no `mul` (the addresses advance by adds); with -fno-unroll-loops it holds
    one `mad` and scalar loads only;
  * matmul_tiled loads its next tiles one iteration ahead: two global loads before
    the loop, and inside the loop global loads after the first barrier (none before
    it); with -fno-unroll-loops, global loads before the first barrier;
  * invariant_udiv and invariant_fdiv compute their divisor's reciprocal
    (`math.inv`) once, before the loop.
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


def disassemble(args, spv, flags):
    with tempfile.TemporaryDirectory() as tmp:
        elf = Path(tmp) / 'k.elf'
        r = subprocess.run([args.spirv, *flags, '-o', str(elf), spv], capture_output=True, text=True)
        if r.returncode:
            fail('%s %s: exit %d\n%s' % (args.spirv, spv, r.returncode, r.stderr))
        r = subprocess.run([args.dis, str(elf)], capture_output=True, text=True)
        if r.returncode:
            fail('%s: exit %d\n%s' % (args.dis, r.returncode, r.stderr))
    kernels, name = {}, None
    for line in r.stdout.splitlines():
        if line.startswith('.kernel '):
            name = line.split()[1]
            kernels[name] = []
        elif name and line.startswith(' '):
            kernels[name].append(line.strip())
    return kernels


def loops(code):
    """(instructions before the first `do`, [the instructions of each innermost do ... while])"""
    out, stack = [], []
    first = next((i for i, x in enumerate(code) if x.startswith('do ')), len(code))
    for i, x in enumerate(code):
        if x.startswith('do '):
            stack.append(i)
        elif re.match(r'(\(!?f\d\) )?while ', x) and stack:
            start = stack.pop()
            body = code[start + 1:i]
            if not any(y.startswith('do ') for y in body):
                out.append(body)
    return code[:first], out


def count(body, pattern):
    return sum(1 for x in body if re.search(pattern, x))


GLOBAL_LOAD = r'send\.load(\.v\d)? '


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--spirv', required=True)
    ap.add_argument('--dis', required=True)
    ap.add_argument('matmul')
    ap.add_argument('invariant')
    args = ap.parse_args()

    for flags in ([], ['-fno-unroll-loops']):
        tag = ' '.join(flags) or 'default'
        mm = disassemble(args, args.matmul, flags)
        _, naive = loops(mm['matmul_naive'])
        if not flags:
            if not any(count(b, r'send\.load\.v4 ') == 1 and count(b, r'^mad ') == 4 and not count(b, r'^mul ')
                       for b in naive):
                fail('%s: matmul_naive has no unrolled loop (v4 load of A, 4 mads, no mul):\n%s' % (tag, naive))
        elif not any(count(b, r'^mad ') == 1 and not count(b, r'\.v\d ') for b in naive):
            fail('%s: matmul_naive: expected the plain loop:\n%s' % (tag, naive))
        pre, tiled = loops(mm['matmul_tiled'])
        if len(tiled) != 1:
            fail('%s: matmul_tiled: %d loops' % (tag, len(tiled)))
        body = tiled[0]
        first_barrier = next(i for i, x in enumerate(body) if 'send.barrier' in x)
        early, late = count(body[:first_barrier], GLOBAL_LOAD), count(body[first_barrier:], GLOBAL_LOAD)
        if not flags and (count(pre, GLOBAL_LOAD) < 2 or early or late < 2):
            fail('%s: matmul_tiled: the next tiles are not loaded ahead (%d loads before the loop, %d before the '
                 'first barrier, %d after)' % (tag, count(pre, GLOBAL_LOAD), early, late))
        if flags and early < 2:
            fail('%s: matmul_tiled: expected the loads at the start of the loop' % tag)
        inv = disassemble(args, args.invariant, flags)
        for k in ('invariant_udiv', 'invariant_fdiv'):
            pre, ls = loops(inv[k])
            if not flags and (any(count(b, r'math\.inv') for b in ls) or not count(inv[k], r'math\.inv')):
                fail('%s: %s: math.inv in a loop (not hoisted)' % (tag, k))
            if not ls:
                fail('%s: %s: no loop' % (tag, k))
    print('loop code: matmul_naive unrolled, matmul_tiled loads ahead, reciprocals hoisted; '
          'plain loops with -fno-unroll-loops')


if __name__ == '__main__':
    main()
