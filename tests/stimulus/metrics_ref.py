#!/usr/bin/env python3
"""Reference evaluator of the metric equations (docs/metrics.md), independent of the driver.

It reads the table text itself (driver/metrics/metrics.txt) and include/zs/oa_events.def,
and evaluates every metric of a group with Python integers and floats under the
documented precision rule (u64 or double on the stack; F ops in double; U ops truncate
doubles; one final conversion, FLOAT32 by rounding the double to float).  Operands come
either from two raw records (OA reports or a query's timestamps) or from the ground-truth
ledger's event counts over the same cycles (docs/oa.md sections 2-4).

    metrics_ref.py --group N --raw FILE --env EUS,SUBSLICES,THREADS,TS_HZ,CORE_MHZ [--table T --events E]

prints, for every result set of the raw data, one line per metric: "u VALUE" for integer
results (UINT32, UINT64, BOOL8) and "f BITS" (the float32 bits, hex) for FLOAT32.
"""
import argparse
import pathlib
import re
import struct
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "driver/metrics/metrics.txt"
EVENTS = ROOT / "include/zs/oa_events.def"

M64 = (1 << 64) - 1
M40 = (1 << 40) - 1
M32 = (1 << 32) - 1
SYS = ("EuCoresTotalCount", "EuSubslicesTotalCount", "EuThreadsCount", "GpuTimestampFrequency",
       "GpuCoreFrequencyMHz")
SS_EVENTS = {"SS_EU_ACTIVE": 32, "SS_EU_STALL": 33, "SS_EU_IDLE": 34}
SS_KEYS = {32: "eu_active", 33: "eu_stall", 34: "eu_idle"}
REPORT = 256


# ---- the table -------------------------------------------------------------------------

def load_events(path=EVENTS):
    """name -> (line, ledger key)"""
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        m = re.match(r'\s*ZE_OA_EVENT\((\w+),\s*(\d+),\s*"([^"]+)"', line)
        if m:
            out[m.group(1)] = (int(m.group(2)), m.group(3))
    return out


class Group:
    def __init__(self, name, sampling, domain, source, select, metrics):
        self.name, self.sampling, self.domain, self.source = name, sampling, domain, source
        self.select, self.metrics = select, metrics  # metrics: [(name, value type, [tokens])]


def load_groups(table=TABLE, events_path=EVENTS):
    """The API groups, in API order (table order; each table group once per sampling type
    in the order its 'sampling' line lists them)."""
    events = load_events(events_path)
    raw, cur = [], None
    for line in pathlib.Path(table).read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            cur = {"name": line[1:-1], "rows": []}
            raw.append(cur)
        elif "|" in line:
            cur["rows"].append([c.strip() for c in line.split("|")])
        else:
            k, v = line.split("=", 1)
            cur[k.strip()] = v.strip()
    groups = []
    for g in raw:
        select = None
        if g["source"] == "oa":
            select = [0xFF] * 16
            for item in g.get("select", "-").split():
                if item == "-":
                    continue
                ctr, ev = item.split(":")
                idx = int(ctr[1:]) + (8 if ctr[0] == "C" else 0)
                if "/" in ev:
                    ev, mask = ev.split("/")
                    select[idx] = SS_EVENTS[ev] | int(mask, 16) << 16
                else:
                    select[idx] = events[ev][0]
        for s in g["sampling"].split():
            letter = "T" if s == "TIME_BASED" else "E"
            metrics = [(r[0], r[3], r[6].split()) for r in g["rows"] if letter in r[1]]
            groups.append(Group(g["name"], s, int(g["domain"]), g["source"], select, metrics))
    return groups


# ---- operands ----------------------------------------------------------------------------

def dw(r, i):
    return struct.unpack_from("<I", r, 4 * i)[0]


def a_counter(r, i):
    v = dw(r, 4 + i)
    if i < 32:
        v |= r[160 + i] << 32
    return v


def ns(ticks, hz):
    return (ticks * 1_000_000_000 // hz) & M64 if hz else 0  # exact, then mod 2^64


def operands_from_reports(begin, end, hz):
    """The operands of docs/metrics.md from two OA reports."""
    op = {}
    for i in range(36):
        b, e = a_counter(begin, i), a_counter(end, i)
        op[f"A{i}"] = (e - b) & (M40 if i < 32 else M32)
    for i in range(8):
        op[f"B{i}"] = (dw(end, 48 + i) - dw(begin, 48 + i)) & M32
        op[f"C{i}"] = (dw(end, 56 + i) - dw(begin, 56 + i)) & M32
    op["GPU_CLOCK"] = (dw(end, 3) - dw(begin, 3)) & M32
    op["TS"] = (dw(end, 1) - dw(begin, 1)) & M32
    op["GPU_TIME"] = ns(op["TS"], hz)
    op["QueryBeginTime"] = ns(dw(begin, 1), hz)
    op["ReportReason"] = dw(end, 0) >> 19 & 0x3F
    op["ContextId"] = dw(end, 2)
    op["StreamMarker"] = dw(end, 4 + 35)
    return op


def operands_from_timestamps(rec, hz):
    b, e = struct.unpack_from("<QQ", rec, 0)
    t = (e - b) & M64
    return {"TS": t, "GPU_TIME": ns(t, hz), "QueryBeginTime": ns(b, hz), "QueryEndTime": ns(e, hz)}


def ledger_value(win, key):
    if key in win:
        v = win[key]
    else:
        outer, inner = key.split(".", 1)  # oa_events.def: "sends.slm.load" is sends["slm.load"]
        v = win[outer][inner]
    return sum(v) if isinstance(v, list) else v


def operands_from_ledger(windows, c0, c1, group, eus_per_subslice, ts_khz, core_mhz, end_fields=None):
    """The operands over cycles [c0, c1) from ledger windows (docs/oa.md section 3) that
    tile that range exactly: A<k> = the ledger key of line k summed (per-EU arrays summed
    over EUs), B/C per the group's OA_BC_SEL programming (events 32-34: the eu_* arrays of
    the EUs of the masked sub-slices), GPU_CLOCK = c1 - c0, the timestamps from the cycle
    boundaries (ts = cycle * kHz // (MHz * 1000), docs/oa.md section 4.2).  end_fields
    gives ReportReason / ContextId / StreamMarker (and the A35 delta: A35 is the marker
    register, not a counter, so the ledger says nothing about it) if the caller knows them."""
    events = load_events()
    by_line = {line: key for line, key in events.values()}
    ws = [w for w in windows if w["start"] >= c0 and w["end"] <= c1]
    if not ws or ws[0]["start"] != c0 or ws[-1]["end"] != c1 or any(
            a["end"] != b["start"] for a, b in zip(ws, ws[1:])):
        raise ValueError(f"the ledger windows do not tile [{c0}, {c1})")

    line = [sum(ledger_value(w, by_line[k]) for w in ws) for k in range(30)]
    eu = {key: [sum(x) for x in zip(*(w[key] for w in ws))] for key in SS_KEYS.values()}
    return _operands(line, eu, c0, c1, group, eus_per_subslice, ts_khz, core_mhz, end_fields)


def _operands(line, eu, c0, c1, group, eus_per_subslice, ts_khz, core_mhz, end_fields):
    """The operands over [c0, c1) from the 30 event-line totals `line` and the per-EU
    totals `eu` (ledger key -> one number per EU) of those cycles."""
    op = {}
    for k in range(36):
        op[f"A{k}"] = (line[k] if k < 30 else 0) & (M40 if k < 32 else M32)
    for i, sel in enumerate(group.select or [0xFF] * 16):
        ev, mask = sel & 0xFF, sel >> 16
        if ev < 30:
            v = line[ev]
        elif ev in SS_KEYS:
            v = sum(x for e, x in enumerate(eu[SS_KEYS[ev]]) if mask >> (e // eus_per_subslice) & 1)
        else:
            v = 0
        op[("B" if i < 8 else "C") + str(i % 8)] = v & M32
    ts0, ts1 = c0 * ts_khz // (core_mhz * 1000), c1 * ts_khz // (core_mhz * 1000)
    hz = ts_khz * 1000
    op["GPU_CLOCK"] = (c1 - c0) & M32
    op["TS"] = (ts1 - ts0) & M32
    op["GPU_TIME"] = ns(op["TS"], hz)
    op["QueryBeginTime"] = ns(ts0 & M32, hz)
    op.update({"ReportReason": 0, "ContextId": 0, "StreamMarker": 0})
    op.update(end_fields or {})
    return op


class LedgerSums:
    """Prefix sums of a ledger (windows in order, back to back from the first): the
    operands over [c0, c1) for boundaries c0, c1 of windows, in O(1) per operand."""

    def __init__(self, windows):
        events = load_events()
        self.keys = {line: key for line, key in events.values()}
        self.bounds = {}
        self.sums = []  # per boundary: (30 line totals, per-EU active, stall, idle)
        first = windows[0]["start"] if windows else 0
        acc = [0] * 30
        eu = {k: [0] * len(windows[0]["eu_active"]) for k in SS_KEYS.values()} if windows else {}
        self.bounds[first] = 0
        self.sums.append((list(acc), {k: list(v) for k, v in eu.items()}))
        at = first
        for w in windows:
            if w["start"] != at:
                raise ValueError(f"ledger window {w['window']} starts at {w['start']}, not {at}")
            for k in range(30):
                acc[k] += ledger_value(w, self.keys[k])
            for k in eu:
                eu[k] = [a + b for a, b in zip(eu[k], w[k])]
            at = w["end"]
            self.bounds[at] = len(self.sums)
            self.sums.append((list(acc), {k: list(v) for k, v in eu.items()}))

    def operands(self, c0, c1, group, eus_per_subslice, ts_khz, core_mhz, end_fields=None):
        if c0 not in self.bounds or c1 not in self.bounds:
            raise ValueError(f"[{c0}, {c1}) is not on ledger window boundaries")
        (a0, e0), (a1, e1) = self.sums[self.bounds[c0]], self.sums[self.bounds[c1]]
        line = [y - x for x, y in zip(a0, a1)]
        eu = {key: [y - x for x, y in zip(e0[key], e1[key])] for key in e0}
        return _operands(line, eu, c0, c1, group, eus_per_subslice, ts_khz, core_mhz, end_fields)


# ---- evaluation --------------------------------------------------------------------------

def to_u(v):
    if isinstance(v, int):
        return v
    if not v > 0.0:
        return 0
    if v >= 2.0 ** 64:
        return M64
    return int(v)


def to_f(v):
    return float(v)  # int -> double rounds to nearest even, as C's conversion


def f32_bits(x):
    try:
        return struct.unpack("<I", struct.pack("<f", x))[0]
    except OverflowError:
        return 0x7F800000 if x > 0 else 0xFF800000


def f32(x):
    return struct.unpack("<f", struct.pack("<I", f32_bits(x)))[0]


def binop(tok, a, b):
    if tok[0] == "F":
        x, y = to_f(a), to_f(b)
        if tok == "FADD":
            return x + y
        if tok == "FSUB":
            return x - y
        if tok == "FMUL":
            return x * y
        if tok == "FDIV":
            return 0.0 if y == 0.0 else x / y
        if tok == "FMIN":
            return y if y < x else x
        return y if y > x else x
    x, y = to_u(a), to_u(b)
    if tok == "UADD":
        return (x + y) & M64
    if tok == "USUB":
        return (x - y) & M64
    if tok == "UMUL":
        return (x * y) & M64
    if tok == "UDIV":
        return x // y if y else 0
    if tok == "UMIN":
        return min(x, y)
    if tok == "UMAX":
        return max(x, y)
    if tok == "AND":
        return x & y
    if tok == "OR":
        return x | y
    if tok == "SHL":
        return (x << y) & M64 if y < 64 else 0
    return x >> y if y < 64 else 0


BINOPS = {"UADD", "USUB", "UMUL", "UDIV", "UMIN", "UMAX", "AND", "OR", "SHL", "SHR",
          "FADD", "FSUB", "FMUL", "FDIV", "FMIN", "FMAX"}


def evaluate(group, op, env):
    """[(kind, value)]: ("u", int) or ("f", float32 bits), one per metric of the group."""
    sysv = dict(zip(SYS, env))
    done, out = {}, []
    for name, vtype, toks in group.metrics:
        st = []
        for t in toks:
            if t in BINOPS:
                b, a = st.pop(), st.pop()
                st.append(binop(t, a, b))
            elif t.startswith("$"):
                st.append(sysv[t[1:]] if t[1:] in sysv else done[t[1:]])
            elif re.fullmatch(r"\d+", t):
                st.append(int(t))
            elif re.fullmatch(r"[\d.e+-]+", t):
                st.append(float(t))
            else:
                st.append(op[t])
        (v,) = st
        if vtype == "FLOAT32":
            bits = f32_bits(to_f(v))
            out.append(("f", bits))
            done[name] = f32(to_f(v))
        else:
            u = to_u(v)
            if vtype == "UINT32":
                u &= M32
            elif vtype == "BOOL8":
                u = 1 if u else 0
            out.append(("u", u))
            done[name] = u
    return out


def evaluate_raw(group, raw, env):
    """Every result set of a raw buffer (docs/metrics.md "Raw data")."""
    hz = env[3]
    sets = []
    if group.source == "timestamp":
        for i in range(len(raw) // 16):
            sets.append(evaluate(group, operands_from_timestamps(raw[16 * i:16 * i + 16], hz), env))
    elif group.sampling == "TIME_BASED":
        n = len(raw) // REPORT
        for i in range(n - 1):
            sets.append(evaluate(group, operands_from_reports(raw[REPORT * i:REPORT * (i + 1)],
                                                              raw[REPORT * (i + 1):REPORT * (i + 2)], hz), env))
    else:
        for i in range(len(raw) // (2 * REPORT)):
            b = raw[2 * REPORT * i:2 * REPORT * i + REPORT]
            e = raw[2 * REPORT * i + REPORT:2 * REPORT * (i + 1)]
            sets.append(evaluate(group, operands_from_reports(b, e, hz), env))
    return sets


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", default=TABLE)
    ap.add_argument("--events", default=EVENTS)
    ap.add_argument("--group", type=int, required=True, help="API group index (zetMetricGroupGet order)")
    ap.add_argument("--raw", type=pathlib.Path, required=True)
    ap.add_argument("--env", required=True, help="EUs,sub-slices,threads per EU,timestamp Hz,core MHz")
    a = ap.parse_args()
    env = [int(x) for x in a.env.split(",")]
    group = load_groups(a.table, a.events)[a.group]
    for s in evaluate_raw(group, a.raw.read_bytes(), env):
        for kind, v in s:
            print(f"{kind} {v:x}" if kind == "f" else f"{kind} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
