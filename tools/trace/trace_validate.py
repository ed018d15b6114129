#!/usr/bin/env python3
"""Check a file against the Chrome trace-event format (the subset `zesim trace` writes).

    trace_validate.py trace.json      # prints what is wrong, exit status 1; nothing and 0 if valid

The format (Google's "Trace Event Format" document, which Perfetto's JSON importer
follows): the file is a JSON object with a `traceEvents` array (or the bare array);
optional `displayTimeUnit` ("ms" or "ns") and `otherData` (an object). Every event is
an object with a string `ph`; `pid` and `tid` integers; `ts` a finite number of
microseconds >= 0 (metadata events excepted); `name` a non-empty string; `cat` a string
and `args` an object when present. Per phase:
  B / E   duration begin / end; on each (pid, tid) they nest: an E ends the latest open
          B, with the same name when it names one, not before it began; at the end of
          the file no B is open. Events of one thread are in time order.
  X       complete event: `dur` a finite number >= 0. On one (pid, tid) two X events
          either nest or are disjoint (Perfetto drops partial overlaps).
  M       metadata: `name` one of process_name, thread_name (args.name a string),
          process_sort_index, thread_sort_index (args.sort_index an integer).
  i / I   instant: optional `s` in g, p, t.
  C       counter: `args` of numbers.
Strict JSON: NaN and Infinity are refused.
"""
import json
import math
import sys

PHASES = set("BEXMiICbnesftPOND")
META = {"process_name": "name", "thread_name": "name", "process_labels": "labels",
        "process_sort_index": "sort_index", "thread_sort_index": "sort_index"}


def _reject_constant(c):
    raise ValueError(f"{c} is not JSON")


def check(doc):
    """All problems of a parsed document, as strings (empty: valid)."""
    errs = []
    if isinstance(doc, dict):
        if "traceEvents" not in doc or not isinstance(doc["traceEvents"], list):
            return ["the top-level object has no traceEvents array"]
        if "displayTimeUnit" in doc and doc["displayTimeUnit"] not in ("ms", "ns"):
            errs.append(f"displayTimeUnit {doc['displayTimeUnit']!r} is not \"ms\" or \"ns\"")
        if "otherData" in doc and not isinstance(doc["otherData"], dict):
            errs.append("otherData is not an object")
        events = doc["traceEvents"]
    elif isinstance(doc, list):
        events = doc
    else:
        return ["the document is neither an object nor an array"]

    stacks = {}   # (pid, tid) -> [(name, ts, index)]
    last_ts = {}  # (pid, tid) -> ts of its last B/E
    spans = {}    # (pid, tid) -> [(ts, end, index)] of X events
    isint = lambda v: isinstance(v, int) and not isinstance(v, bool)
    isnum = lambda v: (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v))
    for i, e in enumerate(events):
        where = f"event {i}"
        if not isinstance(e, dict):
            errs.append(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str) or ph not in PHASES:
            errs.append(f"{where}: ph {ph!r} is not a trace-event phase")
            continue
        where = f"event {i} ({ph} {e.get('name')!r})"
        for k in ("pid", "tid"):
            if k not in e or not isint(e[k]):
                errs.append(f"{where}: {k} missing or not an integer")
        if "cat" in e and not isinstance(e["cat"], str):
            errs.append(f"{where}: cat is not a string")
        if "args" in e and not isinstance(e["args"], dict):
            errs.append(f"{where}: args is not an object")
        name = e.get("name")
        if ph != "E" and (not isinstance(name, str) or not name):
            errs.append(f"{where}: name missing or empty")
        if ph == "M":
            key = META.get(name)
            if key is None:
                errs.append(f"{where}: unknown metadata name")
            elif not isinstance(e.get("args"), dict) or key not in e["args"]:
                errs.append(f"{where}: metadata without args.{key}")
            elif key == "name" and not isinstance(e["args"]["name"], str):
                errs.append(f"{where}: args.name is not a string")
            elif key == "sort_index" and not isint(e["args"]["sort_index"]):
                errs.append(f"{where}: args.sort_index is not an integer")
            continue
        if "ts" not in e or not isnum(e["ts"]) or e["ts"] < 0:
            errs.append(f"{where}: ts missing, not a finite number or negative")
            continue
        key = (e.get("pid"), e.get("tid"))
        ts = e["ts"]
        if ph in "BE":
            if ts < last_ts.get(key, ts):
                errs.append(f"{where}: ts {ts} before the thread's previous event ({last_ts[key]})")
            last_ts[key] = ts
        if ph == "B":
            stacks.setdefault(key, []).append((name, ts, i))
        elif ph == "E":
            st = stacks.get(key)
            if not st:
                errs.append(f"{where}: E without an open B on pid {key[0]} tid {key[1]}")
                continue
            bname, bts, bi = st.pop()
            if name is not None and name != bname:
                errs.append(f"{where}: E named {name!r} ends B {bname!r} (event {bi})")
            if ts < bts:
                errs.append(f"{where}: E at {ts} before its B at {bts} (event {bi})")
        elif ph == "X":
            if "dur" not in e or not isnum(e["dur"]) or e["dur"] < 0:
                errs.append(f"{where}: dur missing, not a finite number or negative")
                continue
            spans.setdefault(key, []).append((ts, ts + e["dur"], i))
        elif ph in "iI":
            if "s" in e and e["s"] not in ("g", "p", "t"):
                errs.append(f"{where}: s {e['s']!r} is not g, p or t")
        elif ph == "C":
            if not isinstance(e.get("args"), dict) or not all(isnum(v) for v in e["args"].values()):
                errs.append(f"{where}: counter args are not all numbers")
    for key, st in stacks.items():
        for name, ts, i in st:
            errs.append(f"event {i} (B {name!r}) on pid {key[0]} tid {key[1]}: never ended")
    for key, sp in spans.items():
        sp.sort(key=lambda s: (s[0], -s[1]))
        open_ = []  # ends of the enclosing spans
        for ts, end, i in sp:
            while open_ and open_[-1][0] <= ts:
                open_.pop()
            if open_ and end > open_[-1][0]:
                errs.append(f"event {i} (X) on pid {key[0]} tid {key[1]}: overlaps event {open_[-1][1]} "
                            "without nesting in it")
            open_.append((end, i))
    return errs


def check_file(path):
    try:
        with open(path) as f:
            doc = json.load(f, parse_constant=_reject_constant)
    except (OSError, ValueError) as e:
        return [f"{path}: not readable as JSON: {e}"]
    return check(doc)


def main(argv):
    if len(argv) != 1:
        print("usage: trace_validate.py TRACE.json", file=sys.stderr)
        return 2
    errs = check_file(argv[0])
    for e in errs[:50]:
        print(f"{argv[0]}: {e}")
    if len(errs) > 50:
        print(f"{argv[0]}: ... {len(errs) - 50} more")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
