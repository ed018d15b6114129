#!/usr/bin/python3
"""Random ZE-ISA program generator for differential testing (zesim-as, ISS, model).

    generate(seed) -> (asm_text, setup, expected_text)

  asm_text       one kernel in docs/isa.md §8 syntax; structured-control-flow jump
                 targets are omitted so the assembler must compute them
  setup          dict: seed, kernel, groups, group_size, args (hex), buffers
                 [{name, address (hex string), data (hex)}], local_sizes; module_va
                 (hex string) when the program uses `calla` (see below)
  expected_text  {kernel name: bytes} encoded by zeisa.py, independently of zesim-as

CLI: zegen.py --seed N [--count C] --out DIR
  writes DIR/gen_<seed>.zeasm and DIR/gen_<seed>.json (the setup plus
  "expected_text": {kernel: hex}) for seeds N .. N+C-1; `zeiss.py run --setup` reads it.

About 30% of the programs contain a send that faults in exactly one work item's channel
per group (faulting_send): that thread ends with a page fault, misaligned or SLM-bounds
exception, the other threads complete.

Some calls go through `calla` (docs/isa.md §3.5) to the program's own functions: their
GPU addresses, MODULE_VA + sh_addr (0) + the function's offset, are qword arguments fn0
and fn1 (r8.4-r8.7, after a 16-byte `pad` argument over r8.0-r8.3, which the prologue
overwrites); such programs have setup["module_va"] and must be mapped there (the harness
convention of tests/model: the module at 0x40000000; zeiss.run_dispatch(module_va=)).
Which calls use `calla` comes from a second random stream, so the programs without one
are the same as before `calla` existed.

Every program terminates (loop trip counts are bounded per lane), is race-free in the
sense of docs/isa.md §4 (each work item writes only its own global and SLM slots,
shared counters only see commutative atomics with a null destination, SLM is read
only after a barrier and only where it was written) and never reads `tm0` or `sr0.0`,
so the ISS and the model must agree on global memory and every thread's GRF.

Register plan (SIMD16 vectors use two registers):
  r0-r6 payload, r7 arguments, r8.0-3 prologue scalars, r8.4-7 function addresses
  (calla programs), r10 local linear id,
  r12 global id, r14 own output slot byte offset, r16 own SLM slot offset,
  r18/r20 loop counters (outer/inner), r22-r25 address temporaries,
  r26-r33 send data, r34-r65 the 16 random variables.
"""

import argparse
import json
import random
import struct
import sys
from pathlib import Path

import zeisa
from zeisa import (ISA, NULL, Instruction, Operand, KIND_IMM, KIND_SCALAR, KIND_VEC,
                   FLOAT_ONLY_OPS, LOGIC_OPS, MASK32, send_descriptor)

MODULE_VA = 0x40000000  # where the harnesses map the program (calla targets depend on it)
OUT_BASE = 0x10000000
IN_BASE = 0x20000000
CNT_BASE = 0x100000000  # above 4 GiB: the 64-bit base must not be truncated
IN_DWORDS = 256
SLOT_DWORDS = 64        # per work item in the output buffer
STATIC_SLM = 16         # four SLM counters
NVARS = 16
VAR_BASE = 34
SEND_DATA = 26
ADDR_A, ADDR_B = 22, 24
LID, GID, OUT_SLOT, SLM_SLOT = 10, 12, 14, 16
LOOP_COUNTERS = (18, 20)
SCALARS = 8             # r8.0 group id, r8.1 gx*gy, r8.2 items per group, r8.3 first global id
ARGS = 7                # r7.0 out, r7.2 in, r7.4 cnt, r7.6 scale, r7.7 tmp (SLM offset)
GLOBAL_ATOMICS = ('add', 'sub', 'min', 'max', 'umin', 'umax', 'and', 'or', 'xor', 'inc', 'dec')
SLM_ATOMICS = ('add', 'or', 'umax', 'xor')
STORAGE_ARFS = ('a0', 'acc0', 'acc1', 'tdr')
READABLE_ARFS = ('ce', 'ip', 'f0', 'f1') + STORAGE_ARFS
ALU_OPS = [op.name for op in ISA.ops if 'd' in op.operands and 's' in op.operands]
FLOAT_SPECIALS = (0.5, -2.25, 1.0, -0.0, 0.0, 1e-3, 3.0e38, -3.4e38, float('inf'),
                  float('-inf'), float('nan'), 1e-40, -7.5e-39, 1e30, 255.75)
INDENT = '        '


def _type(name):
    return ISA.types.by_name[name].code


def vec(reg, neg=False, abs_=False):
    return Operand(KIND_VEC, reg, 0, neg, abs_)


def sca(reg, sub, neg=False, abs_=False):
    return Operand(KIND_SCALAR, reg, sub, neg, abs_)


IMM = Operand(KIND_IMM)


def make(name, size, dst=NULL, srcs=(), dst_type='ud', src_type='ud', dword3=0, pred=None,
         cmod=None, flag=0):
    """An instruction from names; pred is None or (flag, inverted)."""
    op = ISA.ops.by_name[name]
    if pred is not None:
        flag = pred[0]
    typed_dst = 'd' in op.operands and dst.kind != zeisa.KIND_NULL
    return Instruction(opcode=op.code, exec_size=size, operands=(dst, *srcs) + (NULL,) * (3 - len(srcs)),
                       dst_type=_type(dst_type) if typed_dst else 0,
                       src_type=_type(src_type) if 's' in op.operands else 0,
                       pred=pred is not None, pred_inv=bool(pred and pred[1]), flag=flag,
                       cmod=ISA.cmods.by_name[cmod].code if cmod else 0, dword3=dword3)


def make_send(msg, size, dst=NULL, a=NULL, p=NULL, b=NULL, atomic=None, vsize=1, pred=None):
    return Instruction(opcode=ISA.ops.by_name['send'].code, exec_size=size, operands=(dst, a, p, b),
                       pred=pred is not None, pred_inv=bool(pred and pred[1]),
                       flag=pred[0] if pred else 0, dword3=send_descriptor(msg, atomic, vsize))


class _Generator:
    def __init__(self, seed):
        self.seed = seed
        self.rng = random.Random(seed)
        self.calla_rng = random.Random(seed * 2654435761 + 0xca11a)  # leaves self.rng's stream alone
        self.uses_calla = False
        self.simd = self.rng.choice((8, 16))
        self.span = self.simd // 8
        self.lines = []
        self.labels = 0
        self.loop_depth = 0
        self.functions = ['fn_0', 'fn_1']
        self.group_size, self.groups = self.pick_grid()
        self.items = self.group_size[0] * self.group_size[1] * self.group_size[2]
        self.slm_vsize = self.rng.randint(1, 4)

    def pick_grid(self):
        rng = self.rng
        gy, gz = rng.choice(((1, 1), (1, 1), (2, 1), (1, 2), (2, 2)))
        gx = rng.randint(1, 4 * self.simd // (gy * gz))
        ngroups = rng.randint(1, 3)
        groups = rng.choice(((ngroups, 1, 1), (1, ngroups, 1), (1, 1, ngroups)))
        return (gx, gy, gz), groups

    # -- emission ------------------------------------------------------------------

    def emit(self, ins, target=None):
        zeisa.encode(ins)  # a generator bug must surface here, not as an assembler error
        self.lines.append(INDENT + zeisa.format_instruction(ins, target))

    def new_label(self, stem):
        self.labels += 1
        return '%s_%d' % (stem, self.labels)

    def op(self, name, dst, srcs, t='ud', dt=None, imm=0, size=None, pred=None, **kw):
        self.emit(make(name, size or self.simd, dst, srcs, dt or t, t, imm, pred, **kw))

    def send(self, msg, **kw):
        kw.setdefault('size', self.simd)
        self.emit(make_send(msg, **kw))

    def cf(self, name, pred=None):
        self.emit(make(name, self.simd, pred=pred), target='')

    # -- random operands ------------------------------------------------------------

    def var(self):
        return VAR_BASE + 2 * self.rng.randrange(NVARS)

    def flag_for_write(self):
        """f1 holds the loop condition while inside a loop."""
        return 0 if self.loop_depth else self.rng.randrange(2)

    def random_pred(self, chance=0.2):
        if self.rng.random() >= chance:
            return None
        return (self.rng.randrange(2), self.rng.random() < 0.3)

    def immediate(self, type_name, op_name):
        rng = self.rng
        if op_name in ('shl', 'shr', 'asr'):
            return rng.randrange(40)
        if type_name == 'f':
            if rng.random() < 0.6:
                return zeisa.f32_bits(rng.choice(FLOAT_SPECIALS))
            return rng.getrandbits(32)
        choice = rng.random()
        if choice < 0.5:
            return rng.randint(-40, 40) & MASK32 if type_name == 'd' else rng.randrange(41)
        if choice < 0.7:
            return rng.choice((0x80000000, 0x7FFFFFFF, MASK32, 1))
        return rng.getrandbits(32)

    def source(self, size, modifiers):
        rng = self.rng
        mods = {}
        if modifiers and rng.random() < 0.25:
            mods = {'neg': rng.random() < 0.6, 'abs_': rng.random() < 0.5}
        roll = rng.random()
        if size > 1 and roll < 0.7:
            reg = self.var() if roll < 0.6 else rng.choice((1, LID, GID))
            return vec(reg, **mods)
        if roll < 0.9:
            return sca(rng.randrange(VAR_BASE, VAR_BASE + 2 * NVARS), rng.randrange(8), **mods)
        reg, sub = rng.choice(((ARGS, 6), (SCALARS, 0), (SCALARS, 2), (0, 3), (0, 4)))
        return sca(reg, sub, **mods)

    def destination(self, size):
        if size == 1 and self.rng.random() < 0.7:
            return sca(self.rng.randrange(VAR_BASE, VAR_BASE + 2 * NVARS), self.rng.randrange(8))
        return vec(self.var())

    # -- statements --------------------------------------------------------------------

    def alu(self, allow_pred=True):
        rng = self.rng
        name = rng.choice(ALU_OPS)
        if name in LOGIC_OPS:
            t = rng.choice(('ud', 'd'))
        elif name in FLOAT_ONLY_OPS:
            t = 'f'
        else:
            t = rng.choice(('ud', 'd', 'f'))
        dt = t if rng.random() < 0.6 else rng.choice(('ud', 'd', 'f'))
        size = rng.choice((self.simd,) * 6 + (1, 1, 8))
        nsrc = ISA.ops.by_name[name].operands.count('s')
        srcs = [self.source(size, name not in LOGIC_OPS) for _ in range(nsrc)]
        imm = 0
        if rng.random() < 0.3:
            srcs[rng.randrange(nsrc)] = IMM
            imm = self.immediate(t, name)
        pred = self.random_pred() if allow_pred else None
        kw = {}
        dst = self.destination(size)
        if name == 'sel':
            pred = pred or (rng.randrange(2), False)
        if name == 'cmp':
            kw = {'cmod': rng.choice([c.name for c in ISA.cmods if c.name]), 'flag': self.flag_for_write()}
            if pred:
                pred = (kw['flag'], pred[1])
            if rng.random() < 0.5:
                dst = NULL
        self.op(name, dst, srcs, t, dt, imm, size, pred, **kw)

    def arf_move(self):
        rng = self.rng
        if rng.random() < 0.5:
            arf = ISA.arfs.by_name[rng.choice(READABLE_ARFS)]
            src = Operand(zeisa.KIND_ARF, arf.code, rng.randrange(min(arf.dwords, 8)))
            size = rng.choice((1, self.simd))
            self.op('mov', self.destination(size), [src], size=size)
            return
        names = STORAGE_ARFS + (() if self.loop_depth else ('f1',)) + ('f0',)
        arf = ISA.arfs.by_name[rng.choice(names)]
        dst = Operand(zeisa.KIND_ARF, arf.code, rng.randrange(min(arf.dwords, 8)))
        self.op('mov', dst, [self.source(1, True)], rng.choice(('ud', 'd', 'f')), 'ud', size=1)

    def address(self, reg, base_reg, byte_offset, size=None):
        self.op('add', vec(reg), [vec(base_reg), IMM], imm=byte_offset, size=size)

    def gather(self, vsize):
        """Copy vsize random variables into the send data registers."""
        for e in range(vsize):
            self.op('mov', vec(SEND_DATA + e * self.span), [vec(self.var())])

    def scatter(self, vsize):
        for e in range(vsize):
            self.op('mov', vec(self.var()), [vec(SEND_DATA + e * self.span)])

    def store_own(self, slot=None, vsize=None, pred=None):
        vsize = vsize or self.rng.randint(1, 4)
        slot = self.rng.randrange(SLOT_DWORDS - vsize + 1) if slot is None else slot
        self.gather(vsize)
        size = self.rng.choice((self.simd,) * 4 + (1,))
        # computed at the send's own size: at size 1 lane 0 may be disabled by control flow
        self.address(ADDR_A, OUT_SLOT, 4 * slot, size)
        self.send('store', size=size, a=vec(ADDR_A), p=vec(SEND_DATA), b=sca(ARGS, 0), vsize=vsize,
                  pred=pred)

    def load(self):
        rng = self.rng
        vsize = rng.randint(1, 4)
        size = rng.choice((self.simd,) * 4 + (1,))
        # addresses are computed at the send's own size (see store_own)
        if rng.random() < 0.5:  # the work item's own output slot: written only by itself
            self.address(ADDR_A, OUT_SLOT, 4 * rng.randrange(SLOT_DWORDS - vsize + 1), size)
            base = sca(ARGS, 0)
        else:  # anywhere in the read-only input, 16-byte aligned so v4 stays inside
            self.op('mul', vec(ADDR_A), [vec(GID), IMM], imm=rng.randrange(1, 64, 2), size=size)
            self.op('add', vec(ADDR_A), [vec(ADDR_A), IMM], imm=rng.randrange(64), size=size)
            self.op('and', vec(ADDR_A), [vec(ADDR_A), IMM], imm=IN_DWORDS // 4 - 1, size=size)
            self.op('shl', vec(ADDR_A), [vec(ADDR_A), IMM], imm=4, size=size)
            base = sca(ARGS, 2)
        self.send('load', size=size, dst=vec(SEND_DATA), a=vec(ADDR_A), b=base, vsize=vsize,
                  pred=self.random_pred(0.15))
        self.scatter(vsize)

    def global_atomic(self):
        rng = self.rng
        k = rng.randrange(len(GLOBAL_ATOMICS))
        op = GLOBAL_ATOMICS[k]
        # counter k or k + n by lane parity: several lanes and threads hit each counter
        self.op('and', vec(ADDR_A), [vec(LID), IMM], imm=1)
        self.op('mad', vec(ADDR_A), [vec(ADDR_A), IMM, vec(ADDR_A)], imm=len(GLOBAL_ATOMICS) - 1)
        self.op('add', vec(ADDR_A), [vec(ADDR_A), IMM], imm=k)
        self.op('shl', vec(ADDR_A), [vec(ADDR_A), IMM], imm=2)
        payload = NULL if ISA.atomics.by_name[op].payload == 0 else vec(self.var())
        self.send('atomic', a=vec(ADDR_A), p=payload, b=sca(ARGS, 4), atomic=op,
                  pred=self.random_pred(0.15))

    def faulting_send(self, slm_allowed):
        """A send in which exactly one work item's channel faults (page fault or misaligned
        for global memory, SLM bounds or misaligned for SLM).  The predicate enables the
        lanes from that work item on, up to it, or only it: its thread ends with the
        exception before any channel is performed (the ledger counts the send, no bytes);
        the group's other threads perform the message on their enabled lanes (often none).
        SLM messages only come before slm_phase (their writes would race with its reads)."""
        rng = self.rng
        msgs = ('load', 'store', 'atomic') + (('slm.load', 'slm.store', 'slm.atomic') if slm_allowed else ())
        msg = rng.choice(msgs)
        slm = msg.startswith('slm.')
        victim = rng.randrange(self.items)
        vsize = 1
        if slm:  # the work item's own SLM slot (r7.7 + lid * slot bytes)
            vsize = rng.randint(1, self.slm_vsize) if msg != 'slm.atomic' else 1
            self.op('mul', vec(ADDR_A), [vec(LID), IMM], imm=4 * self.slm_vsize)
            self.op('add', vec(ADDR_A), [vec(ADDR_A), sca(ARGS, 7)])
            base = NULL
        elif msg == 'atomic':  # the add counter: commutative, null destination
            self.op('mov', vec(ADDR_A), [IMM], imm=4 * GLOBAL_ATOMICS.index('add'))
            base = sca(ARGS, 4)
        else:  # the work item's own output slot
            vsize = rng.randint(1, 4)
            self.address(ADDR_A, OUT_SLOT, 4 * rng.randrange(SLOT_DWORDS - vsize + 1))
            base = sca(ARGS, 0)
        kind = rng.choice(('misaligned', 'range'))
        delta = 2 if kind == 'misaligned' else (0x10000 if slm else 0x08000000)  # past SLM / nothing mapped
        self.op('cmp', NULL, [vec(LID), IMM], cmod='eq', imm=victim, flag=0)
        self.op('add', vec(ADDR_A), [vec(ADDR_A), IMM], imm=delta, pred=(0, False))
        self.op('cmp', NULL, [vec(LID), IMM], cmod=rng.choice(('ge', 'le', 'eq')), imm=victim, flag=0)
        kw = {'a': vec(ADDR_A), 'b': base, 'vsize': vsize, 'pred': (0, False)}
        if msg.endswith('load'):
            kw['dst'] = vec(SEND_DATA)
        elif msg.endswith('store'):
            self.gather(vsize)
            kw['p'] = vec(SEND_DATA)
        else:
            kw.update(p=vec(self.var()), atomic='add')
        self.send(msg, **kw)

    def misc(self):
        choice = self.rng.randrange(3)
        if choice == 0:
            self.op('nop', NULL, [])
        elif choice == 1:
            self.op('wait', NULL, [IMM], imm=self.rng.randrange(1, 20), size=1)
        else:
            self.send('fence')

    def if_else(self, depth):
        a, b = vec(self.var()), vec(self.var())
        t = self.rng.choice(('ud', 'd', 'f'))
        cmod = self.rng.choice([c.name for c in ISA.cmods if c.name])
        self.op('cmp', NULL, [a, b], t, cmod=cmod, flag=0)
        self.cf('if', pred=(0, self.rng.random() < 0.3))
        self.block(depth + 1, self.rng.randint(1, 5))
        if self.rng.random() < 0.6:
            self.cf('else')
            self.block(depth + 1, self.rng.randint(1, 5))
        self.cf('endif')

    def loop(self, depth):
        counter = LOOP_COUNTERS[self.loop_depth]
        # 1-4 iterations per lane, varying across lanes
        self.op('and', vec(counter), [vec(self.rng.choice((LID, self.var()))), IMM], imm=3)
        self.op('add', vec(counter), [vec(counter), IMM], imm=1)
        self.cf('do')
        self.loop_depth += 1
        # the condition is computed before any break/cont so every lane's f1 bit is fresh
        self.op('add', vec(counter), [vec(counter), IMM], 'd', imm=MASK32)
        self.op('cmp', NULL, [vec(counter), IMM], 'd', cmod='gt', flag=1)
        self.block(depth + 1, self.rng.randint(2, 6))
        self.loop_depth -= 1
        self.cf('while', pred=(1, False))
        if self.loop_depth:  # the inner loop overwrote f1 of the lanes it ran
            self.op('cmp', NULL, [vec(LOOP_COUNTERS[self.loop_depth - 1]), IMM], 'd', cmod='gt', flag=1)

    def break_or_cont(self):
        a = vec(self.var())
        self.op('cmp', NULL, [a, IMM], self.rng.choice(('ud', 'd')), cmod=self.rng.choice(('lt', 'gt', 'eq')),
                imm=self.rng.getrandbits(32), flag=0)
        self.cf(self.rng.choice(('break', 'cont')), pred=(0, self.rng.random() < 0.3))

    def jmpi_skip(self):
        label = self.new_label('skip')
        pred = None
        if self.rng.random() < 0.8:
            self.op('cmp', NULL, [self.source(1, False), self.source(1, False)], 'd', size=1,
                    cmod=self.rng.choice(('lt', 'ge', 'ne')), flag=0)
            pred = (0, self.rng.random() < 0.5)
        self.emit(make('jmpi', 1, pred=pred), target=label)
        for _ in range(self.rng.randint(1, 3)):
            self.alu()
        self.lines.append(label + ':')

    def call(self, name):
        """`call name`, or `calla` through the function's address (argument fn0/fn1: r8.4/r8.6),
        sometimes predicated (bit 0 of a flag decides, deterministically)."""
        roll = self.calla_rng.random()
        if roll >= 0.2:
            self.emit(make('call', self.simd), target=name)
            return
        self.uses_calla = True
        sub = 4 + 2 * self.functions.index(name)
        pred = (self.calla_rng.randrange(2), self.calla_rng.random() < 0.5) if roll < 0.06 else None
        self.emit(make('calla', 1, srcs=(sca(SCALARS, sub), sca(SCALARS, sub + 1)), pred=pred))

    def block(self, depth, count):
        rng = self.rng
        for _ in range(count):
            roll = rng.random()
            if roll < 0.45:
                self.alu()
            elif roll < 0.52:
                self.arf_move()
            elif roll < 0.58:
                self.store_own(pred=self.random_pred(0.15))
            elif roll < 0.64:
                self.load()
            elif roll < 0.68:
                self.global_atomic()
            elif roll < 0.71:
                self.misc()
            elif roll < 0.78 and depth < 3:
                self.if_else(depth)
            elif roll < 0.83 and depth < 3 and self.loop_depth < len(LOOP_COUNTERS):
                self.loop(depth)
            elif roll < 0.89 and self.loop_depth:
                self.break_or_cont()
            elif roll < 0.94:
                self.jmpi_skip()
            elif roll < 0.97:
                self.call(self.functions[0])
            else:
                self.alu()

    # -- fixed parts ---------------------------------------------------------------------

    def prologue(self):
        n = self.simd
        self.op('mov', sca(SCALARS, 0), [Operand(zeisa.KIND_ARF, ISA.arfs.by_name['sr0'].code, 1)], size=1)
        self.op('mul', sca(SCALARS, 1), [sca(0, 4), sca(0, 5)], size=1)
        self.op('mul', sca(SCALARS, 2), [sca(SCALARS, 1), sca(0, 6)], size=1)
        self.op('mul', sca(SCALARS, 3), [sca(SCALARS, 0), sca(SCALARS, 2)], size=1)
        self.op('mad', vec(LID), [vec(3), sca(0, 4), vec(1)], size=n)
        self.op('mad', vec(LID), [vec(5), sca(SCALARS, 1), vec(LID)], size=n)
        self.op('add', vec(GID), [vec(LID), sca(SCALARS, 3)], size=n)
        self.op('mul', vec(OUT_SLOT), [vec(GID), IMM], imm=4 * SLOT_DWORDS, size=n)
        for _ in range(4):
            self.load()

    def slm_phase(self):
        """Thread 0 initialises the SLM counters; every lane writes its slot and updates
        the counters; after the barrier each lane reads another lane's slot."""
        v = self.slm_vsize
        self.op('cmp', NULL, [sca(0, 3), IMM], cmod='eq', size=1, flag=0)
        for e in range(4):
            self.op('mov', sca(SEND_DATA + e, 0), [IMM], imm=self.rng.getrandbits(32), size=1)
        self.op('mov', sca(ADDR_B, 0), [IMM], imm=0, size=1)
        self.send('slm.store', size=1, a=vec(ADDR_B), p=vec(SEND_DATA), vsize=4, pred=(0, False))
        self.send('barrier')
        self.op('mul', vec(SLM_SLOT), [vec(LID), IMM], imm=4 * v)
        self.op('add', vec(SLM_SLOT), [vec(SLM_SLOT), sca(ARGS, 7)])
        self.gather(v)
        self.send('slm.store', a=vec(SLM_SLOT), p=vec(SEND_DATA), vsize=v)
        for k, op in enumerate(SLM_ATOMICS):
            self.op('mov', vec(ADDR_B), [IMM], imm=4 * k)
            self.send('slm.atomic', a=vec(ADDR_B), p=vec(self.var()), atomic=op)
        self.send('barrier')
        partner = self.rng.randrange(1, self.items) if self.items > 1 else 0
        self.op('add', vec(ADDR_A), [vec(LID), IMM], imm=partner)
        self.op('cmp', NULL, [vec(ADDR_A), sca(SCALARS, 2)], cmod='ge', flag=0)
        self.op('add', vec(ADDR_A), [vec(ADDR_A), sca(SCALARS, 2, neg=True)], 'd', pred=(0, False))
        self.op('mul', vec(ADDR_A), [vec(ADDR_A), IMM], imm=4 * v)
        self.op('add', vec(ADDR_A), [vec(ADDR_A), sca(ARGS, 7)])
        self.send('slm.load', dst=vec(SEND_DATA), a=vec(ADDR_A), vsize=v)
        self.scatter(v)
        self.op('mov', vec(ADDR_B), [IMM], imm=0)
        self.send('slm.load', dst=vec(SEND_DATA), a=vec(ADDR_B), vsize=4)
        self.address(ADDR_A, OUT_SLOT, 4 * NVARS)
        self.send('store', a=vec(ADDR_A), p=vec(SEND_DATA), b=sca(ARGS, 0), vsize=4)

    def epilogue(self):
        for i in range(0, NVARS, 4):
            for e in range(4):
                self.op('mov', vec(SEND_DATA + e * self.span), [vec(VAR_BASE + 2 * (i + e))])
            self.address(ADDR_A, OUT_SLOT, 4 * i)
            self.send('store', a=vec(ADDR_A), p=vec(SEND_DATA), b=sca(ARGS, 0), vsize=4)
        self.send('eot')

    def function(self, index):
        self.lines.append('.func %s' % self.functions[index])
        saved, self.loop_depth = self.loop_depth, 1  # callers may be in a loop: keep f1
        for _ in range(self.rng.randint(2, 5)):
            self.alu()
        if index + 1 < len(self.functions):
            self.call(self.functions[index + 1])
        if self.rng.random() < 0.5:
            self.op('cmp', NULL, [vec(self.var()), vec(self.var())], 'd', cmod='lt', flag=0)
            self.cf('if', pred=(0, False))
            self.alu()
            self.cf('endif')
        self.loop_depth = saved
        self.op('ret', NULL, [])

    def program(self):
        name = 'gen_%d' % self.seed
        gx, gy, gz = self.group_size
        self.lines += [
            '// zegen seed %d: SIMD%d, groups %s of %dx%dx%d work items'
            % (self.seed, self.simd, 'x'.join(map(str, self.groups)), gx, gy, gz),
            '.kernel %s' % name, '.simd %d' % self.simd, '.slm %d' % STATIC_SLM,
            '.arg out global', '.arg in global', '.arg cnt global', '.arg scale value 4',
            '.arg tmp local']
        header = len(self.lines)
        self.prologue()
        self.block(0, self.rng.randint(15, 35))
        fault = self.rng.random() < 0.3  # a third of the programs: one work item per group faults
        if fault and self.rng.random() < 0.6:
            self.faulting_send(slm_allowed=True)
        self.slm_phase()
        self.block(0, self.rng.randint(5, 15))
        if fault and self.rng.random() < 0.5:
            self.faulting_send(slm_allowed=False)
        self.epilogue()
        for index in range(len(self.functions)):
            self.function(index)
        if self.uses_calla:
            self.lines[header:header] = ['.arg pad value 16'] + ['.arg %s global' % f.replace('_', '')
                                                                  for f in self.functions]
        return '\n'.join(self.lines) + '\n'

    def setup(self, module):
        rng = self.rng
        nitems = self.items * self.groups[0] * self.groups[1] * self.groups[2]
        inputs = b''.join(struct.pack('<I', self.input_word()) for _ in range(IN_DWORDS))
        counters = bytes(rng.getrandbits(8) for _ in range(8 * len(GLOBAL_ATOMICS)))
        output = bytes(rng.getrandbits(8) for _ in range(4 * SLOT_DWORDS * nitems))
        args = struct.pack('<QQQII', OUT_BASE, IN_BASE, CNT_BASE, rng.getrandbits(32), 0)
        extra = {}
        if self.uses_calla:  # pad, then the functions' GPU addresses
            kernel = module.kernels['gen_%d' % self.seed]
            offsets = {f.name: f.offset for f in kernel.functions}
            args += bytes(16) + b''.join(struct.pack('<Q', MODULE_VA + kernel.address + offsets[f])
                                         for f in self.functions)
            extra['module_va'] = '0x%x' % MODULE_VA
        return {
            **extra,
            'seed': self.seed, 'kernel': 'gen_%d' % self.seed, 'groups': list(self.groups),
            'group_size': list(self.group_size), 'args': args.hex(),
            'buffers': [{'name': n, 'address': '0x%x' % a, 'data': d.hex()}
                        for n, a, d in (('out', OUT_BASE, output), ('in', IN_BASE, inputs),
                                        ('cnt', CNT_BASE, counters))],
            'local_sizes': {'tmp': 4 * self.slm_vsize * self.items},
        }

    def input_word(self):
        rng = self.rng
        roll = rng.random()
        if roll < 0.3:
            return zeisa.f32_bits(rng.choice(FLOAT_SPECIALS))
        if roll < 0.5:
            return zeisa.f32_bits(rng.uniform(-100, 100))
        if roll < 0.7:
            return rng.randint(-100, 100) & MASK32
        return rng.getrandbits(32)


def generate(seed):
    """(asm_text, setup, expected_text) for one seed; see the module docstring."""
    gen = _Generator(seed)
    text = gen.program()
    module = zeisa.assemble(text, 'gen_%d.zeasm' % seed)
    setup = gen.setup(module)
    return text, setup, {name: k.text for name, k in module.kernels.items()}


def write_program(seed, out_dir):
    text, setup, expected = generate(seed)
    out_dir = Path(out_dir)
    (out_dir / ('gen_%d.zeasm' % seed)).write_text(text)
    setup['expected_text'] = {name: data.hex() for name, data in expected.items()}
    (out_dir / ('gen_%d.json' % seed)).write_text(json.dumps(setup, indent=1) + '\n')


def main(argv):
    p = argparse.ArgumentParser(prog='zegen.py', description='random ZE-ISA programs')
    p.add_argument('--seed', type=int, required=True, help='first seed')
    p.add_argument('--count', type=int, default=1, help='programs, seeds SEED..SEED+COUNT-1')
    p.add_argument('--out', required=True, help='output directory (created if missing)')
    opts = p.parse_args(argv)
    Path(opts.out).mkdir(parents=True, exist_ok=True)
    for seed in range(opts.seed, opts.seed + opts.count):
        write_program(seed, opts.out)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
