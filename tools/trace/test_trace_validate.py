#!/usr/bin/env python3
"""trace_validate.py on hand-made documents: a valid one passes, and each broken rule is
reported (CTest trace_validate)."""
import copy
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import trace_validate  # noqa: E402

VALID = {"traceEvents": [
    {"ph": "M", "name": "process_name", "pid": 1, "tid": 0, "args": {"name": "p"}},
    {"ph": "M", "name": "thread_sort_index", "pid": 1, "tid": 7, "args": {"sort_index": -1}},
    {"ph": "B", "name": "zeInit", "pid": 1, "tid": 2, "ts": 1.0},
    {"ph": "E", "name": "zeInit", "pid": 1, "tid": 2, "ts": 2.0, "args": {"result": "ZE_RESULT_SUCCESS"}},
    {"ph": "B", "name": "outer", "pid": 1, "tid": 2, "ts": 3.0},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 2, "ts": 3.0},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 4.0},
    {"ph": "E", "name": "outer", "pid": 1, "tid": 2, "ts": 5.0},
    {"ph": "X", "name": "k1", "pid": 1, "tid": 7, "ts": 1.0, "dur": 4.0},
    {"ph": "X", "name": "k2", "pid": 1, "tid": 7, "ts": 2.0, "dur": 1.0},
    {"ph": "X", "name": "k3", "pid": 1, "tid": 7, "ts": 5.0, "dur": 1.0},
    {"ph": "i", "name": "mark", "pid": 1, "tid": 2, "ts": 6.0, "s": "t"},
    {"ph": "C", "name": "ctr", "pid": 1, "tid": 2, "ts": 6.0, "args": {"v": 3}},
], "displayTimeUnit": "ns"}


def broken(change):
    d = copy.deepcopy(VALID)
    change(d["traceEvents"])
    return d


CASES = [  # (what is broken, the change, a word the report must contain)
    ("E without B", lambda ev: ev.insert(2, {"ph": "E", "name": "x", "pid": 1, "tid": 9, "ts": 0}), "without an open B"),
    ("B never ended", lambda ev: ev.append({"ph": "B", "name": "y", "pid": 1, "tid": 2, "ts": 9.0}), "never ended"),
    ("E of another name", lambda ev: ev[3].update(name="zeDriverGet"), "ends B"),
    ("E before its B", lambda ev: ev[3].update(ts=0.5), "before"),
    ("thread out of order", lambda ev: ev[4].update(ts=1.5), "before the thread's previous"),
    ("X partial overlap", lambda ev: ev[10].update(ts=4.5), "overlaps"),
    ("X without dur", lambda ev: ev[8].pop("dur"), "dur"),
    ("negative dur", lambda ev: ev[8].update(dur=-1), "dur"),
    ("pid a string", lambda ev: ev[2].update(pid="1"), "pid"),
    ("tid missing", lambda ev: ev[8].pop("tid"), "tid"),
    ("ts missing", lambda ev: ev[11].pop("ts"), "ts"),
    ("negative ts", lambda ev: ev[11].update(ts=-1), "ts"),
    ("unknown phase", lambda ev: ev[11].update(ph="Q"), "phase"),
    ("empty name", lambda ev: ev[8].update(name=""), "name"),
    ("unknown metadata", lambda ev: ev[0].update(name="process_color"), "metadata"),
    ("metadata without args.name", lambda ev: ev[0].update(args={}), "args.name"),
    ("sort index not an integer", lambda ev: ev[1].update(args={"sort_index": "a"}), "sort_index"),
    ("args not an object", lambda ev: ev[3].update(args=[1]), "args"),
    ("instant scope", lambda ev: ev[11].update(s="x"), "s "),
    ("counter of a string", lambda ev: ev[12].update(args={"v": "3"}), "counter"),
]


def main():
    fails = 0
    errs = trace_validate.check(VALID)
    if errs:
        print(f"FAIL: the valid document is reported: {errs}")
        fails += 1
    for what, change, word in CASES:
        errs = trace_validate.check(broken(change))
        if not any(word in e for e in errs):
            print(f"FAIL: {what}: no report containing {word!r} (got {errs})")
            fails += 1
    if trace_validate.check({"events": []}) == [] or trace_validate.check(3) == []:
        print("FAIL: a document without traceEvents passes")
        fails += 1
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        f.write('{"traceEvents":[{"ph":"X","name":"a","pid":1,"tid":1,"ts":NaN,"dur":1}]}')
    try:
        if not trace_validate.check_file(f.name):
            print("FAIL: NaN passes")
            fails += 1
    finally:
        os.unlink(f.name)
    print(f"trace_validate: {len(CASES) + 3 - fails} of {len(CASES) + 3} checks as expected")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
