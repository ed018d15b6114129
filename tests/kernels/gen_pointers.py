#!/usr/bin/env python3
"""Random pointer-chain kernels for the SPIR-V front end (driver/README.md,
"Pointers stored in memory"), with their expected results computed here.

Every module shares one memory layout, set up by the host
(tests/e2e/test_spirv_ptr_random.c) from the reference file: data D (256 ints,
D[j] = (j * 37) % 1009 - 500), a table P of 12 pointers (P[0..7] into D,
P[8..11] into a counter buffer C of 32 ints) and a table of tables Q of 4
pointers into P.  Each kernel reads through one or two levels of these tables
with indices computed from the work item and the values read so far, does
pointer arithmetic on what it loaded, keeps pointers in a private array, adds
to counters through loaded pointers (atomics) and writes one int per item.

    gen_pointers.py --out DIR [--seed S] [--modules M] [--kernels K]

writes DIR/ptr_random_M.cl and DIR/ptr_random.ref:
    module ptr_random_M.spv
    poff o0 .. o11        P[e] = D + oe (e < 8), C + oe (e >= 8)
    qoff q0 .. q3         Q[q] = P + qq
    kernel NAME
    out v0 .. v63         the items' results
    cnt c0 .. c31         C after the launch (0 before)
"""
import argparse
import os
import random

N = 64


def w32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def data(j):
    return (j * 37) % 1009 - 500


class Kernel:
    def __init__(self, rng, name, poff, qoff):
        self.rng, self.name, self.poff, self.qoff = rng, name, poff, qoff
        # statements as (C text, python function of the state)
        self.stmts = []
        for _ in range(rng.randint(3, 7)):
            self.stmts.append(self.statement())

    def index(self, mask):
        """An index expression in [0, mask] (mask = 2^k - 1) of i and acc."""
        r = self.rng
        a, b = r.randint(1, 9), r.randint(0, 15)
        kind = r.randrange(3)
        if kind == 0:
            return f"((i * {a} + {b}) & {mask})", lambda s: (s["i"] * a + b) & mask
        if kind == 1:
            return f"((acc ^ {b}) & {mask})", lambda s: (s["acc"] ^ b) & mask
        return f"(((acc >> {a % 5}) + i) & {mask})", lambda s: ((s["acc"] >> (a % 5)) + s["i"]) & mask

    def pointer(self):
        """A pointer into D: (C expression, python offset function)."""
        r = self.rng
        if r.randrange(2):
            ct, ft = self.index(7)
            return f"P[{ct}]", lambda s: self.poff[ft(s)]
        cq, fq = self.index(3)
        cj, fj = self.index(3)
        return f"Q[{cq}][{cj}]", lambda s: self.poff[self.qoff[fq(s)] + fj(s)]

    def statement(self):
        r = self.rng
        kind = r.randrange(5)
        cp, fp = self.pointer()
        ci, fi = self.index(63)
        op = r.choice(["+=", "^=", "-="])
        def upd(s, v, op=op):
            a = s["acc"]
            s["acc"] = w32(a + v if op == "+=" else a ^ v if op == "^=" else a - v)
        if kind == 0:  # load through a loaded pointer
            def f(s, fp=fp, fi=fi):
                upd(s, data(fp(s) + fi(s)))
            return f"acc {op} {cp}[{ci}];", f
        if kind == 1:  # pointer arithmetic on a loaded pointer, then a load
            k = r.randint(0, 60)
            def f(s, fp=fp, fi=fi, k=k):
                upd(s, data(fp(s) + k + fi(s)))
            return f"{{ global int *q = {cp} + {k}; acc {op} q[{ci}]; }}", f
        if kind == 2:  # a private array of loaded pointers, indexed at run time
            cp2, fp2 = self.pointer()
            cs, fs = self.index(1)
            def f(s, fp=fp, fp2=fp2, fi=fi, fs=fs):
                t = [fp(s), fp2(s)]
                upd(s, data(t[fs(s)] + fi(s)))
            return (f"{{ global int *t[2] = {{{cp}, {cp2}}}; volatile int k = {cs}; acc {op} t[k][{ci}]; }}", f)
        if kind == 3:  # an atomic through a loaded counter pointer
            cc, fc = self.index(3)
            cj, fj = self.index(7)
            def f(s, fc=fc, fj=fj):
                cell = self.poff[8 + fc(s)] + fj(s)
                s["cnt"][cell] = w32(s["cnt"][cell] + (s["acc"] & 255))
            return f"atomic_add(P[8 + {cc}] + {cj}, acc & 255);", f
        # a select between two loaded pointers
        cp2, fp2 = self.pointer()
        def f(s, fp=fp, fp2=fp2, fi=fi):
            o = fp(s) if s["acc"] & 1 else fp2(s)
            upd(s, data(o + fi(s)))
        return f"{{ global int *q = (acc & 1) ? {cp} : {cp2}; acc {op} q[{ci}]; }}", f

    def source(self):
        body = "\n".join("\t" + c for c, _ in self.stmts)
        return (f"kernel void {self.name}(global int *global *global *Q, global int *global *P, global int *out)\n"
                f"{{\n\tconst int i = get_global_id(0);\n\tint acc = i;\n{body}\n\tout[i] = acc;\n}}\n")

    def run(self):
        cnt = [0] * 32
        out = []
        for i in range(N):
            s = {"i": i, "acc": i, "cnt": cnt}
            for _, f in self.stmts:
                f(s)
            out.append(s["acc"])
        return out, cnt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modules", type=int, default=2)
    ap.add_argument("--kernels", type=int, default=12)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    ref = []
    for m in range(a.modules):
        # P[e] + 60 + 63 < 256; counters: C[o + 7] < 32; Q[q][3] < 8
        poff = [rng.randint(0, 128) for _ in range(8)] + [rng.randint(0, 24) for _ in range(4)]
        qoff = [rng.randint(0, 4) for _ in range(4)]
        ref.append(f"module ptr_random_{m}.spv")
        ref.append("poff " + " ".join(map(str, poff)))
        ref.append("qoff " + " ".join(map(str, qoff)))
        src = [f"/* gen_pointers.py --seed {a.seed}: module {m} */\n"]
        for k in range(a.kernels):
            kern = Kernel(rng, f"ptr_{m}_{k}", poff, qoff)
            src.append(kern.source())
            out, cnt = kern.run()
            ref.append(f"kernel {kern.name}")
            ref.append("out " + " ".join(map(str, out)))
            ref.append("cnt " + " ".join(map(str, cnt)))
        with open(os.path.join(a.out, f"ptr_random_{m}.cl"), "w") as f:
            f.write("\n".join(src))
    with open(os.path.join(a.out, "ptr_random.ref"), "w") as f:
        f.write("\n".join(ref) + "\n")


if __name__ == "__main__":
    main()
