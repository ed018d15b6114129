#!/usr/bin/env python3
"""Malformed ELF modules: every corruption of a valid module must be rejected
by zesim-dis with exit 1 and a message naming the offending field (the
wording of docs/module-format.md "What the reader checks"), never a crash or
a sanitizer report.  Truncations at many lengths are checked the same way.
With --spirv, the same for a module with a data segment, printf formats and
variables (.zesim.data, .zesim.printf, STT_OBJECT symbols), written by
zesim-spirv from a test kernel."""
import argparse
import pathlib
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402

SOURCE = """\
.kernel k
.simd 8
.arg out global
.arg n value 4
        mov (8) r10:f r1:ud
        call sq
        send.eot
.func sq
        mul (8) r11:f r10:f r10:f
        ret
"""

# A kernel with a required group size: a version 2 kernel note (48-byte header).
REQD_SOURCE = """\
.kernel k
.simd 8
.reqd_group_size 8 4 1
.arg out global
        send.eot
"""

SHDR = struct.Struct("<IIQQQQIIQQ")  # name type flags addr offset size link info align entsize


def sections(img):
    shoff, = struct.unpack_from("<Q", img, 40)
    shnum, shstrndx = struct.unpack_from("<HH", img, 60)
    hdrs = [SHDR.unpack_from(img, shoff + i * 64) for i in range(shnum)]
    stroff = hdrs[shstrndx][4]
    out = {}
    for i, h in enumerate(hdrs):
        name = img[stroff + h[0]:img.index(b"\0", stroff + h[0])].decode()
        out[name] = (i, shoff + i * 64, h)
    return out


def patch(img, fmt, off, value):
    b = bytearray(img)
    struct.pack_into(fmt, b, off, value)
    return bytes(b)


def cases(img):
    s = sections(img)
    text_i, text_h, text = s[".text.k"]
    note_off = s[".note.zesim"][2][4]
    desc = note_off + 12 + 8
    sym_h = s[".symtab"][1]
    sym1 = s[".symtab"][2][4] + 24
    dl_off = s[".debug_line"][2][4]
    yield "wrong machine", patch(img, "<H", 18, 0x3E), "e_machine = 0x3e"
    yield "32-bit class", patch(img, "<B", 4, 1), "EI_CLASS"
    yield "big-endian", patch(img, "<B", 5, 2), "expected little-endian"
    yield "bad magic", b"\x7fELG" + img[4:], "bad magic"
    yield "section table past the end", patch(img, "<Q", 40, 0xFFFFFFFFFFFF0000), "section header table"
    shoff, = struct.unpack_from("<Q", img, 40)
    yield "misaligned section table", patch(img, "<Q", 40, shoff - 4), "not 8-byte aligned"
    yield "huge e_shnum", patch(img, "<H", 60, 0xFFFF), "e_shnum = 65535 out of range"
    yield "bad e_shstrndx", patch(img, "<H", 62, len(s) + 3), "e_shstrndx"
    yield "program headers", patch(img, "<H", 56, 1), "e_phnum = 1"
    yield "text offset huge", patch(img, "<Q", text_h + 24, 1 << 60), "runs past the end"
    yield "text size huge", patch(img, "<Q", text_h + 32, 1 << 62), "runs past the end"
    yield "text size not 16n", patch(img, "<Q", text_h + 32, 20), "not a multiple of 16"
    yield "text address wraps", patch(img, "<Q", text_h + 16, 0xFFFFFFFFFFFFFF80), "instruction heap"
    yield "text address misaligned", patch(img, "<Q", text_h + 16, 0x10), "not 64-byte aligned"
    yield "section name offset", patch(img, "<I", text_h, 0xFFFFFF), "name offset"
    yield "overlapping sections", patch(img, "<Q", s[".strtab"][1] + 24, text[4]), "overlap"
    yield "note descsz huge", patch(img, "<I", note_off + 4, 0xFFFFFFF0), "run past .note.zesim"
    yield "note owner", patch(img, "<B", note_off + 12, ord("X")), 'owner is not "ZESIM"'
    yield "note simd", patch(img, "<I", desc + 4, 32), "simd_width 32"
    yield "note num_args", patch(img, "<I", desc + 20, 1000), "num_args = 1000 exceeds"
    yield "note arg kind", patch(img, "<I", desc + 32, 9), "unknown kind 9"
    yield "note arg outside", patch(img, "<I", desc + 32 + 4, 4096), "outside the"
    yield "symtab link", patch(img, "<I", sym_h + 40, 0), "sh_link 0 is not a string table"
    yield "symbol outside", patch(img, "<Q", sym1 + 8, 1 << 40), "lies outside"
    yield "debug_line unit", patch(img, "<I", dl_off, 0x7FFFFFF0), ".debug_line: unit at offset 0"
    yield "empty file", b"", "shorter than an ELF64 header"
    yield "note version 3", patch(img, "<I", desc, 3), "version 3, expected 1 or 2"
    yield "note version 2 without its fields", patch(img, "<I", desc, 2), "does not match num_args"


def reqd_cases(img):
    """Corruptions of a version 2 kernel note (reqd_group_size)."""
    s = sections(img)
    note_off = s[".note.zesim"][2][4]
    desc = note_off + 12 + 8
    assert struct.unpack_from("<4I", img, desc + 32) == (8, 4, 1, 0), "not a version 2 note"
    yield "reqd x 0", patch(img, "<I", desc + 32, 0), "reqd_group_size 0x4x1"
    yield "reqd z 0", patch(img, "<I", desc + 40, 0), "reqd_group_size 8x4x0"
    yield "reqd too large", patch(img, "<I", desc + 36, 8193), "reqd_group_size 8x8193x1"
    yield "reqd overflow", patch(patch(img, "<I", desc + 32, 0xFFFFFFFF), "<I", desc + 36, 0xFFFFFFFF), \
        "reqd_group_size 4294967295x4294967295x1"
    yield "reqd reserved", patch(img, "<I", desc + 44, 5), "reserved field at offset 44 is 5"
    yield "reqd as version 1", patch(img, "<I", desc, 1), "does not match num_args"


SYM = struct.Struct("<IBBHQQ")  # name info other shndx value size


def symbols(img, s):
    """(index, file offset, name, info, shndx) of every symbol."""
    _, _, sym = s[".symtab"]
    _, _, st = s[".strtab"]
    out = []
    for i in range(sym[5] // 24):
        off = sym[4] + 24 * i
        name, info, _, shndx, _, _ = SYM.unpack_from(img, off)
        end = img.index(b"\0", st[4] + name)
        out.append((i, off, img[st[4] + name:end].decode(), info, shndx))
    return out


def data_cases(img):
    """Corruptions of the data segment, the printf formats and the variables."""
    s = sections(img)
    data_i, data_h, data = s[".zesim.data"]
    pf_i, pf_h, pf = s[".zesim.printf"]
    objs = [x for x in symbols(img, s) if x[3] & 0xF == 1]  # STT_OBJECT
    glob = [x for x in objs if x[3] >> 4 == 1]
    local = [x for x in objs if x[3] >> 4 == 0]
    assert glob and local, "the data module needs exported and local variables"
    e0 = pf[4]  # the first printf entry
    nargs0, = struct.unpack_from("<I", img, e0 + 4)
    size0, = struct.unpack_from("<I", img, e0)
    yield "data as NOBITS", patch(img, "<I", data_h + 4, 8), ".zesim.data has type 8"
    yield "data flags", patch(img, "<Q", data_h + 8, 0), "flags 0x0, expected SHF_ALLOC|SHF_WRITE"
    yield "data address", patch(img, "<Q", data_h + 16, 0x1000), "sh_addr 0x1000, expected 0"
    yield "data alignment", patch(img, "<Q", data_h + 48, 12), "sh_addralign 12 is not a power of two"
    yield "data empty", patch(img, "<Q", data_h + 32, 0), ".zesim.data: size 0 out of range"
    yield "data size huge", patch(img, "<Q", data_h + 32, 1 << 40), "runs past the end"
    yield "two data sections", patch(img, "<I", pf_h, data[0]), "two .zesim.data sections"
    names = s[".shstrtab"][2][4]
    pf_name = names + pf[0]
    yield "unknown .zesim section", patch(img, "<B", pf_name + 8, ord("q")), "unknown section .zesim.pqintf"
    yield "printf entry size", patch(img, "<I", e0, 5), ".zesim.printf: entry 0 has size 5"
    yield "printf entry past the end", patch(img, "<I", e0, pf[5] + 4), ".zesim.printf: entry 0 has size"
    yield "printf arguments", patch(img, "<I", e0 + 4, 1000), "1000 arguments do not fit"
    yield "printf argument kind", patch(img, "<I", e0 + 8, 0x99), "argument 0 has invalid kind 0x99"
    yield "printf vector size", patch(img, "<I", e0 + 8, 0x501), "argument 0 has invalid kind 0x501"
    fmt = e0 + 8 + 4 * nargs0
    b = bytearray(img)
    b[fmt:e0 + size0] = b"A" * (e0 + size0 - fmt)
    yield "printf format without NUL", bytes(b), ".zesim.printf: entry 0: format not NUL-terminated"
    yield "printf size", patch(img, "<Q", pf_h + 32, pf[5] - 2), "is not a positive multiple of 4"
    yield "printf flags", patch(img, "<Q", pf_h + 8, 2), ".zesim.printf has type 1 and flags 0x2"
    g = glob[0]
    yield "variable outside", patch(img, "<Q", g[1] + 8, data[5] - 1), f"object symbol {g[2]} (value"
    yield "variable too large", patch(img, "<Q", g[1] + 16, 1 << 33), f"object symbol {g[2]} (value"
    yield "variable in text", patch(img, "<H", g[1] + 6, 1), f"object symbol {g[2]} is not in .zesim.data"
    yield "function in data", patch(img, "<B", g[1] + 4, 0x12), f"symbol {g[2]} in .zesim.data is not an object"
    twice = patch(img, "<B", local[0][1] + 4, 0x11)
    twice = patch(twice, "<I", local[0][1], struct.unpack_from("<I", img, g[1])[0])
    yield "variable exported twice", twice, f"object symbol {g[2]} is exported twice"


def run(dis, tmp, name, data, expect):
    path = pathlib.Path(tmp) / "m.elf"
    path.write_bytes(data)
    r = zetools.disassemble(dis, path)
    problems = []
    if r.returncode != 1:
        problems.append(f"exit {r.returncode}, expected 1")
    report = zetools.sanitizer_report(r.stderr)
    if report:
        problems.append("sanitizer: " + report)
    if expect not in r.stderr:
        problems.append(f"message lacks '{expect}'")
    return f"{name}: {'; '.join(problems)}\n--- stderr: {r.stderr.strip()}" if problems else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--dis", required=True)
    ap.add_argument("--spirv", help="zesim-spirv, to write a module with data and printf formats")
    ap.add_argument("--spirv-module", help="the SPIR-V module it translates")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "good.zeasm"
        src.write_text(SOURCE)
        good = pathlib.Path(tmp) / "good.elf"
        r = zetools.assemble(a.as_path, src, good, debug=True)
        if r.returncode:
            sys.exit("cannot build the good module: " + r.stderr)
        img = good.read_bytes()
        ok = zetools.disassemble(a.dis, good)
        if ok.returncode:
            sys.exit("the good module is rejected: " + ok.stderr)
        failures = []
        n = 0
        for name, data, expect in cases(img):
            n += 1
            f = run(a.dis, tmp, name, data, expect)
            if f:
                failures.append(f)
        # Truncation anywhere must be rejected ("zesim-dis:" names the file).
        for cut in sorted(set(range(0, len(img), max(1, len(img) // 48))) | {len(img) - 1}):
            n += 1
            f = run(a.dis, tmp, f"truncated to {cut}", img[:cut], "zesim-dis:")
            if f:
                failures.append(f)
        # Version 2 notes: the good one reads back, its corruptions do not.
        src.write_text(REQD_SOURCE)
        r = zetools.assemble(a.as_path, src, good)
        if r.returncode:
            sys.exit("cannot build the module with a required group size: " + r.stderr)
        ok = zetools.disassemble(a.dis, good)
        if ok.returncode or ".reqd_group_size 8 4 1\n" not in ok.stdout:
            sys.exit("the module with a required group size does not read back: " + ok.stderr + ok.stdout)
        back = pathlib.Path(tmp) / "back.zeasm"
        back.write_text(ok.stdout)
        again = pathlib.Path(tmp) / "again.elf"
        r = zetools.assemble(a.as_path, back, again)
        if r.returncode or again.read_bytes() != good.read_bytes():
            sys.exit("the disassembly of the module with a required group size does not assemble to the "
                     "same module: " + r.stderr + ok.stdout)
        for name, data, expect in reqd_cases(good.read_bytes()):
            n += 1
            f = run(a.dis, tmp, name, data, expect)
            if f:
                failures.append(f)
        if a.spirv:
            data = pathlib.Path(tmp) / "data.elf"
            r = subprocess.run([a.spirv, "-o", str(data), a.spirv_module], capture_output=True, text=True)
            if r.returncode:
                sys.exit("cannot build the module with data: " + r.stderr)
            img = data.read_bytes()
            ok = zetools.disassemble(a.dis, data)
            if ok.returncode:
                sys.exit("the module with data is rejected: " + ok.stderr)
            for name, bad, expect in data_cases(img):
                n += 1
                f = run(a.dis, tmp, name, bad, expect)
                if f:
                    failures.append(f)
            for cut in sorted(set(range(0, len(img), max(1, len(img) // 48))) | {len(img) - 1}):
                n += 1
                f = run(a.dis, tmp, f"data module truncated to {cut}", img[:cut], "zesim-dis:")
                if f:
                    failures.append(f)
    for f in failures:
        print("FAIL", f)
    print(f"malformed ELF: {n - len(failures)}/{n} inputs rejected as expected")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
