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

--pipe writes loops for pipeline_loop instead (global loads one iteration ahead; see
PipeGen below): work-group loops with barriers, and loops too large to unroll or with an
exit test that is not counted, on --items 256 (4 work groups) in tests/kernels/kernels.cmake.

Usage:
    gen_loops.py --out DIR [--seed N] [--modules M] [--kernels K] [--items N] [--pipe]
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
static uint get_local_id(int d) { (void)d; return cur_gid %% 64u; }
static uint get_group_id(int d) { (void)d; return cur_gid / 64u; }
static uint as_uint(float f) { uint u; memcpy(&u, &f, 4); return u; }
'''


def generate(args):
    gen = PipeGen(args.seed, args.items) if args.pipe else Gen(args.seed, args.items)
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
    for k in kernels:
        host += '\n' + k[7]
    host += '\nstatic int in_[%d], buf_[%d];\nstatic uint out_[%d];\n' % (items * NIN, items * NBUF, items * NOUT)
    host += 'struct k { void (*f)(const int *, int *, uint *, int, int, uint, uint); int a0, a1; uint a2, a3;\n' \
            '\tconst int *x, *b; };\n'
    for idx, (_, name, body, kargs, x, buf, text, _h) in enumerate(kernels):
        host += 'static const int x%d[] = {%s};\n' % (idx, ','.join(str(v) for row in x for v in row))
        host += 'static const int b%d[] = {%s};\n' % (idx, ','.join(str(v) for row in buf for v in row))
    host += 'static const struct k ks[] = {\n'
    for idx, (_, name, body, kargs, x, buf, text, _h) in enumerate(kernels):
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
        for _, name, body, kargs, x, buf, text, _h in ks:
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
    if isinstance(gen, PipeGen):
        body, kargs, x, buf, text, htext = gen.kernel(name)
        return (m, name, body, kargs, x, buf, text, htext)
    body, kargs, x, buf = gen.kernel(name)
    text = 'kernel void %s(%s)\n{\n%s%s}\n' % (name, KPARAMS, HEAD, ''.join('\t%s\n' % l for l in body))
    return (m, name, body, kargs, x, buf, text, text)


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


# ---- loops for pipeline_loop (--pipe) ------------------------------------------------------
#
# Single-block loops that are not unrolled and read global memory one iteration
# ahead (spv_loops.c, pipeline_loop): work-group loops with barriers that stage
# global values (tiles, `c ? a[idx] : 0` with per-lane edges) in __local arrays
# and read them back, and per-item loops too large to unroll or with an exit
# test that is not counted.  Some are not to be pipelined (global stores with
# barrier(CLK_GLOBAL_MEM_FENCE) that other lanes' loads must see, loaded values
# read after the loop or by the exit test): their results must be right too.
# A work-group kernel's host reference runs the group's lanes phase by phase
# (between barriers), the per-lane variables in arrays: `$v` in the statement
# templates is `v` on the device and `v[l]` on the host.

import re as _re

GROUP_SIZE = 64
LANE_VARS = ['acc', 'u1', 'k', 'last', 'lim', 'lim2', 'sh']  # uint per lane
LANE_FVARS = ['fa', 'fb']                                   # float per lane


def dev_text(s):
    return _re.sub(r'\$(\w+)', r'\1', s)


def host_text(s):
    return _re.sub(r'\$(\w+)', r'\1[l]', s)


class PipeGen:
    def __init__(self, seed, items):
        self.r = random.Random(seed * 7919 + 17)
        self.items = items

    def inputs(self):
        r = self.r
        x = [[r.choice([r.randint(-100, 100), r.randint(0, 20), r.getrandbits(32) - (1 << 31)])
              for _ in range(NIN)] for _ in range(self.items)]
        buf = [[r.randint(-1000, 1000) if r.random() < 0.8 else r.getrandbits(32) - (1 << 31)
                for _ in range(NBUF)] for _ in range(self.items)]
        args = [r.randint(-3, 9), r.randint(-3, 9), r.randint(0, 9), r.randint(0, 70)]
        return x, buf, args

    def kernel(self, name):
        """(body lines, args, x, buf, text, whole-group host?)"""
        while True:
            got = self.wg_kernel(name) if self.r.random() < 0.6 else self.item_kernel(name)
            if got:
                return got

    # -- address expressions of global loads -------------------------------------------------

    def gaddr(self, iv, lane):
        """An index into in[] (the group's 64 x NIN words), from iv and lane: in bounds
        for iv in -3..40."""
        r = self.r
        t = r.choice([1, 2, 4, 8, 16, 64])
        c = r.randint(0, 7)
        shapes = [
            'gb + (uint)((%s + 3) * %d) + %s' % (iv, t, lane),                       # a tile row: k0 + lx
            'gb + %s * %du + (uint)(%s + 3)' % (lane, NIN, iv),                     # column k0 of the lane's row
            'gb + ((%s + %du) & 63u) * %du + ((uint)(%s + %d) & 31u)' % (lane, c, NIN, iv, c),
            'gb + (uint)(%s + 3) * %du + ((%s * 5u) & 63u)' % (iv, NIN, lane),
            'gb + (((uint)(%s + 3) * %du + %s) & 4095u)' % (iv, r.choice([3, 7, 40, 67]), lane),
        ]
        return r.choice(shapes)

    def pred(self, iv, lane):
        r = self.r
        return r.choice([
            '(uint)((%s + 3) * 8) + %s < $lim' % (iv, lane),
            '%s < $lim' % lane,
            '%s + 3 < a0 + (int)(%s & 7u)' % (iv, lane),
            '(uint)(%s + 3) < $lim2' % iv,
            '((uint)%s ^ %s) & 1u' % (iv, lane),
            '$lim2 > %s' % lane,
        ])

    # -- work-group loops with barriers --------------------------------------------------------

    def wg_kernel(self, name):
        r = self.r
        items = self.items
        ngrp = items // GROUP_SIZE
        x, buf, args = self.inputs()
        variant = r.choice(['tile', 'tile', 'tile', 'dbuf', 'gstore', 'prestore'])
        fence = 'CLK_LOCAL_MEM_FENCE'
        if variant == 'gstore':
            fence = r.choice(['CLK_GLOBAL_MEM_FENCE', 'CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE'])
        elif r.random() < 0.1:
            fence = 'CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE'
        # the loop: uniform in the group
        step = r.choice([1, 1, 1, 2, 3])
        form = r.choice(['for', 'for', 'while', 'do'])
        op = r.choice(['<', '<', '<='] + (['!='] if step == 1 else []))
        st_src = r.choice(['lit', 'arg', 'grp', 'data'])
        n_src = r.choice(['data', 'data', 'data_test', 'arg_grp'])
        st_lit = r.randint(-3, 4)
        if st_src == 'lit':
            st_expr, sts = '%d' % st_lit if st_lit >= 0 else '(%d)' % st_lit, [st_lit] * ngrp
        elif st_src == 'arg':
            args[1] = st_lit
            st_expr, sts = 'a1', [st_lit] * ngrp
        elif st_src == 'grp':
            st_expr, sts = '(int)(grp & 1u) - 1', [(gq & 1) - 1 for gq in range(ngrp)]
        else:
            sts = [r.randint(-3, 4) for _ in range(ngrp)]
            for gq in range(ngrp):
                x[gq * GROUP_SIZE][45] = sts[gq]
            st_expr = 'xg[45]'
        ns = []
        for gq in range(ngrp):
            trip = r.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]) if form != 'do' else r.randint(1, 9)
            last_i = sts[gq] + (trip - 1) * step
            if op == '!=':
                ns.append(sts[gq] + trip * step)
            elif op == '<':
                ns.append(last_i + r.randint(1, step) if trip else sts[gq] - r.randint(0, 2))
            else:
                ns.append(last_i + r.randint(0, step - 1) if trip else sts[gq] - r.randint(1, 3))
        if n_src == 'arg_grp':
            # n = a0 + (grp & 3): per group through the group id
            base = ns[0]
            ns = [base + (gq & 3) for gq in range(ngrp)]
            args[0] = base
            n_expr = '(a0 + (int)(grp & 3u))'
            if op == '!=' and any(n < s for n, s in zip(ns, sts)):
                return None
        else:
            for gq in range(ngrp):
                x[gq * GROUP_SIZE][44] = ns[gq]
            n_expr = 'xg[44]'
        # simulate: trip counts, and i stays in -3..40
        for gq in range(ngrp):
            i, t = sts[gq], 0
            cmp = CMP[op]
            if form == 'do':
                while True:
                    t += 1
                    i += step
                    if not cmp(i, ns[gq]) or t > 12:
                        break
            else:
                while cmp(i, ns[gq]) and t <= 12:
                    t += 1
                    i += step
            if t > 12 or i > 40:
                return None
        if form == 'do' and op == '!=':
            return None
        # per-lane limits: edges that diverge
        for it in range(items):
            x[it][46] = r.choice([r.randint(0, 80), r.randint(0, 64), 64, 0, r.randint(0, 3000)])
            x[it][47] = r.randint(0, 12)
        pre = ['$acc = (uint)x[60];', '$u1 = (uint)x[61];', '$k = 0u;', '$last = 7u;',
               '$lim = (uint)x[46];', '$lim2 = (uint)x[47];', '$sh = 0u;',
               '$fa = (float)x[62] * 0.125f;', '$fb = 1.0f;']
        if variant == 'prestore':
            pre.append('b[%d] = (int)((uint)x[%d] * 3u + l);' % (r.randint(0, 63), r.randint(0, 43)))
            pre.append('BARRIER(CLK_GLOBAL_MEM_FENCE)')
        ph0, ph1 = [], []
        nl = r.choice([1, 1, 2, 2, 3])
        lsz = 128 if variant == 'dbuf' else 64
        slot = '((uint)(i & 1) * 64u + (%s))' if variant == 'dbuf' else '(%s)'
        arrays = ['ls', 'lf', 'lt'][:nl]
        for a in arrays:
            wslot = slot % r.choice(['l', 'l', '(l * 5u) & 63u', '63u - l'])
            src = self.gaddr('i', 'l')
            kind = r.choice(['pred', 'pred', 'plain', 'both'] + (['buf'] if variant != 'gstore' else []))
            if variant == 'prestore' and r.random() < 0.6:
                kind = 'buf'
            if kind == 'pred':
                v = '(%s) ? in[%s] : 0' % (self.pred('i', 'l'), src)
            elif kind == 'plain':
                v = 'in[%s]' % src
            elif kind == 'both':
                v = '(int)((uint)((%s) ? in[%s] : 0) + (uint)in[%s])' % (self.pred('i', 'l'), src, self.gaddr('i', 'l'))
            else:
                bsrc = 'bg + ((l + %du) & 63u) * %du + ((uint)(i + 3) & 63u)' % (r.randint(0, 63), NBUF)
                if r.random() < 0.5:
                    v = '(%s) ? buf[%s] : 1' % (self.pred('i', 'l'), bsrc)
                else:
                    v = 'buf[%s]' % bsrc
            if a == 'lf':
                ph0.append('lf[%s] = (float)(%s) * 0.5f;' % (wslot, v))
            else:
                ph0.append('%s[%s] = %s;' % (a, wslot, v))
        if variant == 'gstore':
            # each lane stores to its own buffer words; the loop reads the neighbours' after a barrier
            ph0.append('b[(uint)(i + 3) & 63u] = (int)($acc + (uint)i);')
        # what the lanes do with the staged values
        rd = lambda: slot % ('(l + %du) & 63u' % r.randint(0, 63))
        cons = []
        for _ in range(r.randint(2, 5)):
            a = r.choice(arrays)
            if a == 'lf':
                cons.append(r.choice([
                    '$fa = $fa * 0.5f + lf[%s] * lf[%s];' % (rd(), rd()),
                    '$fb = $fb + lf[%s];' % rd(),
                    'for (int j = 0; j < 4; j++) $fa = $fa + lf[%s] * lf[%s];'
                    % (rd(), slot % '(l + (uint)j * 8u) & 63u'),
                ]))
            else:
                cons.append(r.choice([
                    '$acc = $acc * 3u + (uint)%s[%s];' % (a, rd()),
                    '$u1 ^= (uint)%s[%s] + (uint)i;' % (a, rd()),
                    '$last = (uint)%s[%s];' % (a, rd()),
                    'for (int j = 0; j < 8; j++) $acc += (uint)%s[%s] * (uint)(j + 1);'
                    % (a, slot % '(l + (uint)j * 8u) & 63u'),
                    '$sh = $sh > (uint)%s[%s] ? $sh : (uint)%s[%s];' % (a, rd(), a, rd()),
                ]))
        cons.append('$k++;')
        if variant == 'gstore':
            cons.append('$u1 += (uint)buf[bg + ((l + %du) & 63u) * %du + ((uint)(i + 3) & 63u)];'
                        % (r.randint(1, 63), NBUF))
        if r.random() < 0.3:
            cons.append('$u1 += (uint)in[%s];' % self.gaddr('i', 'l'))
        ph1 = cons
        barriers = 1 if variant == 'dbuf' else 2
        # texts
        init = '\tint i = %s;\n' % st_expr
        upd = 'i += %d' % step if step > 1 else 'i++'
        if n_src == 'data' or n_src == 'arg_grp':
            nlocal = True
        else:
            nlocal = False
        ntest = 'nt' if nlocal else n_expr
        test = 'i %s %s' % (op, ntest)
        if r.random() < 0.25:
            # and a loaded word (the same for the whole group) that may end the loop early
            sent = r.randint(0, 3)
            test = '(%s) & (xg[((uint)(i + 3) & 63u) * %du + 48u] != %d)' % (test, NIN, sent)
            for it in range(items):
                x[it][48] = r.randint(0, 3) if r.random() < 0.15 else r.randint(4, 9)
        # device
        d = [HEAD_PIPE]
        d.append('\t__local int ls[%d], lt[%d];\n\t__local float lf[%d];\n' % (lsz, lsz, lsz))
        d.append('\tuint %s;\n\tfloat %s;\n' % (', '.join(LANE_VARS), ', '.join(LANE_FVARS)))
        for s in pre:
            d.append('\t%s\n' % (dev_text(s).replace('BARRIER(', 'barrier(') + (';' if s.startswith('BARRIER') else '')))
        if nlocal:
            d.append('\tconst int nt = %s;\n' % n_expr)
        d.append(init)
        hdr, tail = self.loop_frame(form, test, upd)
        d.append('\t%s\n' % hdr)
        for s in ph0:
            d.append('\t\t%s\n' % dev_text(s))
        d.append('\t\tbarrier(%s);\n' % fence)
        for s in ph1:
            d.append('\t\t%s\n' % dev_text(s))
        if barriers == 2:
            d.append('\t\tbarrier(%s);\n' % fence)
        if form == 'while':
            d.append('\t\t%s;\n' % upd)
        d.append('\t%s\n' % tail)
        outs = ['acc', 'u1', 'k', 'last', 'sh', 'as_uint(fa)', 'as_uint(fb)', '(uint)i']
        outs = (outs + ['0u'] * NOUT)[:NOUT]
        for j, e in enumerate(outs):
            d.append('\to[%d] = %s;\n' % (j, e))
        dev = ''.join(d)
        # host: the lanes of each group phase by phase
        lane = ('\t\tfor (uint l = 0; l < %du; l++) {\n\t\t\tconst uint g = grp * %du + l; (void)g;\n'
                '\t\t\tconst int *x = in + g * %du; int *b = buf + g * %du; uint *o = out + g * %du;\n'
                '\t\t\t(void)x; (void)b; (void)o;\n' % (GROUP_SIZE, GROUP_SIZE, NIN, NBUF, NOUT))
        h = ['\tif (cur_gid)\n\t\treturn;\n\tfor (uint grp = 0; grp < %du; grp++) {\n' % ngrp]
        h.append('\t\tconst uint gb = grp * %du, bg = grp * %du; (void)gb; (void)bg;\n'
                 % (GROUP_SIZE * NIN, GROUP_SIZE * NBUF))
        h.append('\t\tconst int *xg = in + gb; (void)xg;\n')
        h.append('\t\tstatic int ls[%d], lt[%d];\n\t\tstatic float lf[%d];\n' % (lsz, lsz, lsz))
        h.append('\t\tuint %s;\n\t\tfloat %s;\n' % (', '.join('%s[64]' % v for v in LANE_VARS),
                                                   ', '.join('%s[64]' % v for v in LANE_FVARS)))

        def phase(stmts, ind='\t\t'):
            out = [lane.replace('\n\t\t', '\n' + ind).replace('\t\tfor', ind + 'for', 1)]
            for s in stmts:
                out.append('%s\t%s\n' % (ind, host_text(s)))
            out.append('%s}\n' % ind)
            return out
        cur = []
        for s in pre:
            if s.startswith('BARRIER'):
                h += phase(cur)
                cur = []
            else:
                cur.append(s)
        h += phase(cur)
        if nlocal:
            h.append('\t\tconst int nt = %s;\n' % n_expr)
        h.append('\t' + init)
        h.append('\t\t%s\n' % hdr)
        h += phase(ph0, '\t\t\t')
        h += phase(ph1, '\t\t\t')
        if form == 'while':
            h.append('\t\t\t%s;\n' % upd)
        h.append('\t\t%s\n' % tail)
        houts = ['$acc', '$u1', '$k', '$last', '$sh', 'as_uint($fa)', 'as_uint($fb)', '(uint)i']
        houts = (houts + ['0u'] * NOUT)[:NOUT]
        h += phase(['o[%d] = %s;' % (j, e) for j, e in enumerate(houts)])
        h.append('\t}\n')
        host = ''.join(h)
        body = [l.strip() for l in dev.split('\n') if l.strip()]
        text = '// %s: work group, %s, %s, %s\nkernel void %s(%s)\n{\n%s}\n' % (
            name, variant, form, fence, name, KPARAMS, dev)
        htext = 'kernel void %s(%s)\n{\n%s}\n' % (name, KPARAMS_HOST, host)
        return body, args, x, buf, text, htext

    def loop_frame(self, form, test, upd):
        if form == 'for':
            return 'for (; %s; %s) {' % (test, upd), '}'
        if form == 'while':
            return 'while (%s) {' % test, '}'
        return 'do {', '} while ((%s, %s));' % (upd, test)

    # -- per-item loops: too large to unroll, or not counted ---------------------------------

    def item_kernel(self, name):
        r = self.r
        items = self.items
        x, buf, args = self.inputs()
        shape = r.choice(['big', 'big', 'combo', 'combo', 'ldexit'])
        for it in range(items):
            s = r.randint(-3, 6)
            x[it][44] = s
            x[it][45] = s + r.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 12, -1])
            x[it][46] = r.randint(0, 40)
            x[it][47] = r.randint(-50, 400)
        body = ['uint u0 = (uint)x[60], u1 = (uint)x[61], u2 = 0u, last = 7u, k = 0u;',
                'float f0 = (float)x[62] * 0.125f, f1 = 1.0f, f2 = 0.5f;',
                'const int st = x[44], n = x[45];', 'const uint m = (uint)x[46];',
                'const float flim = (float)x[47];', 'int i = st;']
        stores = r.random() < 0.2
        lanes_pred = ['(uint)(i + 3) < m', 'i < a0', '(uint)i & 1u', 'u0 & 4u', '(uint)(i + 3) * 3u < m']
        idx = lambda: r.choice(['(uint)(i + 3) & 31u', '((uint)(i + 3) * 3u + %du) & 31u' % r.randint(0, 9),
                                '(uint)(i + %d) & 31u' % r.randint(3, 20), '43u - ((uint)(i + 3) & 31u)'])
        bidx = lambda: r.choice(['(uint)(i + 3) & 63u', '((uint)(i + 3) * 5u) & 63u'])
        stmts = []
        nst = r.randint(12, 22) if shape == 'big' else r.randint(2, 6)
        for _ in range(nst):
            stmts.append(r.choice([
                'f0 = f0 * 0.5f + (float)x[%s];' % idx(),
                'f1 = f1 * 0.75f + f0 * 0.25f;',
                'f2 = f2 + f1 * (float)x[%s] * 0.125f;' % idx(),
                'f0 = f0 + ((%s) ? (float)x[%s] : 0.0f);' % (r.choice(lanes_pred), idx()),
                'u0 = u0 * 31u + (uint)x[%s];' % idx(),
                'u1 += (%s) ? (uint)x[%s] : 0u;' % (r.choice(lanes_pred), idx()),
                'u1 ^= (%s) ? (uint)b[%s] : 5u;' % (r.choice(lanes_pred), bidx()),
                'u2 += (uint)b[%s] * 3u;' % bidx(),
                'u2 = u2 + ((%s) ? (uint)x[%s] : 0u) + ((%s) ? (uint)b[%s] : 1u);'
                % (r.choice(lanes_pred), idx(), r.choice(lanes_pred), bidx()),
                'last = (uint)x[%s];' % idx(),
                'f1 = f1 * 0.5f + f0 * 0.125f;',
                'f2 = f2 * 0.5f + f1 * f1;',
            ]))
        stmts.append('k++;')
        if stores:
            stmts.append('b[%s] = (int)(u0 + (uint)i);' % bidx())
        r.shuffle(stmts)
        # the exit test
        if shape == 'big':
            test = r.choice(['i < n', 'i < n && u0 != 12345u'])
        elif shape == 'combo':
            test = r.choice(['i < n && f0 < flim', '(i < n) & (u1 < (uint)x[47] + 9000u)', 'i < n && k < m',
                             'i < n && f1 < flim'])
        else:
            test = r.choice(['(i < n) & (x[%s] != %d)' % (idx(), r.randint(-5, 5)),
                             'i < n && x[%s] > -50' % idx(),
                             'i < n && (uint)b[%s] != 7u' % bidx()])
        form = r.choice(['while', 'do'])
        if form == 'while':
            body.append('while (%s) {' % test)
            body += ['\t' + s for s in stmts]
            body.append('\ti++;')
            body.append('}')
        else:
            body.append('do {')
            body += ['\t' + s for s in stmts]
            body.append('\ti++;')
            body.append('} while (%s);' % test)
        outs = ['u0', 'u1', 'u2', 'last', 'k', 'as_uint(f0)', 'as_uint(f1)', 'as_uint(f2)', '(uint)i']
        outs = (outs + ['0u'] * NOUT)[:NOUT]
        for j, e in enumerate(outs):
            body.append('o[%d] = %s;' % (j, e))
        dev = HEAD_PIPE + ''.join('\t%s\n' % l for l in body)
        text = '// %s: per item, %s%s\nkernel void %s(%s)\n{\n%s}\n' % (
            name, shape, ', stores' if stores else '', name, KPARAMS, dev)
        return body, args, x, buf, text, text


HEAD_PIPE = ('\tconst uint g = get_global_id(0), l = get_local_id(0), grp = get_group_id(0);\n'
             '\tconst uint gb = grp * %du, bg = grp * %du;\n\tglobal const int *xg = in + gb;\n'
             '\tglobal const int *x = in + g * %du;\n\tglobal int *b = buf + g * %du;\n'
             '\tglobal uint *o = out + g * %du;\n'
             '\t(void)gb; (void)bg; (void)xg; (void)x; (void)b; (void)l;\n'
             % (GROUP_SIZE * NIN, GROUP_SIZE * NBUF, NIN, NBUF, NOUT))
KPARAMS_HOST = 'const int *in, int *buf, uint *out, int a0, int a1, uint a2, uint a3'


def main():
    ap = argparse.ArgumentParser(description='Random counted-loop kernels and their expected results.')
    ap.add_argument('--out', required=True, help='output folder')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--modules', type=int, default=4)
    ap.add_argument('--kernels', type=int, default=12, help='kernels per module')
    ap.add_argument('--items', type=int, default=64, help='work items per kernel (a multiple of 64)')
    ap.add_argument('--cc', default='cc', help='host C compiler for the reference')
    ap.add_argument('--check', action='store_true', help='host reference under UBSan and ASan')
    ap.add_argument('--pipe', action='store_true',
                    help='loops for pipeline_loop instead (barrier loops, large or not counted ones)')
    ap.add_argument('--clang', default='clang-14')
    ap.add_argument('--llvm-spirv', default='llvm-spirv-14')
    ap.add_argument('--spirv-val', default='spirv-val')
    args = ap.parse_args()
    if args.items <= 0 or args.items % 64:
        ap.error('--items must be a positive multiple of 64')
    generate(args)


if __name__ == '__main__':
    main()
