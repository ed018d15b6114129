#!/usr/bin/env python3
"""The metrics table (driver/metrics/metrics.txt) to the driver's C tables and docs/metrics.md.

    gen_metrics.py --table metrics.txt --events include/zs/oa_events.def --regs include/zs/gpu_regs.def
                   [--c OUT.c] [--doc docs/metrics.md] [--check]

--c writes the C tables and each group's equations compiled to a C function (on the
helpers of driver/zs_metrics_calc.h; driver/zs_metrics_calc.h declares them); --doc writes the page,
or with --check compares it with the file and exits 1 when they differ.  Every equation
is checked here: operands allowed for the group's source, $Name references to earlier
metrics of the same group, stack depth exactly 1 at the end.
"""
import argparse
import pathlib
import re
import sys

SAMPLING = {"EVENT_BASED": 1, "TIME_BASED": 2}  # zet_metric_group_sampling_type_flag_t
METRIC_TYPES = ["DURATION", "EVENT", "EVENT_WITH_RANGE", "THROUGHPUT", "TIMESTAMP", "FLAG", "RATIO", "RAW"]
VALUE_TYPES = {"UINT32": 0, "UINT64": 1, "FLOAT32": 2, "FLOAT64": 3, "BOOL8": 4}  # zet_value_type_t
SOURCES = {"oa": 0, "timestamp": 1}
SYSVARS = ["EuCoresTotalCount", "EuSubslicesTotalCount", "EuThreadsCount", "GpuTimestampFrequency",
           "GpuCoreFrequencyMHz"]
FIELDS = ["ReportReason", "ContextId", "StreamMarker", "QueryBeginTime", "QueryEndTime"]
BINOPS = ["UADD", "USUB", "UMUL", "UDIV", "UMIN", "UMAX", "AND", "OR", "SHL", "SHR",
          "FADD", "FSUB", "FMUL", "FDIV", "FMIN", "FMAX"]
SS_EVENTS = {"SS_EU_ACTIVE": 32, "SS_EU_STALL": 33, "SS_EU_IDLE": 34}
MAX_STACK = 16  # ZS_METRIC_STACK in driver/zs_metrics_calc.h
OA_ONLY = {"GPU_CLOCK", "ReportReason", "ContextId", "StreamMarker"}
TS_ONLY = {"QueryEndTime"}


class TableError(Exception):
    pass


def read_events(path):
    ev = {}
    for m in re.finditer(r'^ZE_OA_EVENT\((\w+),\s*(\d+),\s*"([^"]+)",\s*"([^"]*)"\)', path.read_text(), re.M):
        ev[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))
    if len(ev) != 30:
        raise TableError(f"{path}: expected 30 event lines, found {len(ev)}")
    return ev


def read_regs(path):
    regs = {}
    for m in re.finditer(r'^ZE_REG\((\w+),\s*(0x[0-9a-fA-F]+),', path.read_text(), re.M):
        regs[m.group(1)] = int(m.group(2), 16)
    return regs


def parse_table(path):
    groups, cur = [], None
    for n, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        where = f"{path}:{n}"
        if not line or line.startswith("#"):
            continue
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            cur = {"name": m.group(1), "metrics": [], "line": where}
            groups.append(cur)
            continue
        if cur is None:
            raise TableError(f"{where}: text before the first [group]")
        if "|" in line:
            cols = [c.strip() for c in line.split("|")]
            if len(cols) != 8:
                raise TableError(f"{where}: a metric row has 8 columns, this one {len(cols)}")
            name, where_in, mtype, vtype, units, comp, eq, desc = cols
            cur["metrics"].append({"name": name, "in": where_in, "type": mtype, "value": vtype, "units": units,
                                   "component": comp, "eq": eq, "desc": desc, "line": where})
            continue
        m = re.fullmatch(r"(\w+)\s*=\s*(.*)", line)
        if not m:
            raise TableError(f"{where}: cannot read '{line}'")
        cur[m.group(1)] = m.group(2).strip()
    return groups


def parse_select(text, events, where):
    """16 OA_BC_SEL values, B0-B7 then C0-C7."""
    sel = [0xff] * 16
    if text == "-":
        return sel
    for item in text.split():
        m = re.fullmatch(r"([BC])([0-7]):(\w+)(?:/(0x[0-9a-fA-F]+))?", item)
        if not m:
            raise TableError(f"{where}: bad select item '{item}'")
        idx = (0 if m.group(1) == "B" else 8) + int(m.group(2))
        ev = m.group(3)
        if ev in SS_EVENTS:
            if not m.group(4):
                raise TableError(f"{where}: {ev} needs a sub-slice mask")
            mask = int(m.group(4), 16)
            if not 0 < mask <= 0xffff:
                raise TableError(f"{where}: sub-slice mask out of range")
            val = SS_EVENTS[ev] | mask << 16
        elif ev in events:
            if m.group(4):
                raise TableError(f"{where}: {ev} takes no sub-slice mask")
            val = events[ev][0]
        else:
            raise TableError(f"{where}: unknown event '{ev}'")
        if sel[idx] != 0xff:
            raise TableError(f"{where}: counter {m.group(1)}{m.group(2)} selected twice")
        sel[idx] = val
    return sel


def compile_eq(eq, source, earlier, where):
    """Equation text -> list of (op, arg, imm) tuples; checks operands and stack depth."""
    prog, depth = [], 0
    for tok in eq.split():
        if tok in BINOPS:
            if depth < 2:
                raise TableError(f"{where}: '{tok}' needs two operands")
            depth -= 1
            prog.append((tok, 0, 0))
            continue
        m = re.fullmatch(r"([ABC])(\d+)", tok)
        if m:
            if source != "oa":
                raise TableError(f"{where}: {tok} needs OA reports")
            k, i = m.group(1), int(m.group(2))
            if i > (35 if k == "A" else 7):
                raise TableError(f"{where}: no counter {tok}")
            prog.append((k, i, 0))
        elif tok in ("GPU_CLOCK", "TS", "GPU_TIME") or tok in FIELDS:
            if tok in OA_ONLY and source != "oa":
                raise TableError(f"{where}: {tok} needs OA reports")
            if tok in TS_ONLY and source != "timestamp":
                raise TableError(f"{where}: {tok} needs timestamp raw data")
            prog.append((tok, 0, 0))
        elif tok.startswith("$"):
            name = tok[1:]
            if name in SYSVARS:
                prog.append(("SYS", SYSVARS.index(name), 0))
            elif name in earlier:
                prog.append(("REF", earlier.index(name), 0))
            else:
                raise TableError(f"{where}: '{tok}' is neither a system variable nor an earlier metric of the group")
        elif re.fullmatch(r"\d+", tok):
            v = int(tok)
            if v >= 1 << 64:
                raise TableError(f"{where}: {tok} does not fit 64 bits")
            prog.append(("IMMU", 0, v))
        elif re.fullmatch(r"\d+\.\d*(e[+-]?\d+)?|\d+e[+-]?\d+", tok):
            prog.append(("IMMF", 0, float(tok)))
        else:
            raise TableError(f"{where}: unknown token '{tok}'")
        depth += 1
        if depth > MAX_STACK:
            raise TableError(f"{where}: the equation needs more than {MAX_STACK} stack entries")
    if depth != 1:
        raise TableError(f"{where}: the equation leaves {depth} values (must be 1)")
    return prog


SRC_C = {"oa": "ZS_SOURCE_OA", "timestamp": "ZS_SOURCE_TIMESTAMP"}
U_BIN = {"UADD": "({a} + {c})", "USUB": "({a} - {c})", "UMUL": "({a} * {c})", "AND": "({a} & {c})",
         "OR": "({a} | {c})", "UDIV": "zs_m_udiv({a}, {c})", "UMIN": "zs_m_umin({a}, {c})",
         "UMAX": "zs_m_umax({a}, {c})", "SHL": "zs_m_shl({a}, {c})", "SHR": "zs_m_shr({a}, {c})"}
F_BIN = {"FADD": "({a} + {c})", "FSUB": "({a} - {c})", "FMUL": "({a} * {c})", "FDIV": "zs_m_fdiv({a}, {c})",
         "FMIN": "zs_m_fmin({a}, {c})", "FMAX": "zs_m_fmax({a}, {c})"}


def c_metric(prog, source, earlier_value_types, mi, value_type):
    """One metric as C statements (the equation compiled at build time, docs/metrics.md's
    precision rule made explicit: every value is a uint64_t or a double expression, an F
    operation converts integer operands with (double), a U operation double operands with
    zs_m_f2u).  Defines r<mi> (integer results) or r<mi>_f (FLOAT32: the float as a double)
    for later $Name references and fills out[mi]."""
    src = SRC_C[source]
    st = []  # (C expression, is double)
    for op, arg, imm in prog:
        if op in BINOPS:
            (a, af), (c, cf) = st[-2], st[-1]
            if op.startswith("F"):
                a = a if af else f"(double){a}"
                c = c if cf else f"(double){c}"
                st[-2:] = [(F_BIN[op].format(a=a, c=c), True)]
            else:
                a = f"zs_m_f2u({a})" if af else a
                c = f"zs_m_f2u({c})" if cf else c
                st[-2:] = [(U_BIN[op].format(a=a, c=c), False)]
            continue
        if op in ("A", "B", "C"):
            e = f"zs_m_{op.lower()}(b, e, {arg})"
        elif op == "GPU_CLOCK":
            e = "zs_m_clock(b, e)"
        elif op == "TS":
            e = f"zs_m_ts({src}, b, e)"
        elif op == "GPU_TIME":
            e = f"zs_m_ns(zs_m_ts({src}, b, e), hz)"
        elif op == "SYS":
            e = f"env->sys[{arg}]"
        elif op == "REF":
            if earlier_value_types[arg] == "FLOAT32":
                st.append((f"r{arg}_f", True))
                continue
            e = f"r{arg}"
        elif op == "IMMU":
            e = f"UINT64_C({imm})"
        elif op == "IMMF":
            st.append((f"{float(imm).hex()}", True))
            continue
        elif op == "ReportReason":
            e = "(uint64_t)zs_oa_reason(e)"
        elif op == "ContextId":
            e = "(uint64_t)zs_oa_dw(e, ZS_OA_DW_CONTEXT)"
        elif op == "StreamMarker":
            e = "(uint64_t)zs_oa_dw(e, ZS_OA_DW_A + ZS_OA_MARKER_COUNTER)"
        elif op == "QueryBeginTime":
            e = f"zs_m_ns(zs_m_ts_begin({src}, b), hz)"
        elif op == "QueryEndTime":
            e = f"zs_m_ns(zs_m_ts_end({src}, b, e), hz)"
        else:
            raise TableError(f"internal: no C for {op}")
        st.append((e, False))
    (x, xf), = st
    if value_type == "FLOAT32":
        d = x if xf else f"(double){x}"
        return (f"\tout[{mi}].type = ZET_VALUE_TYPE_FLOAT32;\n\tout[{mi}].value.fp32 = (float)({d});\n"
                f"\tconst double r{mi}_f = out[{mi}].value.fp32;\n\t(void)r{mi}_f;\n")
    u = f"zs_m_f2u({x})" if xf else x
    if value_type == "UINT32":
        return (f"\tconst uint64_t r{mi} = (uint32_t)({u});\n\t(void)r{mi};\n"
                f"\tout[{mi}].type = ZET_VALUE_TYPE_UINT32;\n\tout[{mi}].value.ui32 = (uint32_t)r{mi};\n")
    if value_type == "BOOL8":
        return (f"\tconst uint64_t r{mi} = ({u}) != 0;\n\t(void)r{mi};\n"
                f"\tout[{mi}].type = ZET_VALUE_TYPE_BOOL8;\n\tout[{mi}].value.b8 = (ze_bool_t)r{mi};\n")
    return (f"\tconst uint64_t r{mi} = {u};\n\t(void)r{mi};\n"
            f"\tout[{mi}].type = ZET_VALUE_TYPE_UINT64;\n\tout[{mi}].value.ui64 = r{mi};\n")


def build(table, events, regs):
    """The API groups: one per (table group, sampling type)."""
    out, names_domains = [], set()
    for g in table:
        where = g["line"]
        for key in ("sampling", "domain", "source", "description"):
            if key not in g:
                raise TableError(f"{where}: group {g['name']} has no '{key}'")
        if g["source"] not in SOURCES:
            raise TableError(f"{where}: unknown source '{g['source']}'")
        sel = parse_select(g.get("select", "-"), events, where) if g["source"] == "oa" else None
        if g["source"] != "oa" and "select" in g:
            raise TableError(f"{where}: only oa groups program OA_BC_SEL")
        for s in g["sampling"].split():
            if s not in SAMPLING:
                raise TableError(f"{where}: unknown sampling '{s}'")
            if g["source"] == "timestamp" and s != "EVENT_BASED":
                raise TableError(f"{where}: timestamp groups are EVENT_BASED only")
            if (g["name"], s) in names_domains:
                raise TableError(f"{where}: group {g['name']} {s} twice")
            names_domains.add((g["name"], s))
            letter = "T" if s == "TIME_BASED" else "E"
            metrics, names = [], []
            for m in g["metrics"]:
                if m["in"] not in ("T", "E", "TE"):
                    raise TableError(f"{m['line']}: 'in' must be T, E or TE")
                if letter not in m["in"]:
                    continue
                if m["type"] not in METRIC_TYPES:
                    raise TableError(f"{m['line']}: unknown metric type '{m['type']}'")
                if m["value"] not in VALUE_TYPES or m["value"] == "FLOAT64":
                    raise TableError(f"{m['line']}: value type must be UINT32, UINT64, FLOAT32 or BOOL8")
                if m["name"] in names:
                    raise TableError(f"{m['line']}: metric {m['name']} twice in the group")
                prog = compile_eq(m["eq"], g["source"], names, m["line"])
                metrics.append(dict(m, prog=prog, code=c_metric(prog, g["source"], [x["value"] for x in metrics],
                                                                  len(metrics), m["value"])))
                names.append(m["name"])
            if len(metrics) > 256:
                raise TableError(f"{where}: more than 256 metrics (zs_metrics_calc.c keeps 256 results)")
            if not metrics:
                raise TableError(f"{where}: group {g['name']} {s} has no metric")
            out.append({"name": g["name"], "desc": g["description"], "sampling": s, "domain": int(g["domain"]),
                        "source": g["source"], "select": sel, "metrics": metrics})
    if "OA_MARKER" not in regs or not regs.get("OA_BC_SEL0") or any(f"OA_BC_SEL{i}" not in regs for i in range(16)):
        raise TableError("gpu_regs.def: OA_BC_SEL0-15 missing")
    return out


def cstr(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gen_c(groups, regs):
    lines = ["/* Generated by driver/metrics/gen_metrics.py from driver/metrics/metrics.txt: do not edit. */",
             '#include "zs_metrics_calc.h"', ""]
    for gi, g in enumerate(groups):
        lines.append(f"/* {g['name']} ({g['sampling']}) */")
        lines.append(f"static void eval_{gi}(const uint8_t *b, const uint8_t *e, const zs_metric_env_t *env, "
                     "zet_typed_value_t *out)")
        lines.append("{")
        lines.append("\tconst uint64_t hz = env->sys[ZS_SYS_TIMESTAMP_HZ];")
        lines.append("\t(void)hz;\n\t(void)b;\n\t(void)e;")
        for mi, m in enumerate(g["metrics"]):
            lines.append(f"\t/* {m['name']} = {m['eq']} */")
            lines.append(m["code"].rstrip("\n"))
        lines.append("}")
        lines.append(f"static const zs_metric_def_t metrics_{gi}[] = {{")
        for m in g["metrics"]:
            lines.append(f"\t{{{cstr(m['name'])}, {cstr(m['desc'])}, {cstr(m['component'])}, "
                         f"{cstr(m['units'])}, {METRIC_TYPES.index(m['type'])}, {VALUE_TYPES[m['value']]}, "
                         f"{cstr(m['eq'])}}},")
        lines.append("};")
        if g["select"] is not None:
            pairs = ", ".join(f"{{0x{regs[f'OA_BC_SEL{i}']:04x}, 0x{v:08x}}}" for i, v in enumerate(g["select"]))
            lines.append(f"static const uint32_t regs_{gi}[][2] = {{{pairs}}};")
        lines.append("")
    lines.append("const zs_metric_group_def_t zs_metric_groups[] = {")
    for gi, g in enumerate(groups):
        regs_ref = f"regs_{gi}, 16" if g["select"] is not None else "NULL, 0"
        lines.append(f"\t{{{cstr(g['name'])}, {cstr(g['desc'])}, {SAMPLING[g['sampling']]}, {g['domain']}, "
                     f"{SOURCES[g['source']]}, metrics_{gi}, {len(g['metrics'])}, {regs_ref}, eval_{gi}}},")
    lines.append("};")
    lines.append(f"const uint32_t zs_metric_group_count = {len(groups)};")
    lines.append(f"const uint32_t zs_oa_marker_reg = 0x{regs['OA_MARKER']:04x}; /* gpu_regs.def OA_MARKER */")
    return "\n".join(lines) + "\n"


DOC_HEAD = """# Metrics: the metric groups of the Level Zero driver

Generated by `driver/metrics/gen_metrics.py` from `driver/metrics/metrics.txt` (the one
table: the driver's C tables, this page and the Python reference evaluator
`tests/stimulus/metrics_ref.py` all read it); CTest `metrics_doc_in_sync` fails when this
page is stale. Edit the table, then `python3 driver/metrics/gen_metrics.py --table
driver/metrics/metrics.txt --events include/zs/oa_events.def --regs include/zs/gpu_regs.def
--doc docs/metrics.md`.

The API is enabled by `ZET_ENABLE_METRICS=1` at `zeInit` (driver/README.md, "Metrics").
The driver runs the equations as C code the generator makes from them (one function per
group, following the precision rule below); `tests/stimulus/metrics_ref.py` interprets the
same text.

## Groups and domains

Every table group with both sampling types is two API groups of the same name, one
`ZET_METRIC_GROUP_SAMPLING_TYPE_FLAG_TIME_BASED` (streamer) and one `..._EVENT_BASED`
(queries), in the order below. Groups of the same domain cannot be active together
(`zetContextActivateMetricGroups` returns `ZE_RESULT_ERROR_INVALID_ARGUMENT`).

- **Domain 0 — the OA block** (`docs/oa.md` §4). A group is a programming of the 16
  `OA_BC_SEL` registers (what `ADD_CONFIG` gets; counters not listed are written `0xff`,
  counting nothing). A0–A29 count the event lines of `include/zs/oa_events.def`
  whatever the group.
- **Domain 1 — command-streamer timestamps.** `CommandTimestamps` does not use the OA
  block: a query's begin and end are `TIMESTAMP_WRITE`s of the 64-bit GPU timestamp into
  the query's slot, so it can be active, and queried in the same command list, together
  with any domain-0 group. It measures what kernel timestamps measure (elapsed time
  between two points of the command stream, after all earlier work completed) — the
  honest second domain of a GPU with one OA unit.

## Raw data

| source | streamer (TIME_BASED) | query (EVENT_BASED) |
|---|---|---|
| `oa` | the OA buffer's 256-byte reports (`include/zs/oa_report.h`) as `read()` returns them; `zetMetricGroupCalculateMetricValues` gives one result set per **consecutive pair** of reports (N reports → N − 1 sets) | 512 bytes per query: the begin report then the end report (`REPORT_PERF_COUNT`); one result set per query |
| `timestamp` | — | 16 bytes per query: begin and end timestamp (u64, little-endian) |

`rawDataSize` must be a multiple of the unit (256, 512 or 16 bytes), else
`ZE_RESULT_ERROR_INVALID_SIZE`. Every result set has exactly `metricCount` values, in the
order of `zetMetricGet`.

## Equations

Each metric is an RPN equation evaluated on a stack. Operands:

| operand | value |
|---|---|
| `A`*n* | delta of counter A*n* between the begin and the end report: A0–A31 40-bit, `(end − begin) mod 2^40`; A32–A35 32-bit, `(end − begin) mod 2^32` |
| `B`*n*, `C`*n* | delta of B*n* / C*n* (n 0–7), `mod 2^32` |
| `GPU_CLOCK` | delta of the GPU ticks (DW3), `mod 2^32` (oa only) |
| `TS` | delta of the timestamps: oa DW1 `mod 2^32`; timestamp source the 64-bit values `mod 2^64` |
| `GPU_TIME` | `floor(TS × 10^9 / $GpuTimestampFrequency)`, computed exactly (128-bit), then `mod 2^64`; 0 if the frequency is 0 |
| `QueryBeginTime`, `QueryEndTime` | `floor(ts × 10^9 / $GpuTimestampFrequency) mod 2^64` of the begin / end timestamp (oa: the 32-bit DW1, so it wraps every 2^32 ticks; timestamp source: 64-bit). `QueryEndTime`: timestamp source only |
| `ReportReason` | the end report's reason bits (DW0 bits 24:19; query reports carry the report id there instead) (oa) |
| `ContextId` | the end report's DW2 (oa) |
| `StreamMarker` | the end report's A35 (the last `OA_MARKER` value, not a delta) (oa) |
| `$EuCoresTotalCount` | EUs of the device |
| `$EuSubslicesTotalCount` | sub-slices of the device |
| `$EuThreadsCount` | hardware threads per EU |
| `$GpuTimestampFrequency` | timestamp clock in Hz |
| `$GpuCoreFrequencyMHz` | core clock in MHz |
| `$`*Name* | the value of an earlier metric of the same group, as that metric's result (its result type) |
| *digits* | an unsigned 64-bit integer; with `.` or `e`, a double |

Operations pop two values (*a* below *b*) and push one: `UADD USUB UMUL UDIV UMIN UMAX
AND OR SHL SHR` on unsigned 64-bit integers (wrapping mod 2^64; `UDIV` by 0 gives 0;
shifts by ≥ 64 give 0), `FADD FSUB FMUL FDIV FMIN FMAX` on doubles (`FDIV` by 0 gives 0;
`FMIN`/`FMAX` return *a* unless *b* is smaller / larger).

**Precision rule** (the driver and the reference follow it to the bit): every value on
the stack is either an unsigned 64-bit integer or an IEEE double. An `F` operation
converts an integer operand to double (round to nearest even) and computes in double; a
`U` operation converts a double operand to an integer by truncation toward zero (NaN and
negative values give 0, values ≥ 2^64 give 2^64 − 1). The final value is converted once
to the metric's result type: `FLOAT32` rounds the double (or the converted integer) to
float, round to nearest even; `UINT64`/`UINT32`/`BOOL8` truncate a double as above, then
`UINT32` keeps the low 32 bits and `BOOL8` is 1 for any non-zero value. A `FLOAT32`
metric whose final value is an integer converts it to double first (round to nearest
even), then to float. There is no intermediate rounding to float.

## Register programming (OA_BC_SEL)

Event 32 / 33 / 34 count the EU active / stall / idle cycles of the EUs of the sub-slices
in the mask (bits 31:16; global sub-slice index = slice × sub-slices per slice +
sub-slice); 0–29 an event line; `0xff` nothing (`docs/oa.md` §4.1).
"""


def gen_doc(groups, events):
    out = [DOC_HEAD]
    seen = set()
    for g in groups:
        if g["select"] is None or g["name"] in seen:
            continue
        seen.add(g["name"])
        out.append(f"\n**{g['name']}**: ")
        items = []
        for i, v in enumerate(g["select"]):
            if v == 0xff:
                continue
            c = ("B" if i < 8 else "C") + str(i % 8)
            ev = v & 0xff
            name = next((n for n, e in events.items() if e[0] == ev), None)
            if name is None:
                name = next(n for n, e in SS_EVENTS.items() if e == ev) + f" mask 0x{v >> 16:04x}"
            items.append(f"{c} = {name} (`0x{v:08x}`)")
        out.append(", ".join(items) + "." if items else "every counter `0xff` (only A counters are used).")
        out.append("\n")
    out.append("\n## The groups\n")
    for g in groups:
        out.append(f"\n### {g['name']} ({g['sampling']}, domain {g['domain']}, {len(g['metrics'])} metrics)\n")
        out.append(f"\n{g['desc']}. Source: `{g['source']}`.\n")
        out.append("\n| # | name | type | result | units | component | equation | description |\n")
        out.append("|---|---|---|---|---|---|---|---|\n")
        for i, m in enumerate(g["metrics"]):
            out.append(f"| {i} | {m['name']} | {m['type']} | {m['value']} | {m['units']} | {m['component']} | "
                       f"`{m['eq']}` | {m['desc']} |\n")
    return "".join(out)


def main():
    ap = argparse.ArgumentParser()
    root = pathlib.Path(__file__).resolve().parents[2]
    ap.add_argument("--table", type=pathlib.Path, default=root / "driver/metrics/metrics.txt")
    ap.add_argument("--events", type=pathlib.Path, default=root / "include/zs/oa_events.def")
    ap.add_argument("--regs", type=pathlib.Path, default=root / "include/zs/gpu_regs.def")
    ap.add_argument("--c", type=pathlib.Path)
    ap.add_argument("--doc", type=pathlib.Path)
    ap.add_argument("--check", action="store_true", help="compare --doc with the generated page")
    a = ap.parse_args()
    try:
        events = read_events(a.events)
        regs = read_regs(a.regs)
        groups = build(parse_table(a.table), events, regs)
    except TableError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if a.c:
        a.c.write_text(gen_c(groups, regs))
    if a.doc:
        text = gen_doc(groups, events)
        if a.check:
            if not a.doc.exists() or a.doc.read_text() != text:
                print(f"{a.doc} is out of date: run {sys.argv[0]} --doc {a.doc}", file=sys.stderr)
                return 1
        else:
            a.doc.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
