#!/usr/bin/python3
"""ZE-ISA reference instruction-set simulator (functional, untimed), per docs/isa.md.

One call runs one dispatch of one kernel:

    run_dispatch(module, kernel, groups=(1, 1, 1), group_size=None, args=b'',
                 buffers=None, local_sizes=None, step_limit=DEFAULT_STEP_LIMIT,
                 schedule='round-robin', module_va=0, code=None)
        -> DispatchResult

  module       a zeisa.Module, or the path/bytes of an ELF module
  groups       number of thread groups in x, y, z
  group_size   work items per group gx, gy, gz (default: simd, 1, 1)
  args         the argument area, exactly the kernel's arg_bytes; the dispatcher
               overwrites `local` arguments with their SLM offsets
  buffers      {gpu address: bytes} of global memory; every other address faults
  local_sizes  {argument name: bytes} for each `local` argument

  step_limit   instructions over the whole dispatch before it is reported as a hang
  schedule     'round-robin' (default): groups run one after another in linear order,
               the threads of a group interleave one instruction each per round;
               'serial': groups in reverse order, each thread (in reverse order) runs
               until it waits at a barrier or ends.
  module_va    GPU VA of `module`'s instruction heap: the kernel is at module_va + its
               sh_addr (docs/stimulus.md §2.2), which is the instruction base `ib` of
               every thread at dispatch (docs/isa.md §1, §3.5)
  code         {gpu VA: zeisa.Module or ELF path/bytes} of more code for `calla`: each
               kernel's text section is at VA + sh_addr; `module`'s own kernels are at
               module_va (an entry at module_va is `module` itself)
A thread that executes `send.barrier` waits until every thread of its group that has
not ended is waiting, then all of them resume.  Race-free programs give the same result
under any schedule, which is what the model comparison relies on (and what tests check
by running both schedules).

Choices where docs/isa.md leaves freedom (documented for the model side):
  - dynamic SLM of `local` arguments is laid out after the static SLM in declaration
    order, each allocation 4-byte aligned; SLM starts zeroed;
  - local ids of disabled tail channels are 0 in the payload;
  - sr0.0 = thread index within its group (slice/subslice/eu 0);
  - tm0 counts the instructions the thread executed before the current one;
  - the ISS installs no SIP: every exception ends the thread and is reported;
  - fetching outside the kernel's text section is an illegal-instruction exception
    while `ib` is the kernel's VA (at dispatch, and after a `ret` back to it);
  - with any other `ib` (after a `calla`, §3.5) the fetch address ib + ip is looked up
    in every text section of `module` and `code`: inside one, its bytes run (also when
    that is the dispatched kernel's own text, or when ip runs from one section into the
    next); outside all of them the fetch is a page fault (cr0.2 = ip, cr0.3 and the
    report's address = ib + ip, the whole address in the report).  The model fetches
    whatever the mapped pages hold instead (padding after a section is zero bytes,
    which decode as `nop`), so compared programs never run off a text section;
  - `ip` is kept modulo 2^32 (a register of 32 bits); the fetch address modulo 2^64.

The result also carries `ledger`: the dispatch's totals of every docs/oa.md §2 field that
follows from execution alone, counted here by the rule table (not by the model's code):
threads_dispatched/retired, inst.<class>, lane_ops, sends.<message>,
bytes.l3_read/l3_write/slm_read/slm_write and barriers (see Ledger).

CLI: zeiss.py run --help
"""

import argparse
import json
import math
import operator
import sys
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import zeisa
from zeisa import (ISA, KIND_ARF, KIND_NULL, KIND_SCALAR, KIND_VEC, MASK32,
                   INSTRUCTION_BYTES, f32_bits, f32_value, round_fraction_to_f32, vector_span)

DEFAULT_STEP_LIMIT = 10_000_000
SCHEDULES = ('round-robin', 'serial')
CF_STACK_DEPTH = 32
RETURN_STACK_DEPTH = 16
ARG_FIRST_REG = 7
LOCAL_ARG_ALIGN = 4
MASK64 = (1 << 64) - 1
EXCEPTION_NAMES = ('breakpoint', 'illegal', 'page_fault', 'misaligned', 'stack', 'slm_bounds')  # §7 bits

ARF_IP, ARF_F0, ARF_F1, ARF_SR0, ARF_CR0, ARF_CE, ARF_DBG0, ARF_TM0 = (
    ISA.arfs.by_name[n].code for n in ('ip', 'f0', 'f1', 'sr0', 'cr0', 'ce', 'dbg0', 'tm0'))
FLAG_ARF = (ARF_F0, ARF_F1)

RUNNING, BARRIER, EOT, HALT, EXCEPTION, HANG = 'running', 'barrier', 'eot', 'halt', 'exception', 'hang'


class DispatchError(ValueError):
    """The dispatch request itself is invalid (bad kernel name, sizes, arguments, buffers)."""


class ThreadFault(Exception):
    """A §7 exception raised while executing an instruction."""

    def __init__(self, name, detail, address=None):
        super().__init__(detail)
        self.name, self.detail, self.address = name, detail, address


@dataclass
class ExceptionReport:
    name: str
    bit: int
    ip: int
    address: object  # int, or None when the exception has no address
    detail: str
    ib: int = 0  # the instruction base ip counts from (docs/isa.md §3.5)


@dataclass
class ThreadResult:
    group: tuple
    index: int
    status: str  # eot, halt, exception or hang
    exception: object  # ExceptionReport or None
    grf: list  # 128 * 8 dwords, r0.0 first
    arf: dict  # ARF name -> dwords
    executed: int
    ib: int = 0  # final instruction base (docs/isa.md §1)

    def reg(self, n):
        return self.grf[n * 8:(n + 1) * 8]

    @property
    def flags(self):
        return self.arf['f0'][0], self.arf['f1'][0]


MEMORY_FAULTS = ('page_fault', 'misaligned', 'slm_bounds')  # raised by a send in the memory system
# message -> (bytes field per dword read, per dword written); docs/oa.md §2
_MSG_BYTES = {'load': ('l3_read', None), 'store': (None, 'l3_write'), 'atomic': ('l3_read', 'l3_write'),
              'slm.load': ('slm_read', None), 'slm.store': (None, 'slm_write'),
              'slm.atomic': ('slm_read', 'slm_write')}


class Ledger:
    """The timing-free docs/oa.md §2 fields of one dispatch, as totals.

    inst.<class> / lane_ops: every instruction that executes, including halt, send.eot and
    sends that then fault in the memory system; not an instruction whose fetch fails (text
    bounds, breakpoint, illegal encoding) or that raises a stack/illegal exception.  The
    channel mask is the one before the instruction executes.  sends.<message>: the same
    sends.  bytes: 4 per dword per enabled channel (atomics: one dword, counted read and
    write), nothing for a faulting message.  barriers: one per release of a group.
    """

    def __init__(self):
        self.threads_dispatched = 0
        self.threads_retired = 0
        self.inst = {lat.name: 0 for lat in ISA.latencies.values()}
        self.lane_ops = 0
        self.sends = {m.name: 0 for m in ISA.msgs}
        self.bytes = {'l3_read': 0, 'l3_write': 0, 'slm_read': 0, 'slm_write': 0}
        self.barriers = 0

    def instruction(self, ins, mask, completed):
        is_send = ins.op.name == 'send'
        self.inst['send' if is_send else ins.op.latency.name] += 1
        self.lane_ops += bin(mask).count('1')
        if not is_send:
            return
        msg = ins.msg.name
        self.sends[msg] += 1
        if not completed or msg not in _MSG_BYTES:
            return
        dwords = (1 if msg.endswith('atomic') else ins.vsize) * bin(mask).count('1')
        for field in _MSG_BYTES[msg]:
            if field:
                self.bytes[field] += 4 * dwords

    def to_json(self):
        return {'threads_dispatched': self.threads_dispatched, 'threads_retired': self.threads_retired,
                'inst': dict(self.inst), 'lane_ops': self.lane_ops, 'sends': dict(self.sends),
                'bytes': dict(self.bytes), 'barriers': self.barriers}


@dataclass
class DispatchResult:
    kernel: str
    memory: dict  # address -> bytes
    slm: list  # per group in linear order
    threads: list
    steps: int
    hang: object = None  # message when the step limit was reached
    ledger: object = None  # Ledger

    def to_json(self):
        return {
            'kernel': self.kernel, 'steps': self.steps, 'hang': self.hang,
            'ledger': self.ledger.to_json() if self.ledger else None,
            'memory': {'0x%x' % a: bytes(d).hex() for a, d in sorted(self.memory.items())},
            'slm': [bytes(s).hex() for s in self.slm],
            'threads': [{
                'group': list(t.group), 'thread': t.index, 'status': t.status,
                'exception': None if t.exception is None else vars(t.exception),
                'executed': t.executed, 'ib': t.ib, 'f0': t.flags[0], 'f1': t.flags[1], 'arf': t.arf,
                'grf': [t.reg(n) for n in range(zeisa.GRF_COUNT)],
            } for t in self.threads]}


# ---------------------------------------------------------------------------
# Values and conversions (§2.1, §3.2)
# ---------------------------------------------------------------------------


def _signed(bits):
    return bits - (1 << 32) if bits & 0x80000000 else bits


def _f32(x):
    return f32_value(f32_bits(x))


def to_value(bits, type_name):
    if type_name == 'd':
        return _signed(bits)
    if type_name == 'f':
        return f32_value(bits)
    return bits


def convert(value, src, dst):
    """Bits written to a `dst` destination for a result computed in type `src`."""
    if src == 'f':
        return f32_bits(value) if dst == 'f' else _float_to_int(value, dst)
    bits = value & MASK32
    if dst == 'f':
        return f32_bits(float(to_value(bits, src)))  # exact double, one rounding to fp32
    return bits


def _float_to_int(value, dst):
    low, high = (-(1 << 31), (1 << 31) - 1) if dst == 'd' else (0, MASK32)
    if math.isnan(value):
        return 0
    if value <= low:
        return low & MASK32
    if value >= high:
        return high & MASK32
    return int(value) & MASK32  # int() truncates toward zero


def apply_modifiers(bits, operand, type_name):
    """abs first, then negate (§3.2)."""
    if type_name == 'f':
        if operand.abs:
            bits &= 0x7FFFFFFF
        return bits ^ 0x80000000 if operand.neg else bits
    if operand.abs and type_name == 'd' and bits & 0x80000000:
        bits = -bits & MASK32  # INT_MIN stays INT_MIN
    return -bits & MASK32 if operand.neg else bits


def _fmin(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b) or a < b:
        return a
    if a == b:  # only zeros differ here: -0 < +0
        return a if math.copysign(1, a) < 0 else b
    return b


def _fmax(a, b):
    if math.isnan(a):
        return b
    if math.isnan(b) or a > b:
        return a
    if a == b:
        return b if math.copysign(1, a) < 0 else a
    return b


def fma_f32(a, b, c):
    """a*b + c with a single rounding to fp32."""
    if not all(map(math.isfinite, (a, b, c))):
        return _f32(a * b + c)  # doubles hold every fp32 product, so only inf/NaN rules apply
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    product_negative = math.copysign(1, a) * math.copysign(1, b) < 0
    # IEEE: an exact zero sum is -0 only when both addends are -0 (round to nearest)
    negative_zero = (a == 0 or b == 0) and product_negative and c == 0 and math.copysign(1, c) < 0
    return round_fraction_to_f32(exact, negative_zero)


def _inv(a):
    if a == 0:
        return math.copysign(math.inf, a)
    return _f32(1.0 / a)  # double division then fp32 rounding is correctly rounded for fp32


def _sqrt(a):
    if math.isnan(a) or a < 0:
        return math.nan
    return _f32(math.sqrt(a))  # sqrt(-0) = -0


def _exp(a):
    try:
        return _f32(math.exp2(a))
    except OverflowError:  # Python reports a finite argument whose exp2 overflows
        return math.inf


def _log(a):
    if a == 0:
        return -math.inf
    if math.isnan(a) or a < 0:
        return math.nan
    return _f32(math.log2(a))


def _int_or_float(int_fn, float_fn):
    return lambda t, *v: float_fn(*v) if t == 'f' else int_fn(*v)


ALU = {
    'mov': lambda t, a: a,
    'not': lambda t, a: ~a,
    'and': lambda t, a, b: a & b,
    'or': lambda t, a, b: a | b,
    'xor': lambda t, a, b: a ^ b,
    'shl': lambda t, a, b: (a & MASK32) << (b & 31),
    'shr': lambda t, a, b: (a & MASK32) >> (b & 31),
    'asr': lambda t, a, b: _signed(a & MASK32) >> (b & 31),
    'add': _int_or_float(operator.add, lambda a, b: _f32(a + b)),
    'mul': _int_or_float(operator.mul, lambda a, b: _f32(a * b)),
    'mad': _int_or_float(lambda a, b, c: a * b + c, fma_f32),
    'min': _int_or_float(min, _fmin),
    'max': _int_or_float(max, _fmax),
    'math.inv': lambda t, a: _inv(a),
    'math.sqrt': lambda t, a: _sqrt(a),
    'math.exp': lambda t, a: _exp(a),
    'math.log': lambda t, a: _log(a),
}

COMPARE = {'eq': operator.eq, 'ne': operator.ne, 'lt': operator.lt,
           'le': operator.le, 'gt': operator.gt, 'ge': operator.ge}

ATOMIC = {
    'add': lambda old, p: old + p,
    'sub': lambda old, p: old - p,
    'min': lambda old, p: old if _signed(old) <= _signed(p) else p,
    'max': lambda old, p: old if _signed(old) >= _signed(p) else p,
    'umin': min,
    'umax': max,
    'and': operator.and_,
    'or': operator.or_,
    'xor': operator.xor,
    'xchg': lambda old, p: p,
    'cmpxchg': lambda old, cmp, new: new if old == cmp else old,
    'inc': lambda old: old + 1,
    'dec': lambda old: old - 1,
}

# ---------------------------------------------------------------------------
# Memory
# ---------------------------------------------------------------------------


class GlobalMemory:
    """Mapped buffers; a dword access must lie inside one of them."""
    fault = 'page_fault'

    def __init__(self, buffers):
        self.bases = sorted(buffers)
        self.data = {base: bytearray(buffers[base]) for base in self.bases}
        for lo, hi in zip(self.bases, self.bases[1:]):
            if lo + len(self.data[lo]) > hi:
                raise DispatchError('buffers at 0x%x and 0x%x overlap' % (lo, hi))
        for base in self.bases:
            if base < 0 or base + len(self.data[base]) > MASK64 + 1 or not self.data[base]:
                raise DispatchError('buffer at 0x%x is empty or outside the 64-bit space' % base)

    def locate(self, address):
        i = bisect_right(self.bases, address) - 1
        if i < 0:
            return None
        base = self.bases[i]
        return (self.data[base], address - base) if address + 4 <= base + len(self.data[base]) else None

    def contains(self, address):
        return self.locate(address) is not None

    def read(self, address):
        buf, off = self.locate(address)
        return int.from_bytes(buf[off:off + 4], 'little')

    def write(self, address, value):
        buf, off = self.locate(address)
        buf[off:off + 4] = (value & MASK32).to_bytes(4, 'little')


class SharedLocalMemory:
    fault = 'slm_bounds'

    def __init__(self, size):
        self.data = bytearray(size)

    def contains(self, address):
        return address + 4 <= len(self.data)

    def read(self, address):
        return int.from_bytes(self.data[address:address + 4], 'little')

    def write(self, address, value):
        self.data[address:address + 4] = (value & MASK32).to_bytes(4, 'little')


# ---------------------------------------------------------------------------
# Threads
# ---------------------------------------------------------------------------


class Thread:
    """One hardware thread: GRF, ARF, masks, stacks; step() executes one instruction."""

    def __init__(self, program, group, index, slm):
        self.program = program  # _Program: kernel, decode cache, global memory
        self.group = group
        self.index = index
        self.slm = slm
        self.grf = [0] * (zeisa.GRF_COUNT * zeisa.GRF_DWORDS)
        self.arf = {a.code: [0] * a.dwords for a in ISA.arfs}
        self.ce = 0
        self.ip = 0
        self.next_ip = 0
        self.ib = program.kernel_va  # instruction base (docs/isa.md §1)
        self.cf_stack = []   # [kind, saved mask, continue mask]
        self.ret_stack = []  # (ib, return ip)
        self.status = RUNNING
        self.exception = None
        self.executed = 0

    # -- registers -------------------------------------------------------------

    def read_arf(self, code, sub):
        if code == ARF_IP:
            return self.ip
        if code == ARF_CE:
            return self.ce
        if code == ARF_TM0:
            return (self.executed >> (32 * sub)) & MASK32
        return self.arf[code][sub]

    def flag(self, n):
        return self.arf[FLAG_ARF[n]][0]

    def lane_bits(self, ins, o, lane):
        if o.kind == KIND_VEC:
            return self.grf[(o.reg + (lane >> 3)) * 8 + (lane & 7)]
        if o.kind == KIND_SCALAR:
            return self.grf[o.reg * 8 + o.sub]
        if o.kind == KIND_ARF:
            return self.read_arf(o.reg, o.sub)
        return ins.dword3

    def source(self, ins, slot, lane, type_name):
        o = ins.operands[slot]
        return to_value(apply_modifiers(self.lane_bits(ins, o, lane), o, type_name), type_name)

    def write_dst(self, o, lane, bits):
        if o.kind == KIND_VEC:
            self.grf[(o.reg + (lane >> 3)) * 8 + (lane & 7)] = bits
        elif o.kind == KIND_SCALAR:
            self.grf[o.reg * 8 + o.sub] = bits
        elif o.kind == KIND_ARF:
            self.arf[o.reg][o.sub] = bits

    def vector_reg(self, ins, base, element, lane):
        """GRF dword index of element `element` of `lane` in a send vector at r`base` (§4)."""
        return (base + element * vector_span(ins.exec_size) + (lane >> 3)) * 8 + (lane & 7)

    # -- channel masks (§3.1, §3.3) ----------------------------------------------

    def predicate_mask(self, ins):
        full = (1 << ins.exec_size) - 1
        if not ins.pred:
            return full
        bits = self.flag(ins.flag)
        return (~bits if ins.pred_inv else bits) & full

    def enabled_mask(self, ins):
        p = self.predicate_mask(ins)
        return p & 1 if ins.exec_size == 1 else p & self.ce

    @staticmethod
    def lanes(mask):
        return [i for i in range(mask.bit_length()) if mask >> i & 1]

    # -- execution ---------------------------------------------------------------

    def step(self):
        ins = None
        ledger = self.program.ledger
        try:
            ins = self.fetch()
            mask = self.enabled_mask(ins)  # lane_ops: the mask before the instruction runs
            self.next_ip = self.ip + INSTRUCTION_BYTES
            self.execute(ins)
            ledger.instruction(ins, mask, completed=True)
            self.executed += 1
            if self.status in (RUNNING, BARRIER):  # an ended thread reports the ip it ended at
                self.ip = self.next_ip & MASK32
        except ThreadFault as fault:
            if ins is not None and ins.op.name == 'send' and fault.name in MEMORY_FAULTS:
                ledger.instruction(ins, mask, completed=False)
            self.raise_exception(fault)
        if self.status in (EOT, HALT, EXCEPTION):
            ledger.threads_retired += 1

    def fetch(self):
        program = self.program
        if self.ib == program.kernel_va:
            text, offset = program.kernel.text, self.ip
            if not 0 <= offset <= len(text) - INSTRUCTION_BYTES:
                raise ThreadFault('illegal', 'ip 0x%x is outside the %d-byte text section'
                                  % (self.ip, len(text)))
        else:
            address = (self.ib + self.ip) & MASK64
            text, offset = program.code_at(address)
            if text is None:
                raise ThreadFault('page_fault', 'instruction fetch at 0x%x (ib 0x%x + ip 0x%x) is outside '
                                  'every text section' % (address, self.ib, self.ip), address)
        if text[offset + 1] & 1:  # BP bit, honoured even on an illegal encoding
            dbg = self.arf[ARF_DBG0]
            if not dbg[0] & 1:
                raise ThreadFault('breakpoint', 'breakpoint bit set')
            dbg[0] &= ~1  # suppression lasts for one instruction
        ins = program.decoded(text, offset)
        if isinstance(ins, zeisa.IllegalInstruction):
            raise ThreadFault('illegal', str(ins))
        return ins

    def raise_exception(self, fault):
        bit = EXCEPTION_NAMES.index(fault.name)
        cr0 = self.arf[ARF_CR0]
        cr0[1] |= 1 << bit
        cr0[2] = self.ip
        if fault.address is not None:
            cr0[3] = fault.address & MASK32
        self.exception = ExceptionReport(fault.name, bit, self.ip, fault.address, fault.detail, self.ib)
        self.status = EXCEPTION

    def execute(self, ins):
        name = ins.op.name
        if name in ALU:
            self.alu(ins, ALU[name])
        else:
            getattr(self, 'op_' + name)(ins)

    def types(self, ins):
        return ISA.types.by_code[ins.src_type].name, ISA.types.by_code[ins.dst_type].name

    def alu(self, ins, fn):
        src, dst = self.types(ins)
        nsrc = ins.op.operands.count('s')
        results = [(lane, convert(fn(src, *[self.source(ins, s, lane, src) for s in range(1, nsrc + 1)]),
                                  src, dst))
                   for lane in self.lanes(self.enabled_mask(ins))]
        for lane, bits in results:  # all lanes read before any writes
            self.write_dst(ins.dst, lane, bits)

    def op_sel(self, ins):
        src, dst = self.types(ins)
        enabled = 1 if ins.exec_size == 1 else self.ce & ((1 << ins.exec_size) - 1)
        chosen = self.predicate_mask(ins)
        results = [(lane, convert(self.source(ins, 1 if chosen >> lane & 1 else 2, lane, src), src, dst))
                   for lane in self.lanes(enabled)]
        for lane, bits in results:
            self.write_dst(ins.dst, lane, bits)

    def op_cmp(self, ins):
        src, _ = self.types(ins)
        test = COMPARE[ISA.cmods.by_code[ins.cmod].name]
        enabled = self.enabled_mask(ins)
        result = 0
        for lane in self.lanes(enabled):
            if test(self.source(ins, 1, lane, src), self.source(ins, 2, lane, src)):
                result |= 1 << lane
        for lane in self.lanes(enabled):  # the mask is written without conversion
            self.write_dst(ins.dst, lane, MASK32 if result >> lane & 1 else 0)
        flag = self.arf[FLAG_ARF[ins.flag]]
        flag[0] = (flag[0] & ~enabled | result) & MASK32

    # -- control flow ------------------------------------------------------------

    def jump(self, ins):
        self.next_ip = self.ip + ins.jip

    def push_cf(self, kind):
        if len(self.cf_stack) >= CF_STACK_DEPTH:
            raise ThreadFault('stack', 'control-flow stack overflow (%d entries)' % CF_STACK_DEPTH)
        self.cf_stack.append([kind, self.ce, 0])

    def top_cf(self, kind, name):
        if not self.cf_stack or self.cf_stack[-1][0] != kind:
            raise ThreadFault('illegal', '%s without a matching %s' % (name, 'if' if kind == 'IF' else 'do'))
        return self.cf_stack[-1]

    def innermost_loop(self, name):
        for depth in range(len(self.cf_stack) - 1, -1, -1):
            if self.cf_stack[depth][0] == 'LOOP':
                return depth
        raise ThreadFault('illegal', '%s outside a loop' % name)

    def op_if(self, ins):
        self.push_cf('IF')
        self.ce &= self.predicate_mask(ins)
        if not self.ce:
            self.jump(ins)

    def op_else(self, ins):
        top = self.top_cf('IF', 'else')
        self.ce = top[1] & ~self.ce & MASK32
        if not self.ce:
            self.jump(ins)

    def op_endif(self, ins):
        self.ce = self.top_cf('IF', 'endif')[1]
        self.cf_stack.pop()

    def op_do(self, ins):
        self.push_cf('LOOP')

    def leave_lanes(self, ins, name):
        """Shared part of break and cont; returns (loop entry, lanes leaving)."""
        depth = self.innermost_loop(name)
        leaving = self.ce & self.predicate_mask(ins)
        for entry in self.cf_stack[depth + 1:]:
            entry[1] &= ~leaving
        self.ce &= ~leaving
        return self.cf_stack[depth], leaving

    def op_break(self, ins):
        self.leave_lanes(ins, 'break')
        if not self.ce:
            self.jump(ins)

    def op_cont(self, ins):
        loop, leaving = self.leave_lanes(ins, 'cont')
        loop[2] |= leaving
        if not self.ce:
            self.jump(ins)

    def op_while(self, ins):
        top = self.top_cf('LOOP', 'while')
        self.ce |= top[2]
        top[2] = 0
        again = self.ce & self.predicate_mask(ins)
        if again:
            self.ce = again
            self.jump(ins)
        else:
            self.ce = top[1]
            self.cf_stack.pop()

    def op_jmpi(self, ins):
        if self.predicate_mask(ins) & 1:
            self.jump(ins)

    def op_call(self, ins):
        if len(self.ret_stack) >= RETURN_STACK_DEPTH:
            raise ThreadFault('stack', 'return stack overflow (%d entries)' % RETURN_STACK_DEPTH)
        self.ret_stack.append((self.ib, self.ip + INSTRUCTION_BYTES))
        self.jump(ins)

    def op_calla(self, ins):
        # §3.5: SIMD1, predicated like jmpi; target = src1 << 32 | src0, read as mov reads them
        if not self.predicate_mask(ins) & 1:
            return
        src = ISA.types.by_code[ins.src_type].name
        lo, hi = (apply_modifiers(self.lane_bits(ins, ins.operands[slot], 0), ins.operands[slot], src) & MASK32
                  for slot in (1, 2))
        target = hi << 32 | lo
        if target % INSTRUCTION_BYTES:
            raise ThreadFault('misaligned', 'calla target 0x%x is not %d-byte aligned'
                              % (target, INSTRUCTION_BYTES), target)
        if len(self.ret_stack) >= RETURN_STACK_DEPTH:
            raise ThreadFault('stack', 'return stack overflow (%d entries)' % RETURN_STACK_DEPTH)
        self.ret_stack.append((self.ib, self.ip + INSTRUCTION_BYTES))
        self.ib = target
        self.next_ip = 0

    def op_ret(self, ins):
        if not self.ret_stack:
            raise ThreadFault('stack', 'ret with an empty return stack')
        self.ib, self.next_ip = self.ret_stack.pop()

    def op_nop(self, ins):
        pass

    def op_wait(self, ins):
        pass  # a timing hint only

    def op_halt(self, ins):
        self.status = HALT

    def op_sipret(self, ins):
        # Legal only in the system routine (docs/debug.md §2.3); kernels never run there.
        raise ThreadFault('illegal', 'sipret outside the system routine')

    # -- send (§4) -----------------------------------------------------------------

    def op_send(self, ins):
        getattr(self, 'msg_' + ins.msg.name.replace('.', '_'))(ins)

    def global_accesses(self, ins, lanes):
        o = ins.operands[3]
        base = self.grf[o.reg * 8 + o.sub] | self.grf[o.reg * 8 + o.sub + 1] << 32
        return [(lane, (base + self.lane_bits(ins, ins.operands[1], lane)) & MASK64) for lane in lanes]

    def slm_accesses(self, ins, lanes):
        return [(lane, self.lane_bits(ins, ins.operands[1], lane)) for lane in lanes]

    @staticmethod
    def check_accesses(space, accesses, elements):
        """All channels are checked before any is performed; the lowest faulting one reports."""
        for _, address in accesses:
            if address % 4:
                raise ThreadFault('misaligned', 'address 0x%x is not 4-byte aligned' % address, address)
            for element in range(elements):
                at = (address + 4 * element) & MASK64
                if not space.contains(at):
                    raise ThreadFault(space.fault, 'dword at 0x%x is outside %s'
                                      % (at, 'mapped memory' if space.fault == 'page_fault' else
                                         'the group\'s SLM'), at)

    def load(self, ins, space, accesses):
        self.check_accesses(space, accesses, ins.vsize)
        values = [[space.read((address + 4 * e) & MASK64) for e in range(ins.vsize)]
                  for _, address in accesses]
        if ins.dst.kind == KIND_NULL:
            return
        for (lane, _), lane_values in zip(accesses, values):
            for element, value in enumerate(lane_values):
                self.grf[self.vector_reg(ins, ins.dst.reg, element, lane)] = value

    def store(self, ins, space, accesses):
        self.check_accesses(space, accesses, ins.vsize)
        payload = ins.operands[2].reg
        for lane, address in accesses:  # increasing lanes: the highest writer wins
            for element in range(ins.vsize):
                space.write((address + 4 * element) & MASK64,
                            self.grf[self.vector_reg(ins, payload, element, lane)])

    def atomic(self, ins, space, accesses):
        self.check_accesses(space, accesses, 1)
        fn = ATOMIC[ins.atomic.name]
        olds = []
        for lane, address in accesses:
            args = [self.grf[self.vector_reg(ins, ins.operands[2].reg, e, lane)]
                    for e in range(ins.atomic.payload)]
            old = space.read(address)
            space.write(address, fn(old, *args))
            olds.append((lane, old))
        if ins.dst.kind != KIND_NULL:
            for lane, old in olds:
                self.grf[self.vector_reg(ins, ins.dst.reg, 0, lane)] = old

    def msg_load(self, ins):
        self.load(ins, self.program.memory, self.global_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_store(self, ins):
        self.store(ins, self.program.memory, self.global_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_atomic(self, ins):
        self.atomic(ins, self.program.memory, self.global_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_slm_load(self, ins):
        self.load(ins, self.slm, self.slm_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_slm_store(self, ins):
        self.store(ins, self.slm, self.slm_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_slm_atomic(self, ins):
        self.atomic(ins, self.slm, self.slm_accesses(ins, self.lanes(self.enabled_mask(ins))))

    def msg_barrier(self, ins):
        self.status = BARRIER

    def msg_fence(self, ins):
        pass  # every access has completed when its send returns

    def msg_timestamp(self, ins):
        if self.enabled_mask(ins):
            t = ins.dst
            self.grf[t.reg * 8 + t.sub] = self.executed & MASK32
            self.grf[t.reg * 8 + t.sub + 1] = (self.executed >> 32) & MASK32

    def msg_eot(self, ins):
        self.status = EOT

    def result(self):
        arf = {a.name: [self.read_arf(a.code, k) for k in range(a.dwords)] for a in ISA.arfs}
        return ThreadResult(self.group, self.index, self.status, self.exception, list(self.grf),
                            arf, self.executed, self.ib)


def _check_semantics_cover_table():
    """Fail at import when ze_isa.def gains something this ISS does not implement."""
    missing = [op.name for op in ISA.ops if op.name not in ALU and not hasattr(Thread, 'op_' + op.name)]
    missing += ['send.' + m.name for m in ISA.msgs if not hasattr(Thread, 'msg_' + m.name.replace('.', '_'))]
    missing += ['atomic ' + a.name for a in ISA.atomics if a.name not in ATOMIC]
    missing += ['cmod ' + c.name for c in ISA.cmods if c.name and c.name not in COMPARE]
    missing += ['type ' + t.name for t in ISA.types if t.name not in ('ud', 'd', 'f')]
    if missing:
        raise ImportError('zeiss has no semantics for: ' + ', '.join(missing))


_check_semantics_cover_table()

# ---------------------------------------------------------------------------
# Dispatch
# ---------------------------------------------------------------------------


class _Program:
    """What every thread of a dispatch shares: the kernel, decoded text, global memory,
    and every text section a `calla` can reach (sorted (start VA, text) pairs)."""

    def __init__(self, kernel, memory, kernel_va=0, sections=()):
        self.kernel = kernel
        self.kernel_va = kernel_va
        self.memory = memory
        self.sections = sorted(sections)
        self.starts = [start for start, _ in self.sections]
        self.cache = {}
        self.ledger = Ledger()

    def code_at(self, address):
        """(text, offset) of the 16 bytes at `address` in a text section, or (None, None)."""
        i = bisect_right(self.starts, address) - 1
        if i >= 0:
            start, text = self.sections[i]
            if address + INSTRUCTION_BYTES <= start + len(text):
                return text, address - start
        return None, None

    def decoded(self, text, offset):
        key = (id(text), offset)
        if key not in self.cache:
            try:
                self.cache[key] = zeisa.decode(text[offset:offset + INSTRUCTION_BYTES])
            except zeisa.IllegalInstruction as e:
                self.cache[key] = e
        return self.cache[key]


def _code_sections(module, module_va, code):
    """The (VA, text) of every kernel of `module` at module_va and of each `code` module."""
    placed = {module_va: module}
    for va, other in dict(code or {}).items():
        if va != module_va:
            placed[va] = _load_module(other)
    sections = []
    for va, mod in placed.items():
        if not isinstance(va, int) or not 0 <= va <= MASK64 or va % INSTRUCTION_BYTES:
            raise DispatchError('code address %s is not a %d-byte aligned 64-bit address'
                                % (hex(va) if isinstance(va, int) else repr(va), INSTRUCTION_BYTES))
        for k in mod.kernels.values():
            if k.text:
                sections.append((va + k.address, k.text))
    sections.sort(key=lambda s: s[0])
    for (a, ta), (b, _) in zip(sections, sections[1:]):
        if a + len(ta) > b:
            raise DispatchError('text sections at 0x%x and 0x%x overlap' % (a, b))
    if sections and sections[-1][0] + len(sections[-1][1]) > MASK64 + 1:
        raise DispatchError('text section at 0x%x runs past the 64-bit address space' % sections[-1][0])
    return sections


def _load_module(module):
    if isinstance(module, zeisa.Module):
        return module
    return zeisa.read_module(module)


def _triple(value, what):
    value = tuple(value)
    if len(value) != 3 or not all(isinstance(v, int) and v >= 1 for v in value):
        raise DispatchError('%s must be three positive integers, got %r' % (what, value))
    return value


def _argument_area(kernel, args, local_sizes):
    """The argument bytes with local offsets filled in, and the group's SLM size."""
    if len(args) != kernel.arg_bytes:
        raise DispatchError('kernel %s takes %d argument bytes, got %d'
                            % (kernel.name, kernel.arg_bytes, len(args)))
    area = bytearray(args)
    local_sizes = dict(local_sizes or {})
    slm_end = kernel.slm_bytes
    for arg in kernel.args:
        if arg.kind != 'local':
            continue
        if arg.name not in local_sizes:
            raise DispatchError('no size given for local argument "%s"' % arg.name)
        offset = -(-slm_end // LOCAL_ARG_ALIGN) * LOCAL_ARG_ALIGN
        area[arg.offset:arg.offset + 4] = offset.to_bytes(4, 'little')
        slm_end = offset + local_sizes.pop(arg.name)
    if local_sizes:
        raise DispatchError('not local arguments of %s: %s' % (kernel.name, ', '.join(sorted(local_sizes))))
    return bytes(area), slm_end


def _payload(thread, kernel, group_id, group_size, linear_group, nthreads, area):
    """GRF and ARF contents at thread start (§6)."""
    gx, gy, gz = group_size
    total = gx * gy * gz
    t = thread.index
    thread.grf[0:8] = [*group_id, t, gx, gy, gz, nthreads]
    for lane in range(kernel.simd):
        linear = t * kernel.simd + lane
        if linear >= total:
            continue
        thread.ce |= 1 << lane
        ids = (linear % gx, (linear // gx) % gy, linear // (gx * gy))
        for k, value in enumerate(ids):
            thread.grf[(1 + 2 * k + (lane >> 3)) * 8 + (lane & 7)] = value
    padded = area + bytes(-len(area) % 4)
    for i in range(0, len(padded), 4):
        thread.grf[ARG_FIRST_REG * 8 + i // 4] = int.from_bytes(padded[i:i + 4], 'little')
    thread.arf[ARF_SR0][:3] = [t, linear_group, kernel.simd]


def run_dispatch(module, kernel, groups=(1, 1, 1), group_size=None, args=b'', buffers=None,
                 local_sizes=None, step_limit=DEFAULT_STEP_LIMIT, schedule='round-robin',
                 module_va=0, code=None):
    """Run one dispatch; see the module docstring for the parameters."""
    if schedule not in SCHEDULES:
        raise DispatchError('schedule must be one of %s' % ', '.join(SCHEDULES))
    module = _load_module(module)
    if kernel not in module.kernels:
        raise DispatchError('no kernel "%s" in the module (has: %s)'
                            % (kernel, ', '.join(module.kernels) or 'none'))
    k = module.kernels[kernel]
    groups = _triple(groups, 'groups')
    group_size = _triple(group_size or (k.simd, 1, 1), 'group_size')
    area, slm_size = _argument_area(k, bytes(args), local_sizes)
    sections = _code_sections(module, module_va, code)
    program = _Program(k, GlobalMemory(dict(buffers or {})), module_va + k.address, sections)
    total = group_size[0] * group_size[1] * group_size[2]
    nthreads = -(-total // k.simd)
    ids = [(gx, gy, gz) for gz in range(groups[2]) for gy in range(groups[1]) for gx in range(groups[0])]
    members = []
    slms = []
    for linear, gid in enumerate(ids):
        slm = SharedLocalMemory(slm_size)
        slms.append(slm)
        members.append([Thread(program, gid, t, slm) for t in range(nthreads)])
        program.ledger.threads_dispatched += nthreads
        for th in members[-1]:
            _payload(th, k, gid, group_size, linear, nthreads, area)
    steps, hang = 0, None
    order = range(len(ids)) if schedule == 'round-robin' else reversed(range(len(ids)))
    for linear in order:
        if hang is None:
            steps, hang = _run_group(members[linear], steps, step_limit, schedule)
        else:
            for th in members[linear]:
                th.status = HANG
    return DispatchResult(kernel, {b: bytes(d) for b, d in program.memory.data.items()},
                          [bytes(s.data) for s in slms],
                          [th.result() for group in members for th in group], steps, hang,
                          program.ledger)


def _run_group(threads, steps, step_limit, schedule):
    """Run a group until every thread ends; returns (steps, hang message or None).

    round-robin: one instruction per thread per round, in thread order.
    serial: in reverse thread order, each thread runs until it waits or ends.
    """
    serial = schedule == 'serial'
    while True:
        running = [th for th in threads if th.status == RUNNING]
        if not running:
            waiting = [th for th in threads if th.status == BARRIER]
            if not waiting:
                return steps, None
            for th in waiting:  # every thread that has not ended reached the barrier
                th.status = RUNNING
            threads[0].program.ledger.barriers += 1
            continue
        for th in reversed(running) if serial else running:
            while th.status == RUNNING:
                if steps >= step_limit:
                    return steps, _hang(threads, step_limit)
                th.step()
                steps += 1
                if not serial:
                    break


def _hang(threads, step_limit):
    stuck = [th for th in threads if th.status in (RUNNING, BARRIER)]
    for th in stuck:
        th.status = HANG
    return 'step limit %d reached in group %s; still running: %s' % (
        step_limit, threads[0].group, ', '.join('thread %d at ip 0x%x' % (th.index, th.ip) for th in stuck))


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------


def load_setup(path):
    """A zegen setup file: kernel, groups, group_size, args, buffers, local_sizes, module_va."""
    setup = json.loads(Path(path).read_text())
    return {'kernel': setup['kernel'], 'groups': setup['groups'], 'group_size': setup['group_size'],
            'args': bytes.fromhex(setup.get('args', '')),
            'buffers': {int(b['address'], 0): bytes.fromhex(b['data']) for b in setup.get('buffers', [])},
            'local_sizes': setup.get('local_sizes', {}), 'module_va': int(setup.get('module_va', '0'), 0)}


def _parse_triple(text):
    try:
        return tuple(int(v, 0) for v in text.split(','))
    except ValueError:
        raise argparse.ArgumentTypeError('expected X,Y,Z, got %r' % text) from None


def _parse_buffer(text):
    parts = text.split(':', 2)
    try:
        address, size = int(parts[0], 0), int(parts[1], 0)
    except (ValueError, IndexError):
        raise argparse.ArgumentTypeError('expected ADDR:SIZE[:HEXFILE], got %r' % text) from None
    data = bytearray(size)
    if len(parts) == 3:
        init = bytes.fromhex(''.join(Path(parts[2]).read_text().split()))
        if len(init) > size:
            raise argparse.ArgumentTypeError('%s holds %d bytes, more than SIZE %d' % (parts[2], len(init), size))
        data[:len(init)] = init
    return address, bytes(data)


def _parse_code(text):
    address, _, path = text.partition(':')
    try:
        return int(address, 0), path
    except ValueError:
        raise argparse.ArgumentTypeError('expected ADDR:ELF, got %r' % text) from None


def _parse_local(text):
    name, _, size = text.partition('=')
    if not size.isdigit():
        raise argparse.ArgumentTypeError('expected NAME=SIZE, got %r' % text)
    return name, int(size)


def _arg_parser():
    p = argparse.ArgumentParser(prog='zeiss.py', description='ZE-ISA reference ISS')
    sub = p.add_subparsers(dest='command', required=True)
    run = sub.add_parser('run', help='run one dispatch')
    src = run.add_mutually_exclusive_group(required=True)
    src.add_argument('--module', help='ELF module (zesim-as output)')
    src.add_argument('--asm', help='assembly source, assembled with zeisa.py')
    run.add_argument('--setup', help='zegen setup JSON; the options below override it')
    run.add_argument('--kernel', help='kernel name (default: the setup\'s, or the only one)')
    run.add_argument('--groups', type=_parse_triple, help='thread groups X,Y,Z (default 1,1,1)')
    run.add_argument('--group-size', type=_parse_triple, help='work items per group X,Y,Z (default SIMD,1,1)')
    run.add_argument('--args', help='argument area as hex bytes')
    run.add_argument('--buffer', type=_parse_buffer, action='append', default=[],
                     help='global buffer ADDR:SIZE[:HEXFILE] (hex text, rest zero); repeatable')
    run.add_argument('--local', type=_parse_local, action='append', default=[],
                     help='dynamic SLM size of a local argument NAME=SIZE; repeatable')
    run.add_argument('--module-va', type=lambda t: int(t, 0),
                     help='GPU VA of the module (the kernel is at VA + sh_addr; default: the setup\'s, or 0)')
    run.add_argument('--code', type=_parse_code, action='append', default=[],
                     help='another ELF module ADDR:PATH that calla can reach; repeatable')
    run.add_argument('--step-limit', type=int, default=DEFAULT_STEP_LIMIT)
    run.add_argument('--schedule', choices=SCHEDULES, default='round-robin',
                     help='thread interleaving (race-free programs give the same result)')
    run.add_argument('--dump-json', help='write memory, SLM and per-thread state here')
    return p


def _request(opts):
    request = load_setup(opts.setup) if opts.setup else {}
    module = zeisa.assemble_file(opts.asm) if opts.asm else zeisa.read_module(opts.module)
    overrides = {'kernel': opts.kernel, 'groups': opts.groups, 'group_size': opts.group_size,
                 'args': bytes.fromhex(opts.args) if opts.args is not None else None,
                 'buffers': dict(opts.buffer) or None, 'local_sizes': dict(opts.local) or None,
                 'module_va': opts.module_va}
    request.update({k: v for k, v in overrides.items() if v is not None})
    if 'kernel' not in request:
        if len(module.kernels) != 1:
            raise DispatchError('--kernel is required: the module has %s' % ', '.join(module.kernels))
        request['kernel'] = next(iter(module.kernels))
    return module, request


def main(argv):
    opts = _arg_parser().parse_args(argv)
    try:
        module, request = _request(opts)
        result = run_dispatch(module, step_limit=opts.step_limit, schedule=opts.schedule,
                              code=dict(opts.code), **request)
    except (DispatchError, zeisa.ModuleError, zeisa.AsmError, OSError, ValueError) as e:
        print('zeiss: error: %s' % e, file=sys.stderr)
        return 3
    if opts.dump_json:
        Path(opts.dump_json).write_text(json.dumps(result.to_json(), indent=1) + '\n')
    for th in result.threads:
        if th.exception:
            e = th.exception
            print('group %s thread %d: %s exception at ip 0x%x%s%s: %s' % (
                th.group, th.index, e.name, e.ip, '' if e.ib == request.get('module_va', 0) + module.kernels[
                    request['kernel']].address else ' (ib 0x%x)' % e.ib,
                '' if e.address is None else ' address 0x%x' % e.address, e.detail))
        elif th.status == HALT:
            print('group %s thread %d: halted at ip 0x%x' % (th.group, th.index, th.arf['ip'][0]))
    if result.hang:
        print('zeiss: hang: %s' % result.hang, file=sys.stderr)
        return 2
    print('%d threads, %d instructions' % (len(result.threads), result.steps))
    return 0 if all(th.status == EOT for th in result.threads) else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
