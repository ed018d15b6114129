#!/usr/bin/env python3
"""zesim_trace.py's conversion on a hand-made process record (CTest trace_convert):
device ticks placed on the host clock as tools/trace/README.md says, B/E per call,
the result valid trace-event JSON."""
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import trace_validate  # noqa: E402
import zesim_trace  # noqa: E402

# Device 0 ticks at 1 GHz (1 ns a tick). The device works from tick 0 to 100 after a
# submission at host 1 000 000 ns, then idles (its clock stops) until a submission
# at host 5 000 000 finds it at tick 100, and again at 9 000 000.
# Device 1 runs faster than the host between its pairs: the mapping is clamped.
PART = {
    "pid": 10, "program": "/bin/prog", "apis": ["zeInit", "zeCommandQueueExecuteCommandLists"],
    "calls": [[11, 0, 100, 200, "ZE_RESULT_SUCCESS"], [11, 1, 300, 400, "ZE_RESULT_SUCCESS"],
              [12, 1, 350, 450, "ZE_RESULT_ERROR_INVALID_ARGUMENT"]],
    "devices": [{"freq": 1000000000, "valid_bits": 64}, {"freq": 1000000000, "valid_bits": 64}],
    "pairs": [[0, 1000000, 0], [0, 5000000, 100], [0, 9000000, 100], [1, 0, 0], [1, 10, 1000]],
    "tracks": [{"id": 0, "dev": 0, "kind": "command queue"}, {"id": 1, "dev": 1, "kind": "command queue"}],
    "device_work": [
        {"name": "a", "api": "zeCommandListAppendLaunchKernel", "track": 0, "dev": 0, "start": 10, "end": 100},
        {"name": "b", "api": "zeCommandListAppendLaunchKernel", "track": 0, "dev": 0, "start": 100, "end": 150},
        {"name": "c", "api": "zeCommandListAppendMemoryCopy", "track": 1, "dev": 1, "start": 0, "end": 500},
    ],
    "unread": 0, "tool_errors": 0,
}
WANT = {  # name -> (ts, dur) in ns
    "a": (1000010, 90),   # ends where the device went idle, not at the next submission
    "b": (9000000, 50),   # starts after the latest pair at its tick
    "c": (0, 10),         # clamped at the next pair's host time
}


def main():
    events, api_stats, kern_stats = zesim_trace.convert([PART])
    fails = []
    for e in events:
        if e["ph"] == "X":
            ts, dur = round(e["ts"] * 1000), round(e["dur"] * 1000)
            if (ts, dur) != WANT[e["name"]]:
                fails.append(f"{e['name']}: ts {ts} dur {dur} ns, expected {WANT[e['name']]}")
            if e["args"]["device_ticks"] != e["args"]["device_end_ticks"] - e["args"]["device_start_ticks"]:
                fails.append(f"{e['name']}: device_ticks {e['args']['device_ticks']}")
    be = [(e["ph"], e["tid"], e["ts"]) for e in events if e["ph"] in "BE"]
    if be != [("B", 11, 0.1), ("E", 11, 0.2), ("B", 11, 0.3), ("E", 11, 0.4), ("B", 12, 0.35), ("E", 12, 0.45)]:
        fails.append(f"B/E events {be}")
    if sorted(len(v) for v in api_stats.values()) != [1, 2] or sorted(kern_stats) != ["a", "b", "c"]:
        fails.append(f"stats {dict(api_stats)} {dict(kern_stats)}")
    errs = trace_validate.check({"traceEvents": events})
    if errs:
        fails.append(f"not valid: {errs}")
    for f in fails:
        print(f"FAIL: {f}")
    print(f"trace_convert: {'ok' if not fails else f'{len(fails)} problem(s)'}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
