#!/usr/bin/env python3
"""Random counted-loop kernels for the SPIR-V back end's loop unrolling (spv_loops.c).

Writes OpenCL C modules DIR/loops_0.cl ... DIR/loops_<M-1>.cl, each with several kernels,
compiled to DIR/loops_N.spv as tests/kernels/kernels.cmake compiles the other kernels
(kernels that clang-14 + llvm-spirv-14 cannot turn into valid SPIR-V are replaced by other
ones, so the result depends on the toolchain as well as the seed), DIR/loops_ref.c (the same kernel bodies as host C functions, run once per work item) and
DIR/loops.ref: every kernel's scalar arguments, the inputs of every work item, the initial
contents of the global buffer the kernel reads and writes, the kernel's C body, and the
results the host reference computed (the output words and the buffer afterwards).
tests/e2e/test_spirv_loops.c runs every kernel through Level Zero, built with and without
-fno-unroll-loops, and compares every word bit for bit.

A kernel has one or two counted loops, or an inner counted loop in an outer loop, in
many shapes: for, while, do-while and while (i++ < n); < <= > >= != with the bound on
either side, or i + c tested; int and uint induction variables, steps +1 +2 +3 -1 -2;
start and bound from literals, kernel arguments or per-work-item inputs, chosen per
work item so that the lanes run different trip counts (0, 1, 2, ..., 9 and larger),
near INT_MAX, INT_MIN, UINT_MAX, 0 and 2^31 as well as small.  The bodies accumulate
int, uint and float values, load from the inputs and load from and store to the global
buffer indexed by the induction variable or a second counter (in bounds), update small
private arrays, and leave the induction variable and other values for after the loop.

The C is free of undefined behaviour (clang -O2 would exploit it): signed values never
overflow (the loop shapes are simulated here, per work item, with C semantics and
rejected when an int would wrap or the loop would run too long), arithmetic that may
wrap is done in uint; floats use + and * only, with no contraction (FP_CONTRACT OFF,
host compiled with -ffp-contract=off), so the host computes what the device must.
--check also builds the host reference with -fsanitize=undefined,address.  Bodies avoid
what makes a loop large (x % c by a constant expands to about 50 instructions; loops of
more than 60 are not unrolled) and mostly read starts and bounds into locals before the
loop (a bound loaded in the test is reloaded after the stores: not loop-invariant).

Usage:
    gen_loops.py --out DIR [--seed N] [--modules M] [--kernels K] [--items N]
                 [--cc CC] [--check] [--clang C] [--llvm-spirv L] [--spirv-val V]

Other seeds by hand:
    for s in $(seq 2 50); do
      tests/kernels/gen_loops.py --seed $s --out /tmp/loops$s &&
      ZESIM_BUILD=build ./zesim run --preset tiny -- build/tests/e2e/e2e_spirv_loops /tmp/loops$s || break
    done
"""
import argparse
import os
import random
import subprocess
import sys

FORMAT_VERSION = 1
NIN = 64     # input words per work item: x[0..43] data, x[44..59] loop parameters, x[60..63] inits
NDATA = 44
NPARAM = 16
NBUF = 64    # buffer words per work item (read and written)
NOUT = 12    # output words per work item
MAX_TRIP = 40  # iterations of a loop at most (indices by the counter stay below NBUF)

INT_MIN, INT_MAX, UINT_MAX = -(1 << 31), (1 << 31) - 1, (1 << 32) - 1

TRIPS = [0, 1, 2, 3, 4, 5, 7, 8, 9, 6, 10, 11, 12, 13, 16, 17, 23, 31, 40]


def in_range(t, v):
    return INT_MIN <= v <= INT_MAX if t == 'int' else 0 <= v <= UINT_MAX


def c_lit(t, v):
    if t == 'uint':
        return '%uu' % v
    if v == INT_MIN:
        return '(-2147483647 - 1)'
    return '%d' % v if v >= 0 else '(%d)' % v


def to_word(t, v):
    """A value of type t as the int32 stored in the inputs."""
    v &= UINT_MAX
    return v - (1 << 32) if v >> 31 else v


CMP = {'<': lambda a, b: a < b, '<=': lambda a, b: a <= b, '>': lambda a, b: a > b,
       '>=': lambda a, b: a >= b, '!=': lambda a, b: a != b}
MIRROR = {'<': '>', '<=': '>=', '>': '<', '>=': '<=', '!=': '!='}


class Loop:
    """A counted loop's header: form, type, test, step, where start and bound come from."""

    def __init__(self, r, small=False):
        self.r = r
        self.t = r.choice(['int', 'uint'])
        self.form = r.choice(['for', 'for', 'while', 'do', 'do', 'post'])
        self.step = r.choice([1, 1, 2, 3, -1, -1, -2])
        if self.form == 'post':
            self.step = r.choice([1, -1])
        up = self.step > 0
        self.op = r.choice((['<', '<=', '!='] if up else ['>', '>=', '!=']) + ['!='] * (abs(self.step) == 1))
        if self.op == '!=' and r.random() < 0.7:
            self.step = 1 if up else -1
        self.add = 0
        if self.form in ('for', 'while') and r.random() < 0.2:
            self.add = r.choice([-2, -1, 1, 2, 3])
        self.mirror = r.random() < 0.25
        self.upd_style = r.randrange(3)
        if small:
            self.region = 'small'
        elif self.t == 'int':
            self.region = r.choice(['small', 'small', 'small', 'max', 'min', 'zero'])
        else:
            self.region = r.choice(['small', 'small', 'umax', 'zero', 'mid'])
        # where start and bound come from: 'lit', 'arg' (uniform) or 'item'
        srcs = ['lit', 'arg', 'item', 'item', 'item']
        self.s_src, self.n_src = r.choice(srcs), r.choice(srcs)
        if small:
            self.s_src, self.n_src = r.choice([('lit', 'item'), ('item', 'item'), ('item', 'lit')])

    # -- simulation with C semantics -------------------------------------------------------

    def wrap(self, v):
        if self.t == 'uint':
            return v & UINT_MAX
        return v if INT_MIN <= v <= INT_MAX else None

    def simulate(self, s, n, cap=MAX_TRIP):
        """The values of i the body sees and i after the loop, or None (undefined
        behaviour or more than cap iterations)."""
        cmp = CMP[self.op]
        i = s
        seen = []

        def test(v):
            z = self.wrap(v + self.add)
            if z is None:
                return None
            return cmp(z, n)

        if self.form in ('for', 'while'):
            while True:
                c = test(i)
                if c is None:
                    return None
                if not c:
                    break
                seen.append(i)
                if len(seen) > cap:
                    return None
                i = self.wrap(i + self.step)
                if i is None:
                    return None
        elif self.form == 'do':
            while True:
                seen.append(i)
                if len(seen) > cap:
                    return None
                i = self.wrap(i + self.step)
                if i is None:
                    return None
                if not cmp(i, n):
                    break
        else:  # post: while (i++ OP n) body
            while True:
                c = cmp(i, n)
                i = self.wrap(i + self.step)
                if i is None:
                    return None
                if not c:
                    break
                seen.append(i)
                if len(seen) > cap:
                    return None
        return seen, i

    # -- choosing values --------------------------------------------------------------------

    def anchor(self):
        r = self.r
        reg = self.region
        if reg == 'small':
            return r.randint(-40, 60) if self.t == 'int' else r.randint(0, 60)
        if reg == 'max':
            return INT_MAX - r.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 20, 41])
        if reg == 'min':
            return INT_MIN + r.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 20, 41])
        if reg == 'umax':
            return UINT_MAX - r.choice([0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 20, 41])
        if reg == 'mid':
            return (1 << 31) + r.randint(-12, 12)
        return r.choice([0, 1, 2, 3, 4, 5, -1, -2, -3]) if self.t == 'int' else r.randint(0, 9)

    def solve(self, fixed_s, fixed_n, trip):
        """Start and bound giving `trip` iterations, one of them given (or None)."""
        r = self.r
        m = abs(self.step)
        sign = 1 if self.step > 0 else -1
        if fixed_s is None and fixed_n is None:
            fixed_s = self.anchor() if r.random() < 0.5 else None
            if fixed_s is None:
                fixed_n = self.anchor()
        span = 3 * m + 3
        if fixed_n is None:
            center = fixed_s - self.add + sign * trip * m
        else:
            center = fixed_n - self.add - sign * trip * m
        cands = [center + d for d in range(-span, span + 1)]
        r.shuffle(cands)
        for v in cands:
            s, n = (fixed_s, v) if fixed_n is None else (v, fixed_n)
            if not (in_range(self.t, s) and in_range(self.t, n)):
                continue
            res = self.simulate(s, n)
            if res is not None and len(res[0]) == trip:
                return s, n, res
        return None

    def choose(self, items):
        """Per-item (start, bound, body values, final i); None when the shape does not work."""
        r = self.r
        fs = self.anchor() if self.s_src != 'item' else None
        fn = self.anchor() if self.n_src != 'item' else None
        if fs is not None and fn is not None:
            # both uniform: the bound from the start for one trip count, for every item
            for trip in r.sample(TRIPS, len(TRIPS)):
                got = self.solve(fs, None, trip)
                if got:
                    s, n, (seen, final) = got
                    return [(s, n, seen, final)] * items
            return None
        per = []
        base = self.anchor()
        for _ in range(items):
            got = None
            for trip in [r.choice(TRIPS)] + r.sample(TRIPS, len(TRIPS)):
                a, b = fs, fn
                if a is None and b is None:
                    # both per item: one near the region's anchor, the other solved
                    if r.random() < 0.5:
                        a = base + r.randint(-3, 3) if self.region != 'small' else self.anchor()
                        a = max(min(a, INT_MAX if self.t == 'int' else UINT_MAX), INT_MIN if self.t == 'int' else 0)
                    else:
                        b = base + r.randint(-3, 3) if self.region != 'small' else self.anchor()
                        b = max(min(b, INT_MAX if self.t == 'int' else UINT_MAX), INT_MIN if self.t == 'int' else 0)
                got = self.solve(a, b, trip)
                if got:
                    break
            if not got:
                return None
            s, n, (seen, final) = got
            per.append((s, n, seen, final))
        return per

    # -- C text -------------------------------------------------------------------------------

    def expr(self, src, value, arg, param):
        if src == 'lit':
            return c_lit(self.t, value)
        if src == 'arg':
            return arg
        return '(uint)x[%d]' % param if self.t == 'uint' else 'x[%d]' % param

    def test(self, i, bound):
        z = i
        if self.add:
            z = '%s %s %s' % (i, '+' if self.add > 0 else '-',
                              ('%du' if self.t == 'uint' else '%d') % abs(self.add))
        if self.mirror:
            return '%s %s %s' % (bound, MIRROR[self.op], z)
        return '%s %s %s' % (z, self.op, bound)

    def update(self, i):
        m = abs(self.step)
        lit = ('%du' if self.t == 'uint' else '%d') % m
        if self.upd_style == 0:
            return '%s %s= %s' % (i, '+' if self.step > 0 else '-', lit)
        if self.upd_style == 1 and m == 1:
            return ('++%s' if self.step > 0 else '--%s') % i
        return '%s = %s %s %s' % (i, i, '+' if self.step > 0 else '-', lit)


class Gen:
    def __init__(self, seed, items):
        self.r = random.Random(seed)
        self.items = items

    def kernel(self, name):
        """(OpenCL C body text, args, per-item inputs, per-item buffer) for one kernel."""
        r = self.r
        while True:
            got = self.try_kernel(name)
            if got:
                return got

    def try_kernel(self, name):
        r = self.r
        items = self.items
        x = [[r.choice([r.randint(-100, 100), r.getrandbits(32) - (1 << 31), r.randint(0, 20)])
              for _ in range(NIN)] for _ in range(items)]
        buf = [[r.randint(-1000, 1000) if r.random() < 0.7 else r.getrandbits(32) - (1 << 31)
                for _ in range(NBUF)] for _ in range(items)]
        args = [r.choice([0, 5, -7, INT_MAX, INT_MIN, 100]), r.choice([1, 3, -1, 64]), r.choice([0, 2, 9, UINT_MAX]),
                r.choice([1, 4, 1 << 31, 77])]
        kind = r.choice(['one', 'one', 'one', 'two', 'nested'])
        body = []
        self.param = 44
        self.outs = []
        self.vars = {}
        body.append('uint u0 = (uint)x[60], u1 = (uint)x[61], u2 = 0, last = 7;')
        body.append('int s0 = x[62], s1 = 0;')
        body.append('float f0 = (float)x[63] * 0.125f, f1 = 1.0f;')
        body.append('uint k = 0;')
        self.use_priv = r.random() < 0.3
        if self.use_priv:
            body.append('uint p[8] = {%s};' % ', '.join('(uint)x[%d]' % (36 + j) for j in range(8)))
        nloops = {'one': 1, 'two': 2, 'nested': 1}[kind]
        free_args = {'int': ['a0', 'a1'], 'uint': ['a2', 'a3']}
        r.shuffle(free_args['int'])
        r.shuffle(free_args['uint'])
        for li in range(nloops):
            lp = Loop(r, small=(kind == 'nested'))
            per = lp.choose(items)
            if per is None:
                return None
            iv = 'i%d' % li
            # each argument holds one loop's start or bound
            pool = free_args[lp.t]
            if lp.s_src == 'arg' and not pool:
                return None
            s_arg = pool.pop() if lp.s_src == 'arg' else None
            n_arg = pool.pop() if lp.n_src == 'arg' and pool else None
            if lp.n_src == 'arg' and n_arg is None:
                return None
            sp, np_ = self.param, self.param + 1
            self.param += 2
            for it in range(items):
                s, n, seen, final = per[it]
                x[it][sp] = to_word(lp.t, s)
                x[it][np_] = to_word(lp.t, n)
                if lp.s_src == 'arg':
                    args[int(s_arg[1])] = s
                if lp.n_src == 'arg':
                    args[int(n_arg[1])] = n
            start = lp.expr(lp.s_src, per[0][0], s_arg, sp)
            bound = lp.expr(lp.n_src, per[0][1], n_arg, np_)
            # all body values of i over the items: direct indexing when they fit
            vals = [v for p in per for v in p[2]]
            direct = bool(vals) and min(vals) >= 0 and max(vals) + 2 < NDATA
            # Per-item starts and bounds mostly in locals: read in the test itself, a load
            # that clang cannot hoist above the stores to b (it may alias), the bound is
            # not loop-invariant and the loop not counted.
            if lp.s_src == 'item' and r.random() < 0.9:
                body.append('const %s st%d = %s;' % (lp.t, li, start))
                start = 'st%d' % li
            if lp.n_src == 'item' and r.random() < 0.9:
                body.append('const %s n%d = %s;' % (lp.t, li, bound))
                bound = 'n%d' % li
            outer = None
            if kind == 'nested':
                outer = 'o'
                body.append('for (int o = 0; o < (x[43] & 3); o++) {')
                if r.random() < 0.5:
                    # the inner loop's start moves with the outer loop
                    start = '(%s + (%s)o)' % (start, lp.t)
                    direct = False
                    # the simulation per outer iteration
                    for it in range(items):
                        s, n = per[it][0], per[it][1]
                        for o in range(x[it][43] & 3):
                            if not in_range(lp.t, s + o) or lp.simulate(s + o, n) is None:
                                return None
            lines = self.loop_text(lp, iv, start, bound, direct, outer, kind)
            body += lines
            if kind == 'nested':
                body.append('\tu2 = u2 * 3u + (uint)%s;' % iv if lp.form != 'forscope' else '\tu2 += 1u;')
                body.append('}')
            if kind != 'nested':
                self.outs.append('(uint)%s' % iv)
        # results
        outs = ['u0', 'u1', 'u2', 'last', '(uint)s0', '(uint)s1', 'as_uint(f0)', 'as_uint(f1)', 'k']
        outs += self.outs
        if self.use_priv:
            outs.append('p[0] ^ p[1] * 3u ^ p[2] * 5u ^ p[3] * 7u ^ p[4] * 11u ^ p[5] * 13u ^ p[6] * 17u ^ p[7] * 19u')
        outs = (outs + ['0u'] * NOUT)[:NOUT]
        for j, e in enumerate(outs):
            body.append('o[%d] = %s;' % (j, e))
        return body, args, x, buf

    def stmt(self, lp, iv, direct, outer, kind):
        """One statement of a loop body."""
        r = self.r
        ui = '(uint)%s' % iv
        si = iv if lp.t == 'int' else '(int)%s' % iv
        # k counts the iterations of all loops: below MAX_TRIP in a single loop
        kk = 'k' if kind == 'one' else '(k & 63u)'
        kk1 = '(k + 1u)' if kind == 'one' else '((k + 1u) & 63u)'
        kd = 'k' if kind == 'one' else '(k & 31u)'
        choices = [
            'u0 = u0 * 31u + %s;' % ui,
            'u1 ^= (uint)x[%s] + %s;' % (kd, ui),
            'u1 += %s * a2 + (%s << 3);' % (ui, ui),
            's0 = s0 > %s ? s0 : %s;' % (si, si),
            's1 ^= %s;' % si,
            's1 = (int)((uint)s1 + ((uint)x[%s] & 255u));' % kd,
            'f0 = f0 * 0.5f + (float)x[%s];' % kd,
            'f1 = f1 * 0.75f + (float)%s * 0.25f;' % iv,
            'f0 += (float)(%s & 1023u);' % ui,
            'b[%s & 63u] = (int)(u0 + %s);' % (ui, ui),
            'b[%s] = (int)((uint)b[%s] + ((uint)b[%s] ^ %s));' % (kk1, kk1, kk, ui),
            'b[%s] = (int)((uint)x[%s] + (%s & 7u));' % (kk, kd, ui),
            'u2 += (uint)b[%s & 63u];' % ui,
            'last = %s * 3u;' % ui,
            'last = (uint)x[%s] - %s;' % (kd, ui),
            'if (%s & 2u) u0 += 7u;' % ui,
            'u2 = (%s & 1u) ? u2 + a3 : u2 ^ %s;' % (ui, ui),
            'u0 += (uint)x[%s & 31u] * %s;' % (ui, ui),
        ]
        if self.use_priv:
            choices += ['p[%s & 7u] += %s;' % (ui, kk), 'p[(%s + 3u) & 7u] ^= p[%s & 7u] * 3u;' % (ui, ui)]
        if outer:
            choices += ['u1 += (uint)%s * 5u + %s;' % (outer, ui)]
        if direct:
            choices += ['u2 += (uint)x[%s] * 3u + (uint)x[%s + 1];' % (iv, iv),
                        'b[%s + 1] = (int)((uint)b[%s] + (uint)x[%s]);' % (iv, iv, iv),
                        'b[%s] = (int)(%s * 7u);' % (iv, ui),
                        'f1 += (float)x[%s];' % iv]
        return r.choice(choices)

    def loop_text(self, lp, iv, start, bound, direct, outer, kind):
        r = self.r
        n = r.choice([1, 2, 2, 3, 3, 4, 5])
        stmts = [self.stmt(lp, iv, direct, outer, kind) for _ in range(n)]
        stmts.append('k++;')
        ind = '\t' if outer else ''
        t = lp.t
        out = []
        upd = lp.update(iv)
        if lp.form == 'for':
            out.append('%s%s %s;' % (ind, t, iv))
            out.append('%sfor (%s = %s; %s; %s) {' % (ind, iv, start, lp.test(iv, bound), upd))
            out += ['%s\t%s' % (ind, s) for s in stmts]
        elif lp.form == 'while':
            out.append('%s%s %s = %s;' % (ind, t, iv, start))
            out.append('%swhile (%s) {' % (ind, lp.test(iv, bound)))
            out += ['%s\t%s' % (ind, s) for s in stmts]
            out.append('%s\t%s;' % (ind, upd))
        elif lp.form == 'do':
            out.append('%s%s %s = %s;' % (ind, t, iv, start))
            out.append('%sdo {' % ind)
            out += ['%s\t%s' % (ind, s) for s in stmts]
            out.append('%s\t%s;' % (ind, upd))
        else:
            out.append('%s%s %s = %s;' % (ind, t, iv, start))
            inc = '%s++' % iv if lp.step > 0 else '%s--' % iv
            out.append('%swhile (%s) {' % (ind, lp.test(inc, bound)))
            out += ['%s\t%s' % (ind, s) for s in stmts]
        if lp.form == 'do':
            out.append('%s} while (%s);' % (ind, lp.test(iv, bound)))
        else:
            out.append('%s}' % ind)
        return out


KPARAMS = 'global const int *in, global int *buf, global uint *out, int a0, int a1, uint a2, uint a3'
HEAD = ('\tconst uint g = get_global_id(0);\n\tglobal const int *x = in + g * %du;\n'
        '\tglobal int *b = buf + g * %du;\n\tglobal uint *o = out + g * %du;\n' % (NIN, NBUF, NOUT))

CL_PRELUDE = '''\
// Generated by tests/kernels/gen_loops.py (seed {seed}, module {index}): counted loops;
// loops.ref holds their expected results.  Do not edit.
#pragma OPENCL FP_CONTRACT OFF
'''

HOST_PRELUDE = '''\
// Generated by tests/kernels/gen_loops.py (seed %d): the host reference of the loop
// kernels, run once per work item.  Do not edit.
#include <stdint.h>
#include <stdio.h>
#include <string.h>
typedef unsigned int uint;
#define kernel static
#define global
static uint cur_gid;
static uint get_global_id(int d) { (void)d; return cur_gid; }
static uint as_uint(float f) { uint u; memcpy(&u, &f, 4); return u; }
'''


def generate(args):
    gen = Gen(args.seed, args.items)
    os.makedirs(args.out, exist_ok=True)
    kernels = []  # (module, name, body, args, x, buf, text)
    replaced = 0
    for m in range(args.modules):
        prelude = CL_PRELUDE.format(seed=args.seed, index=m)
        mk = []
        for j in range(args.kernels):
            name = 'loops_%d_%d' % (m, j)
            mk.append(make_kernel(gen, m, name))
        # Kernels the toolchain fails on (llvm-spirv-14 cannot translate the i33 arithmetic
        # clang makes of some trip counts; for loops whose exit block it lays out before the
        # loop, which spirv-val rejects) are replaced by other ones.
        base = os.path.join(args.out, 'loops_%d' % m)
        while not to_spirv(args, prelude + ''.join('\n' + k[6] for k in mk), base, quiet=True):
            bad = 0
            for j, k in enumerate(mk):
                if not to_spirv(args, prelude + '\n' + k[6], base + '_one', quiet=True):
                    mk[j] = make_kernel(gen, m, k[1])
                    bad += 1
            if not bad:
                to_spirv(args, prelude + ''.join('\n' + k[6] for k in mk), base, quiet=False)
                sys.exit('gen_loops.py: module %s fails to compile' % base)
            replaced += bad
        for ext in ('.bc', '.unvalidated.spv', '_one.cl', '_one.bc', '_one.unvalidated.spv', '_one.spv'):
            if os.path.exists(base + ext):
                os.remove(base + ext)
        kernels += mk
    # the host reference
    items = args.items
    host = HOST_PRELUDE % args.seed
    for _, name, body, kargs, x, buf, text in kernels:
        host += '\n' + text
    host += '\nstatic int in_[%d], buf_[%d];\nstatic uint out_[%d];\n' % (items * NIN, items * NBUF, items * NOUT)
    host += 'struct k { void (*f)(const int *, int *, uint *, int, int, uint, uint); int a0, a1; uint a2, a3;\n' \
            '\tconst int *x, *b; };\n'
    for idx, (_, name, body, kargs, x, buf, text) in enumerate(kernels):
        host += 'static const int x%d[] = {%s};\n' % (idx, ','.join(str(v) for row in x for v in row))
        host += 'static const int b%d[] = {%s};\n' % (idx, ','.join(str(v) for row in buf for v in row))
    host += 'static const struct k ks[] = {\n'
    for idx, (_, name, body, kargs, x, buf, text) in enumerate(kernels):
        host += '\t{%s, %s, %s, %s, %s, x%d, b%d},\n' % (name, c_lit('int', to_word('int', kargs[0])),
                                                     c_lit('int', to_word('int', kargs[1])),
                                                     c_lit('uint', kargs[2] & UINT_MAX),
                                                     c_lit('uint', kargs[3] & UINT_MAX), idx, idx)
    host += '};\n'
    host += '''
static void hex(const void *p, size_t n)
{
	const unsigned char *c = p;
	for (size_t i = 0; i < n; i++)
		printf("%%02x", c[i]);
	printf("\\n");
}

int main(void)
{
	for (size_t j = 0; j < sizeof(ks) / sizeof(ks[0]); j++) {
		memcpy(in_, ks[j].x, sizeof(in_));
		memcpy(buf_, ks[j].b, sizeof(buf_));
		memset(out_, 0, sizeof(out_));
		for (cur_gid = 0; cur_gid < %d; cur_gid++)
			ks[j].f(in_, buf_, out_, ks[j].a0, ks[j].a1, ks[j].a2, ks[j].a3);
		hex(out_, sizeof(out_));
		hex(buf_, sizeof(buf_));
	}
	return 0;
}
''' % items
    hpath = os.path.join(args.out, 'loops_ref.c')
    with open(hpath, 'w') as f:
        f.write(host)
    exe = os.path.join(args.out, 'loops_ref')
    cmd = [args.cc, '-std=gnu11', '-O1', '-ffp-contract=off', '-w', hpath, '-o', exe]
    if args.check:
        cmd[1:1] = ['-fsanitize=undefined,address', '-fno-sanitize-recover=all', '-g']
    if subprocess.run(cmd).returncode != 0:
        sys.exit('gen_loops.py: failed: %s' % ' '.join(cmd))
    res = subprocess.run([exe], stdout=subprocess.PIPE, universal_newlines=True)
    if res.returncode != 0:
        sys.exit('gen_loops.py: the host reference failed (%d)' % res.returncode)
    lines = res.stdout.split('\n')

    def words(vals):
        return ''.join((v & UINT_MAX).to_bytes(4, 'little').hex() for v in vals)

    ref = ['zesim-loops %d' % FORMAT_VERSION, 'seed %d' % args.seed, 'items %d' % items,
           'layout %d %d %d' % (NIN, NBUF, NOUT), 'modules %d' % args.modules]
    for m in range(args.modules):
        ks = [k for k in kernels if k[0] == m]
        ref.append('module loops_%d %d' % (m, len(ks)))
        for _, name, body, kargs, x, buf, text in ks:
            idx = kernels.index(next(k for k in kernels if k[1] == name))
            ref.append('kernel %s %s' % (name, ' '.join('%d' % (v & UINT_MAX) for v in kargs)))
            ref.append('src ' + ' '.join(l.strip() for l in body))
            ref.append('in ' + words(v for row in x for v in row))
            ref.append('buf ' + words(v for row in buf for v in row))
            ref.append('out ' + lines[2 * idx])
            ref.append('bufout ' + lines[2 * idx + 1])
    ref.append('end')
    tmp = os.path.join(args.out, 'loops.ref.tmp')
    with open(tmp, 'w') as f:
        f.write('\n'.join(ref) + '\n')
    os.replace(tmp, os.path.join(args.out, 'loops.ref'))


def make_kernel(gen, m, name):
    body, kargs, x, buf = gen.kernel(name)
    text = 'kernel void %s(%s)\n{\n%s%s}\n' % (name, KPARAMS, HEAD, ''.join('\t%s\n' % l for l in body))
    return (m, name, body, kargs, x, buf, text)


def to_spirv(args, src, base, quiet):
    """BASE.cl with src, compiled to BASE.spv as tests/kernels/kernels.cmake compiles the
    other kernels (-fno-vectorize, -fno-builtin: see there); whether that worked."""
    with open(base + '.cl', 'w') as f:
        f.write(src)
    cmds = [[args.clang, '-cl-std=CL1.2', '-target', 'spir64', '-O2', '-emit-llvm', '-c', '-ffp-contract=off', '-w',
             '-fno-vectorize', '-fno-builtin', base + '.cl', '-o', base + '.bc'],
            [args.llvm_spirv, base + '.bc', '-o', base + '.unvalidated.spv'],
            [args.spirv_val, base + '.unvalidated.spv']]
    for cmd in cmds:
        out = subprocess.DEVNULL if quiet else None
        if subprocess.run(cmd, stdout=out, stderr=out).returncode != 0:
            if not quiet:
                print('gen_loops.py: failed: %s' % ' '.join(cmd), file=sys.stderr)
            return False
    os.replace(base + '.unvalidated.spv', base + '.spv')
    return True


def main():
    ap = argparse.ArgumentParser(description='Random counted-loop kernels and their expected results.')
    ap.add_argument('--out', required=True, help='output folder')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--modules', type=int, default=4)
    ap.add_argument('--kernels', type=int, default=12, help='kernels per module')
    ap.add_argument('--items', type=int, default=64, help='work items per kernel (a multiple of 64)')
    ap.add_argument('--cc', default='cc', help='host C compiler for the reference')
    ap.add_argument('--check', action='store_true', help='host reference under UBSan and ASan')
    ap.add_argument('--clang', default='clang-14')
    ap.add_argument('--llvm-spirv', default='llvm-spirv-14')
    ap.add_argument('--spirv-val', default='spirv-val')
    args = ap.parse_args()
    if args.items <= 0 or args.items % 64:
        ap.error('--items must be a positive multiple of 64')
    generate(args)


if __name__ == '__main__':
    main()
