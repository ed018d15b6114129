#!/usr/bin/env python3
"""Random expression kernels for the SPIR-V front end, with their expected results.

Writes OpenCL C modules DIR/random_0.cl ... DIR/random_<M-1>.cl, each with many kernels,
and DIR/random.ref: the inputs of every work item (a struct per item, several members per
type, edge values such as 0, -1, INT_MIN, NaN, infinities and denormals among random
ones) and, per kernel, its C body and the result it must write for every work item.  A
kernel computes a random expression tree, sometimes with locals, an if/else and a loop.
The results are computed here, in Python, with OpenCL C semantics and no compiler:
integers wrap at their width, division truncates, shift counts are masked to the width
(OpenCL), conversions truncate or round to nearest even, every float operation is rounded
to fp32 on its own (the modules say FP_CONTRACT OFF; + - * and sqrt in double and then
fp32 are correctly rounded since 53 >= 2*24 + 2), fma and 64-bit conversions are exact
rational arithmetic rounded once, fmin/fmax return the other operand of a NaN (and
-0 < +0, as the ISA's min/max), scalar comparisons give 1/0 and vector ones -1/0, vector
?: and select() look at the most significant bit.  tests/e2e/test_spirv_random.c runs the
kernels through Level Zero and compares bit for bit; a NaN matches any NaN (OpenCL does
not specify NaN payloads; the device writes a canonical NaN).

The C is free of undefined behaviour, which clang -O2 would exploit: signed + - * << and
negation are done in the unsigned type and converted back; division and remainder divide
by B|1 (signed: also A|1, never INT_MIN), by a constant, or through helpers that divide
by 1 instead of 0 and -1; floats are clamped into range (fmin/fmax, NaN -> the lower
bound) before conversion to an integer; long/ulong become float only below 2^32 in
magnitude (driver/README.md: beyond, the device may be one ulp off); mul24/mad24 operands
are 24-bit values; clamp() bounds are ordered; copysign, signbit and as_int see no NaN
(NaN signs and payloads are not specified).

Float division is the last operation of a kernel only (out = a / b): the device computes
x * (1/y), which OpenCL allows (2.5 ulp).  For those kernels random.ref holds the
interval of fp32 values within 2.5 ulp of the exact quotient; lanes whose divisor is
outside [2^-126, 2^126] in magnitude are not checked (driver/README.md).

Some shapes are avoided because llvm-spirv-14 translates what clang makes of them into
SPIR-V that spirv-val rejects or cannot translate it (see the comments where they are
avoided): ?: on a scalar condition between vectors, vectors assigned under control flow,
for loops (do-while instead), bitcasts of comparison masks to a scalar.  Other seeds may
still meet such toolchain failures (e.g. "Can't translate llvm instruction: freeze"): the
build uses a seed without them.  Constructs the front end does not support yet, or gets
wrong, are behind --enable FEATURE (off by default, listed by --help), so that they can be
switched on when it does.

Usage:
    gen_random.py --out DIR [--seed N] [--modules M] [--kernels K] [--items N]
                  [--enable FEATURE,...] [--compile]

--compile also runs clang-14, llvm-spirv-14 and spirv-val as tests/kernels/kernels.cmake
does.  Soak testing with other seeds (the build uses seed 1):
    for s in $(seq 2 100); do
      tests/kernels/gen_random.py --seed $s --out /tmp/rnd$s --compile &&
      ZESIM_BUILD=build ./zesim run --preset tiny -- build/tests/e2e/e2e_spirv_random /tmp/rnd$s || break
    done
"""
import argparse
import math
import os
import random
import struct
import subprocess
import sys
import textwrap
from fractions import Fraction

# Optional constructs.  DEFAULT_FEATURES are on unless --enable names the set;
# the others are what the front end does not support yet and what the
# toolchain cannot compile reliably.
FEATURES = {
    'small': 'char, uchar, short, ushort values and vectors (on by default)',
    'ldiv': 'division and remainder of long and ulong (on by default)',
    'long_builtins': 'min, max, clamp, abs, select on long and ulong (on by default)',
    'int_builtins': 'clz, popcount, rotate, add_sat, sub_sat, hadd, rhadd, abs_diff, signed mul_hi '
                    'on 8- to 32-bit integers (on by default)',
    'neg_bitcast': 'an integer negation reinterpreted as float, as_float(-x) (on by default; was a '
                   'front-end bug: the negation became a float sign flip)',
    'arrays': 'each input an array of its own, a kernel argument, instead of a member of one struct '
              '(clang turns c ? a[i] : b[i] into a load through a select of pointers to two '
              'buffers: not supported yet)',
    'vdiv': 'division and remainder of integer vectors (llvm-spirv-14 cannot translate the freeze '
            'clang adds to a kernel with both x / y and x % y)',
    'wide': 'vectors of 3, 8 and 16 components (some kernels need more than 128 registers: no '
            'spilling yet)',
    'long_float': 'long/ulong to float conversions over the whole 64-bit range (the device may be '
                  'one ulp off beyond 2^32, driver/README.md)',
}

DEFAULT_FEATURES = 'small,ldiv,long_builtins,int_builtins,neg_bitcast'

FORMAT_VERSION = 1


# ---- fp32 ----------------------------------------------------------------------------

def bits_f(u):
    return struct.unpack('<f', struct.pack('<I', u))[0]


def f_bits(f):
    return struct.unpack('<I', struct.pack('<f', f))[0]


FLT_MAX = bits_f(0x7f7fffff)


def f32(x):
    """The double x rounded to fp32 (nearest even)."""
    try:
        return struct.unpack('<f', struct.pack('<f', x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def f32_exact(q):
    """The rational (or integer) q rounded to fp32, nearest even; q != 0."""
    neg = q < 0
    q = Fraction(-q if neg else q)
    n, d = q.numerator, q.denominator
    e = n.bit_length() - d.bit_length()
    if (n if e >= 0 else n << -e) < (d << e if e >= 0 else d):
        e -= 1
    e = max(e, -126)
    sh = 23 - e
    num, den = (n << sh, d) if sh >= 0 else (n, d << -sh)
    m, r = divmod(num, den)
    if 2 * r > den or (2 * r == den and m & 1):
        m += 1
    v = math.ldexp(m, e - 23)
    if v > FLT_MAX:
        v = math.inf
    return -v if neg else v


def f_next(f, up):
    """The fp32 value after f towards +inf (up) or -inf."""
    if f == 0:
        return bits_f(1) if up else -bits_f(1)
    b = f_bits(f)
    if (f > 0) == up:
        return bits_f(b + 1)
    return bits_f(b - 1)


def f_ceil(q):
    """The least fp32 value >= q, inf counting as 2^128 (as OpenCL's ulp measure does)."""
    if q == 0:
        return 0.0
    if q <= -2 ** 128:
        return -math.inf
    f = f32_exact(q)
    if f < q:
        f = f_next(f, True)
    return f


def f_floor(q):
    """The greatest fp32 value <= q, inf counting as 2^128."""
    if q == 0:
        return 0.0
    if q >= 2 ** 128:
        return math.inf
    f = f32_exact(q)
    if f > q:
        f = f_next(f, False)
    return f


def to_f32(v):
    """An integer converted to fp32, nearest even."""
    return f32(float(v)) if abs(v) < 1 << 53 else f32_exact(v)


def fma32(a, b, c):
    p = a * b  # exact in double for fp32 operands
    s = p + c
    if s == 0 or not math.isfinite(s):
        return s  # NaN, inf and the sign of an exact zero as IEEE says
    return f32_exact(Fraction(p) + Fraction(c))


def fmin32(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return a if math.copysign(1, a) < 0 else b
    return a if a < b else b


def fmax32(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    if a == b == 0:
        return a if math.copysign(1, a) > 0 else b
    return a if a > b else b


def sqrt32(a):
    if math.isnan(a) or a < 0:
        return math.nan
    return f32(math.sqrt(a))


# ---- types ---------------------------------------------------------------------------

class Base:
    def __init__(self, name, bits, signed, flt, fmt):
        self.name, self.bits, self.signed, self.flt, self.fmt = name, bits, signed, flt, fmt
        self.size = bits // 8
        if not flt:
            self.lo = -(1 << (bits - 1)) if signed else 0
            self.hi = self.lo + (1 << bits) - 1

    def __repr__(self):
        return self.name


CHAR = Base('char', 8, True, False, 'b')
UCHAR = Base('uchar', 8, False, False, 'B')
SHORT = Base('short', 16, True, False, 'h')
USHORT = Base('ushort', 16, False, False, 'H')
INT = Base('int', 32, True, False, 'i')
UINT = Base('uint', 32, False, False, 'I')
LONG = Base('long', 64, True, False, 'q')
ULONG = Base('ulong', 64, False, False, 'Q')
FLOAT = Base('float', 32, True, True, 'f')
UNS = {CHAR: UCHAR, SHORT: USHORT, INT: UINT, LONG: ULONG}
for _b in list(UNS.values()):
    UNS[_b] = _b
SGN = {UCHAR: CHAR, USHORT: SHORT, UINT: INT, ULONG: LONG, FLOAT: INT}
for _b in (CHAR, SHORT, INT, LONG):
    SGN[_b] = _b
SMALL = (CHAR, UCHAR, SHORT, USHORT)


class Ty(tuple):
    """(base, n): a scalar (n == 1) or a vector."""
    def __new__(cls, base, n=1):
        return tuple.__new__(cls, (base, n))

    base = property(lambda s: s[0])
    n = property(lambda s: s[1])

    @property
    def c(self):
        return self.base.name + (str(self.n) if self.n > 1 else '')

    @property
    def flt(self):
        return self.base.flt

    @property
    def size(self):
        return self.base.size * (4 if self.n == 3 else self.n)

    def with_base(self, b):
        return Ty(b, self.n)


def wrap(b, v):
    v &= (1 << b.bits) - 1
    if b.signed and v >> (b.bits - 1):
        v -= 1 << b.bits
    return v


def msb(b, v):
    return v < 0 if b.signed else v >> (b.bits - 1) != 0


def tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def trem(x, y):
    return x - tdiv(x, y) * y


def lift(n, f):
    """f on scalars, applied per component when n > 1."""
    if n == 1:
        return f
    return lambda *xs: tuple(map(f, *xs))


def encode(ty, v):
    vals = v if ty.n > 1 else (v,)
    out = b''.join(struct.pack('<' + ty.base.fmt, x) for x in vals)
    return out + bytes(ty.size - len(out))


def decode(ty, data):
    b = ty.base
    vals = [struct.unpack_from('<' + b.fmt, data, k * b.size)[0] for k in range(ty.n)]
    return tuple(vals) if ty.n > 1 else vals[0]


class Ex:
    """An expression: its C text, its type, its evaluator (env -> value) and what clang
    sees at its top, through conversions that keep the bits: 'neg' (an integer negation),
    'select' (a choice on a scalar condition: ?:, or a variable assigned under control
    flow), 'mask' (a vector of -1/0 from comparisons), or None."""
    __slots__ = ('c', 'ty', 'ev', 'top')

    def __init__(self, c, ty, ev, top=None):
        self.c, self.ty, self.ev, self.top = c, ty, ev, top


def un(c, ty, a, f, top=None):
    g = lift(ty.n, f)
    ae = a.ev
    return Ex(c, ty, lambda env: g(ae(env)), top)


def bi(c, ty, a, b, f, top=None):
    g = lift(ty.n, f)
    ae, be = a.ev, b.ev
    return Ex(c, ty, lambda env: g(ae(env), be(env)), top)


def tri(c, ty, a, b, d, f):
    g = lift(ty.n, f)
    ae, be, de = a.ev, b.ev, d.ev
    return Ex(c, ty, lambda env: g(ae(env), be(env), de(env)))


# Float-to-integer conversion bounds: fp32 values whose truncation is in range.
CONV_BOUNDS = {
    CHAR: (-128.0, 127.0), UCHAR: (0.0, 255.0), SHORT: (-32768.0, 32767.0), USHORT: (0.0, 65535.0),
    INT: (-2147483648.0, 2147483520.0), UINT: (0.0, 4294967040.0),
    LONG: (-9223372036854775808.0, 9223371487098961920.0), ULONG: (0.0, 18446742974197923840.0),
}

PRELUDE = '''\
// Generated by tests/kernels/gen_random.py (seed {seed}, module {index}): random
// expressions; random.ref holds their expected results.  Do not edit.
#pragma OPENCL FP_CONTRACT OFF

// Division and remainder without x/0 and INT_MIN/-1: by 1 instead of 0 and -1.  (Not
// b == 0 ? a : a / b: clang makes a switch of such choices, and llvm-spirv-14 then
// writes phis that list a block twice, which spirv-val rejects.)
static int sdiv(int a, int b) {{ return a / (b == 0 || b == -1 ? 1 : b); }}
static int srem(int a, int b) {{ return a % (b == 0 || b == -1 ? 1 : b); }}
static uint udiv(uint a, uint b) {{ return a / (b == 0 ? 1 : b); }}
static uint urem(uint a, uint b) {{ return a % (b == 0 ? 1 : b); }}
{ldiv}
// The low 24 bits, sign-extended: operands of mul24/mad24.
static int __attribute__((overloadable)) s24(int x) {{ return (int)((uint)x << 8) >> 8; }}
static int2 __attribute__((overloadable)) s24(int2 x) {{ return as_int2(as_uint2(x) << 8) >> 8; }}
static int4 __attribute__((overloadable)) s24(int4 x) {{ return as_int4(as_uint4(x) << 8) >> 8; }}
'''

LDIV_PRELUDE = '''\
static long ldiv(long a, long b) { return a / (b == 0 || b == -1 ? 1 : b); }
static long lrem(long a, long b) { return a % (b == 0 || b == -1 ? 1 : b); }
static ulong uldiv(ulong a, ulong b) { return a / (b == 0 ? 1 : b); }
static ulong ulrem(ulong a, ulong b) { return a % (b == 0 ? 1 : b); }
'''

DIV_HELPERS = {INT: ('sdiv', 'srem'), UINT: ('udiv', 'urem'), LONG: ('ldiv', 'lrem'), ULONG: ('uldiv', 'ulrem')}


def div_ref(x, y, rem):
    """The helpers sdiv, srem, ...: by 1 instead of 0 and -1."""
    if y in (0, -1):
        y = 1
    return trem(x, y) if rem else tdiv(x, y)


# ---- the generator -------------------------------------------------------------------

class Gen:
    def __init__(self, seed, features, items):
        self.r = random.Random(seed)
        self.seed = seed
        self.feat = features
        self.items = items
        ints = [INT, UINT, LONG, ULONG] + (list(SMALL) if 'small' in features else [])
        self.int_bases = ints
        self.scalar_bases = ints + [FLOAT]
        ns = (2, 3, 4, 8, 16) if 'wide' in features else (2, 4)
        self.vec_tys = [Ty(b, n) for b in (INT, UINT, FLOAT) for n in ns]
        self.vec_tys += [Ty(b, n) for b in (LONG, ULONG) for n in ((2, 3, 4) if 'wide' in features else (2,))]
        if 'small' in features:
            self.vec_tys += [Ty(CHAR, 4), Ty(UCHAR, 4), Ty(SHORT, 2), Ty(USHORT, 2), Ty(UCHAR, 8), Ty(SHORT, 4)]
        self.inputs = []

    # -- random values -----------------------------------------------------------------

    def rand_int(self, b):
        r = self.r
        p = r.random()
        if p < 0.3:
            v = r.choice([0, 1, -1, 2, b.lo, b.hi, b.lo + 1, b.hi - 1, 7, -8, 31, 32, 33, 63, 64, 0x7f, 0x80, 0xff,
                          0x7fff, 0x8000, -0x8000, 0xffff, 0x10000, 0x7fffff, -0x800000, 0xffffff, 0x1000000,
                          1 << 31, (1 << 31) - 1, 1 << 32, (1 << 32) - 1, -(1 << 32), 1 << 62])
        elif p < 0.55:
            v = r.randint(-100, 100)
        elif p < 0.8:
            v = r.getrandbits(b.bits) >> r.randrange(b.bits)
            v = -v if r.random() < 0.5 else v
        else:
            v = r.getrandbits(b.bits)
        return wrap(b, v)

    def rand_float_bits(self):
        r = self.r
        p = r.random()
        if p < 0.3:
            return r.choice([0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x3f000000, 0xc0000000, 0x40400000,
                             0x7fc00000, 0xffc00000, 0x7fa00001, 0x7fc12345, 0x7f800000, 0xff800000, 0x7f7fffff,
                             0xff7fffff, 0x00800000, 0x80800000, 0x00000001, 0x80000001, 0x007fffff, 0x00400000,
                             0x4b800000, 0x4b800001, 0x4f000000, 0xcf000000, 0x4effffff, 0x4f800000, 0x5f000000,
                             0x5f800000, 0x3dcccccd, 0x7e800000, 0x02800000])
        if p < 0.5:
            return f_bits(r.randint(-64, 64) / r.choice([1, 2, 8]))
        if p < 0.85:
            return f_bits(f32(r.choice([-1, 1]) * (1 + r.random()) * 2.0 ** r.randint(-24, 24)))
        if p < 0.92:
            return r.getrandbits(23) >> r.randrange(23) | (r.getrandbits(1) << 31)
        return r.getrandbits(32)

    def make_inputs(self):
        """The module's input arrays: (name, Ty, values per item)."""
        # In this order, the struct of the inputs has padding (C layout).
        tys = [('ia', Ty(INT)), ('la', Ty(LONG)), ('ib', Ty(INT)), ('i4a', Ty(INT, 4)), ('fa', Ty(FLOAT)),
               ('ua', Ty(UINT)), ('l2a', Ty(LONG, 2)), ('fb', Ty(FLOAT)), ('i2a', Ty(INT, 2)), ('ub', Ty(UINT)),
               ('f4a', Ty(FLOAT, 4)), ('lb', Ty(LONG)), ('fc', Ty(FLOAT)), ('u4a', Ty(UINT, 4)),
               ('ula', Ty(ULONG)), ('f2a', Ty(FLOAT, 2))]
        if 'small' in self.feat:
            tys += [('ca', Ty(CHAR)), ('sa', Ty(SHORT)), ('uca', Ty(UCHAR)), ('c4a', Ty(CHAR, 4)),
                    ('usa', Ty(USHORT)), ('s2a', Ty(SHORT, 2))]
        if 'wide' in self.feat:
            tys += [('i3a', Ty(INT, 3)), ('f8a', Ty(FLOAT, 8)), ('i16a', Ty(INT, 16))]
        r = self.r
        inputs = []
        by_base = {}
        for name, ty in tys:
            vals = []
            for i in range(self.items):
                comps = []
                for k in range(ty.n):
                    # floats as their bits, so that NaN payloads reach the device as chosen
                    v = self.rand_float_bits() if ty.flt else self.rand_int(ty.base)
                    prev = by_base.get(ty.base)
                    if prev is not None and k == 0 and ty.n == 1 and r.random() < 0.2:
                        # equal values, neighbours and opposites for the comparisons
                        v = prev[i]
                        if not ty.flt and r.random() < 0.5:
                            v = wrap(ty.base, v + r.choice([-1, 1]))
                        elif ty.flt and r.random() < 0.3:
                            v ^= 0x80000000
                    elif comps and r.random() < 0.15:
                        v = comps[-1]
                    comps.append(v)
                vals.append(tuple(comps) if ty.n > 1 else comps[0])
            if ty.n == 1:
                by_base.setdefault(ty.base, vals)
            inputs.append((name, ty, vals))
        return inputs

    # -- constants -----------------------------------------------------------------------

    def lit(self, b, v):
        if b.flt:
            if math.isinf(v):
                return 'INFINITY' if v > 0 else '(-INFINITY)'
            s = repr(v) + 'f'
            return '(' + s + ')' if s.startswith('-') else s
        if b in SMALL:
            return '((%s)%d)' % (b.name, v)
        if b is INT:
            return 'INT_MIN' if v == b.lo else ('(%d)' % v if v < 0 else str(v))
        if b is LONG:
            return 'LONG_MIN' if v == b.lo else ('(%dL)' % v if v < 0 else '%dL' % v)
        return '%d%s' % (v, 'u' if b is UINT else 'UL')

    def const_scalar(self, b):
        r = self.r
        if b.flt:
            v = bits_f(self.rand_float_bits())
            while math.isnan(v):
                v = bits_f(self.rand_float_bits())
            if r.random() < 0.5:
                v = f32(r.choice([0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 0.25, -0.0, 1e30, 1e-30, 100.0]))
        else:
            v = self.rand_int(b) if r.random() < 0.6 else wrap(b, r.randint(-20, 20))
        return v

    def const(self, ty):
        if ty.n == 1:
            v = self.const_scalar(ty.base)
            return Ex(self.lit(ty.base, v), ty, lambda env: v)
        vals = tuple(self.const_scalar(ty.base) for _ in range(ty.n))
        return Ex('((%s)(%s))' % (ty.c, ', '.join(self.lit(ty.base, x) for x in vals)), ty, lambda env: vals)

    # -- expressions ---------------------------------------------------------------------

    def leaf(self, ty):
        r = self.r
        cands = [(name, t) for name, t in self.scope if t == ty]
        p = r.random()
        if cands and p < 0.75:
            name, t = r.choice(cands)
            top = 'select' if name in self.cf_locals else self.local_top.get(name)
            return Ex(self.use(name), ty, lambda env: env[name], top=top)
        if ty.n == 1 and ty.base in (INT, UINT) and p < 0.8:
            return Ex('((%s)i)' % ty.base.name, ty, lambda env: wrap(ty.base, env['i']))
        if ty.n > 1 and p < 0.9:
            src = [(name, t) for name, t in self.scope if t.n == ty.n and t.base.bits == ty.base.bits
                   and not t.flt and not ty.flt]
            if src:
                name, t = r.choice(src)
                return Ex('as_%s(%s)' % (ty.c, self.use(name)), ty,
                          lambda env: lift(ty.n, lambda x: wrap(ty.base, x))(env[name]))
        return self.const(ty)

    def use(self, name):
        """The C text that reads variable or input name."""
        if name not in self.input_names:
            return name
        self.used.add(name)
        return '%s[i]' % name if 'arrays' in self.feat else 'in[i].%s' % name

    def gen(self, ty, depth):
        if depth <= 0 or self.budget <= 0 or self.r.random() < 0.1:
            return self.leaf(ty)
        self.budget -= 1
        prods = self.float_prods(ty) if ty.flt else self.int_prods(ty)
        total = sum(w for w, _ in prods)
        while True:
            x = self.r.random() * total
            for w, f in prods:
                x -= w
                if x < 0:
                    break
            e = f(ty, depth - 1)
            if e is not None:
                return e

    def rand_scalar_ty(self):
        return Ty(self.r.choice(self.scalar_bases))

    def rand_int_scalar_ty(self):
        return Ty(self.r.choice(self.int_bases))

    # Productions: each f(ty, depth) gives an Ex of type ty, or None when it does not apply.

    def common_prods(self, ty):
        return [(2, self.p_ternary), (1, self.p_select), (1, self.p_extract), (1, self.p_compose),
                (1, self.p_convert), (1, self.p_as)]

    def int_prods(self, ty):
        return [(4, self.p_arith), (3, self.p_bitwise), (1, self.p_not), (1, self.p_neg), (3, self.p_shift),
                (2, self.p_div), (2, self.p_cmp), (1, self.p_logic), (2, self.p_minmax), (1, self.p_clamp),
                (1, self.p_abs), (1, self.p_mul24), (1, self.p_mul_hi), (1, self.p_classify), (1, self.p_anyall),
                (1, self.p_int_builtins)] + self.common_prods(ty)

    def float_prods(self, ty):
        return [(4, self.p_farith), (1, self.p_neg), (2, self.p_fminmax), (1, self.p_fabs), (1, self.p_sqrt),
                (1, self.p_fma), (1, self.p_copysign), (1, self.p_fclamp)] + self.common_prods(ty)

    # -- integer productions --

    def signed_op(self, ty, a, b, op):
        """a op b for + - * << on ty without signed overflow: in the unsigned type."""
        u = ty.with_base(UNS[ty.base])
        if ty.n == 1 and ty.base in SMALL:
            return '((%s)((uint)%s %s %s))' % (ty.c, a.c, op, b.c if op == '<<' else '(uint)' + b.c)
        if not ty.base.signed:
            return '(%s %s %s)' % (a.c, op, b.c)
        if ty.n == 1:
            return '((%s)((%s)%s %s %s))' % (ty.c, u.c, a.c, op, b.c if op == '<<' else '(%s)%s' % (u.c, b.c))
        bc = 'as_%s(%s)' % (u.c, b.c) if b.ty.n > 1 else b.c
        return 'as_%s(as_%s(%s) %s %s)' % (ty.c, u.c, a.c, op, bc)

    def p_arith(self, ty, d):
        op = self.r.choice('+-*')
        a, b = self.gen(ty, d), self.gen(ty, d)
        bb = ty.base
        f = {'+': lambda x, y: wrap(bb, x + y), '-': lambda x, y: wrap(bb, x - y),
             '*': lambda x, y: wrap(bb, x * y)}[op]
        return bi(self.signed_op(ty, a, b, op), ty, a, b, f)

    def p_bitwise(self, ty, d):
        op = self.r.choice('&|^')
        a, b = self.gen(ty, d), self.gen(ty, d)
        bb = ty.base
        f = {'&': lambda x, y: x & y, '|': lambda x, y: x | y, '^': lambda x, y: wrap(bb, x ^ y)}[op]
        c = '(%s %s %s)' % (a.c, op, b.c)
        if ty.n == 1 and bb in SMALL:
            c = '((%s)%s)' % (ty.c, c)
        return bi(c, ty, a, b, f)

    def p_not(self, ty, d):
        a = self.gen(ty, d)
        bb = ty.base
        c = '(~%s)' % a.c
        if ty.n == 1 and bb in SMALL:
            c = '((%s)%s)' % (ty.c, c)
        return un(c, ty, a, lambda x: wrap(bb, ~x))

    def p_neg(self, ty, d):
        a = self.gen(ty, d)
        bb = ty.base
        if ty.flt:
            return un('(-%s)' % a.c, ty, a, lambda x: -x)
        u = ty.with_base(UNS[bb])
        if ty.n == 1 and bb in SMALL:
            c = '((%s)-%s)' % (ty.c, a.c)
        elif not bb.signed:
            c = '(-%s)' % a.c
        elif ty.n == 1:
            c = '((%s)-(%s)%s)' % (ty.c, u.c, a.c)
        else:
            c = 'as_%s(-as_%s(%s))' % (ty.c, u.c, a.c)
        e = un(c, ty, a, lambda x: wrap(bb, -x))
        e.top = 'neg'
        return e

    def p_shift(self, ty, d):
        r = self.r
        left = r.random() < 0.5
        a = self.gen(ty, d)
        bb = ty.base
        # A scalar's count is masked to its promoted width: 32 bits for char and short.
        width = 32 if ty.n == 1 and bb in SMALL else bb.bits
        if ty.n == 1 or r.random() < 0.3:
            if r.random() < 0.4:
                k = r.randrange(width)
                # OpenCL C: a scalar operand of a vector of char or short is of its type
                kc = self.lit(bb, k) if ty.n > 1 and bb in SMALL else str(k)
                cnt = Ex(kc, Ty(INT), lambda env: k)
            else:
                cnt = self.gen(self.rand_int_scalar_ty() if ty.n == 1 else ty, d)
                if r.random() < 0.3:
                    m = self.lit(bb, width - 1) if ty.n > 1 and bb in SMALL else str(width - 1)
                    cnt = un('(%s & %s)' % (cnt.c, m), cnt.ty, cnt, lambda x: x & (width - 1))
        else:
            cnt = self.gen(ty, d)
        if left:
            c = self.signed_op(ty, a, cnt, '<<')
            f = lambda x, s: wrap(bb, x << (s & (width - 1)))
        else:
            c = '(%s >> %s)' % (a.c, cnt.c)
            if ty.n == 1 and bb in SMALL:
                c = '((%s)%s)' % (ty.c, c)
            f = lambda x, s: wrap(bb, x >> (s & (width - 1)))
        g = lift(ty.n, f)
        ae, ce = a.ev, cnt.ev
        if ty.n > 1 and cnt.ty.n == 1:
            return Ex(c, ty, lambda env: g(ae(env), (ce(env),) * ty.n))
        return Ex(c, ty, lambda env: g(ae(env), ce(env)))

    def p_div(self, ty, d):
        r = self.r
        bb = ty.base
        if ty.n > 1:
            return self.p_vdiv(ty, d) if 'vdiv' in self.feat and bb.bits == 32 else None
        if bb.bits == 64 and 'ldiv' not in self.feat:
            return None
        rem = r.random() < 0.4
        op = '%' if rem else '/'
        a = self.gen(ty, d)
        p = r.random()
        if p < 0.25:
            k = 0
            while k in (0, -1):
                k = self.const_scalar(bb)
            kc = self.lit(bb, k)
            c = '(%s %s %s)' % (a.c, op, kc)
            if bb in SMALL:
                c = '((%s)%s)' % (ty.c, c)
            return un(c, ty, a, lambda x: wrap(bb, trem(x, k) if rem else tdiv(x, k)))
        b = self.gen(ty, d)
        if p < 0.5 or bb in SMALL:
            # Odd divisors; for signed ones an odd dividend, never INT_MIN.
            one = self.lit(bb, 1) if bb not in SMALL else '1'
            if bb.signed:
                c = '((%s | %s) %s (%s | %s))' % (a.c, one, op, b.c, one)
                f = lambda x, y: wrap(bb, (trem if rem else tdiv)(x | 1, y | 1))
            else:
                c = '(%s %s (%s | %s))' % (a.c, op, b.c, one)
                f = lambda x, y: wrap(bb, (trem if rem else tdiv)(x, y | 1))
            if bb in SMALL:
                c = '((%s)%s)' % (ty.c, c)
            return bi(c, ty, a, b, f)
        name = DIV_HELPERS[bb][rem]
        return bi('%s(%s, %s)' % (name, a.c, b.c), ty, a, b, lambda x, y: div_ref(x, y, rem))

    def p_vdiv(self, ty, d):
        r = self.r
        bb = ty.base
        rem = r.random() < 0.4
        op = '%' if rem else '/'
        a, b = self.gen(ty, d), self.gen(ty, d)
        one = '((%s)(1))' % ty.c
        zero = '((%s)(0))' % ty.c
        num = '(%s | %s)' % (a.c, one) if bb.signed else a.c
        c = '(%s %s select(%s, %s, %s == %s))' % (num, op, b.c, one, b.c, zero)

        def f(x, y):
            if bb.signed:
                x |= 1
            y = y or 1
            return wrap(bb, trem(x, y) if rem else tdiv(x, y))
        return bi(c, ty, a, b, f)

    def cmp_operand_ty(self, ty):
        """A type whose comparisons give ty, or None."""
        if ty.n == 1:
            return self.rand_scalar_ty() if ty.base is INT else None
        if not ty.base.signed or ty.flt:
            return None
        opts = [ty, ty.with_base(UNS[ty.base])]
        if ty.base is INT:
            opts.append(ty.with_base(FLOAT))
        return self.r.choice(opts)

    def p_cmp(self, ty, d):
        oty = self.cmp_operand_ty(ty)
        if oty is None:
            return None
        op = self.r.choice(['==', '!=', '<', '<=', '>', '>='])
        a, b = self.gen(oty, d), self.gen(oty, d)
        t = -1 if ty.n > 1 else 1
        f = {'==': lambda x, y: t if x == y else 0, '!=': lambda x, y: t if x != y else 0,
             '<': lambda x, y: t if x < y else 0, '<=': lambda x, y: t if x <= y else 0,
             '>': lambda x, y: t if x > y else 0, '>=': lambda x, y: t if x >= y else 0}[op]
        return bi('(%s %s %s)' % (a.c, op, b.c), ty, a, b, f, top='mask' if ty.n > 1 else None)

    def p_logic(self, ty, d):
        r = self.r
        if ty.n == 1:
            if ty.base is not INT:
                return None
            ta, tb = self.rand_scalar_ty(), self.rand_scalar_ty()
            t = 1
        else:
            if not ty.base.signed or ty.flt:
                return None
            ta = tb = r.choice([ty, ty.with_base(UNS[ty.base])])
            t = -1
        top = 'mask' if ty.n > 1 else None
        a = self.gen(ta, d)
        if r.random() < 0.25:
            return un('(!%s)' % a.c, ty, a, lambda x: 0 if x else t, top)
        b = self.gen(tb, d)
        if r.random() < 0.5:
            return bi('(%s && %s)' % (a.c, b.c), ty, a, b, lambda x, y: t if x and y else 0, top=top)
        return bi('(%s || %s)' % (a.c, b.c), ty, a, b, lambda x, y: t if x or y else 0, top=top)

    def p_minmax(self, ty, d):
        if ty.base.bits == 64 and 'long_builtins' not in self.feat:
            return None
        a, b = self.gen(ty, d), self.gen(ty, d)
        if self.r.random() < 0.5:
            return bi('min(%s, %s)' % (a.c, b.c), ty, a, b, min)
        return bi('max(%s, %s)' % (a.c, b.c), ty, a, b, max)

    def p_clamp(self, ty, d):
        bb = ty.base
        if bb.bits == 64 and 'long_builtins' not in self.feat:
            return None
        a = self.gen(ty, d)
        lo, hi = sorted((self.const_scalar(bb), self.const_scalar(bb)))
        if ty.n == 1 and self.r.random() < 0.3:
            # bounds computed at run time
            x, y = self.leaf(ty), self.leaf(ty)
            lo_e = bi('min(%s, %s)' % (x.c, y.c), ty, x, y, min)
            hi_e = bi('max(%s, %s)' % (x.c, y.c), ty, x, y, max)
            return tri('clamp(%s, %s, %s)' % (a.c, lo_e.c, hi_e.c), ty, a, lo_e, hi_e,
                       lambda v, l, h: min(max(v, l), h))
        return un('clamp(%s, %s, %s)' % (a.c, self.lit(bb, lo), self.lit(bb, hi)), ty, a,
                  lambda v: min(max(v, lo), hi))

    def p_abs(self, ty, d):
        bb = ty.base
        if bb.bits == 64 and 'long_builtins' not in self.feat:
            return None
        src = ty.with_base(SGN[bb] if self.r.random() < 0.8 else UNS[bb])
        a = self.gen(src, d)
        c = 'abs(%s)' % a.c
        if bb.signed:
            c = '((%s)%s)' % (ty.c, c) if ty.n == 1 else 'as_%s(%s)' % (ty.c, c)
        return un(c, ty, a, lambda x: wrap(bb, abs(x)))

    def p_mul24(self, ty, d):
        bb = ty.base
        if bb not in (INT, UINT) or ty.n == 3 or ty.n > 4:
            return None

        def op24(e):
            if bb.signed:
                return un('s24(%s)' % e.c, ty, e, lambda x: wrap(INT, x << 8) >> 8)
            return un('(%s & 0xffffffu)' % e.c, ty, e, lambda x: x & 0xffffff)
        a, b = op24(self.gen(ty, d)), op24(self.gen(ty, d))
        if self.r.random() < 0.5:
            return bi('mul24(%s, %s)' % (a.c, b.c), ty, a, b, lambda x, y: wrap(bb, x * y))
        c = self.gen(ty, d)
        return tri('mad24(%s, %s, %s)' % (a.c, b.c, c.c), ty, a, b, c, lambda x, y, z: wrap(bb, x * y + z))

    def p_mul_hi(self, ty, d):
        bb = ty.base
        if bb is UINT:
            a, b = self.gen(ty, d), self.gen(ty, d)
            return bi('mul_hi(%s, %s)' % (a.c, b.c), ty, a, b, lambda x, y: (x * y) >> 32)
        if bb is INT and ty.n == 1:
            u = Ty(UINT)
            a, b = self.gen(u, d), self.gen(u, d)
            return bi('((int)mul_hi(%s, %s))' % (a.c, b.c), ty, a, b, lambda x, y: wrap(INT, (x * y) >> 32))
        return None

    def p_classify(self, ty, d):
        if ty.base is not INT:
            return None
        name = self.r.choice(['isnan', 'isinf', 'isfinite', 'isnormal', 'signbit'])
        a = self.gen(ty.with_base(FLOAT), d)
        if name == 'signbit':
            a = self.no_nan(a)
        f = {'isnan': math.isnan, 'isinf': math.isinf, 'isfinite': math.isfinite,
             'isnormal': lambda x: math.isfinite(x) and abs(x) >= 2.0 ** -126,
             'signbit': lambda x: math.copysign(1, x) < 0}[name]
        t = -1 if ty.n > 1 else 1
        return un('%s(%s)' % (name, a.c), ty, a, lambda x: t if f(x) else 0, 'mask' if ty.n > 1 else None)

    def no_nan(self, a):
        """a with NaN replaced by -inf: for operations that would see a NaN's sign or payload."""
        return un('fmax(%s, -INFINITY)' % a.c, a.ty, a, lambda x: fmax32(x, -math.inf))

    def p_anyall(self, ty, d):
        if ty != Ty(INT):
            return None
        vt = self.r.choice([t for t in self.vec_tys if t.base.signed and not t.flt])
        a = self.gen(vt, d)
        if self.r.random() < 0.5:
            return Ex('any(%s)' % a.c, ty, (lambda ae: lambda env: int(any(x < 0 for x in ae(env))))(a.ev))
        return Ex('all(%s)' % a.c, ty, (lambda ae: lambda env: int(all(x < 0 for x in ae(env))))(a.ev))

    def p_int_builtins(self, ty, d):
        if 'int_builtins' not in self.feat or ty.flt:
            return None
        r = self.r
        bb = ty.base
        w = bb.bits
        if w == 64:
            return None  # 64-bit clz, rotate, mul_hi, ...: not supported yet
        name = r.choice(['clz', 'popcount', 'rotate', 'add_sat', 'sub_sat', 'hadd', 'rhadd', 'abs_diff',
                         'mul_hi'])
        a = self.gen(ty, d)
        if name == 'clz':
            return un('clz(%s)' % a.c, ty, a, lambda x: w - (x & ((1 << w) - 1)).bit_length())
        if name == 'popcount':
            return un('popcount(%s)' % a.c, ty, a, lambda x: bin(x & ((1 << w) - 1)).count('1'))
        if name == 'abs_diff':
            if not bb.signed:
                return None
            src = a
            ut = ty.with_base(UNS[bb])
            b = self.gen(ty, d)
            e = bi('abs_diff(%s, %s)' % (src.c, b.c), ut, src, b, lambda x, y: abs(x - y))
            c = '((%s)%s)' % (ty.c, e.c) if ty.n == 1 else 'as_%s(%s)' % (ty.c, e.c)
            return un(c, ty, e, lambda x: wrap(bb, x))
        b = self.gen(ty, d)
        if name == 'rotate':
            def rot(x, s):
                s &= w - 1
                u = x & ((1 << w) - 1)
                return wrap(bb, (u << s | u >> (w - s)) & ((1 << w) - 1))
            return bi('rotate(%s, %s)' % (a.c, b.c), ty, a, b, rot)
        f = {'add_sat': lambda x, y: min(max(x + y, bb.lo), bb.hi),
             'sub_sat': lambda x, y: min(max(x - y, bb.lo), bb.hi),
             'hadd': lambda x, y: (x + y) >> 1, 'rhadd': lambda x, y: (x + y + 1) >> 1,
             'mul_hi': lambda x, y: (x * y) >> w}[name]
        return bi('%s(%s, %s)' % (name, a.c, b.c), ty, a, b, f)

    # -- float productions --

    def p_farith(self, ty, d):
        op = self.r.choice('+-*')
        a, b = self.gen(ty, d), self.gen(ty, d)
        f = {'+': lambda x, y: f32(x + y), '-': lambda x, y: f32(x - y), '*': lambda x, y: f32(x * y)}[op]
        return bi('(%s %s %s)' % (a.c, op, b.c), ty, a, b, f)

    def p_fminmax(self, ty, d):
        a = self.gen(ty, d)
        b = self.gen(ty if ty.n == 1 or self.r.random() < 0.7 else Ty(FLOAT), d)
        fmin_, fmax_ = fmin32, fmax32
        if b.ty != ty:  # a scalar second operand
            be = b.ev
            b = Ex(b.c, ty, lambda env: (be(env),) * ty.n)
        if self.r.random() < 0.5:
            return bi('fmin(%s, %s)' % (a.c, b.c), ty, a, b, fmin_)
        return bi('fmax(%s, %s)' % (a.c, b.c), ty, a, b, fmax_)

    def p_fabs(self, ty, d):
        a = self.gen(ty, d)
        return un('fabs(%s)' % a.c, ty, a, abs)

    def p_sqrt(self, ty, d):
        a = self.gen(ty, d)
        return un('sqrt(%s)' % a.c, ty, a, sqrt32)

    def p_fma(self, ty, d):
        a, b, c = self.gen(ty, d), self.gen(ty, d), self.gen(ty, d)
        return tri('fma(%s, %s, %s)' % (a.c, b.c, c.c), ty, a, b, c, fma32)

    def p_copysign(self, ty, d):
        a, b = self.gen(ty, d), self.no_nan(self.gen(ty, d))
        return bi('copysign(%s, %s)' % (a.c, b.c), ty, a, b, math.copysign)

    def p_fclamp(self, ty, d):
        a = self.gen(ty, d)
        lo, hi = sorted((self.const_scalar(FLOAT), self.const_scalar(FLOAT)))
        return un('clamp(%s, %s, %s)' % (a.c, self.lit(FLOAT, lo), self.lit(FLOAT, hi)), ty, a,
                  lambda x: fmin32(fmax32(x, lo), hi))

    # -- any type --

    def mask_ty(self, ty):
        """An integer type whose values select between values of ty (same size, same n)."""
        b = SGN[ty.base] if ty.flt else ty.base
        return ty.with_base(self.r.choice([SGN[b], UNS[b]]))

    def p_ternary(self, ty, d):
        r = self.r
        if ty.n == 1:
            # An integer condition (OpenCL C); not with vectors either: llvm-spirv-14 makes
            # that an OpSelect of vectors on a scalar, which SPIR-V 1.0 does not allow.
            cond = self.gen(self.rand_int_scalar_ty(), d)
            a, b = self.gen(ty, d), self.gen(ty, d)
            ce, ae, be = cond.ev, a.ev, b.ev
            c = '(%s ? %s : %s)' % (cond.c, a.c, b.c)
            if ty.base in SMALL:
                c = '((%s)%s)' % (ty.c, c)  # promoted to int otherwise
            return Ex(c, ty, lambda env: ae(env) if ce(env) else be(env), top='select')
        mty = self.mask_ty(ty)
        cond = self.gen(mty, d)
        a, b = self.gen(ty, d), self.gen(ty, d)
        mb = mty.base
        return tri('(%s ? %s : %s)' % (cond.c, a.c, b.c), ty, cond, a, b,
                   lambda m, x, y: x if msb(mb, m) else y)

    def p_select(self, ty, d):
        if ty.base.bits == 64 and 'long_builtins' not in self.feat:
            return None
        mty = self.mask_ty(ty)
        a, b, cond = self.gen(ty, d), self.gen(ty, d), self.gen(mty, d)
        mb = mty.base
        if ty.n == 1:
            f = lambda x, y, m: y if m else x
        else:
            f = lambda x, y, m: y if msb(mb, m) else x
        return tri('select(%s, %s, %s)' % (a.c, b.c, cond.c), ty, a, b, cond, f)

    def p_extract(self, ty, d):
        if ty.n != 1:
            return None
        r = self.r
        vts = [t for t in self.vec_tys if t.base is ty.base]
        if not vts:
            return None
        vt = r.choice(vts)
        v = self.gen(vt, d)
        k = r.randrange(vt.n)
        sel = 'xyzw'[k] if vt.n <= 4 and r.random() < 0.5 else 's' + '0123456789abcdef'[k]
        ve = v.ev
        return Ex('%s.%s' % (v.c, sel), ty, lambda env: ve(env)[k], top=v.top)

    def p_compose(self, ty, d):
        if ty.n == 1:
            return None
        r = self.r
        p = r.random()
        if p < 0.4:
            # from scalars, or a pair of halves
            parts = []
            left = ty.n
            while left:
                if left >= 2 and left % 2 == 0 and ty.n in (4, 8, 16) and r.random() < 0.3:
                    parts.append(self.gen(Ty(ty.base, 2), d - 1))
                    left -= 2
                else:
                    parts.append(self.gen(Ty(ty.base), d - 1 if ty.n <= 4 else 0))
                    left -= 1
            evs = [(e.ev, e.ty.n > 1) for e in parts]

            def ev(env):
                out = []
                for f, vec in evs:
                    x = f(env)
                    out.extend(x if vec else (x,))
                return tuple(out)
            return Ex('((%s)(%s))' % (ty.c, ', '.join(e.c for e in parts)), ty, ev)
        if p < 0.55:
            s = self.gen(Ty(ty.base), d)
            return Ex('((%s)(%s))' % (ty.c, s.c), ty, (lambda se: lambda env: (se(env),) * ty.n)(s.ev))
        srcs = [t for t in self.vec_tys if t.base is ty.base and t.n in (2, 4, 8, 16) and t != ty] + [ty]
        st = r.choice(srcs)
        v = self.gen(st, d)
        if st.n == 2 * ty.n and r.random() < 0.5:
            which = r.choice(['lo', 'hi', 'even', 'odd'])
            idx = {'lo': range(ty.n), 'hi': range(ty.n, 2 * ty.n), 'even': range(0, 2 * ty.n, 2),
                   'odd': range(1, 2 * ty.n, 2)}[which]
        else:
            idx = [r.randrange(st.n) for _ in range(ty.n)]
            which = 's' + ''.join('0123456789abcdef'[k] for k in idx)
        idx = tuple(idx)
        return Ex('%s.%s' % (v.c, which), ty, (lambda ve: lambda env: tuple(ve(env)[k] for k in idx))(v.ev),
                  top=v.top)

    def p_convert(self, ty, d):
        r = self.r
        if ty.n == 1:
            st = self.rand_scalar_ty()
        else:
            cands = [t for t in self.vec_tys if t.n == ty.n and t != ty]
            if not cands:
                return None
            st = r.choice(cands)
        if st == ty:
            return None
        a = self.gen(st, d)
        sb, db = st.base, ty.base
        conv = ('((%s)%%s)' % ty.c) if ty.n == 1 and r.random() < 0.7 else 'convert_%s(%%s)' % ty.c
        if sb.flt:
            lo, hi = CONV_BOUNDS[db]
            a = un('fmin(fmax(%s, %s), %s)' % (a.c, self.lit(FLOAT, lo), self.lit(FLOAT, hi)), st, a,
                   lambda x: fmin32(fmax32(x, lo), hi))
            return un(conv % a.c, ty, a, int)
        if db.flt:
            if sb.bits == 64 and 'long_float' not in self.feat:
                # below 2^32 in magnitude
                if r.random() < 0.5:
                    k = r.randint(32, 63)
                    a = un('(%s >> %d)' % (a.c, k), st, a, lambda x: x >> k)
                else:
                    m = '0xffffffff' + ('L' if sb.signed else 'UL')
                    a = un('(%s & %s)' % (a.c, m), st, a, lambda x: x & 0xffffffff)
            return un(conv % a.c, ty, a, to_f32)
        e = un(conv % a.c, ty, a, lambda x: wrap(db, x))
        e.top = a.top if sb.bits == db.bits else None
        return e

    def p_as(self, ty, d):
        r = self.r
        cands = [t for t in self.vec_tys + [Ty(b) for b in self.scalar_bases]
                 if t.size == ty.size and t != ty and t.n != 3 and ty.n != 3]
        if not cands:
            return None
        st = r.choice(cands)
        a = self.gen(st, d)
        if st.flt:
            a = self.no_nan(a)
        if a.top == 'neg' and ty.flt and 'neg_bitcast' not in self.feat:
            return None
        if a.top == 'select' and ty.n > 1 and st.n == 1:
            # clang makes as_float2(c ? x : y) a select of vectors on a scalar condition,
            # which llvm-spirv-14 writes as such: invalid in SPIR-V 1.0 (see p_ternary)
            return None
        if a.top == 'mask' and ty.n == 1:
            # as_long(x < y) != 0 becomes a bitcast of <2 x i1> to i2: llvm-spirv-14 fails
            return None
        ae = a.ev

        def ev(env):
            return decode(ty, encode(st, ae(env)))
        top = a.top if not st.flt and ty.base.bits == st.base.bits and ty.n == st.n else None
        return Ex('as_%s(%s)' % (ty.c, a.c), ty, ev, top=top)

    # -- kernels -------------------------------------------------------------------------

    def kernel(self, name):
        """One kernel: (C source, Kernel record)."""
        r = self.r
        self.used = set()
        self.cf_locals = set()  # assigned under control flow
        self.local_top = {}  # the others: the top of their value
        self.scope = [(n, t) for n, t, _ in self.inputs]
        outs = [(Ty(INT), 4), (Ty(UINT), 2), (Ty(LONG), 2), (Ty(ULONG), 1), (Ty(FLOAT), 4)]
        outs += [(t, 1) for t in self.vec_tys]
        if 'small' in self.feat:
            outs += [(Ty(b), 1) for b in SMALL]
        out_ty = self.weighted(outs)
        div = out_ty.flt and out_ty.n <= 4 and r.random() < 0.12
        depth = r.randint(3, 6)
        self.budget = r.randint(8, 40)
        body = []  # C lines
        stmts = []  # (kind, ...) for the reference
        nlocals = r.choice([0, 0, 1, 1, 2, 3])
        locals_ = []
        for k in range(nlocals):
            ty = self.weighted(outs) if r.random() < 0.5 else out_ty
            e = self.gen(ty, r.randint(2, depth))
            v = 'v%d' % k
            body.append('%s %s = %s;' % (ty.c, v, e.c))
            stmts.append(('set', v, e.ev))
            self.local_top[v] = e.top
            self.scope.append((v, ty))
            locals_.append((v, ty))
        # Control flow assigns scalars only: clang turns an if/else, or a loop that may run
        # no iteration, into a select, of vectors on a scalar condition (see p_ternary).
        scalars = [(v, t) for v, t in locals_ if t.n == 1]
        if scalars and r.random() < 0.35:
            cond = self.gen(self.rand_scalar_ty(), 3)
            then_ = self.assignments(scalars, r.randint(1, 2))
            else_ = self.assignments(scalars, r.randint(1, 2) if r.random() < 0.7 else 0)
            self.cf_locals.update(v for v, _ in then_ + else_)
            body.append('if (%s) {' % cond.c)
            body += ['\t%s = %s;' % (v, e.c) for v, e in then_]
            if else_:
                body.append('} else {')
                body += ['\t%s = %s;' % (v, e.c) for v, e in else_]
            body.append('}')
            stmts.append(('if', cond.ev, [(v, e.ev) for v, e in then_], [(v, e.ev) for v, e in else_]))
        if scalars and r.random() < 0.3:
            # A do-while loop of 1 to 8 iterations, their number varying across the work
            # items.  (A for loop, that may run no iteration, makes llvm-spirv-14 now and
            # then lay the exit block out before the loop: spirv-val rejects the use before
            # the definition.)
            cnt = self.gen(Ty(INT), 2)
            body.append('int n = (%s ^ (int)i) & 7;' % cnt.c)
            stmts.append(('set', 'n', (lambda ce: lambda env: (ce(env) ^ env['i']) & 7)(cnt.ev)))
            self.scope.append(('j', Ty(INT)))
            upd = []
            for v, e in self.assignments(scalars, r.randint(1, 2)):
                if r.random() < 0.5:
                    e = self.carried(v, e)
                upd.append((v, e))
                self.cf_locals.add(v)
            brk = self.gen(self.rand_scalar_ty(), 2) if r.random() < 0.4 else None
            body.append('int j = 0;')
            body.append('do {')
            body += ['\t%s = %s;' % (v, e.c) for v, e in upd]
            if brk:
                body.append('\tif (%s)' % brk.c)
                body.append('\t\tbreak;')
            body.append('} while (++j <= n);')
            stmts.append(('loop', [(v, e.ev) for v, e in upd], brk.ev if brk else None))
            self.scope.pop()
        self.budget = r.randint(8, 40)
        if div:
            a, b = self.gen(out_ty, depth - 1), self.gen(out_ty, depth - 1)
            body.append('out[i] = %s / %s;' % (a.c, b.c))
            final = (a.ev, b.ev)
        else:
            e = self.gen(out_ty, depth)
            body.append('out[i] = %s;' % e.c)
            final = e.ev
        args = [(n, t) for n, t, _ in self.inputs if n in self.used]
        if 'arrays' in self.feat:
            params = ['__global const %s *%s' % (t.c, n) for n, t in args]
        else:
            params = ['__global const struct inputs *in']
        params.append('__global %s *out' % out_ty.c)
        src = '__kernel void %s(%s)\n{\n\tsize_t i = get_global_id(0);\n' % (name, ', '.join(params))
        src += ''.join('\t%s\n' % line for line in body) + '}\n'
        return src, Kernel(name, out_ty, div, [n for n, _ in args], ' '.join(line.strip() for line in body),
                           stmts, final)

    def carried(self, v, e):
        """v combined with e: a value carried from one iteration to the next."""
        ty = e.ty
        old = Ex(v, ty, lambda env: env[v])
        if ty.flt:
            return bi('(%s + %s)' % (v, e.c), ty, old, e, lambda x, y: f32(x + y))
        bb = ty.base
        return bi('(%s ^ %s)' % (v, e.c), ty, old, e, lambda x, y: wrap(bb, x ^ y))

    def assignments(self, locals_, count):
        """count assignments to random locals: [(name, Ex)]."""
        out = []
        for _ in range(count):
            v, ty = self.r.choice(locals_)
            out.append((v, self.gen(ty, self.r.randint(1, 4))))
        return out

    def weighted(self, choices):
        total = sum(w for _, w in choices)
        x = self.r.random() * total
        for c, w in choices:
            x -= w
            if x < 0:
                return c
        return choices[-1][0]

    def module(self, index, nkernels):
        self.inputs = self.make_inputs()
        self.input_names = {n for n, _, _ in self.inputs}
        srcs, kernels = [], []
        for k in range(nkernels):
            src, kern = self.kernel('r%d_%d' % (index, k))
            srcs.append(src)
            kernels.append(kern)
        prelude = PRELUDE.format(seed=self.seed, index=index, ldiv=LDIV_PRELUDE if 'ldiv' in self.feat else '')
        if 'arrays' not in self.feat:
            prelude += '\n// The inputs of a work item.\nstruct inputs {\n%s};\n' % ''.join(
                '\t%s %s;\n' % (t.c, n) for n, t, _ in self.inputs)
        return prelude + '\n' + '\n'.join(srcs), kernels

    def layout(self):
        """Offsets of the inputs in struct inputs (C layout: each member aligned to its size,
        a 3-vector to that of a 4-vector) and its size."""
        offsets, off, align = [], 0, 1
        for _, ty, _ in self.inputs:
            a = ty.size
            off = (off + a - 1) // a * a
            offsets.append(off)
            off += ty.size
            align = max(align, a)
        return offsets, (off + align - 1) // align * align


class Kernel:
    def __init__(self, name, ty, div, args, text, stmts, final):
        self.name, self.ty, self.div, self.args, self.text = name, ty, div, args, text
        self.stmts, self.final = stmts, final

    def run(self, env):
        for st in self.stmts:
            if st[0] == 'set':
                env[st[1]] = st[2](env)
            elif st[0] == 'if':
                for v, f in (st[2] if st[1](env) else st[3]):
                    env[v] = f(env)
            else:
                for j in range(env['n'] + 1):
                    env['j'] = j
                    for v, f in st[1]:
                        env[v] = f(env)
                    if st[2] and st[2](env):
                        break
        if self.div:
            return self.final[0](env), self.final[1](env)
        return self.final(env)


def div_interval(x, y):
    """(lo, hi): the fp32 values within 2.5 ulp of x/y; (nan, nan): the result must be a
    NaN; (inf, -inf): not checked."""
    if math.isnan(x) or math.isnan(y) or (math.isinf(x) and math.isinf(y)) or (x == 0 and y == 0):
        return math.nan, math.nan
    if y == 0 or math.isinf(x):
        v = math.inf if (math.copysign(1, x) < 0) == (math.copysign(1, y) < 0) else -math.inf
        return v, v
    if math.isinf(y):
        return 0.0, 0.0
    if not 2.0 ** -126 <= abs(y) <= 2.0 ** 126:
        return math.inf, -math.inf
    if x == 0:
        return 0.0, 0.0
    q = Fraction(x) / Fraction(y)
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, -126) - 23)
    return f_ceil(q - ulp * 5 / 2), f_floor(q + ulp * 5 / 2)


def hexs(data):
    return data.hex()


def generate(args, features):
    gen = Gen(args.seed, features, args.items)
    os.makedirs(args.out, exist_ok=True)
    ref = ['zesim-random %d' % FORMAT_VERSION, 'seed %d' % args.seed,
           'features %s' % (','.join(sorted(features)) or '-'), 'items %d' % args.items,
           'modules %d' % args.modules]
    for m in range(args.modules):
        src, kernels = gen.module(m, args.kernels)
        name = 'random_%d' % m
        with open(os.path.join(args.out, name + '.cl'), 'w') as f:
            f.write(src)
        offsets, size = gen.layout()
        ref.append('module %s %s %d %d %d' % (name, 'arrays' if 'arrays' in features else 'struct', size,
                                             len(gen.inputs), len(kernels)))
        for (n, ty, vals), off in zip(gen.inputs, offsets):
            if ty.flt:
                data = b''.join(encode(ty.with_base(UINT), v) for v in vals)
            else:
                data = b''.join(encode(ty, v) for v in vals)
            ref.append('input %s %s %d %s' % (n, ty.c, off, hexs(data)))
        values = {n: [bits_f(x) if not isinstance(x, tuple) else tuple(map(bits_f, x)) for x in vals]
                  if ty.flt else vals for n, ty, vals in gen.inputs}
        for k in kernels:
            out = bytearray()
            for i in range(args.items):
                env = {'i': i}
                for n in k.args:
                    env[n] = values[n][i]
                v = k.run(env)
                if k.div:
                    x, y = v
                    if k.ty.n == 1:
                        lo, hi = div_interval(x, y)
                        out += struct.pack('<ff', lo, hi)
                    else:
                        for xc, yc in zip(x, y):
                            out += struct.pack('<ff', *div_interval(xc, yc))
                else:
                    out += encode(k.ty, v)
            ref.append('kernel %s %s %s %d %s' % (k.name, k.ty.c, 'div' if k.div else 'exact', len(k.args),
                                                    ' '.join(k.args)))
            ref.append('src ' + k.text)
            ref.append('expect ' + hexs(out))
    ref.append('end')
    tmp = os.path.join(args.out, 'random.ref.tmp')
    with open(tmp, 'w') as f:
        f.write('\n'.join(ref) + '\n')
    os.replace(tmp, os.path.join(args.out, 'random.ref'))


def compile_modules(args):
    """What tests/kernels/kernels.cmake does for each module."""
    for m in range(args.modules):
        base = os.path.join(args.out, 'random_%d' % m)
        cmds = [['clang-14', '-cl-std=CL1.2', '-target', 'spir64', '-O2', '-emit-llvm', '-c', '-ffp-contract=off', '-w',
                 '-fno-vectorize',
                 base + '.cl', '-o', base + '.bc'],
                ['llvm-spirv-14', base + '.bc', '-o', base + '.unvalidated.spv'],
                ['spirv-val', base + '.unvalidated.spv']]
        for cmd in cmds:
            if subprocess.run(cmd).returncode != 0:
                sys.exit('gen_random.py: failed: %s' % ' '.join(cmd))
        os.replace(base + '.unvalidated.spv', base + '.spv')


def main():
    ap = argparse.ArgumentParser(
        description='Random OpenCL C expression kernels and their expected results.',
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='features:\n' + '\n'.join(
            '  %-14s %s' % (name, '\n                 '.join(textwrap.wrap(text, 64)))
            for name, text in FEATURES.items()))
    ap.add_argument('--out', required=True, help='output folder')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--modules', type=int, default=10)
    ap.add_argument('--kernels', type=int, default=55, help='kernels per module')
    ap.add_argument('--items', type=int, default=256, help='work items per kernel (a multiple of 64)')
    ap.add_argument('--enable', default=DEFAULT_FEATURES,
                    help='comma-separated features (see below; default %s; "" for none)' % DEFAULT_FEATURES)
    ap.add_argument('--compile', action='store_true', help='also compile the modules to SPIR-V')
    args = ap.parse_args()
    features = {f for f in args.enable.split(',') if f}
    bad = features - set(FEATURES)
    if bad:
        ap.error('unknown feature %s (known: %s)' % (', '.join(sorted(bad)), ', '.join(FEATURES)))
    if args.items <= 0 or args.items % 64:
        ap.error('--items must be a positive multiple of 64')
    generate(args, features)
    if args.compile:
        compile_modules(args)


if __name__ == '__main__':
    main()
