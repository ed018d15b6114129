#!/usr/bin/env python3
"""Differential test: random programs (tests/stimulus/zegen.py, fixed seeds)
run on the SystemC model (zesim-gpu, standalone stimulus mode) and on the
Python reference ISS must end with identical global memory, identical final
GRF and flags in every thread, the same thread status and exception (cr0.1-3, and
the whole page-fault addresses of the model's fault list); and the model's
ground-truth ledger (docs/oa.md), summed over its windows, must equal the ISS's
own count of every timing-free field: threads_dispatched/retired, inst.<class>,
lane_ops, sends.<message>, bytes.l3_read/l3_write/slm_read/slm_write, barriers."""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zegen  # noqa: E402
import zeiss  # noqa: E402
import zetools  # noqa: E402

MODULE_VA = zegen.MODULE_VA  # calla programs pass their functions' addresses there


def stimulus_for(setup, module_path, page_size=4096):
    return {
        "buffers": [{"address": b["address"], "data": b["data"], "page_size": page_size} for b in setup["buffers"]],
        "modules": [{"path": str(module_path), "address": hex(MODULE_VA)}],
        "commands": [{"cmd": "compute_walker", "kernel": setup["kernel"], "group_size": setup["group_size"],
                      "groups": setup["groups"], "args": setup.get("args", ""),
                      "local_sizes": setup.get("local_sizes", {})}],
    }


def run_model(gpu, preset, stim_path, extra=(), ledger_path=None):
    """The stimulus result; with `ledger_path`, also the ledger's totals as result["ledger"]."""
    ledger = ("--ledger", str(ledger_path)) if ledger_path else ()
    r = subprocess.run([gpu, "--preset", preset, "--capture-threads", "--stimulus", str(stim_path), *ledger,
                        *extra], capture_output=True, text=True, timeout=300,
                       env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    if r.returncode:
        raise RuntimeError(f"zesim-gpu failed: {r.stderr.strip()}")
    out = json.loads(r.stdout)
    if ledger_path:
        out["ledger"] = ledger_totals(pathlib.Path(ledger_path).read_text())
    return out


def ledger_totals(text):
    """Sum of the timing-free fields over every window of a ledger file (docs/oa.md §3.1)."""
    total = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        w = json.loads(line)
        for key in LEDGER_FIELDS:
            if isinstance(w[key], dict):
                sub = total.setdefault(key, {})
                for k, v in w[key].items():
                    sub[k] = sub.get(k, 0) + v
            else:
                total[key] = total.get(key, 0) + w[key]
    return total


LEDGER_FIELDS = ("threads_dispatched", "threads_retired", "inst", "lane_ops", "sends", "bytes", "barriers")
TIMED_BYTES = ("dram",)  # depends on the cache state: not the ISS's to know


def compare_ledger(iss_ledger, model_ledger):
    """Differences between the ISS's counts and the model's ledger totals, field by field."""
    problems = []
    for key in LEDGER_FIELDS:
        want, got = iss_ledger[key], model_ledger.get(key)
        if isinstance(want, dict):
            got = {k: v for k, v in (got or {}).items() if k not in TIMED_BYTES}
            for k in sorted(set(want) | set(got)):
                if want.get(k) != got.get(k):
                    problems.append(f"ledger {key}.{k}: model {got.get(k)} ISS {want.get(k)}")
        elif want != got:
            problems.append(f"ledger {key}: model {got} ISS {want}")
    return problems


def compare_exceptions(iss, model):
    """cr0.1-3 (bits, ip, low address) of every thread that ended with an exception, and
    the whole page-fault addresses (the model's fault list against the ISS's reports)."""
    problems = []
    mthreads = {(tuple(t["group"]), t["thread"]): t for t in model["threads"]}
    for t in iss.threads:
        e = mthreads.get((tuple(t.group), t.index), {}).get("exception")
        want = t.arf["cr0"][1:] if t.status == "exception" else None
        got = [e["bits"], e["ip"], e["address"]] if e else None
        if got != want:
            problems.append(f"thread {t.group}/{t.index}: exception cr0.1-3 model {got} ISS {want}")
    want = sorted(t.exception.address for t in iss.threads if t.exception and t.exception.name == "page_fault")
    got = sorted(int(f["address"], 16) for f in model["faults"])
    if got != want:
        problems.append(f"page faults: model {[hex(a) for a in got]} ISS {[hex(a) for a in want]}")
    return problems


def compare(seed, iss, model):
    problems = []
    if model["engine_error"]:
        problems.append(f"engine error {model['engine_error']}: {model.get('error_text')}")
    iss_mem = {int(a, 16): d for a, d in iss.memory.items()} if isinstance(next(iter(iss.memory), 0), str) else iss.memory
    for b in model["buffers"]:
        want = iss_mem[int(b["address"], 16)].hex()
        if b["data"] != want:
            first = next(i for i in range(0, len(want), 8) if want[i:i + 8] != b["data"][i:i + 8]) // 2
            problems.append(f"buffer {b['address']} differs first at byte {first}")
    mthreads = {(tuple(t["group"]), t["thread"]): t for t in model["threads"]}
    if len(mthreads) != len(iss.threads):
        problems.append(f"{len(mthreads)} threads in the model, {len(iss.threads)} in the ISS")
    for t in iss.threads:
        m = mthreads.get((tuple(t.group), t.index))
        if m is None:
            problems.append(f"thread {t.group}/{t.index} missing in the model")
            continue
        if m["status"] != t.status:
            problems.append(f"thread {t.group}/{t.index}: status {m['status']} vs ISS {t.status}")
        for r in range(128):
            if m["grf"][r] != t.reg(r):
                problems.append(f"thread {t.group}/{t.index}: r{r} model {m['grf'][r]} ISS {t.reg(r)}")
                break
        if (m["f0"], m["f1"]) != t.flags:
            problems.append(f"thread {t.group}/{t.index}: flags {m['f0']:#x},{m['f1']:#x} vs ISS {t.flags}")
    problems += compare_exceptions(iss, model)
    if "ledger" in model:
        problems += compare_ledger(iss.ledger.to_json(), model["ledger"])
    return [f"seed {seed}: {p}" for p in problems]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--preset", default="tiny")
    ap.add_argument("--page-size", type=int, default=4096, choices=(4096, 65536),
                    help="page size the model maps the buffers with")
    a = ap.parse_args()
    failures = []
    cases = dict.fromkeys(("partial-SIMD", "faulting threads", "atomics", "SLM"), 0)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        for seed in range(a.first, a.first + a.count):
            text, setup, _ = zegen.generate(seed)
            src, mod, stim, ledger = tmp / "p.zeasm", tmp / "p.elf", tmp / "p.json", tmp / "p.ledger"
            src.write_text(text)
            r = zetools.assemble(a.as_path, src, mod)
            if r.returncode:
                failures.append(f"seed {seed}: does not assemble: {r.stderr}")
                continue
            stim.write_text(json.dumps(stimulus_for(setup, mod, a.page_size)))
            iss = zeiss.run_dispatch(str(mod), setup["kernel"], setup["groups"], setup["group_size"],
                                     bytes.fromhex(setup.get("args", "")),
                                     {int(b["address"], 16): bytes.fromhex(b["data"]) for b in setup["buffers"]},
                                     setup.get("local_sizes", {}), module_va=MODULE_VA)
            try:
                model = run_model(a.gpu, a.preset, stim, ledger_path=ledger)
            except (RuntimeError, json.JSONDecodeError) as e:
                failures.append(f"seed {seed}: {e}")
                continue
            failures += compare(seed, iss, model)
            led = iss.ledger.to_json()
            simd = zeiss._load_module(str(mod)).kernels[setup["kernel"]].simd
            cases["partial-SIMD"] += (setup["group_size"][0] * setup["group_size"][1] * setup["group_size"][2]) % simd != 0
            cases["faulting threads"] += any(t.status == "exception" for t in iss.threads)
            cases["atomics"] += led["sends"]["atomic"] + led["sends"]["slm.atomic"] > 0
            cases["SLM"] += led["bytes"]["slm_read"] + led["bytes"]["slm_write"] > 0
            done = seed - a.first + 1
            if done % 100 == 0:
                print(f"  {done}/{a.count} programs, {len(failures)} problems", flush=True)
    for f in failures[:30]:
        print("FAIL", f)
    print(f"model ({a.preset}, {a.page_size // 1024} KiB pages) vs ISS: {a.count} programs, {len(failures)} problems"
          " (final state and ledger; programs with " + ", ".join(f"{k} {v}" for k, v in cases.items()) + ")")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
