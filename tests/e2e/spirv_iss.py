#!/usr/bin/python3
"""The phase-1 SPIR-V kernels at both SIMD widths on the Python reference ISS.

    spirv_iss.py --spirv build/tools/zesim-spirv --kernels build/tests/kernels

The device runs SPIR-V kernels in SIMD16 (SIMD8 only when SIMD16 runs out of
registers), so the e2e tests see SIMD16 code.  Here zesim-spirv translates vadd,
saxpy, elementwise, reduce and histogram for SIMD8 and SIMD16, the ISS
(tests/stimulus/zeiss.py) runs them, and every result is compared with the same
computation done here, bit for bit.  Every ISS thread must end with eot.
"""

import argparse
import random
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zeiss  # noqa: E402
from zeiss import _f32, fma_f32  # noqa: E402

A, B, C = 0x10000, 0x40000, 0x80000


class Failure(Exception):
    pass


def run(elf, kernel, groups, group_size, args, buffers, local_sizes=None):
    r = zeiss.run_dispatch(str(elf), kernel, groups=groups, group_size=group_size, args=args,
                           buffers=buffers, local_sizes=local_sizes)
    if r.hang:
        raise Failure('%s: the ISS reports a hang: %s' % (kernel, r.hang))
    for t in r.threads:
        if t.status != 'eot':
            e = t.exception
            raise Failure('%s: thread %d of group %s ended with %s%s' % (
                kernel, t.index, t.group, t.status,
                '' if e is None else ': %s at ip %#x (%s)' % (e.name, e.ip, e.detail)))
    return r


def floats(data):
    return struct.unpack('<%df' % (len(data) // 4), data)


def ints(data):
    return struct.unpack('<%di' % (len(data) // 4), data)


def s32(v):
    v &= 0xffffffff
    return v - (1 << 32) if v & 0x80000000 else v


def cdiv(a, b):
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def check_vadd(elf, rnd):
    n = 256
    a = [_f32(rnd.uniform(-1e4, 1e4)) for _ in range(n)]
    b = [_f32(rnd.uniform(-1e4, 1e4)) for _ in range(n)]
    r = run(elf, 'vadd', (n // 32, 1, 1), (32, 1, 1), struct.pack('<QQQ', A, B, C),
            {A: struct.pack('<%df' % n, *a), B: struct.pack('<%df' % n, *b), C: bytes(4 * n)})
    c = floats(r.memory[C])
    for i in range(n):
        if c[i] != _f32(a[i] + b[i]):
            raise Failure('vadd: c[%d] = %r, expected %r' % (i, c[i], _f32(a[i] + b[i])))


def check_saxpy(elf, rnd):
    n, alpha = 100, _f32(2.5)
    x = [_f32(rnd.uniform(-100, 100)) for _ in range(n)]
    y = [_f32(rnd.uniform(-100, 100)) for _ in range(n)] + [42.0] * 12
    r = run(elf, 'saxpy', (7, 1, 1), (16, 1, 1), struct.pack('<QQfI', A, B, alpha, n),
            {A: struct.pack('<%df' % n, *x), B: struct.pack('<%df' % len(y), *y)})
    out = floats(r.memory[B])
    for i in range(n + 12):
        want = fma_f32(alpha, x[i], y[i]) if i < n else 42.0
        if out[i] != want:
            raise Failure('saxpy: y[%d] = %r, expected %r' % (i, out[i], want))


def elementwise_host(i, x, k, lid, gid):
    if x > k:
        acc, f = s32(x * 3 - k), _f32(_f32(float(x)) * 0.5)
    else:
        acc, f = s32((x ^ 0x55) + s32(x << 2)), _f32(_f32(float(s32(x - k))) - 1.25)
    for j in range((x & 15) + (i & 3)):
        acc = s32(acc + s32(j * x))
        if (acc & 1) == 0:
            acc >>= 1
        f = fma_f32(f, 1.5, float(j))
    u = acc & 0xffffffff
    q = s32(cdiv(x, 7) + (x - cdiv(x, 5) * 5) - (u // 13))
    oi = s32((u >> 3 if u % 7 == 3 else u) + q + lid - gid)
    of = _f32(_f32(f + _f32(float(int(_f32(f * 0.25))))) - _f32(float(u) / 1024.0))
    return oi, of


def check_elementwise(elf, rnd):
    n, k, group = 96, 17, 32
    xs = [rnd.randint(-2000, 2000) for _ in range(n)]
    r = run(elf, 'elementwise', (n // group, 1, 1), (group, 1, 1), struct.pack('<QQQi', A, B, C, k),
            {A: struct.pack('<%di' % n, *xs), B: bytes(4 * n), C: bytes(4 * n)})
    oi, of = ints(r.memory[B]), floats(r.memory[C])
    for i in range(n):
        want = elementwise_host(i, xs[i], k, i % group, i // group)
        if (oi[i], of[i]) != want:
            raise Failure('elementwise: item %d (x %d): %r, expected %r' % (i, xs[i], (oi[i], of[i]), want))


def check_reduce(elf, rnd):
    group, ngroups = 64, 3
    xs = [rnd.randint(-1000000, 1000000) for _ in range(group * ngroups)]
    r = run(elf, 'reduce', (ngroups, 1, 1), (group, 1, 1), struct.pack('<QQI', A, B, 0),
            {A: struct.pack('<%di' % len(xs), *xs), B: bytes(4 * ngroups)}, local_sizes={'arg2': 4 * group})
    got = ints(r.memory[B])
    for g in range(ngroups):
        want = s32(sum(xs[g * group:(g + 1) * group]))
        if got[g] != want:
            raise Failure('reduce: group %d: %d, expected %d' % (g, got[g], want))


def check_histogram(elf, rnd):
    n, limit, group = 300, 1000, 64
    data = [rnd.randint(0, 2000) for _ in range(n)]
    r = run(elf, 'histogram', ((n + group - 1) // group, 1, 1), (group, 1, 1),
            struct.pack('<QQQII', A, B, C, limit, n),
            {A: struct.pack('<%dI' % n, *data), B: bytes(4 * 64), C: bytes(4)})
    want = [0] * 64
    for v in data:
        want[v % 64] += 1
    if list(ints(r.memory[B])) != want:
        raise Failure('histogram: the bins differ')
    over = ints(r.memory[C])[0]
    if over != sum(1 for v in data if v > limit):
        raise Failure('histogram: %d over the limit' % over)


CHECKS = [('vadd', check_vadd), ('saxpy', check_saxpy), ('elementwise', check_elementwise),
          ('reduce', check_reduce), ('histogram', check_histogram)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--spirv', required=True, help='the zesim-spirv command')
    ap.add_argument('--kernels', required=True, type=Path, help='folder of the compiled .spv kernels')
    opts = ap.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory(prefix='spirv-iss-') as work:
        for simd in (8, 16):
            for name, check in CHECKS:
                elf = Path(work) / ('%s-simd%d.elf' % (name, simd))
                cmd = [opts.spirv, '-o', str(elf), str(opts.kernels / (name + '.spv'))]
                if simd == 8:
                    cmd.insert(1, '-8')
                p = subprocess.run(cmd, capture_output=True, text=True)
                if p.returncode != 0:
                    print('%s SIMD%d: zesim-spirv failed: %s' % (name, simd, p.stderr.strip()))
                    failed += 1
                    continue
                try:
                    check(elf, random.Random(simd * 1000 + len(name)))
                    print('%s SIMD%d: ok' % (name, simd))
                except Failure as e:
                    print('%s SIMD%d: %s' % (name, simd, e))
                    failed += 1
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
