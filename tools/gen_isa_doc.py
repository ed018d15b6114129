#!/usr/bin/env python3
"""Regenerate (or --check) the tables of docs/isa.md from include/zs/ze_isa.def.

Each table sits between `<!-- BEGIN GENERATED: name -->` and
`<!-- END GENERATED: name -->`; the text around them is hand-written."""
import pathlib
import sys

from docgen_common import fill, main

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "stimulus"))
from zeisa import load_isa  # noqa: E402

FLAG_NAMES = {"Z_CMOD": "cmod", "Z_S1": "simd1", "Z_JIP": "jip", "Z_NOTYPE": "notype"}


def flags(fs):
    return " ".join(FLAG_NAMES[f] for f in sorted(fs, key=list(FLAG_NAMES).index))


def letters(s):
    return " ".join(s) if s else "—"


def tables(isa):
    yield "arf", ["| register | number | dwords | writable by `mov` |", "|---|---|---|---|"] + [
        f"| `{a.name}` | {a.code} | {a.dwords} | {'yes' if a.writable else 'no'} |" for a in isa.arfs]
    yield "types", ["| suffix | code | bytes |", "|---|---|---|"] + [
        f"| `:{t.name}` | {t.code} | {t.nbytes} |" for t in isa.types]
    yield "cmods", ["| name | code |", "|---|---|"] + [
        f"| {'`' + c.name + '`' if c.name else '(none)'} | {c.code} |" for c in isa.cmods]
    yield "opcodes", ["| opcode | mnemonic | operands | latency class | flags |", "|---|---|---|---|---|"] + [
        f"| 0x{o.code:02x} | `{o.name}` | {letters(o.operands)} | {o.latency.name} | {flags(o.flags)} |"
        for o in isa.ops]
    yield "messages", ["| id | message | operands | flags |", "|---|---|---|---|"] + [
        f"| {m.code} | `send.{m.name}` | {letters(m.operands)} | {flags(m.flags)} |" for m in isa.msgs]
    yield "atomics", ["| code | atomic | payload elements |", "|---|---|---|"] + [
        f"| {a.code} | `{a.name}` | {a.payload} |" for a in isa.atomics]
    yield "latency", ["| class | latency (EU cycles) |", "|---|---|"] + [
        f"| {l.name} | {l.cycles} |" for l in isa.latencies.values()]


def render(text, isa):
    for name, rows in tables(isa):
        text = fill(text, name, rows, "gen_isa_doc")
    return text


if __name__ == "__main__":
    main("gen_isa_doc.py", lambda text: (render(text, load_isa()), "ze_isa.def"))
