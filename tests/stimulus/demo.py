#!/usr/bin/env python3
"""The zesim demo: assemble the vector-add kernel of docs/isa.md, run it on the
reference ISS and on the SystemC model (zesim-gpu), and print the result next
to a host computation."""
import argparse
import json
import pathlib
import struct
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import zeiss  # noqa: E402
import zetools  # noqa: E402

N = 64
A, B, C = 0x100000, 0x200000, 0x300000


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--dis", required=True)
    ap.add_argument("--gpu", help="zesim-gpu; when given, the kernel also runs on the model")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    work = pathlib.Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "isa.md"
    name, text = zetools.doc_examples(doc)[0]
    src, mod = work / "vadd.zeasm", work / "vadd.elf"
    src.write_text(text)
    r = zetools.assemble(a.as_path, src, mod, debug=True)
    if r.returncode:
        sys.exit(r.stderr)
    print(f"assembled {src} -> {mod} ({mod.stat().st_size} bytes); disassembly:")
    print("".join("    " + l + "\n" for l in zetools.disassemble(a.dis, mod).stdout.splitlines()))

    xs = [f32(0.5 * i) for i in range(N)]
    ys = [f32(100.0 - 1.25 * i) for i in range(N)]
    host = [f32(x + y) for x, y in zip(xs, ys)]
    pack = lambda v: struct.pack(f"<{len(v)}f", *v)
    args = struct.pack("<QQQ", A, B, C)
    groups = (N // 16, 1, 1)
    iss = zeiss.run_dispatch(str(mod), "vadd", groups, (16, 1, 1), args,
                             {A: pack(xs), B: pack(ys), C: bytes(4 * N)})
    got_iss = list(struct.unpack(f"<{N}f", iss.memory[C]))
    rows = [("reference ISS", got_iss, f"{iss.steps} instructions")]

    if a.gpu:
        stim = work / "vadd.json"
        stim.write_text(json.dumps({
            "buffers": [{"address": hex(A), "data": pack(xs).hex()}, {"address": hex(B), "data": pack(ys).hex()},
                        {"address": hex(C), "size": 4 * N}],
            "modules": [{"path": str(mod), "address": "0x40000000"}],
            "commands": [{"cmd": "compute_walker", "kernel": "vadd", "group_size": [16, 1, 1],
                          "groups": list(groups), "args": args.hex()}]}))
        out = subprocess.run([a.gpu, "--preset", "xe-lp", "--stimulus", str(stim), "--ledger",
                              str(work / "vadd.ledger.jsonl")], capture_output=True, text=True,
                             env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        if out.returncode:
            sys.exit(out.stderr)
        res = json.loads(out.stdout)
        got_gpu = list(struct.unpack(f"<{N}f", bytes.fromhex(res["buffers"][2]["data"])))
        led = [json.loads(l) for l in (work / "vadd.ledger.jsonl").read_text().splitlines()]
        inst = sum(sum(w["inst"].values()) for w in led)
        rows.append(("SystemC model", got_gpu, f"{res['cycles']} GPU cycles, {inst} instructions (ledger)"))

    print(f"c[i] = a[i] + b[i] for {N} floats, {groups[0]} thread groups of 16:")
    print(f"  {'i':>3} {'a':>8} {'b':>8} {'host':>8}" + "".join(f" {n.split()[0]:>10}" for n, _, _ in rows))
    for i in list(range(4)) + [N - 1]:
        print(f"  {i:>3} {xs[i]:>8.2f} {ys[i]:>8.2f} {host[i]:>8.2f}" + "".join(f" {v[i]:>10.2f}" for _, v, _ in rows))
    ok = True
    for n, v, info in rows:
        match = v == host
        ok &= match
        print(f"  {n}: {'matches the host bit for bit' if match else 'DIFFERS from the host'} ({info})")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
