#!/usr/bin/env python3
"""Rewrite SPIR-V modules of today's llvm-spirv-14 into the form older
llvm-spirv releases wrote (SPIR-V 1.0), since no older compiler is packaged:

  - version 1.0 in the header (1.1 with the capability SubgroupDispatch); the
    1.4 decorations NoSignedWrap and NoUnsignedWrap (hints the front end does
    not use) and OpModuleProcessed (1.1) left out;
  - the work-item built-ins (variables decorated BuiltIn) in UniformConstant
    storage instead of Input, and OpEntryPoint listing no interface variables
    (before 1.4 it lists Input and Output variables only);
  - every decoration that several targets share (FuncParamAttr NoCapture,
    Constant, Alignment 4, ...) as one OpDecorationGroup applied by one
    OpGroupDecorate;
  - every pointer type to a struct declared ahead by OpTypeForwardPointer;
  - OpExtInstImport "SPIRV.debug" (the old debug-information set) with a
    DebugSource, DebugCompilationUnit, DebugTypeBasic, DebugExpression,
    DebugInfoNone at module scope and DebugScope / DebugNoScope in every block;
  - OpCapability ArbitraryPrecisionIntegersINTEL with its OpExtension
    (declared by older compilers for ordinary integer widths).

    old_spirv.py [--no-exports] [--spirv-val PATH] IN.spv OUT.spv
    old_spirv.py [--spirv-val PATH] --tree IN_DIR OUT_DIR

--no-exports also drops the Export linkage of every definition (a module that
exports nothing; with no kernels it is a module of functions only).  --tree
rewrites every *.spv under IN_DIR (other files, e.g. the expected results of
the random kernels, are copied) into the same place under OUT_DIR.  With
--spirv-val, every result is validated for its version (--target-env spv1.0);
a result spirv-val rejects is still written, and the reason printed: see
KNOWN_INVALID for the rejections expected.  Standard library only.
"""
import argparse
import os
import shutil
import struct
import subprocess
import sys

MAGIC = 0x07230203

# Opcodes (SPIR-V 1.6 grammar).
OP_SOURCE, OP_NAME, OP_STRING, OP_LINE = 3, 5, 7, 8
OP_EXTENSION, OP_EXT_INST_IMPORT, OP_EXT_INST, OP_MEMORY_MODEL = 10, 11, 12, 14
OP_ENTRY_POINT, OP_CAPABILITY = 15, 17
OP_TYPE_VOID, OP_TYPE_INT, OP_TYPE_STRUCT, OP_TYPE_POINTER = 19, 21, 30, 32
OP_TYPE_FORWARD_POINTER = 39
OP_MODULE_PROCESSED = 330
OP_CONSTANT = 43
OP_FUNCTION, OP_FUNCTION_END = 54, 56
OP_VARIABLE = 59
OP_DECORATE, OP_MEMBER_DECORATE, OP_DECORATION_GROUP = 71, 72, 73
OP_GROUP_DECORATE, OP_GROUP_MEMBER_DECORATE = 74, 75
OP_PHI, OP_LOOP_MERGE, OP_SELECTION_MERGE, OP_LABEL = 245, 246, 247, 248
TERMINATORS = {249, 250, 251, 252, 253, 254, 255, 4416}  # branch ... unreachable, terminate

SC_UNIFORM_CONSTANT, SC_INPUT, SC_OUTPUT = 0, 1, 3
DECO_BUILTIN, DECO_LINKAGE, DECO_SPEC_ID = 11, 41, 1
DECO_NO_SIGNED_WRAP, DECO_NO_UNSIGNED_WRAP = 4469, 4470
LINKAGE_EXPORT = 0
CAP_SUBGROUP_DISPATCH, CAP_ARBITRARY_PRECISION_INTEGERS = 58, 5844

# SPIRV.debug instruction numbers (as OpenCL.DebugInfo.100, its successor).
DEBUG_INFO_NONE, DEBUG_COMPILATION_UNIT, DEBUG_TYPE_BASIC = 0, 1, 2
DEBUG_SCOPE, DEBUG_NO_SCOPE, DEBUG_EXPRESSION, DEBUG_SOURCE = 23, 24, 31, 35
DEBUG_ENCODING_SIGNED = 4
SOURCE_LANGUAGE_OPENCL_C = 3

# Results spirv-val (SPIRV-Tools v2023.1) rejects, and why.  Besides, it
# refuses the SPIRV.debug set itself, so what it checks is each result without
# its SPIRV.debug instructions (validate).
KNOWN_INVALID = {
    "saxpy_g.spv": "llvm-spirv-14's own OpenCL.DebugInfo.100 of -g, rejected in the original too",
    "elementwise_g.spv": "llvm-spirv-14's own OpenCL.DebugInfo.100 of -g, rejected in the original too",
}


def string_words(s):
    b = s.encode() + b"\0"
    b += b"\0" * (-len(b) % 4)
    return list(struct.unpack("<%dI" % (len(b) // 4), b))


def inst(opcode, *operands):
    return [(len(operands) + 1) << 16 | opcode] + list(operands)


def read_module(data):
    if len(data) % 4 or len(data) < 20:
        raise ValueError("not a SPIR-V module")
    endian = "<" if struct.unpack("<I", data[:4])[0] == MAGIC else ">"
    words = list(struct.unpack(endian + "%dI" % (len(data) // 4), data))
    if words[0] != MAGIC:
        raise ValueError("bad magic number")
    insts, i = [], 5
    while i < len(words):
        n = words[i] >> 16
        if n == 0 or i + n > len(words):
            raise ValueError("word %d: bad word count" % i)
        insts.append(words[i:i + n])
        i += n
    return words[:5], insts


def op(i):
    return i[0] & 0xFFFF


def string_at(i, at):
    b = struct.pack("<%dI" % (len(i) - at), *i[at:])
    return b[:b.index(b"\0")].decode()


def section(i):
    """The module's logical layout sections, in order."""
    o = op(i)
    order = {OP_CAPABILITY: 0, OP_EXTENSION: 1, OP_EXT_INST_IMPORT: 2, OP_MEMORY_MODEL: 3, OP_ENTRY_POINT: 4,
             16: 5, 331: 5}  # OpExecutionMode(Id)
    if o in order:
        return order[o]
    if o in (OP_SOURCE, 2, 4, OP_STRING):  # strings and sources, then names
        return 6
    if o in (OP_NAME, 6):
        return 6.5
    if o in (OP_DECORATE, OP_MEMBER_DECORATE, OP_DECORATION_GROUP, OP_GROUP_DECORATE, OP_GROUP_MEMBER_DECORATE,
             332, 5632, 5633):  # OpDecorateId, OpDecorateString, OpMemberDecorateString
        return 7
    return 8  # types, constants, variables, functions


def transform(data, no_exports=False, debug=True):
    header, insts = read_module(data)
    bound = header[3]

    def fresh():
        nonlocal bound
        bound += 1
        return bound - 1

    builtins = {i[1] for i in insts if op(i) == OP_DECORATE and i[2] == DECO_BUILTIN}
    var_class = {i[2]: i[3] for i in insts if op(i) == OP_VARIABLE}
    structs = {i[1] for i in insts if op(i) == OP_TYPE_STRUCT}

    out = []
    for i in insts:
        o = op(i)
        if o == OP_DECORATE and i[2] in (DECO_NO_SIGNED_WRAP, DECO_NO_UNSIGNED_WRAP):
            continue
        if o == OP_MODULE_PROCESSED:
            continue
        if o == OP_DECORATE and no_exports and i[2] == DECO_LINKAGE and i[-1] == LINKAGE_EXPORT:
            continue
        if o == OP_ENTRY_POINT:
            # Keep the name; before 1.4 the interface lists Input and Output
            # variables only, and the built-ins are no longer Input.
            name_words = len(string_words(string_at(i, 3)))
            keep = [v for v in i[3 + name_words:] if var_class.get(v) in (SC_INPUT, SC_OUTPUT) and v not in builtins]
            i = inst(OP_ENTRY_POINT, *i[1:3 + name_words], *keep)
        elif o == OP_VARIABLE and i[2] in builtins and i[3] == SC_INPUT:
            i = i[:3] + [SC_UNIFORM_CONSTANT] + i[4:]
        elif o == OP_TYPE_POINTER and i[2] == SC_INPUT:
            i = i[:2] + [SC_UNIFORM_CONSTANT] + i[3:]
        out.append(list(i))
    insts = out

    # Shared decorations as decoration groups.
    by_deco = {}
    for idx, i in enumerate(insts):
        if op(i) == OP_DECORATE and i[2] not in (DECO_BUILTIN, DECO_LINKAGE, DECO_SPEC_ID):
            by_deco.setdefault(tuple(i[2:]), []).append(idx)
    drop, groups = set(), []
    for deco, idxs in by_deco.items():
        targets = sorted({insts[x][1] for x in idxs})
        if len(targets) < 2:
            continue
        drop.update(idxs)
        g = fresh()
        groups += [inst(OP_DECORATE, g, *deco), inst(OP_DECORATION_GROUP, g), inst(OP_GROUP_DECORATE, g, *targets)]
    insts = [i for x, i in enumerate(insts) if x not in drop]

    # Pointers to structs declared ahead.
    forward = [inst(OP_TYPE_FORWARD_POINTER, i[1], i[2]) for i in insts
               if op(i) == OP_TYPE_POINTER and i[3] in structs]
    already = {i[1] for i in insts if op(i) == OP_TYPE_FORWARD_POINTER}
    forward = [f for f in forward if f[1] not in already]

    # SPIRV.debug: module-scope instructions after the types they use, scopes
    # in every block (after its OpPhis).
    void = next((i[1] for i in insts if op(i) == OP_TYPE_VOID), None)
    uint = next((i[1] for i in insts if op(i) == OP_TYPE_INT and i[2] == 32), None)
    if void is None:
        void = fresh()
        insts.insert(0, inst(OP_TYPE_VOID, void))
    if uint is None:
        uint = fresh()
        insts.insert(0, inst(OP_TYPE_INT, uint, 32, 0))
    dbg, file_str, name_str = fresh(), fresh(), fresh()
    src, cu, size, basic, expr, none = (fresh() for _ in range(6))
    debug_global = [
        inst(OP_CONSTANT, uint, size, 32),
        inst(OP_EXT_INST, void, src, dbg, DEBUG_SOURCE, file_str),
        inst(OP_EXT_INST, void, cu, dbg, DEBUG_COMPILATION_UNIT, 65536, 4, src, SOURCE_LANGUAGE_OPENCL_C),
        inst(OP_EXT_INST, void, basic, dbg, DEBUG_TYPE_BASIC, name_str, size, DEBUG_ENCODING_SIGNED),
        inst(OP_EXT_INST, void, expr, dbg, DEBUG_EXPRESSION),
        inst(OP_EXT_INST, void, none, dbg, DEBUG_INFO_NONE),
    ]

    body = []
    in_fn = in_block = False
    pending_scope = closed = False
    for i in insts:
        o = op(i)
        if o == OP_FUNCTION:
            in_fn = True
        elif o == OP_FUNCTION_END:
            in_fn = False
        if in_fn and pending_scope and o not in (OP_PHI, OP_LINE):
            body.append(inst(OP_EXT_INST, void, fresh(), dbg, DEBUG_SCOPE, cu))
            pending_scope = False
        if in_fn and not closed and o in TERMINATORS | {OP_LOOP_MERGE, OP_SELECTION_MERGE}:
            body.append(inst(OP_EXT_INST, void, fresh(), dbg, DEBUG_NO_SCOPE))
            closed = True
        body.append(i)
        if in_fn and o == OP_LABEL:
            pending_scope, closed = True, False
    insts = body

    first_fn = next((x for x, i in enumerate(insts) if op(i) == OP_FUNCTION), len(insts))
    # Module-scope debug instructions go after the last type or constant
    # they could depend on, i.e. at the end of the global section.
    insts[first_fn:first_fn] = debug_global
    head = [inst(OP_CAPABILITY, CAP_ARBITRARY_PRECISION_INTEGERS),
            inst(OP_EXTENSION, *string_words("SPV_INTEL_arbitrary_precision_integers")),
            inst(OP_EXT_INST_IMPORT, dbg, *string_words("SPIRV.debug")),
            inst(OP_STRING, file_str, *string_words("/tmp/old_spirv/source.cl")),
            inst(OP_STRING, name_str, *string_words("int"))]
    if not debug:
        insts = [i for i in insts if not (op(i) == OP_EXT_INST and i[3] == dbg)]
        head = [i for i in head if op(i) != OP_EXT_INST_IMPORT]
    insts = insts + head + groups
    # The sections in order; within one, the original order.  Forward pointer
    # declarations open the types section; void and uint come before them.
    keyed = []
    for n, i in enumerate(insts):
        s = section(i)
        keyed.append((s, n, i))
    keyed.sort(key=lambda k: (k[0], k[1]))
    result, placed = [], False
    for s, _, i in keyed:
        if s == 8 and not placed:
            result += forward
            placed = True
        result.append(i)
    # SubgroupDispatch (sub-group sizes) came with 1.1, as a compiler of then
    # would write it.
    version = 0x00010100 if [OP_CAPABILITY | 2 << 16, CAP_SUBGROUP_DISPATCH] in insts else 0x00010000
    header = [MAGIC, version, header[2], bound, 0]
    words = header + [w for i in result for w in i]
    return struct.pack("<%dI" % len(words), *words)


def validate(data, args, dst):
    """spirv-val of the result without its SPIRV.debug instructions: spirv-val
    refuses the set ("Invalid extended instruction import 'SPIRV.debug'")."""
    tmp = dst + ".nodebug.spv"
    plain = transform(data, args.no_exports, debug=False)
    with open(tmp, "wb") as f:
        f.write(plain)
    env = "spv1.%d" % plain[5]  # the minor version byte of the header's version word
    r = subprocess.run([args.spirv_val, "--target-env", env, tmp], capture_output=True, text=True)
    os.unlink(tmp)
    return r.returncode == 0, (r.stdout + r.stderr).strip()


def convert(src, dst, args):
    with open(src, "rb") as f:
        data = f.read()
    os.makedirs(os.path.dirname(dst) or ".", exist_ok=True)
    with open(dst, "wb") as f:
        f.write(transform(data, args.no_exports))
    if not args.spirv_val:
        return True
    ok, why = validate(data, args, dst)
    rel = os.path.basename(dst)
    if ok:
        return True
    if rel in KNOWN_INVALID:
        print("old_spirv: %s: spirv-val rejects it, as expected (%s)" % (dst, KNOWN_INVALID[rel]))
        return True
    print("old_spirv: %s: spirv-val rejects it:\n%s" % (dst, why), file=sys.stderr)
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--no-exports", action="store_true")
    ap.add_argument("--spirv-val")
    ap.add_argument("--tree", action="store_true")
    ap.add_argument("src")
    ap.add_argument("dst")
    args = ap.parse_args()
    ok = True
    if not args.tree:
        ok = convert(args.src, args.dst, args)
    else:
        for root, _, files in os.walk(args.src):
            rel = os.path.relpath(root, args.src)
            if os.path.abspath(root).startswith(os.path.abspath(args.dst)):
                continue
            for name in sorted(files):
                s, d = os.path.join(root, name), os.path.join(args.dst, rel, name)
                if name.endswith(".spv") and not name.endswith(".unvalidated.spv"):
                    ok = convert(s, d, args) and ok
                elif name.endswith(".ref"):
                    os.makedirs(os.path.dirname(d), exist_ok=True)
                    shutil.copyfile(s, d)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
