#!/usr/bin/env python3
"""Regenerate (or --check) the hardware-interface tables: the `registers` block of
docs/mmio.md from include/zs/gpu_regs.def and the `commands` block of
docs/commands.md from include/zs/gpu_cmds.def.  A page gets the blocks it contains.

    gen_hw_docs.py DOC [--check]"""
import pathlib
import re

from docgen_common import block, fill, main

INCLUDE = pathlib.Path(__file__).resolve().parents[1] / "include" / "zs"
# One entry per line; #define / #ifdef lines and comments do not match.
REG_RE = re.compile(r'^ZE_REG\(\s*(\w+)\s*,\s*(0x[0-9a-fA-F]+)\s*,\s*(RO|RW|W1C|WO)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*\)\s*$')
CMD_RE = re.compile(r'^ZE_CMD\(\s*(\w+)\s*,\s*(0x[0-9a-fA-F]+)\s*,\s*(\d+)\s*,\s*"([^"]*)"\s*\)\s*$')


def entries(name, macro, regex):
    path = INCLUDE / name
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.startswith(macro + "("):
            m = regex.match(line)
            if not m:
                raise SystemExit(f"gen_hw_docs: {path}:{n}: malformed {macro} entry")
            yield m.groups()


def cell(text):
    return "—" if text in ("", "-") else text.replace("|", "\\|")


def hex32(text):
    v = int(text, 0)
    return f"0x{v:08x}" if v else "0"


def registers():
    return ["| offset | register | access | reset | description |", "|---|---|---|---|---|"] + [
        f"| 0x{int(off, 16):04x} | `{name}` | {acc} | {hex32(reset)} | {cell(desc)} |"
        for name, off, acc, reset, desc in entries("gpu_regs.def", "ZE_REG", REG_RE)]


def commands():
    return ["| opcode | command | dwords | operands (dword 1, 2, … after the header) |", "|---|---|---|---|"] + [
        f"| 0x{int(op, 16):02x} | `{name}` | {dw} | {cell(desc)} |"
        for name, op, dw, desc in entries("gpu_cmds.def", "ZE_CMD", CMD_RE)]


TABLES = {"registers": (registers, "gpu_regs.def"), "commands": (commands, "gpu_cmds.def")}


def render(text):
    found = [name for name in TABLES if block(name).search(text)]
    if not found:
        raise SystemExit(f"gen_hw_docs: no GENERATED block ({' or '.join(TABLES)})")
    for name in found:
        text = fill(text, name, TABLES[name][0](), "gen_hw_docs")
    return text, " and ".join(TABLES[name][1] for name in found)


if __name__ == "__main__":
    main("gen_hw_docs.py", render)
