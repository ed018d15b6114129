#!/usr/bin/env python3
"""The older form of every test module (tests/kernels/old_spirv.py, in
KERNELS/old/) translates to the same ZE-ISA module, byte for byte, as the
module it was made from, or fails as that one does; and the older form is
really there: SPIR-V 1.0 (1.1 with SubgroupDispatch), the SPIRV.debug import,
ArbitraryPrecisionIntegersINTEL, no built-in in Input storage, and over the
corpus decoration groups (one with more than 96 targets) and forward pointers.

    test_spirv_old.py --spirv zesim-spirv KERNELS
"""
import argparse
import os
import struct
import subprocess
import sys
import tempfile

OP_EXT_INST_IMPORT, OP_CAPABILITY, OP_TYPE_FORWARD_POINTER = 11, 17, 39
OP_VARIABLE, OP_DECORATE, OP_GROUP_DECORATE = 59, 71, 74
DECO_BUILTIN, CAP_ARBITRARY_PRECISION_INTEGERS = 11, 5844


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    words = struct.unpack("<%dI" % (len(data) // 4), data)
    insts, i = [], 5
    while i < len(words):
        n = words[i] >> 16
        insts.append(words[i:i + n])
        i += n
    return words[1], insts


def translate(spirv, path, out, debug):
    args = [spirv] + (["-g"] if debug else []) + ["-o", out, path]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    with open(out, "rb") as f:
        return f.read(), ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--spirv", required=True)
    ap.add_argument("kernels")
    args = ap.parse_args()
    old_dir = os.path.join(args.kernels, "old")
    failures, pairs, built = [], 0, 0
    max_targets, forward = 0, 0
    tmp = tempfile.mkdtemp(prefix="spirv-old-")
    for root, dirs, files in os.walk(args.kernels):
        if os.path.abspath(root).startswith(os.path.abspath(old_dir)):
            continue
        for name in sorted(files):
            if not name.endswith(".spv") or name.endswith(".unvalidated.spv"):
                continue
            src = os.path.join(root, name)
            rel = os.path.relpath(src, args.kernels)
            old = os.path.join(old_dir, rel)
            if not os.path.exists(old):
                failures.append("%s: no older form in %s" % (rel, old_dir))
                continue
            pairs += 1
            version, insts = read(old)
            if version not in (0x00010000, 0x00010100):
                failures.append("%s: version 0x%08x, not 1.0 or 1.1" % (rel, version))
            imports = [bytes(struct.pack("<%dI" % (len(i) - 2), *i[2:])).split(b"\0")[0]
                       for i in insts if i[0] & 0xFFFF == OP_EXT_INST_IMPORT]
            if b"SPIRV.debug" not in imports:
                failures.append("%s: no SPIRV.debug import" % rel)
            if not any(i[0] & 0xFFFF == OP_CAPABILITY and i[1] == CAP_ARBITRARY_PRECISION_INTEGERS for i in insts):
                failures.append("%s: no ArbitraryPrecisionIntegersINTEL" % rel)
            builtins = {i[1] for i in insts if i[0] & 0xFFFF == OP_DECORATE and i[2] == DECO_BUILTIN}
            for i in insts:
                if i[0] & 0xFFFF == OP_VARIABLE and i[2] in builtins and i[3] != 0:
                    failures.append("%s: built-in %%%d in storage class %d" % (rel, i[2], i[3]))
                if i[0] & 0xFFFF == OP_GROUP_DECORATE:
                    max_targets = max(max_targets, len(i) - 2)
                if i[0] & 0xFFFF == OP_TYPE_FORWARD_POINTER:
                    forward += 1
            debug = name.endswith("_g.spv")
            a, why_a = translate(args.spirv, src, os.path.join(tmp, "a.elf"), debug)
            b, why_b = translate(args.spirv, old, os.path.join(tmp, "b.elf"), debug)
            if a is None and b is None:
                continue
            if a is None or b is None:
                failures.append("%s: %s" % (rel, "the original fails (%s), the older form builds" % why_a if a is None
                                            else "the older form fails: %s" % why_b))
            elif a != b:
                failures.append("%s: the older form translates to a different ZE-ISA module" % rel)
            else:
                built += 1
    for f in os.listdir(tmp):
        os.unlink(os.path.join(tmp, f))
    os.rmdir(tmp)
    if max_targets <= 96:
        failures.append("no OpGroupDecorate with more than 96 targets (at most %d)" % max_targets)
    if not forward:
        failures.append("no OpTypeForwardPointer in the older corpus")
    for f in failures:
        print("FAIL:", f)
    print("%d modules in the older form: %d translate to the same ZE-ISA module, the others fail as the originals; "
          "decoration groups of up to %d targets, %d forward pointers" % (pairs, built, max_targets, forward))
    return 1 if failures or not built else 0


if __name__ == "__main__":
    sys.exit(main())
