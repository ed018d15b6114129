#!/usr/bin/python3
"""ZE-ISA reference library: ISA tables, encoder/decoder, formatter, assembler, ELF modules.

This is an independent implementation of docs/isa.md and docs/module-format.md, used as
the oracle the C assembler/disassembler and the SystemC model are checked against, so it
never calls C code.  The tables come from include/zs/ze_isa.def at import time; only
the semantic rules written as prose in docs/isa.md live here.

Public API
  ISA                                  parsed ze_isa.def (IsaTables)
  load_isa(path) -> IsaTables
  Operand, Instruction, NULL           decoded instruction model
  send_descriptor(msg, atomic=None, vsize=1) -> int
  decode(data16) -> Instruction        raises IllegalInstruction
  encode(ins) -> bytes                 raises IllegalInstruction (never emits illegal code)
  format_instruction(ins, target=None) -> str
  format_raw(data16) -> str            canonical text or `.inst ...`
  disassemble_module(module) -> str    re-assemblable listing of every kernel
  f32_bits(x) / f32_value(bits) / round_fraction_to_f32(q)
  assemble(source, filename='<input>') -> Module      raises AsmError
  assemble_file(path) -> Module
  Module, Kernel, KernelArg, Function
  read_module(path_or_bytes) -> Module raises ModuleError
  write_module(module) -> bytes

CLI: zeisa.py dis MODULE.elf | zeisa.py as IN.zeasm OUT.elf
"""

import math
import re
import struct
import sys
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple, Optional

DEF_PATH = Path(__file__).resolve().parents[2] / 'include' / 'zs' / 'ze_isa.def'

MASK32 = 0xFFFFFFFF
INSTRUCTION_BYTES = 16
GRF_COUNT = 128
GRF_DWORDS = 8

# ---------------------------------------------------------------------------
# ISA tables (ze_isa.def)
# ---------------------------------------------------------------------------


class LatInfo(NamedTuple):
    enum: str
    cycles: int
    name: str


class TypeInfo(NamedTuple):
    enum: str
    code: int
    name: str
    nbytes: int


class CmodInfo(NamedTuple):
    enum: str
    code: int
    name: str


class ArfInfo(NamedTuple):
    enum: str
    code: int
    name: str
    dwords: int
    writable: bool


class AtomicInfo(NamedTuple):
    enum: str
    code: int
    name: str
    payload: int


class OpInfo(NamedTuple):
    enum: str
    code: int
    name: str
    operands: str
    latency: LatInfo
    flags: frozenset


class MsgInfo(NamedTuple):
    enum: str
    code: int
    name: str
    operands: str
    latency: LatInfo
    flags: frozenset


class IsaDefError(Exception):
    """ze_isa.def cannot be parsed."""


KNOWN_FLAGS = frozenset({'Z_JIP', 'Z_CMOD', 'Z_S1', 'Z_NOTYPE'})
OP_LETTERS = frozenset('dsj')
MSG_LETTERS = frozenset('dapbt')

# Field kinds: e enum identifier, i integer, s quoted string, b 0/1, l latency enum, f flags.
_SCHEMA = {
    'ZE_LAT': (LatInfo, 'eis'),
    'ZE_TYPE': (TypeInfo, 'eisi'),
    'ZE_CMOD': (CmodInfo, 'eis'),
    'ZE_ARF': (ArfInfo, 'eisib'),
    'ZE_ATOMIC': (AtomicInfo, 'eisi'),
    'ZE_OP': (OpInfo, 'eisslf'),
    'ZE_MSG': (MsgInfo, 'eisslf'),
}
_ENTRY_RE = re.compile(r'^\s*(ZE_[A-Z]+)\((.*)\)\s*(?:/\*.*\*/\s*)?$')


class Table:
    """Records of one kind, looked up by numeric code or by name."""

    def __init__(self, kind, records):
        self.by_code = {}
        self.by_name = {}
        for rec in records:
            if rec.code in self.by_code:
                raise IsaDefError('%s: duplicate code %d' % (kind, rec.code))
            if rec.name in self.by_name:
                raise IsaDefError('%s: duplicate name "%s"' % (kind, rec.name))
            self.by_code[rec.code] = rec
            self.by_name[rec.name] = rec

    def __iter__(self):
        return iter(self.by_code.values())

    def __len__(self):
        return len(self.by_code)


@dataclass
class IsaTables:
    latencies: dict
    types: Table
    cmods: Table
    arfs: Table
    atomics: Table
    ops: Table
    msgs: Table


def _parse_field(kind, text, latencies, where):
    if kind == 'e':
        if not re.fullmatch(r'[A-Z_][A-Z0-9_]*', text):
            raise IsaDefError('%s: bad identifier %r' % (where, text))
        return text
    if kind in 'ib':
        try:
            value = int(text, 0)
        except ValueError:
            raise IsaDefError('%s: bad integer %r' % (where, text)) from None
        if kind == 'b' and value not in (0, 1):
            raise IsaDefError('%s: expected 0 or 1, got %r' % (where, text))
        return bool(value) if kind == 'b' else value
    if kind == 's':
        if len(text) < 2 or text[0] != '"' or text[-1] != '"':
            raise IsaDefError('%s: expected a quoted string, got %r' % (where, text))
        return text[1:-1]
    if kind == 'l':
        if text not in latencies:
            raise IsaDefError('%s: unknown latency class %r' % (where, text))
        return latencies[text]
    flags = frozenset() if text == '0' else frozenset(f.strip() for f in text.split('|'))
    unknown = flags - KNOWN_FLAGS
    if unknown:
        raise IsaDefError('%s: unknown flags %s' % (where, ', '.join(sorted(unknown))))
    return flags


def load_isa(path=DEF_PATH):
    """Parse ze_isa.def; entries may appear in any order except that latencies come first."""
    entries = {kind: [] for kind in _SCHEMA}
    latencies = {}
    for lineno, line in enumerate(Path(path).read_text().splitlines(), 1):
        m = _ENTRY_RE.match(line)
        if not m:
            continue
        kind, body = m.groups()
        where = '%s:%d' % (path, lineno)
        if kind not in _SCHEMA:
            raise IsaDefError('%s: unknown entry kind %s' % (where, kind))
        record_type, schema = _SCHEMA[kind]
        texts = [t.strip() for t in body.split(',')]
        if len(texts) != len(schema):
            raise IsaDefError('%s: %s takes %d fields, got %d' % (where, kind, len(schema), len(texts)))
        values = [_parse_field(k, t, latencies, where) for k, t in zip(schema, texts)]
        record = record_type(*values)
        entries[kind].append(record)
        if kind == 'ZE_LAT':
            latencies[record.enum] = record
    for kind, letters in (('ZE_OP', OP_LETTERS), ('ZE_MSG', MSG_LETTERS)):
        for rec in entries[kind]:
            if not set(rec.operands) <= letters:
                raise IsaDefError('%s %s: operand letters %r not in %r'
                                  % (kind, rec.name, rec.operands, ''.join(sorted(letters))))
    return IsaTables(latencies=latencies,
                     types=Table('ZE_TYPE', entries['ZE_TYPE']),
                     cmods=Table('ZE_CMOD', entries['ZE_CMOD']),
                     arfs=Table('ZE_ARF', entries['ZE_ARF']),
                     atomics=Table('ZE_ATOMIC', entries['ZE_ATOMIC']),
                     ops=Table('ZE_OP', entries['ZE_OP']),
                     msgs=Table('ZE_MSG', entries['ZE_MSG']))


ISA = load_isa()

# Semantic groups stated in docs/isa.md prose (§3.2, §4), not in the table.
LOGIC_OPS = frozenset({'not', 'and', 'or', 'xor', 'shl', 'shr', 'asr'})  # integer only, no modifiers
FLOAT_ONLY_OPS = frozenset({'math.inv', 'math.sqrt', 'math.exp', 'math.log'})
VECTOR_MSGS = frozenset({'load', 'store', 'slm.load', 'slm.store'})
ATOMIC_MSGS = frozenset({'atomic', 'slm.atomic'})
SEND_OP = 'send'
UD = ISA.types.by_name['ud'].code
FLOAT_TYPE = ISA.types.by_name['f'].code

# ---------------------------------------------------------------------------
# fp32 helpers
# ---------------------------------------------------------------------------

CANONICAL_NAN = 0x7FC00000
_F32_LIMIT = Fraction(2) ** 128  # the first magnitude that rounds to infinity once reached


def f32_value(bits):
    """The float (exactly representable) whose fp32 encoding is `bits`."""
    return struct.unpack('<f', struct.pack('<I', bits & MASK32))[0]


def f32_bits(x):
    """Round a Python float to fp32 (nearest even) and return its bits; NaN is canonical."""
    if math.isnan(x):
        return CANONICAL_NAN
    try:
        return struct.unpack('<I', struct.pack('<f', x))[0]
    except OverflowError:  # struct refuses finite doubles that round past FLT_MAX
        return 0xFF800000 if x < 0 else 0x7F800000


def round_fraction_to_f32(q, negative_zero=False):
    """Correctly round an exact rational to the nearest fp32 value (ties to even).

    Returns a float; a zero result takes the sign of `q`, or -0 when q == 0 and
    `negative_zero` is set (the caller knows the IEEE sign of an exact zero).
    """
    if q == 0:
        return -0.0 if negative_zero else 0.0
    sign = -1.0 if q < 0 else 1.0
    q = abs(q)
    exponent = q.numerator.bit_length() - q.denominator.bit_length()
    if q < Fraction(2) ** exponent:
        exponent -= 1
    quantum = Fraction(2) ** (max(exponent, -126) - 23)
    whole, rest = divmod(q / quantum, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    rounded = whole * quantum
    if rounded >= _F32_LIMIT:
        return sign * math.inf
    return sign * float(rounded)


# ---------------------------------------------------------------------------
# Instruction model
# ---------------------------------------------------------------------------

KIND_NULL, KIND_VEC, KIND_SCALAR, KIND_ARF, KIND_IMM = range(5)
KIND_NAMES = ('null', 'GRF vector', 'GRF scalar', 'ARF', 'immediate')
SLOT_NAMES = ('dst', 'src0', 'src1', 'src2')
EXEC_SIZE_CODES = {1: 0, 8: 1, 16: 2}
EXEC_SIZES = {code: size for size, code in EXEC_SIZE_CODES.items()}


class IllegalInstruction(ValueError):
    """An encoding the decoder rejects (docs/isa.md §2: illegal-instruction exception)."""


@dataclass(frozen=True)
class Operand:
    kind: int = KIND_NULL
    reg: int = 0
    sub: int = 0
    neg: bool = False
    abs: bool = False


NULL = Operand()


@dataclass(frozen=True)
class Instruction:
    """The fields of one encoding (§2); properties give the send and jump views of dword 3."""
    opcode: int
    exec_size: int = 1
    operands: tuple = (NULL, NULL, NULL, NULL)  # dst, src0, src1, src2
    dst_type: int = 0
    src_type: int = 0
    pred: bool = False
    pred_inv: bool = False
    flag: int = 0
    cmod: int = 0
    bp: bool = False
    dword3: int = 0  # immediate bits, jump offset (two's complement) or send descriptor

    @property
    def op(self):
        return ISA.ops.by_code[self.opcode]

    @property
    def is_send(self):
        return self.op.name == SEND_OP

    @property
    def msg(self):
        return ISA.msgs.by_code[self.dword3 & 0xFF] if self.is_send else None

    @property
    def atomic(self):
        if not self.is_send or self.msg.name not in ATOMIC_MSGS:
            return None
        return ISA.atomics.by_code[(self.dword3 >> 8) & 0xF]

    @property
    def vsize(self):
        return ((self.dword3 >> 12) & 3) + 1

    @property
    def jip(self):
        return self.dword3 - (1 << 32) if self.dword3 & 0x80000000 else self.dword3

    @property
    def dst(self):
        return self.operands[0]

    @property
    def srcs(self):
        return self.operands[1:]

    def flags(self):
        return self.op.flags | (self.msg.flags if self.is_send else frozenset())

    def letters(self):
        """(letter, slot) per operand in assembly order; slot 0 is dst, 1-3 are src0-2."""
        return operand_slots(self.msg.operands if self.is_send else self.op.operands)


def operand_slots(letters):
    """Where each operand letter of ze_isa.def is encoded: slot 0-3, or None for a jump target."""
    slots = []
    next_src = 1
    for letter in letters:
        if letter in 'dt':
            slots.append((letter, 0))
        elif letter == 's':
            slots.append((letter, next_src))
            next_src += 1
        elif letter == 'j':
            slots.append((letter, None))
        else:
            slots.append((letter, {'a': 1, 'p': 2, 'b': 3}[letter]))
    return slots


def send_descriptor(msg, atomic=None, vsize=1):
    """dword 3 of a send (docs/isa.md §4)."""
    desc = ISA.msgs.by_name[msg].code | (vsize - 1) << 12
    if atomic is not None:
        desc |= ISA.atomics.by_name[atomic].code << 8
    return desc


def vector_span(exec_size):
    """GRF registers one vector operand element occupies."""
    return max(1, exec_size // 8)


# ---------------------------------------------------------------------------
# Decoder
# ---------------------------------------------------------------------------


def _illegal(message, *args):
    raise IllegalInstruction(message % args if args else message)


def _unpack_operand(raw, slot):
    if raw >> 15:
        _illegal('%s: reserved bit 15 is set', SLOT_NAMES[slot])
    kind = raw & 7
    if kind > KIND_IMM:
        _illegal('%s: operand kind %d is reserved', SLOT_NAMES[slot], kind)
    return Operand(kind=kind, reg=(raw >> 3) & 0x7F, sub=(raw >> 10) & 7,
                   neg=bool(raw >> 13 & 1), abs=bool(raw >> 14 & 1))


def decode(data):
    """Decode 16 bytes into an Instruction, or raise IllegalInstruction with the reason."""
    if len(data) != INSTRUCTION_BYTES:
        raise ValueError('an instruction is 16 bytes, got %d' % len(data))
    d0, d1, d2, d3 = struct.unpack('<4I', data)
    op = ISA.ops.by_code.get(d0 & 0xFF)
    if op is None:
        _illegal('unknown opcode 0x%02x', d0 & 0xFF)
    if d0 >> 26:
        _illegal('reserved header bits [31:26] are set')
    size_code = (d0 >> 9) & 3
    if size_code not in EXEC_SIZES:
        _illegal('execution size code %d is reserved', size_code)
    raw_operands = (d1 & 0xFFFF, d1 >> 16, d2 & 0xFFFF, d2 >> 16)
    ins = Instruction(
        opcode=op.code, exec_size=EXEC_SIZES[size_code],
        operands=tuple(_unpack_operand(raw, slot) for slot, raw in enumerate(raw_operands)),
        dst_type=(d0 >> 18) & 0xF, src_type=(d0 >> 22) & 0xF,
        pred=bool(d0 >> 11 & 1), pred_inv=bool(d0 >> 12 & 1), flag=(d0 >> 13) & 1,
        cmod=(d0 >> 14) & 0xF, bp=bool(d0 >> 8 & 1), dword3=d3)
    _validate(ins)
    return ins


def _validate(ins):
    if ins.is_send:
        _check_descriptor(ins)
    if 'Z_S1' in ins.flags() and ins.exec_size != 1:
        _illegal('%s requires execution size 1', _display_name(ins))
    _check_predication(ins)
    _check_cmod(ins)
    _check_type_fields(ins)
    letters = {slot: letter for letter, slot in ins.letters() if slot is not None}
    for slot in range(4):
        _check_operand(ins, slot, letters.get(slot))
    _check_type_rules(ins)
    _check_dword3(ins)


def _display_name(ins):
    return 'send.' + ins.msg.name if ins.is_send else ins.op.name


def _check_descriptor(ins):
    desc = ins.dword3
    msg = ISA.msgs.by_code.get(desc & 0xFF)
    if msg is None:
        _illegal('unknown send message id %d', desc & 0xFF)
    if desc >> 14:
        _illegal('send descriptor reserved bits [31:14] are set')
    atomic_code = (desc >> 8) & 0xF
    if msg.name in ATOMIC_MSGS:
        if atomic_code not in ISA.atomics.by_code:
            _illegal('unknown atomic operation %d', atomic_code)
    elif atomic_code:
        _illegal('send.%s: atomic operation field must be 0', msg.name)
    if msg.name not in VECTOR_MSGS and (desc >> 12) & 3:
        _illegal('send.%s: vector size field must be 0', msg.name)


def _check_predication(ins):
    if not ins.pred:
        if ins.pred_inv:
            _illegal('predicate invert set without predicate enable')
        if ins.flag and 'Z_CMOD' not in ins.op.flags:
            _illegal('flag register field set on an unpredicated %s', _display_name(ins))
    if ins.op.name == 'sel' and not ins.pred:
        _illegal('sel must be predicated')


def _check_cmod(ins):
    if 'Z_CMOD' in ins.op.flags:
        cmod = ISA.cmods.by_code.get(ins.cmod)
        if cmod is None or not cmod.name:
            _illegal('%s needs a condition modifier, field is %d', ins.op.name, ins.cmod)
    elif ins.cmod:
        _illegal('condition modifier on %s', _display_name(ins))


def _check_type_fields(ins):
    for what, code in (('destination', ins.dst_type), ('source', ins.src_type)):
        if code not in ISA.types.by_code:
            _illegal('%s type code %d is reserved', what, code)
    letters = ins.msg.operands if ins.is_send else ins.op.operands
    dst_typed = 'd' in letters and not ins.is_send and ins.dst.kind != KIND_NULL
    if not dst_typed and ins.dst_type:
        _illegal('destination type must be 0 (no typed destination)')
    if ('s' not in letters or ins.is_send) and ins.src_type:
        _illegal('source type must be 0 (no typed source)')


def _check_type_rules(ins):
    name = ins.op.name
    if name in LOGIC_OPS and ins.src_type == FLOAT_TYPE:
        _illegal('%s takes integer types only', name)
    if name in FLOAT_ONLY_OPS and ins.src_type != FLOAT_TYPE:
        _illegal('%s takes type f only', name)
    if ins.dst.kind == KIND_ARF and ins.dst_type != UD:
        _illegal('ARF destination must have type ud')
    if any(s.kind == KIND_ARF for s in ins.srcs) and ins.src_type != UD:
        _illegal('ARF source must have type ud')


def _allowed_kinds(ins, letter):
    if letter == 'd':
        if ins.is_send:
            return {KIND_NULL, KIND_VEC}
        return {KIND_NULL, KIND_VEC, KIND_SCALAR} | ({KIND_ARF} if ins.op.name == 'mov' else set())
    if letter == 's':
        if ins.op.name == 'wait':
            return {KIND_SCALAR, KIND_IMM}
        return {KIND_VEC, KIND_SCALAR, KIND_IMM} | ({KIND_ARF} if ins.op.name == 'mov' else set())
    if letter == 'p' and ins.atomic is not None and ins.atomic.payload == 0:
        return {KIND_NULL}
    return {'a': {KIND_VEC}, 'p': {KIND_VEC}, 'b': {KIND_SCALAR}, 't': {KIND_SCALAR}}[letter]


def _span_elements(ins, letter):
    """How many vector elements an operand holds (1 for ALU operands)."""
    if not ins.is_send or letter == 'a':
        return 1
    if ins.msg.name in VECTOR_MSGS:
        return ins.vsize
    if letter == 'p':
        return ins.atomic.payload
    return 1


def _check_operand(ins, slot, letter):
    o = ins.operands[slot]
    where = SLOT_NAMES[slot]
    if letter is None:
        if o != NULL:
            _illegal('%s is unused by %s and must be zero', where, _display_name(ins))
        return
    if o.kind not in _allowed_kinds(ins, letter):
        _illegal('%s: %s operand not allowed here', where, KIND_NAMES[o.kind])
    if (o.neg or o.abs) and not _modifiers_allowed(ins, letter, o):
        _illegal('%s: source modifiers not allowed here', where)
    if o.kind in (KIND_NULL, KIND_IMM) and (o.reg or o.sub):
        _illegal('%s: register fields of a %s operand must be 0', where, KIND_NAMES[o.kind])
    if o.kind == KIND_VEC:
        if o.sub:
            _illegal('%s: sub-register of a GRF vector must be 0', where)
        last = o.reg + _span_elements(ins, letter) * vector_span(ins.exec_size) - 1
        if last >= GRF_COUNT:
            _illegal('%s: vector r%d runs past r127 (needs up to r%d)', where, o.reg, last)
    if o.kind == KIND_ARF:
        _check_arf(ins, o, slot)
    if o.kind in (KIND_SCALAR, KIND_ARF) and slot == 0 and ins.exec_size != 1:
        _illegal('dst: a %s destination needs execution size 1', KIND_NAMES[o.kind])
    if letter in 'bt' and o.sub % 2:
        _illegal('%s: qword operand needs an even sub-register, got r%d.%d', where, o.reg, o.sub)


def _modifiers_allowed(ins, letter, o):
    return letter == 's' and o.kind in (KIND_VEC, KIND_SCALAR) and ins.op.name not in LOGIC_OPS


def _check_arf(ins, o, slot):
    arf = ISA.arfs.by_code.get(o.reg)
    if arf is None:
        _illegal('%s: unknown ARF number %d', SLOT_NAMES[slot], o.reg)
    if o.sub >= arf.dwords:
        _illegal('%s: %s.%d is past its %d dwords', SLOT_NAMES[slot], arf.name, o.sub, arf.dwords)
    if slot == 0 and not arf.writable:
        _illegal('dst: %s is not writable', arf.name)


def _check_dword3(ins):
    immediates = sum(1 for s in ins.srcs if s.kind == KIND_IMM)
    if immediates > 1:
        _illegal('%d immediates; at most one is allowed', immediates)
    if ins.is_send or immediates:
        return
    if any(letter == 'j' for letter, _ in ins.letters()):
        if ins.jip % INSTRUCTION_BYTES:
            _illegal('jump offset %d is not a multiple of 16', ins.jip)
    elif ins.dword3:
        _illegal('dword 3 is unused by %s and must be 0', ins.op.name)


# ---------------------------------------------------------------------------
# Encoder
# ---------------------------------------------------------------------------


def _pack_operand(o, slot):
    for name, value, width in (('reg', o.reg, 7), ('sub', o.sub, 3), ('kind', o.kind, 3)):
        if not 0 <= value < (1 << width):
            raise IllegalInstruction('%s: %s %d does not fit %d bits' % (SLOT_NAMES[slot], name, value, width))
    return o.kind | o.reg << 3 | o.sub << 10 | int(o.neg) << 13 | int(o.abs) << 14


def pack(ins):
    """Bytes of an instruction without checking it is legal (tests build illegal code with it)."""
    if ins.exec_size not in EXEC_SIZE_CODES:
        raise IllegalInstruction('execution size %r is not 1, 8 or 16' % (ins.exec_size,))
    d0 = (ins.opcode | int(ins.bp) << 8 | EXEC_SIZE_CODES[ins.exec_size] << 9 | int(ins.pred) << 11
          | int(ins.pred_inv) << 12 | ins.flag << 13 | ins.cmod << 14 | ins.dst_type << 18
          | ins.src_type << 22)
    raw = [_pack_operand(o, slot) for slot, o in enumerate(ins.operands)]
    return struct.pack('<4I', d0, raw[0] | raw[1] << 16, raw[2] | raw[3] << 16, ins.dword3 & MASK32)


def encode(ins):
    """Bytes of a legal instruction; raises IllegalInstruction with the decoder's reason."""
    data = pack(ins)
    decode(data)
    return data


# ---------------------------------------------------------------------------
# Formatter (canonical syntax, docs/isa.md §8)
# ---------------------------------------------------------------------------


def format_immediate(bits, type_code):
    name = ISA.types.by_code[type_code].name
    if name == 'ud':
        return '%d' % bits
    if name == 'd':
        return '%d' % (bits - (1 << 32) if bits & 0x80000000 else bits)
    value = f32_value(bits)
    if math.isnan(value):
        # only the canonical NaN has a literal; other payloads keep their bits
        return 'nan' if bits == CANONICAL_NAN else '0x%08x' % bits
    if math.isinf(value):
        return '-inf' if value < 0 else 'inf'
    return '%.9g' % value  # 9 significant digits round-trip any fp32 value


def _format_register(o):
    if o.kind == KIND_VEC:
        return 'r%d' % o.reg
    if o.kind == KIND_SCALAR:
        return 'r%d.%d' % (o.reg, o.sub)
    if o.kind == KIND_ARF:
        return '%s.%d' % (ISA.arfs.by_code[o.reg].name, o.sub)
    return 'null'


def _format_typed(ins, o, type_code):
    if o.kind == KIND_NULL:
        return 'null'
    body = format_immediate(ins.dword3, type_code) if o.kind == KIND_IMM else _format_register(o)
    text = '%s:%s' % (body, ISA.types.by_code[type_code].name)
    if o.abs:
        text = '|%s|' % text
    return '-' + text if o.neg else text


def _mnemonic(ins):
    if ins.is_send:
        text = 'send.' + ins.msg.name
        if ins.atomic is not None:
            text += '.' + ins.atomic.name
        if ins.msg.name in VECTOR_MSGS and ins.vsize > 1:
            text += '.v%d' % ins.vsize
        return text
    if 'Z_CMOD' in ins.op.flags:
        return '%s.%s.f%d' % (ins.op.name, ISA.cmods.by_code[ins.cmod].name, ins.flag)
    return ins.op.name


def format_instruction(ins, target=None):
    """Canonical text of a legal instruction.

    A jump operand is printed as the signed byte offset from the instruction, unless
    `target` gives its text (a label, or '' to omit a target the assembler computes).
    """
    parts = []
    if ins.pred:
        parts.append('(%sf%d)' % ('!' if ins.pred_inv else '', ins.flag))
    parts += [_mnemonic(ins), '(%d)' % ins.exec_size]
    for letter, slot in ins.letters():
        if letter == 'j':
            text = '%d' % ins.jip if target is None else target
        elif letter in 'ds' and not ins.is_send:
            text = _format_typed(ins, ins.operands[slot], ins.dst_type if slot == 0 else ins.src_type)
        else:
            text = _format_register(ins.operands[slot])
        if text:
            parts.append(text)
    if ins.bp:
        parts.append('{bp}')
    return ' '.join(parts)


def format_raw(data):
    """Canonical text of 16 bytes; `.inst` with the four dwords when they are illegal."""
    try:
        return format_instruction(decode(data))
    except IllegalInstruction:
        return '.inst ' + ' '.join('0x%08x' % d for d in struct.unpack('<4I', data))


def disassemble_module(module):
    """A listing that assemble() turns back into the same text sections.

    Jump targets inside the section become labels (a function's name, else L<offset>);
    others keep the numeric offset.
    """
    lines = []
    for kernel in module.kernels.values():
        lines += ['.kernel %s' % kernel.name, '.simd %d' % kernel.simd,
                  '.grf %d' % kernel.grf_count, '.slm %d' % kernel.slm_bytes]
        for arg in kernel.args:
            size = ' %d' % arg.size if arg.kind == 'value' else ''
            lines.append('.arg %s %s%s @%d' % (arg.name, arg.kind, size, arg.offset))
        lines += _listing_body(kernel)
    return '\n'.join(lines) + '\n'


def _listing_body(kernel):
    size = len(kernel.text)
    functions = {fn.offset: fn.name for fn in kernel.functions}
    decoded = {}
    for offset in range(0, size, INSTRUCTION_BYTES):
        try:
            decoded[offset] = decode(kernel.text[offset:offset + INSTRUCTION_BYTES])
        except IllegalInstruction:
            pass
    labels = {}
    for offset, ins in decoded.items():
        target = offset + ins.jip
        if any(letter == 'j' for letter, _ in ins.letters()) and 0 <= target <= size:
            labels[target] = functions.get(target, 'L%d' % target)
    lines = []
    for offset in range(0, size + INSTRUCTION_BYTES, INSTRUCTION_BYTES):
        if offset in functions:
            lines.append('.func %s' % functions[offset])
        elif offset in labels:
            lines.append('%s:' % labels[offset])
        if offset == size:
            break
        ins = decoded.get(offset)
        if ins is None:
            lines.append('        ' + format_raw(kernel.text[offset:offset + INSTRUCTION_BYTES]))
        else:
            lines.append('        ' + format_instruction(ins, labels.get(offset + ins.jip)))
    return lines


# ---------------------------------------------------------------------------
# Modules
# ---------------------------------------------------------------------------

ARG_KINDS = ('global', 'local', 'value')
ARG_FIXED_SIZE = {'global': 8, 'local': 4}
MAX_ARG_BYTES = 1024
MAX_ARGS = 256
MAX_SLM = 65536
MAX_TEXT = 16 << 20
TEXT_ALIGN = 64


@dataclass
class KernelArg:
    name: str
    kind: str
    offset: int
    size: int


@dataclass
class Function:
    name: str
    offset: int  # from the start of the kernel's text section
    size: int


@dataclass
class Kernel:
    name: str
    text: bytes
    simd: int = 16
    grf_count: int = 128
    slm_bytes: int = 0
    arg_bytes: int = 0
    args: list = field(default_factory=list)
    functions: list = field(default_factory=list)
    address: int = 0  # sh_addr: offset in the module's instruction heap


@dataclass
class Module:
    kernels: dict = field(default_factory=dict)  # name -> Kernel, in section order


def layout_addresses(module):
    """Text sections are laid out in order from 0, each 64-byte aligned (module-format.md)."""
    address = 0
    for kernel in module.kernels.values():
        address = -(-address // TEXT_ALIGN) * TEXT_ALIGN
        kernel.address = address
        address += len(kernel.text)


# ---------------------------------------------------------------------------
# Assembler (docs/isa.md §8)
# ---------------------------------------------------------------------------


class AsmError(Exception):
    """Reported as `file:line:column: error: message`."""


@dataclass
class _Loc:
    file: str
    line: int
    column: int = 1

    def error(self, message, column=None):
        return AsmError('%s:%d:%d: error: %s' % (self.file, self.line, column or self.column, message))


@dataclass
class _Pending:
    """An instruction whose jump offset is resolved once all labels are known."""
    ins: Instruction
    loc: _Loc
    target: Optional[tuple] = None  # ('label', name, col) | ('offset', n) | None (computed)
    raw: Optional[bytes] = None     # `.inst` data, emitted verbatim


@dataclass
class _KernelSource:
    name: str
    loc: _Loc
    simd: int = 16
    grf_count: int = 128
    slm_bytes: int = 0
    args: list = field(default_factory=list)
    items: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)      # name -> instruction index
    functions: list = field(default_factory=list)   # (name, instruction index)


_TOKEN_RE = re.compile(r'[^\s,]+')
_IDENT_RE = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
_REG_RE = re.compile(r'r(\d+)(?:\.(\d+))?')
_INT_RE = re.compile(r'[+-]?\d+')
_HEX_RE = re.compile(r'0[xX][0-9a-fA-F]+')
_FLOAT_RE = re.compile(r'[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf|nan)')
_PRED_RE = re.compile(r'\((!?)f([01])\)')
_SIZE_RE = re.compile(r'\((\d+)\)')
_MAX_INCLUDE_DEPTH = 16


def _strip_comment(line):
    cut = [i for i in (line.find('//'), line.find(';')) if i >= 0]
    return line[:min(cut)] if cut else line


def _tokens(line):
    return [(m.group(), m.start() + 1) for m in _TOKEN_RE.finditer(line)]


class _Assembler:
    def __init__(self):
        self.kernels = []

    # -- lines and directives ------------------------------------------------

    def feed(self, source, filename, depth=0):
        for lineno, line in enumerate(source.splitlines(), 1):
            toks = _tokens(_strip_comment(line))
            if toks:
                self.line(toks, _Loc(filename, lineno, toks[0][1]), depth)

    def line(self, toks, loc, depth):
        first, col = toks[0]
        if first.endswith(':') and _IDENT_RE.fullmatch(first[:-1]):
            self.define_label(first[:-1], loc)
            toks = toks[1:]
            if not toks:
                return
            loc = replace(loc, column=toks[0][1])
            first = toks[0][0]
        if first.startswith('.'):
            self.directive(toks, loc, depth)
        else:
            self.current(loc).items.append(self.instruction(toks, loc))

    def current(self, loc):
        if not self.kernels:
            raise loc.error('instruction or directive before any .kernel')
        return self.kernels[-1]

    def define_label(self, name, loc):
        kernel = self.current(loc)
        if name in kernel.labels:
            raise loc.error('label "%s" defined twice' % name)
        kernel.labels[name] = len(kernel.items)

    def directive(self, toks, loc, depth):
        name = toks[0][0]
        handler = {'.kernel': self.d_kernel, '.simd': self.d_simd, '.grf': self.d_grf,
                   '.slm': self.d_slm, '.arg': self.d_arg, '.func': self.d_func,
                   '.include': self.d_include, '.inst': self.d_inst}.get(name)
        if handler is None:
            raise loc.error('unknown directive %s' % name)
        handler(toks[1:], loc, depth)

    @staticmethod
    def _one(args, loc, what):
        if len(args) != 1:
            raise loc.error('expected %s' % what)
        return args[0]

    def _number(self, args, loc, what, low, high):
        text, col = self._one(args, loc, what)
        if not _INT_RE.fullmatch(text) or not low <= int(text) <= high:
            raise loc.error('%s must be %d-%d, got %s' % (what, low, high, text), col)
        return int(text)

    def _before_code(self, loc, what):
        kernel = self.current(loc)
        if kernel.items:
            raise loc.error('%s must come before the kernel\'s first instruction' % what)
        return kernel

    def d_kernel(self, args, loc, depth):
        name, col = self._one(args, loc, 'a kernel name')
        if not _IDENT_RE.fullmatch(name):
            raise loc.error('bad kernel name "%s"' % name, col)
        if any(k.name == name for k in self.kernels):
            raise loc.error('kernel "%s" defined twice' % name, col)
        self.kernels.append(_KernelSource(name, loc))

    def d_simd(self, args, loc, depth):
        kernel = self._before_code(loc, '.simd')
        kernel.simd = self._number(args, loc, 'SIMD width', 8, 16)
        if kernel.simd not in (8, 16):
            raise loc.error('SIMD width must be 8 or 16')

    def d_grf(self, args, loc, depth):
        self.current(loc).grf_count = self._number(args, loc, 'GRF count', 1, GRF_COUNT)

    def d_slm(self, args, loc, depth):
        self.current(loc).slm_bytes = self._number(args, loc, 'SLM bytes', 0, MAX_SLM)

    def d_arg(self, args, loc, depth):
        kernel = self.current(loc)
        if len(args) < 2:
            raise loc.error('expected .arg NAME KIND [SIZE] [@OFFSET]')
        (name, ncol), (kind, kcol) = args[:2]
        if not _IDENT_RE.fullmatch(name) or any(a.name == name for a in kernel.args):
            raise loc.error('bad or duplicate argument name "%s"' % name, ncol)
        if kind not in ARG_KINDS:
            raise loc.error('argument kind must be global, local or value', kcol)
        size, offset = ARG_FIXED_SIZE.get(kind), None
        rest = list(args[2:])
        if rest and _INT_RE.fullmatch(rest[0][0]):
            text, col = rest.pop(0)
            if int(text) <= 0 or (kind != 'value' and int(text) != size):
                raise loc.error('bad size %s for a %s argument' % (text, kind), col)
            size = int(text)
        if rest and re.fullmatch(r'@\d+', rest[0][0]):
            offset = int(rest.pop(0)[0][1:])
        if rest:
            raise loc.error('unexpected "%s" in .arg' % rest[0][0], rest[0][1])
        if size is None:
            raise loc.error('a value argument needs a SIZE')
        kernel.args.append(self._place_arg(kernel, KernelArg(name, kind, offset, size), loc))

    @staticmethod
    def _place_arg(kernel, arg, loc):
        # payload dwords hold the arguments (§6); 8-byte and larger values stay qword aligned
        align = ARG_FIXED_SIZE.get(arg.kind) or (8 if arg.size >= 8 else 4)
        end = max((a.offset + a.size for a in kernel.args), default=0)
        if arg.offset is None:
            arg.offset = -(-end // align) * align
        elif arg.offset % align:
            raise loc.error('%s argument "%s" must be %d-byte aligned' % (arg.kind, arg.name, align))
        if arg.offset + arg.size > MAX_ARG_BYTES:
            raise loc.error('argument "%s" ends past %d bytes' % (arg.name, MAX_ARG_BYTES))
        for other in kernel.args:
            if arg.offset < other.offset + other.size and other.offset < arg.offset + arg.size:
                raise loc.error('argument "%s" overlaps "%s"' % (arg.name, other.name))
        if len(kernel.args) >= MAX_ARGS:
            raise loc.error('more than %d arguments' % MAX_ARGS)
        return arg

    def d_func(self, args, loc, depth):
        name, col = self._one(args, loc, 'a function name')
        if not _IDENT_RE.fullmatch(name):
            raise loc.error('bad function name "%s"' % name, col)
        kernel = self.current(loc)
        self.define_label(name, loc)
        kernel.functions.append((name, len(kernel.items)))

    def d_include(self, args, loc, depth):
        text, col = self._one(args, loc, 'a quoted file name')
        if len(text) < 2 or text[0] != '"' or text[-1] != '"':
            raise loc.error('expected a quoted file name', col)
        if depth >= _MAX_INCLUDE_DEPTH:
            raise loc.error('includes nested deeper than %d' % _MAX_INCLUDE_DEPTH)
        path = Path(loc.file).parent / text[1:-1]
        try:
            source = path.read_text()
        except OSError as e:
            raise loc.error('cannot read %s: %s' % (path, e.strerror), col) from None
        self.feed(source, str(path), depth + 1)

    def d_inst(self, args, loc, depth):
        if len(args) != 4 or not all(_HEX_RE.fullmatch(t) or _INT_RE.fullmatch(t) for t, _ in args):
            raise loc.error('.inst takes four dwords')
        dwords = [int(t, 0) for t, _ in args]
        if not all(0 <= d <= MASK32 for d in dwords):
            raise loc.error('.inst dword out of range')
        self.current(loc).items.append(
            _Pending(ins=None, loc=loc, raw=struct.pack('<4I', *dwords)))

    # -- instructions ----------------------------------------------------------

    def instruction(self, toks, loc):
        fields = {}
        m = _PRED_RE.fullmatch(toks[0][0])
        if m:
            fields.update(pred=True, pred_inv=m.group(1) == '!', flag=int(m.group(2)))
            toks = toks[1:]
        if not toks:
            raise loc.error('predicate without an instruction')
        (mnemonic, mcol), toks = toks[0], toks[1:]
        op, msg_fields = self.mnemonic(mnemonic, loc.error, mcol, fields)
        size = None
        if toks and _SIZE_RE.fullmatch(toks[0][0]):
            size = int(toks[0][0][1:-1])
            if size not in EXEC_SIZE_CODES:
                raise loc.error('execution size must be 1, 8 or 16', toks[0][1])
            toks = toks[1:]
        if toks and toks[-1][0] == '{bp}':
            fields['bp'] = True
            toks = toks[:-1]
        flags = op.flags | (msg_fields['msg'].flags if msg_fields else frozenset())
        if size is None:
            size = 1 if 'Z_S1' in flags else self.current(loc).simd
        ins = Instruction(opcode=op.code, exec_size=size, **fields)
        if msg_fields:
            ins = replace(ins, dword3=send_descriptor(msg_fields['msg'].name, msg_fields['atomic'],
                                                      msg_fields['vsize']))
        return self.operands(ins, toks, loc, 'Z_JIP' in flags)

    def mnemonic(self, text, error, col, fields):
        """Resolve a mnemonic with its suffixes; returns (OpInfo, send fields or None)."""
        if text.startswith('send.'):
            return ISA.ops.by_name[SEND_OP], self.send_suffixes(text[5:], error, col)
        base = max((n for n in ISA.ops.by_name if text == n or text.startswith(n + '.')),
                   key=len, default=None)
        if base is None or base == SEND_OP:
            raise error('unknown mnemonic "%s"' % text, col)
        op = ISA.ops.by_name[base]
        suffixes = text[len(base) + 1:].split('.') if text != base else []
        if 'Z_CMOD' not in op.flags:
            if suffixes:
                raise error('%s takes no suffix' % base, col)
            return op, None
        cmod = ISA.cmods.by_name.get(suffixes[0]) if suffixes else None
        if cmod is None or not cmod.name or len(suffixes) > 2:
            raise error('%s needs a condition modifier: %s.<eq|ne|...>[.f0|.f1]' % (base, base), col)
        fields['cmod'] = cmod.code
        if len(suffixes) == 2:
            if suffixes[1] not in ('f0', 'f1'):
                raise error('flag suffix must be f0 or f1', col)
            flag = int(suffixes[1][1])
            if fields.get('pred') and fields['flag'] != flag:
                raise error('a predicated %s reads and writes the same flag' % base, col)
            fields['flag'] = flag
        return op, None

    @staticmethod
    def send_suffixes(text, error, col):
        msg = max((m for m in ISA.msgs.by_name if text == m or text.startswith(m + '.')),
                  key=len, default=None)
        if msg is None:
            raise error('unknown send message "%s"' % text, col)
        rest = text[len(msg) + 1:].split('.') if text != msg else []
        atomic, vsize = None, 1
        if msg in ATOMIC_MSGS:
            if not rest or rest[0] not in ISA.atomics.by_name:
                raise error('send.%s needs an atomic operation' % msg, col)
            atomic = rest.pop(0)
        if rest and msg in VECTOR_MSGS and re.fullmatch(r'v[1-4]', rest[0]):
            vsize = int(rest.pop(0)[1])
        if rest:
            raise error('unexpected suffix ".%s" on send.%s' % ('.'.join(rest), msg), col)
        return {'msg': ISA.msgs.by_name[msg], 'atomic': atomic, 'vsize': vsize}

    def operands(self, ins, toks, loc, jip_optional):
        letters = ins.letters()
        if jip_optional and len(toks) == len(letters) - 1 and letters[-1][0] == 'j':
            letters = letters[:-1]
        if len(toks) != len(letters):
            raise loc.error('%s takes %d operands, got %d'
                            % (_display_name(ins), len(letters), len(toks)))
        operands = list(ins.operands)
        typed = []  # (slot, explicit type or None, immediate text or None, col)
        target = None
        for (letter, slot), (text, col) in zip(letters, toks):
            if letter == 'j':
                target = self.jump_target(text, loc, col)
            elif letter in 'ds' and not ins.is_send:
                operands[slot], type_name, imm = self.typed_operand(text, loc, col)
                typed.append((slot, type_name, imm, col))
            else:
                operands[slot] = self.untyped_operand(text, loc, col)
        ins = replace(ins, operands=tuple(operands))
        ins = self.apply_types(ins, typed, loc)
        return _Pending(ins=ins, loc=loc, target=target)

    @staticmethod
    def jump_target(text, loc, col):
        if _INT_RE.fullmatch(text):
            return ('offset', int(text))
        if _IDENT_RE.fullmatch(text):
            return ('label', text, col)
        raise loc.error('bad jump target "%s"' % text, col)

    def typed_operand(self, text, loc, col):
        """Returns (Operand, type suffix or None, immediate literal or None)."""
        neg = abs_ = False
        body = text
        if body.startswith('-') and not _is_literal(body.split(':')[0]):
            neg, body = True, body[1:]
        m = re.fullmatch(r'\|([^|]+)\|(:\w+)?', body)
        if m:
            abs_ = True
            body = m.group(1) + (m.group(2) or '')
            if m.group(2) and ':' in m.group(1):
                raise loc.error('two types on "%s"' % text, col)
        type_name = None
        if ':' in body:
            body, type_name = body.rsplit(':', 1)
            if type_name not in ISA.types.by_name:
                raise loc.error('unknown type ":%s"' % type_name, col)
        mods = {'neg': neg, 'abs': abs_}
        if body == 'null':
            return Operand(**mods), type_name, None
        if _is_literal(body):
            return Operand(kind=KIND_IMM, **mods), type_name, body
        return self.register(body, loc, col, mods), type_name, None

    @staticmethod
    def register(body, loc, col, mods):
        m = _REG_RE.fullmatch(body)
        if m:
            reg = int(m.group(1))
            if reg >= GRF_COUNT or (m.group(2) and int(m.group(2)) >= GRF_DWORDS):
                raise loc.error('no register "%s"' % body, col)
            if m.group(2) is None:
                return Operand(kind=KIND_VEC, reg=reg, **mods)
            return Operand(kind=KIND_SCALAR, reg=reg, sub=int(m.group(2)), **mods)
        name, _, sub = body.partition('.')
        arf = ISA.arfs.by_name.get(name)
        if arf is None or (sub and not sub.isdigit()):
            raise loc.error('bad operand "%s"' % body, col)
        sub = int(sub or 0)
        if sub >= arf.dwords:
            raise loc.error('%s has no dword %d' % (arf.name, sub), col)
        if sub >= GRF_DWORDS:  # the sub-register field has 3 bits
            raise loc.error('%s.%d cannot be encoded: sub-registers are 0-7' % (arf.name, sub), col)
        return Operand(kind=KIND_ARF, reg=arf.code, sub=sub, **mods)

    def untyped_operand(self, text, loc, col):
        if text == 'null':
            return NULL
        if ':' in text:
            raise loc.error('send operands take no type', col)
        o = self.register(text, loc, col, {})
        if o.kind == KIND_ARF:
            raise loc.error('send operands are GRF registers', col)
        return o

    def apply_types(self, ins, typed, loc):
        """Untyped registers are ud; an untyped immediate takes the sources' type (§8)."""
        sources = [t for t in typed if t[0] > 0]
        types = {type_name or 'ud' for _, type_name, imm, _ in sources if imm is None or type_name}
        if len(types) > 1:
            raise loc.error('sources must share one type, got %s' % ', '.join(sorted(types)))
        src_name = types.pop() if types else 'ud'
        dword3 = ins.dword3
        for _, _, imm, col in sources:
            if imm is not None:
                dword3 = _immediate_bits(imm, src_name, loc, col)
        dst_type = 0
        for slot, type_name, _, col in typed:
            if slot == 0 and ins.operands[0].kind == KIND_NULL and type_name:
                raise loc.error('null takes no type', col)
            if slot == 0 and ins.operands[0].kind != KIND_NULL:
                dst_type = ISA.types.by_name[type_name or 'ud'].code
        return replace(ins, dst_type=dst_type, dword3=dword3,
                       src_type=ISA.types.by_name[src_name].code if sources else 0)

    # -- finishing --------------------------------------------------------------

    def finish(self):
        module = Module()
        for source in self.kernels:
            module.kernels[source.name] = self.finish_kernel(source)
        layout_addresses(module)
        return module

    def finish_kernel(self, source):
        computed = _structured_targets(source.items)
        text = bytearray()
        for index, item in enumerate(source.items):
            if item.raw is not None:
                text += item.raw
                continue
            ins = item.ins
            if any(letter == 'j' for letter, _ in ins.letters()):
                ins = replace(ins, dword3=self.jump_offset(source, index, item, computed) & MASK32)
            try:
                text += encode(ins)
            except IllegalInstruction as e:
                raise item.loc.error('illegal instruction: %s' % e) from None
        ends = [index for _, index in source.functions] + [len(source.items)]
        functions = [Function(name, index * INSTRUCTION_BYTES, (end - index) * INSTRUCTION_BYTES)
                     for (name, index), end in zip(source.functions, ends[1:])]
        return Kernel(name=source.name, text=bytes(text), simd=source.simd,
                      grf_count=source.grf_count, slm_bytes=source.slm_bytes,
                      arg_bytes=-(-max((a.offset + a.size for a in source.args), default=0) // 4) * 4,
                      args=source.args, functions=functions)

    @staticmethod
    def jump_offset(source, index, item, computed):
        if item.target is None:
            if index not in computed:
                raise item.loc.error('%s needs a jump target' % item.ins.op.name)
            return (computed[index] - index) * INSTRUCTION_BYTES
        if item.target[0] == 'offset':
            return item.target[1]
        _, name, col = item.target
        if name not in source.labels:
            raise item.loc.error('undefined label "%s"' % name, col)
        return (source.labels[name] - index) * INSTRUCTION_BYTES


def _is_literal(text):
    return bool(_HEX_RE.fullmatch(text) or _FLOAT_RE.fullmatch(text))


def _immediate_bits(text, type_name, loc, col):
    if _HEX_RE.fullmatch(text):
        value = int(text, 16)
        if value > MASK32:
            raise loc.error('immediate %s does not fit 32 bits' % text, col)
        return value
    if type_name == 'f':
        return _float_literal_bits(text, loc, col)
    ranges = {'ud': (0, MASK32), 'd': (-(1 << 31), (1 << 31) - 1)}
    if not _INT_RE.fullmatch(text) or not ranges[type_name][0] <= int(text) <= ranges[type_name][1]:
        raise loc.error('immediate %s is not a valid :%s value' % (text, type_name), col)
    return int(text) & MASK32


def _float_literal_bits(text, loc, col):
    negative = text.startswith('-')
    word = text.lstrip('+-')
    if word == 'nan':
        return CANONICAL_NAN | (0x80000000 if negative else 0)
    if word == 'inf':
        return 0xFF800000 if negative else 0x7F800000
    value = round_fraction_to_f32(Fraction(text), negative_zero=negative)
    if math.isinf(value):
        raise loc.error('%s is out of the fp32 range' % text, col)
    return f32_bits(value)


def _structured_targets(items):
    """JIPs of if/else/while/break/cont computed per docs/isa.md §3.3.

    Returns {instruction index: target index}; raises AsmError on unbalanced nesting.
    A section where every jump target is explicit (disassembler output) is taken as
    written, so that any legal instruction sequence round-trips.
    """
    if all(item.target is not None for item in items
           if item.ins is not None and 'Z_JIP' in item.ins.op.flags):
        return {}
    targets = {}
    stack = []        # open constructs: dicts with kind, start, else
    pending = []      # (index of break/cont, construct, part) resolved once the construct closes
    for index, item in enumerate(items):
        name = item.ins.op.name if item.ins is not None else None
        if name == 'if':
            stack.append({'kind': 'if', 'start': index, 'else': None, 'end': None})
        elif name == 'do':
            stack.append({'kind': 'do', 'start': index, 'end': None})
        elif name in ('else', 'endif', 'while'):
            _close(stack, name, index, targets, item.loc)
        elif name in ('break', 'cont'):
            if not any(c['kind'] == 'do' for c in stack):
                raise item.loc.error('%s outside a do/while loop' % name)
            top = stack[-1]
            pending.append((index, top, 'else' if top['kind'] == 'if' and top['else'] is not None
                            else 'then'))
    if stack:
        raise items[stack[-1]['start']].loc.error('%s without its %s' % (
            stack[-1]['kind'], 'endif' if stack[-1]['kind'] == 'if' else 'while'))
    for index, construct, part in pending:
        if construct['kind'] == 'do':
            targets[index] = construct['end']
        elif part == 'then' and construct['else'] is not None:
            targets[index] = construct['else']
        else:
            targets[index] = construct['end']
    return targets


def _close(stack, name, index, targets, loc):
    want = 'do' if name == 'while' else 'if'
    if not stack or stack[-1]['kind'] != want or (name == 'else' and stack[-1]['else'] is not None):
        raise loc.error('%s without a matching %s' % (name, 'do' if want == 'do' else 'if'))
    top = stack[-1]
    if name == 'else':
        targets[top['start']] = index
        top['else'] = index
        return
    stack.pop()
    top['end'] = index
    if name == 'while':
        targets[index] = top['start'] + 1
    elif top['else'] is None:
        targets[top['start']] = index
    else:
        targets[top['else']] = index


def assemble(source, filename='<input>'):
    """Assemble §8 text into a Module (includes resolve relative to `filename`)."""
    asm = _Assembler()
    asm.feed(source, filename)
    return asm.finish()


def assemble_file(path):
    return assemble(Path(path).read_text(), str(path))


# ---------------------------------------------------------------------------
# ELF64 module reader / writer (docs/module-format.md)
# ---------------------------------------------------------------------------


class ModuleError(ValueError):
    """A malformed module file; the message names the offending field."""


EM_ZEISA = 0x5A45
ISA_VERSION = 1
ET_EXEC = 2
SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOTE, SHT_NOBITS = 1, 2, 3, 7, 8
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
STT_FUNC, STB_LOCAL, STB_GLOBAL = 2, 0, 1
NT_ZESIM_KERNEL = 1
NOTE_NAME = b'ZESIM\0'
NOTE_VERSION = 1       # 32-byte descriptor header
NOTE_VERSION_REQD = 2  # 48-byte header: reqd_group_size x, y, z and a reserved word
MAX_REQD_GROUP_ITEMS = 65536
TEXT_PREFIX = '.text.'

_EHDR = struct.Struct('<16sHHIQQQIHHHHHH')
_SHDR = struct.Struct('<IIQQQQIIQQ')
_SYM = struct.Struct('<IBBHQQ')
_NOTE_DESC = struct.Struct('<8I')
_NOTE_REQD = struct.Struct('<4I')  # after _NOTE_DESC in a version 2 note
_ARG_REC = struct.Struct('<4I')


@dataclass
class _Section:
    index: int
    name: str
    type: int
    flags: int
    addr: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int
    data: bytes


def _fail(message, *args):
    raise ModuleError(message % args if args else message)


def read_module(source):
    """Parse a module from a path or bytes; raises ModuleError on malformed input."""
    data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
    data = bytes(data)
    sections = _read_sections(data)
    by_name = {s.name: s for s in sections}
    texts = {s.name[len(TEXT_PREFIX):]: s for s in sections if s.name.startswith(TEXT_PREFIX)}
    for text in texts.values():
        _check_text_section(text)
    notes_section = by_name.get('.note.zesim')
    if notes_section is None:
        _fail('no .note.zesim section')
    notes = _read_notes(notes_section)
    symbols = _read_symbols(sections, by_name)
    if '.debug_line' in by_name:
        _check_debug_line(by_name['.debug_line'])
    module = Module()
    for kernel in notes:
        module.kernels[kernel.name] = _bind_kernel(kernel, texts, symbols)
    for name in texts:
        if name not in module.kernels:
            _fail('text section .text.%s has no kernel note', name)
    return module


def _read_sections(data):
    if len(data) < _EHDR.size:
        _fail('file is %d bytes, shorter than an ELF header', len(data))
    (ident, e_type, machine, version, _entry, _phoff, shoff, flags, _ehsize, _phentsize,
     _phnum, shentsize, shnum, shstrndx) = _EHDR.unpack_from(data)
    checks = ((ident[:4] == b'\x7fELF', 'e_ident: not an ELF file'),
              (ident[4] == 2, 'e_ident[EI_CLASS]: not ELFCLASS64'),
              (ident[5] == 1, 'e_ident[EI_DATA]: not little-endian'),
              (ident[6] == 1 and version == 1, 'e_version: not EV_CURRENT'),
              (machine == EM_ZEISA, 'e_machine: 0x%x is not ZE-ISA (0x%x)' % (machine, EM_ZEISA)),
              (flags == ISA_VERSION, 'e_flags: ISA version %d, expected %d' % (flags, ISA_VERSION)),
              (e_type == ET_EXEC, 'e_type: %d is not ET_EXEC' % e_type),
              (shentsize == _SHDR.size, 'e_shentsize: %d, expected %d' % (shentsize, _SHDR.size)))
    for ok, message in checks:
        if not ok:
            _fail(message)
    if shoff + shnum * _SHDR.size > len(data) or shnum == 0:
        _fail('e_shoff/e_shnum: section headers run past the end of the file')
    if shstrndx >= shnum:
        _fail('e_shstrndx: %d is not a section (e_shnum %d)', shstrndx, shnum)
    raw = [_SHDR.unpack_from(data, shoff + i * _SHDR.size) for i in range(shnum)]
    _check_extents(raw, data, shoff, shnum)
    shstr = raw[shstrndx]
    if shstr[1] != SHT_STRTAB:
        _fail('e_shstrndx: section %d is not a string table', shstrndx)
    names = data[shstr[4]:shstr[4] + shstr[5]]
    sections = []
    for index, (name, type_, flags_, addr, offset, size, link, info, _align, entsize) in enumerate(raw):
        if index == 0:
            continue
        content = b'' if type_ == SHT_NOBITS else data[offset:offset + size]
        sections.append(_Section(index, _cstring(names, name, 'section %d sh_name' % index), type_,
                                 flags_, addr, offset, size, link, info, entsize, content))
    return sections


def _check_extents(raw, data, shoff, shnum):
    extents = [(0, _EHDR.size, 'the ELF header'), (shoff, shoff + shnum * _SHDR.size, 'section headers')]
    for index, (_n, type_, _f, _a, offset, size, *_rest) in enumerate(raw):
        if index == 0 or type_ == SHT_NOBITS or size == 0:
            continue
        if offset + size > len(data):
            _fail('section %d: sh_offset %d + sh_size %d runs past the end of the file (%d bytes)',
                  index, offset, size, len(data))
        extents.append((offset, offset + size, 'section %d' % index))
    extents.sort()
    for (_s1, e1, what1), (s2, _e2, what2) in zip(extents, extents[1:]):
        if s2 < e1:
            _fail('%s overlaps %s', what2, what1)


def _cstring(blob, offset, what):
    end = blob.find(b'\0', offset)
    if offset >= len(blob) or end < 0:
        _fail('%s: offset %d is not a NUL-terminated string in its table', what, offset)
    return blob[offset:end].decode('utf-8', 'replace')


@dataclass
class _NoteKernel:
    name: str
    simd: int
    grf_count: int
    slm_bytes: int
    arg_bytes: int
    args: list
    reqd_group_size: tuple = (0, 0, 0)


def _read_notes(section):
    data, pos, kernels = section.data, 0, []
    while pos < len(data):
        if pos + 12 > len(data):
            _fail('.note.zesim: note header at %d runs past the section', pos)
        namesz, descsz, ntype = struct.unpack_from('<3I', data, pos)
        name_at = pos + 12
        desc_at = name_at + _align4(namesz)
        end = desc_at + _align4(descsz)
        if end > len(data):
            _fail('.note.zesim: note at %d (namesz %d, descsz %d) runs past the section',
                  pos, namesz, descsz)
        if data[name_at:name_at + namesz] != NOTE_NAME:
            _fail('.note.zesim: note at %d: name is not "ZESIM"', pos)
        if ntype != NT_ZESIM_KERNEL:
            _fail('.note.zesim: note at %d: n_type %d is not ZE_NT_KERNEL (1)', pos, ntype)
        kernels.append(_parse_kernel_desc(data[desc_at:desc_at + descsz], pos))
        pos = end
    return kernels


def _align4(n):
    return (n + 3) & ~3


def _parse_kernel_desc(desc, pos):
    where = '.note.zesim: note at %d' % pos
    if len(desc) < _NOTE_DESC.size:
        _fail('%s: descsz %d is shorter than the %d-byte header', where, len(desc), _NOTE_DESC.size)
    version, simd, grf, slm, arg_bytes, nargs, strings_size, reserved = _NOTE_DESC.unpack_from(desc)
    if version not in (NOTE_VERSION, NOTE_VERSION_REQD):
        _fail('%s: version %d is not %d or %d', where, version, NOTE_VERSION, NOTE_VERSION_REQD)
    header = _NOTE_DESC.size + (_NOTE_REQD.size if version == NOTE_VERSION_REQD else 0)
    checks = ((simd in (8, 16), 'simd_width %d is not 8 or 16' % simd),
              (1 <= grf <= GRF_COUNT, 'grf_count %d is not 1-128' % grf),
              (slm <= MAX_SLM, 'slm_bytes %d exceeds %d' % (slm, MAX_SLM)),
              (arg_bytes <= MAX_ARG_BYTES, 'arg_bytes %d exceeds %d' % (arg_bytes, MAX_ARG_BYTES)),
              (nargs <= MAX_ARGS, 'num_args %d exceeds %d' % (nargs, MAX_ARGS)),
              (strings_size % 4 == 0, 'strings_size %d is not a multiple of 4' % strings_size),
              (reserved == 0, 'reserved is %d, not 0' % reserved),
              (len(desc) == header + 16 * nargs + strings_size,
               'descsz %d is not %d + 16*num_args + strings_size' % (len(desc), header)))
    for ok, message in checks:
        if not ok:
            _fail('%s: %s', where, message)
    reqd = (0, 0, 0)
    if version == NOTE_VERSION_REQD:
        *reqd, reserved2 = _NOTE_REQD.unpack_from(desc, _NOTE_DESC.size)
        reqd = tuple(reqd)
        if reserved2 or not all(reqd) or reqd[0] * reqd[1] * reqd[2] > MAX_REQD_GROUP_ITEMS:
            _fail('%s: reqd_group_size %s (reserved %d) invalid', where, reqd, reserved2)
    strings = desc[header + 16 * nargs:]
    args = [_parse_arg(desc, header, i, strings, arg_bytes, where) for i in range(nargs)]
    return _NoteKernel(_cstring(strings, 0, where + ' kernel name'), simd, grf, slm, arg_bytes, args, reqd)


def _parse_arg(desc, header, i, strings, arg_bytes, where):
    kind, offset, size, name_off = _ARG_REC.unpack_from(desc, header + 16 * i)
    where = '%s arg %d' % (where, i)
    if kind >= len(ARG_KINDS):
        _fail('%s: unknown kind %d', where, kind)
    kind_name = ARG_KINDS[kind]
    if offset + size > arg_bytes:
        _fail('%s: offset %d + size %d exceeds arg_bytes %d', where, offset, size, arg_bytes)
    fixed = ARG_FIXED_SIZE.get(kind_name)
    if fixed is not None and (size != fixed or offset % fixed):
        _fail('%s: a %s argument needs size %d at an aligned offset (size %d, offset %d)',
              where, kind_name, fixed, size, offset)
    return KernelArg(_cstring(strings, name_off, where + ' name'), kind_name, offset, size)


@dataclass
class _Symbol:
    name: str
    bind: int
    type: int
    section: _Section
    value: int
    size: int


def _read_symbols(sections, by_name):
    symtab = by_name.get('.symtab')
    if symtab is None:
        _fail('no .symtab section')
    if symtab.type != SHT_SYMTAB or symtab.entsize != _SYM.size or symtab.size % _SYM.size:
        _fail('.symtab: type %d, sh_entsize %d, sh_size %d are not a symbol table',
              symtab.type, symtab.entsize, symtab.size)
    index_map = {s.index: s for s in sections}
    strtab = index_map.get(symtab.link)
    if strtab is None or strtab.type != SHT_STRTAB:
        _fail('.symtab: sh_link %d is not a string table', symtab.link)
    symbols = []
    for i in range(1, symtab.size // _SYM.size):
        name, info, _other, shndx, value, size = _SYM.unpack_from(symtab.data, i * _SYM.size)
        if info & 0xF != STT_FUNC:
            continue
        section = index_map.get(shndx)
        label = _cstring(strtab.data, name, '.symtab symbol %d st_name' % i)
        if section is None or not section.name.startswith(TEXT_PREFIX):
            _fail('symbol "%s": st_shndx %d is not a text section', label, shndx)
        if not section.addr <= value <= value + size <= section.addr + section.size:
            _fail('symbol "%s": [0x%x, +%d) lies outside %s', label, value, size, section.name)
        symbols.append(_Symbol(label, info >> 4, info & 0xF, section, value, size))
    return symbols


def _check_debug_line(section):
    pos, data = 0, section.data
    while pos < len(data):
        if pos + 4 > len(data):
            _fail('.debug_line: unit length at %d runs past the section', pos)
        length = struct.unpack_from('<I', data, pos)[0]
        header = 4
        if length == 0xFFFFFFFF:
            if pos + 12 > len(data):
                _fail('.debug_line: 64-bit unit length at %d runs past the section', pos)
            length, header = struct.unpack_from('<Q', data, pos + 4)[0], 12
        if pos + header + length > len(data):
            _fail('.debug_line: unit at %d (length %d) runs past the section', pos, length)
        pos += header + length


def _check_text_section(text):
    if text.type != SHT_PROGBITS or text.size % INSTRUCTION_BYTES or text.size > MAX_TEXT:
        _fail('%s: type %d / size %d is not PROGBITS with a multiple of 16 bytes up to 16 MiB',
              text.name, text.type, text.size)
    if text.addr % TEXT_ALIGN:
        _fail('%s: sh_addr 0x%x is not %d-byte aligned', text.name, text.addr, TEXT_ALIGN)


def _bind_kernel(note, texts, symbols):
    text = texts.get(note.name)
    if text is None:
        _fail('kernel note "%s" has no .text.%s section', note.name, note.name)
    if not any(s.name == note.name and s.bind == STB_GLOBAL and s.section is text for s in symbols):
        _fail('kernel note "%s" has no global symbol in %s', note.name, text.name)
    functions = sorted((Function(s.name, s.value - text.addr, s.size) for s in symbols
                        if s.section is text and s.bind == STB_LOCAL), key=lambda f: f.offset)
    return Kernel(name=note.name, text=text.data, simd=note.simd, grf_count=note.grf_count,
                  slm_bytes=note.slm_bytes, arg_bytes=note.arg_bytes, args=note.args,
                  functions=functions, address=text.addr)


class _StringTable:
    """An ELF string table; ELF ones start with the empty string, note ones with the kernel name."""

    def __init__(self, first=''):
        self.data = bytearray()
        self.offsets = {}
        self.add(first)

    def add(self, text):
        if text not in self.offsets:
            self.offsets[text] = len(self.data)
            self.data += text.encode() + b'\0'
        return self.offsets[text]


def _kernel_note(kernel):
    strings = _StringTable(kernel.name)
    records = b''.join(_ARG_REC.pack(ARG_KINDS.index(a.kind), a.offset, a.size, strings.add(a.name))
                       for a in kernel.args)
    blob = bytes(strings.data) + b'\0' * (-len(strings.data) % 4)
    desc = _NOTE_DESC.pack(NOTE_VERSION, kernel.simd, kernel.grf_count, kernel.slm_bytes,
                           kernel.arg_bytes, len(kernel.args), len(blob), 0) + records + blob
    return struct.pack('<3I', len(NOTE_NAME), len(desc), NT_ZESIM_KERNEL) + NOTE_NAME + b'\0\0' + desc


def write_module(module):
    """Serialise a Module as the ELF64 file docs/module-format.md describes (no .debug_line)."""
    layout_addresses(module)
    shstr, strtab = _StringTable(), _StringTable()
    kernels = list(module.kernels.values())
    # (name, type, flags, addr, data, link, info, align, entsize)
    specs = [('.text.' + k.name, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, k.address, k.text,
              0, 0, TEXT_ALIGN, 0) for k in kernels]
    specs.append(('.note.zesim', SHT_NOTE, 0, 0, b''.join(_kernel_note(k) for k in kernels), 0, 0, 4, 0))
    locals_, globals_ = [], []
    for index, k in enumerate(kernels, 1):
        code_end = k.functions[0].offset if k.functions else len(k.text)
        globals_.append(_SYM.pack(strtab.add(k.name), STB_GLOBAL << 4 | STT_FUNC, 0, index,
                                  k.address, code_end))
        for fn in k.functions:
            locals_.append(_SYM.pack(strtab.add(fn.name), STB_LOCAL << 4 | STT_FUNC, 0, index,
                                     k.address + fn.offset, fn.size))
    symtab_index = len(specs) + 1
    specs.append(('.symtab', SHT_SYMTAB, 0, 0, bytes(_SYM.size) + b''.join(locals_ + globals_),
                  symtab_index + 1, 1 + len(locals_), 8, _SYM.size))
    specs.append(('.strtab', SHT_STRTAB, 0, 0, bytes(strtab.data), 0, 0, 1, 0))
    for spec in specs:
        shstr.add(spec[0])
    shstr.add('.shstrtab')
    specs.append(('.shstrtab', SHT_STRTAB, 0, 0, bytes(shstr.data), 0, 0, 1, 0))
    return _lay_out_elf(specs, shstr)


def _lay_out_elf(specs, shstr):
    body = bytearray(_EHDR.size)
    headers = [bytes(_SHDR.size)]
    for name, type_, flags, addr, data, link, info, align, entsize in specs:
        body += b'\0' * (-len(body) % align)
        headers.append(_SHDR.pack(shstr.add(name), type_, flags, addr, len(body), len(data),
                                  link, info, align, entsize))
        body += data
    body += b'\0' * (-len(body) % 8)
    shoff = len(body)
    body += b''.join(headers)
    ident = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
    body[:_EHDR.size] = _EHDR.pack(ident, ET_EXEC, EM_ZEISA, 1, 0, 0, shoff, ISA_VERSION,
                                   _EHDR.size, 0, 0, _SHDR.size, len(headers), len(headers) - 1)
    return bytes(body)


def main(argv):
    usage = 'usage: zeisa.py dis MODULE.elf | zeisa.py as IN.zeasm OUT.elf'
    try:
        if len(argv) == 2 and argv[0] == 'dis':
            sys.stdout.write(disassemble_module(read_module(argv[1])))
        elif len(argv) == 3 and argv[0] == 'as':
            Path(argv[2]).write_bytes(write_module(assemble_file(argv[1])))
        else:
            print(usage, file=sys.stderr)
            return 2
    except (AsmError, ModuleError, OSError) as e:
        print(e, file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
