#!/usr/bin/env python3
"""Malformed ELF modules: every corruption of a valid module must be rejected
by zesim-dis with exit 1 and a message naming the offending field (the
wording of docs/module-format.md "What the reader checks"), never a crash or
a sanitizer report.  Truncations at many lengths are checked the same way."""
import argparse
import pathlib
import struct
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
    for f in failures:
        print("FAIL", f)
    print(f"malformed ELF: {n - len(failures)}/{n} inputs rejected as expected")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
