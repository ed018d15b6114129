#!/usr/bin/env python3
"""The EU debug stack in the model (docs/debug.md section 2): the system routine
(firmware/sip.zeasm, embedded in zesim-gpu), the hardware entry and `sipret`, the Debug
block with its unit in `check` mode (the RTL and its C++ twin compared every clock: a
difference aborts zesim-gpu), driven by the stimulus runner's debug section
(docs/stimulus.md) and checked against independent expectations:

- the state save area slot is decoded here from the offsets of
  kmd_shim/include/uapi/zesim_ssa.h (not with any C code) and must equal, bit for bit,
  the model's ledger snapshot of the stop (every register the slot holds, the instruction
  base SBA as the snapshot's `ib`; tm0, which the SIP reads later, excepted), for every
  stop, the random programs' too;
- a register written into the slot changes the kernel's result as this script predicts,
  and the `sipret` snapshot shows the thread resuming with it;
- breakpoint (reason 1, IRQ_STATUS.DEBUG, DBG_REASON), halt-all on a long kernel (every
  resident thread stops exactly once, reason 3), a page fault (reason 2, cr0.3 = the
  address; with SIP_EN off the thread ends as before), SLM read / write commands;
- random programs (tests/stimulus/zegen.py) with breakpoint bits and random halt /
  exception requests end exactly as the Python reference ISS runs them without any
  debugging: the SIP is transparent.
"""
import argparse
import json
import pathlib
import random
import re
import struct
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "stimulus"))
sys.path.insert(0, str(ROOT / "tests" / "model"))
import zedaemon  # noqa: E402
import zegen  # noqa: E402
import zeiss  # noqa: E402
import zetools  # noqa: E402
from test_diff_iss import compare  # noqa: E402

REGS = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"^ZE_REG\((\w+),\s*(0x[0-9a-f]+)",
                                                                 (ROOT / "include/zs/gpu_regs.def").read_text(), re.M)}
SSA_H = (ROOT / "kmd_shim/include/uapi/zesim_ssa.h").read_text()
OFF = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define ZESIM_SSA_(\w+?)_(?:OFFSET|SIZE|BYTES)\s+(\d+)u", SSA_H)}
_BASES = {m.group(1): int(m.group(2)) for m in re.finditer(r"#define ZESIM_SSA_(\w+)_OFFSET\s+(\d+)u", SSA_H)}
OFF.update({m.group(1): _BASES[m.group(2)] + int(m.group(3)) for m in  # HW_RET_IP, HW_RET_IB: (BASE + n)
            re.finditer(r"#define ZESIM_SSA_(\w+)_OFFSET \(ZESIM_SSA_(\w+)_OFFSET \+ (\d+)u\)", SSA_H)})
SIP_CMD = {m.group(1): int(m.group(2)) for m in re.finditer(r"ZESIM_SIP_CMD_(\w+) = (\d+)", SSA_H)}
MODULE_VA, OUT_VA, BAD_VA = zegen.MODULE_VA, 0x50000000, 0x1260000000
SLOT = OFF["SLOT"]


def dwords(b, off, n):
    return list(struct.unpack_from("<%dI" % n, b, off))


def decode_slot(hexdata):
    """The slot's register sets (zesim_ssa.h) as a dict."""
    b = bytes.fromhex(hexdata)
    assert len(b) == SLOT, len(b)
    ident = OFF["SR_IDENT"]
    cmd = OFF["CMD"]
    return {
        "grf": b[OFF["GRF"]:OFF["GRF"] + 4096].hex(),
        "a0": dwords(b, OFF["ADDR"], 8),
        "f": dwords(b, OFF["FLAG"], 2),
        "ce": dwords(b, OFF["CE"], 1),
        "sr0": dwords(b, OFF["SR"], 4),
        "cr0": dwords(b, OFF["CR"], 4),
        "tdr": dwords(b, OFF["TDR"], 8),
        "acc0": dwords(b, OFF["ACC"], 8),
        "acc1": dwords(b, OFF["ACC"] + 32, 8),
        "sp": dwords(b, OFF["SP"], 4),
        "dbg0": dwords(b, OFF["DBG"], 2),
        "tm0": dwords(b, OFF["TM"], 2),
        "count": b[ident + 12],
        "command": dwords(b, cmd, 1)[0],
        "size": dwords(b, cmd + 4, 1)[0],
        "offset": struct.unpack_from("<Q", b, cmd + 8)[0],
        "buffer": b[cmd + 16:cmd + 16 + 112],
        "sba": struct.unpack_from("<Q", b, OFF["SBA"])[0],  # the instruction base (docs/isa.md 3.5)
        "ret_ip": dwords(b, OFF["HW_RET_IP"], 16),
        "ret_ib": list(struct.unpack_from("<16Q", b, OFF["HW_RET_IB"])),
    }


def slot_vs_snapshot(slot, snap):
    """Differences between a decoded slot and a ledger stop snapshot."""
    probs = []
    for key in ("grf", "a0", "f", "ce", "sr0", "cr0", "tdr", "acc0", "acc1", "dbg0"):
        if slot[key] != snap[key]:
            if key == "grf":
                regs = [r for r in range(128) if slot["grf"][64 * r:64 * r + 64] != snap["grf"][64 * r:64 * r + 64]]
                probs.append(f"GRF differs in r{regs[0]} (of {len(regs)} registers)")
            else:
                probs.append(f"{key}: slot {slot[key]} snapshot {snap[key]}")
    if slot["sp"] != [snap["cf_depth"], snap["ret_depth"], snap["fault_va"] & 0xffffffff, snap["fault_va"] >> 32]:
        probs.append(f"sp: slot {slot['sp']} snapshot depths {snap['cf_depth']}, {snap['ret_depth']}")
    if slot["sba"] != snap["ib"]:
        probs.append(f"instruction base: slot SBA {slot['sba']:#x} snapshot ib {snap['ib']:#x}")
    return probs


def stops_vs_snapshots(debug):
    """slot_vs_snapshot for every stop the runner found, with its thread's last stop snapshot
    up to the cycle the runner read the slot (a request can resume a thread before the
    runner sees it: then it stopped again, or not at all; a stimulus run starts at cycle 0
    of a fresh zesim-gpu).  The ledger keeps the newest snapshots only (oldest dropped
    first): a stop whose snapshot was dropped is skipped."""
    probs = []
    dropped = bool(debug["snapshots"]) and debug["snapshots"][0]["seq"] != 1
    for k, stop in enumerate(debug["stops"]):
        mine = [s for s in debug["snapshots"]
                if s["kind"] == "stop" and s["tid"] == stop["tid"] and s["cycle"] <= stop["cycle"]]
        if not mine:
            if not dropped:
                probs.append(f"stop {k} (tid {stop['tid']}): no stop snapshot")
            continue
        probs += [f"stop {k} (tid {stop['tid']}): {p}" for p in slot_vs_snapshot(decode_slot(stop["slot"]), mine[-1])]
    return probs


def reg_bytes(values):
    return struct.pack("<8I", *values).hex()


def cmd_bytes(command, size=0, offset=0, data=b""):
    return (struct.pack("<IIQ", command, size, offset) + data).hex()


class Runner:
    def __init__(self, gpu, asm, tmp, mode):
        self.gpu, self.asm, self.tmp, self.mode = gpu, asm, tmp, mode
        self.stops = 0

    def run(self, source, kernel, groups, group_size, args, debug, out_size=4096, topology="1x2x2x4", extra_buffers=()):
        src, mod, stim, cfg = self.tmp / "k.zeasm", self.tmp / "k.elf", self.tmp / "k.json", self.tmp / "cfg.json"
        src.write_text(source)
        r = zetools.assemble(self.asm, src, mod)
        if r.returncode:
            raise AssertionError("does not assemble: " + r.stderr)
        stim.write_text(json.dumps({
            "buffers": [{"address": hex(OUT_VA), "size": out_size}, *extra_buffers],
            "modules": [{"path": str(mod), "address": hex(MODULE_VA)}],
            "commands": [{"cmd": "compute_walker", "kernel": kernel, "group_size": group_size, "groups": groups,
                          "args": args}],
            "debug": debug}))
        cfg.write_text(json.dumps({"debug_block": self.mode}))
        p = subprocess.run([self.gpu, "--preset", "tiny", "--topology", topology, "--config", str(cfg),
                            "--capture-threads", "--stimulus", str(stim)], capture_output=True, text=True, timeout=300,
                           env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        if p.returncode:
            raise AssertionError(f"zesim-gpu failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
        res = json.loads(p.stdout)
        if "debug" in res:
            self.stops += len(res["debug"]["stops"])
        return res


def out_words(res, n):
    b = bytes.fromhex(res["buffers"][0]["data"])
    return list(struct.unpack_from("<%dI" % n, b, 0))


def expect(cond, what, probs):
    if not cond:
        probs.append(what)


BP_KERNEL = """.kernel bp
.simd 8
.arg out global
        shl (8) r10:ud r1:ud 2:ud
        mov (8) r11:ud r1:ud
        mov (1) a0.3:ud 0x1234:ud
        mov (1) tdr.2:ud 0x55:ud
        mov (1) acc1.5:ud 0x77:ud
        mov (8) r13:d 2:d
""" + "".join(f"        add (8) r{r}:ud r1:ud {0x01010101 * r}:ud\n" for r in range(14, 126)) + """        do (8)
            add (8) r12:ud r11:ud 100:ud {bp}
            add (8) r13:d r13:d -1:d
            cmp.gt.f1 (8) null r13:d 0:d
        (f1) while (8)
        send.store (8) r10 r12 r7.0
        send.eot
"""
BP_IP = (7 + 112) * 16  # after the 112 adds filling r14-r125


def test_breakpoint(run):
    probs = []
    new_r11 = [1000 + i for i in range(8)]
    res = run.run(BP_KERNEL, "bp", [1, 1, 1], [8, 1, 1], struct.pack("<Q", OUT_VA).hex(),
                  {"on_stop": [{"write": [{"offset": 11 * 32, "data": reg_bytes(new_r11)}]}]})
    d = res["debug"]
    expect(res["idle"] and not res["engine_error"], f"breakpoint: not completed: {res.get('error_text')}", probs)
    expect(len(d["stops"]) == 2, f"breakpoint: {len(d['stops'])} stops, expected 2 (a loop of two)", probs)
    # The Python expectation: out[i] = r11 + 100 with r11 as the debugger wrote it.
    expect(out_words(res, 8) == [v + 100 for v in new_r11], f"breakpoint: result {out_words(res, 8)}", probs)
    snaps = d["snapshots"]
    kinds = [s["kind"] for s in snaps]
    expect(kinds == ["stop", "resume", "stop", "resume"], f"breakpoint: snapshots {kinds}", probs)
    if len(d["stops"]) != 2 or len(snaps) != 4:
        return probs
    for k, (stop, snap) in enumerate(zip(d["stops"], (snaps[0], snaps[2]))):
        slot = decode_slot(stop["slot"])
        probs += [f"breakpoint stop {k}: {p}" for p in slot_vs_snapshot(slot, snap)]
        expect(stop["dbg_reason"] == (1 | 1 << 8), f"breakpoint stop {k}: DBG_REASON {stop['dbg_reason']:#x}", probs)
        expect(stop["irq_debug"], f"breakpoint stop {k}: IRQ_STATUS.DEBUG not set", probs)
        expect(stop["tid"] == snap["tid"] == snap["eu"] * 8 + snap["slot"], f"breakpoint stop {k}: tid", probs)
        expect(snap["reason"] == 1 and snap["cr0"][1] & 1 and snap["ip"] == BP_IP and snap["cr0"][2] == BP_IP,
               f"breakpoint stop {k}: reason {snap['reason']} cr0 {snap['cr0']} ip {snap['ip']:#x}", probs)
        expect(snap["cf_depth"] == 1, f"breakpoint stop {k}: cf depth {snap['cf_depth']}", probs)
        expect(slot["count"] == 2 * k + 1, f"breakpoint stop {k}: sr_ident.count {slot['count']}", probs)
        expect(slot["command"] == SIP_CMD["READY"], f"breakpoint stop {k}: cmd {slot['command']}", probs)
        expect(slot["a0"][3] == 0x1234 and slot["tdr"][2] == 0x55 and slot["acc1"][5] == 0x77,
               f"breakpoint stop {k}: ARFs a0 {slot['a0']} tdr {slot['tdr']} acc1 {slot['acc1']}", probs)
        expect(snap["kernel_va"] == snap["ib"] == MODULE_VA,
               f"breakpoint stop {k}: kernel_va {snap['kernel_va']:#x} ib {snap['ib']:#x}", probs)
    # The second stop sees the value the debugger wrote at the first; the resume
    # snapshot shows the thread continuing with it, stepping over the breakpoint.
    r11 = lambda s: list(struct.unpack_from("<8I", bytes.fromhex(s["grf"]), 11 * 32))  # noqa: E731
    expect(r11(snaps[1]) == new_r11 and r11(snaps[2]) == new_r11, "breakpoint: the written r11 did not arrive", probs)
    expect(snaps[1]["ip"] == BP_IP and snaps[1]["dbg0"][0] & 1 and snaps[1]["cr0"][1] == 0,
           f"breakpoint: resume at {snaps[1]['ip']:#x} dbg0 {snaps[1]['dbg0']} cr0 {snaps[1]['cr0']}", probs)
    expect(snaps[1]["cf_depth"] == 1 and snaps[1]["ce"] == snaps[0]["ce"], "breakpoint: stacks / ce not restored", probs)
    return probs


LONG_KERNEL = """.kernel long
.simd 8
.arg out global
        mul (1) r10.0:ud r0.0:ud 8:ud
        add (8) r11:ud r1:ud r10.0:ud
        shl (8) r12:ud r11:ud 2:ud
        mov (8) r13:ud 0:ud
        mov (8) r14:d 3000:d
        do (8)
            add (8) r13:ud r13:ud r11:ud
            add (8) r14:d r14:d -1:d
            cmp.gt.f0 (8) null r14:d 0:d
        (f0) while (8)
        send.store (8) r12 r13 r7.0
        send.eot
"""


def test_halt_all(run):
    # 1x2x2x4: 4 EUs x 4 threads; xe-lp: 96 EUs x 7 threads (tids up to 767).  One-thread
    # groups, as many as threads: all resident when the halt-all comes.
    return halt_all(run, "1x2x2x4", 4, 4, 5000) + halt_all(run, "1x6x16x7", 96, 7, 8000)


def halt_all(run, topology, eus, threads, at):
    probs = []
    n = eus * threads
    res = run.run(LONG_KERNEL, "long", [n, 1, 1], [8, 1, 1], struct.pack("<Q", OUT_VA).hex(),
                  {"mmio_at": [{"at": at, "register": REGS["DBG_ALL"], "value": 1}]}, out_size=max(4096, 32 * n),
                  topology=topology)
    d = res["debug"]
    tids = sorted(s["tid"] for s in d["stops"])
    want = sorted(eu * 8 + t for eu in range(eus) for t in range(threads))
    expect(tids == want, f"halt-all: stopped threads {tids}, expected each of {want} once", probs)
    expect(all(s["dbg_reason"] & 7 == 3 for s in d["stops"]), "halt-all: a reason is not 3 (halt)", probs)
    stops = [s for s in d["snapshots"] if s["kind"] == "stop"]
    expect(all(s["cr0"][1] >> 30 & 1 for s in stops), "halt-all: cr0.1 bit 30 missing", probs)
    for stop in d["stops"]:
        snap = next((s for s in stops if s["tid"] == stop["tid"]), None)
        if snap:
            probs += [f"halt-all tid {stop['tid']}: {p}" for p in slot_vs_snapshot(decode_slot(stop["slot"]), snap)]
    expect(d["stopped"] == n and d["attn_count"] == 0, f"halt-all: DBG_STOPPED {d['stopped']} attn {d['attn_count']}",
           probs)
    expect(out_words(res, 8 * n) == [(3000 * g) & 0xffffffff for g in range(8 * n)], "halt-all: wrong result", probs)
    return [f"{topology}: {p}" for p in probs]


PF_KERNEL = """.kernel pf
.simd 8
.arg out global
.arg bad global
        shl (8) r10:ud r1:ud 2:ud
        mov (8) r11:ud 7:ud
        send.store (8) r10 r11 r7.2
        add (8) r12:ud r1:ud 50:ud
        send.store (8) r10 r12 r7.0
        send.eot
"""


def test_page_fault(run):
    probs = []
    args = struct.pack("<QQ", OUT_VA, BAD_VA).hex()
    # Skip the faulting store: cr0.2 (the resume IP) = the next instruction.
    res = run.run(PF_KERNEL, "pf", [1, 1, 1], [8, 1, 1], args,
                  {"on_stop": [{"write": [{"offset": OFF["CR"] + 8, "data": struct.pack("<I", 0x30).hex()}]}]})
    d = res["debug"]
    expect(len(d["stops"]) == 1, f"page fault: {len(d['stops'])} stops", probs)
    if d["stops"]:
        slot, snap = decode_slot(d["stops"][0]["slot"]), d["snapshots"][0]
        probs += [f"page fault: {p}" for p in slot_vs_snapshot(slot, snap)]
        expect(d["stops"][0]["dbg_reason"] & 7 == 2 and snap["reason"] == 2, "page fault: reason not 2", probs)
        expect(slot["cr0"][3] == BAD_VA & 0xffffffff and slot["cr0"][2] == 0x20 and slot["cr0"][1] >> 2 & 1,
               f"page fault: cr0 {slot['cr0']}", probs)
        expect(slot["sp"][2:] == [BAD_VA & 0xffffffff, BAD_VA >> 32] and snap["fault_va"] == BAD_VA,
               f"page fault: SP {slot['sp']} (the whole address)", probs)
    expect(out_words(res, 8) == [i + 50 for i in range(8)] and not res["engine_error"],
           f"page fault: result {out_words(res, 8)}", probs)
    # SIP_EN off: the thread ends with the exception, exactly as without a debug unit.
    res = run.run(PF_KERNEL, "pf", [1, 1, 1], [8, 1, 1], args, {"sip_en": False})
    t = res["threads"][0] if res["threads"] else {}
    expect(t.get("status") == "exception" and t.get("exception", {}).get("address") == BAD_VA & 0xffffffff and
           not res["debug"]["stops"] and not res["debug"]["snapshots"] and out_words(res, 8) == [0] * 8,
           f"page fault without SIP_EN: {t.get('status')} {t.get('exception')}", probs)
    return probs


SLM_KERNEL = """.kernel slmk
.simd 8
.slm 64
.arg out global
        shl (8) r10:ud r1:ud 2:ud
        mul (8) r11:ud r1:ud 3:ud
        send.slm.store (8) r10 r11
        send.fence
        nop {bp}
        send.slm.load (8) r12 r10
        send.store (8) r10 r12 r7.0
        send.eot
"""


def test_slm(run):
    probs = []
    cmd = OFF["CMD"]
    on_stop = [
        {"write": [{"offset": cmd, "data": cmd_bytes(SIP_CMD["SLM_READ"], 32, 0)}]},
        {"write": [{"offset": cmd, "data": cmd_bytes(SIP_CMD["SLM_WRITE"], 8, 4, struct.pack("<II", 0xAAAA, 0xBBBB))}]},
        {"write": [{"offset": cmd, "data": cmd_bytes(SIP_CMD["SLM_READ"], 8, 60)}]},  # past the group's 64 bytes
        {"write": [{"offset": cmd, "data": cmd_bytes(SIP_CMD["RESUME"])}]},
    ]
    res = run.run(SLM_KERNEL, "slmk", [1, 1, 1], [8, 1, 1], struct.pack("<Q", OUT_VA).hex(), {"on_stop": on_stop})
    stops = [decode_slot(s["slot"]) for s in res["debug"]["stops"]]
    expect(len(stops) == 4, f"SLM: {len(stops)} stops, expected 4", probs)
    if len(stops) == 4:
        expect(stops[1]["command"] == SIP_CMD["READY"] and
               list(struct.unpack("<8I", stops[1]["buffer"][:32])) == [3 * i for i in range(8)],
               f"SLM read: {stops[1]['command']} {stops[1]['buffer'][:32].hex()}", probs)
        expect(stops[2]["command"] == SIP_CMD["READY"], "SLM write: not READY", probs)
        expect(stops[3]["command"] == SIP_CMD["READY"] and stops[3]["size"] == 0, "SLM read past the end: not refused",
               probs)
        expect(all(s["count"] == 1 for s in stops), "SLM: sr_ident.count changed between commands", probs)
    want = [3 * i for i in range(8)]
    want[1], want[2] = 0xAAAA, 0xBBBB
    expect(out_words(res, 8) == want, f"SLM: result {out_words(res, 8)} expected {want}", probs)
    return probs


def with_breakpoints(text, rng, share):
    """The program with {bp} on a random share of its instructions."""
    out = []
    for line in text.splitlines():
        code, sep, comment = line.partition("//")
        s = code.strip()
        if s and not s.startswith(".") and not s.endswith(":") and rng.random() < share:
            line = code.rstrip() + " {bp}" + (" " + sep + comment if sep else "")
        out.append(line)
    return "\n".join(out) + "\n"


def random_runs(run, count, first):
    """Random programs with breakpoints and random requests against the ISS without any."""
    probs = []
    for seed in range(first, first + count):
        rng = random.Random(seed)
        text, setup, _ = zegen.generate(seed)
        plain, mod = run.tmp / "plain.zeasm", run.tmp / "plain.elf"
        plain.write_text(text)
        if zetools.assemble(run.asm, plain, mod).returncode:
            probs.append(f"seed {seed}: does not assemble")
            continue
        iss = zeiss.run_dispatch(str(mod), setup["kernel"], setup["groups"], setup["group_size"],
                                 bytes.fromhex(setup.get("args", "")),
                                 {int(b["address"], 16): bytes.fromhex(b["data"]) for b in setup["buffers"]},
                                 setup.get("local_sizes", {}), module_va=MODULE_VA)
        sip = seed % 4 != 3  # every fourth run without the SIP: requests stop threads directly
        src = with_breakpoints(text, rng, 0.15) if sip else text
        timed = []
        for _ in range(rng.randrange(1, 6)):
            at = rng.randrange(0, 3000)
            kind = rng.random()
            if kind < 0.3:
                timed.append({"at": at, "register": REGS["DBG_ALL"], "value": 1})
            elif kind < 0.7:
                timed += [{"at": at, "register": REGS["DBG_WORD"], "value": rng.randrange(2)},
                          {"at": at, "register": REGS["DBG_HALT" if rng.random() < 0.5 else "DBG_EXC"],
                           "value": rng.getrandbits(32)}]
            else:
                timed.append({"at": at, "register": REGS["DBG_ALL"], "value": rng.choice((2, 4, 5, 8, 10, 12))})
        src_path, mod2, stim, cfg = run.tmp / "r.zeasm", run.tmp / "r.elf", run.tmp / "r.json", run.tmp / "rc.json"
        src_path.write_text(src)
        r = zetools.assemble(run.asm, src_path, mod2)
        if r.returncode:
            probs.append(f"seed {seed}: with breakpoints does not assemble: {r.stderr}")
            continue
        stim.write_text(json.dumps({
            "buffers": [{"address": b["address"], "data": b["data"]} for b in setup["buffers"]],
            "modules": [{"path": str(mod2), "address": hex(MODULE_VA)}],
            "commands": [{"cmd": "compute_walker", "kernel": setup["kernel"], "group_size": setup["group_size"],
                          "groups": setup["groups"], "args": setup.get("args", ""),
                          "local_sizes": setup.get("local_sizes", {})}],
            "debug": {"sip_en": sip, "exc_en": 0x41, "mmio_at": timed}}))
        cfg.write_text(json.dumps({"debug_block": run.mode}))
        p = subprocess.run([run.gpu, "--preset", "tiny", "--config", str(cfg), "--capture-threads", "--stimulus",
                            str(stim)], capture_output=True, text=True, timeout=300,
                           env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        if p.returncode:
            probs.append(f"seed {seed}: zesim-gpu failed ({p.returncode}): {p.stderr.strip()[-1500:]}")
            continue
        model = json.loads(p.stdout)
        run.stops += len(model["debug"]["stops"])
        probs += compare(seed, iss, model)
        if sip:  # without the SIP a request stops the thread with no slot writes and no snapshot
            probs += [f"seed {seed}: {p}" for p in stops_vs_snapshots(model["debug"])]
        expect(model["debug"]["attn_count"] == 0, f"seed {seed}: threads left in attention", probs)
    return probs


def test_test_channel(run):
    """The daemon's test channel hands out the same snapshots (DEBUG_SNAPSHOTS, drained)."""
    probs = []
    src, mod, stim, cfg = run.tmp / "t.zeasm", run.tmp / "t.elf", run.tmp / "t.json", run.tmp / "tc.json"
    src.write_text(BP_KERNEL)
    zetools.assemble(run.asm, src, mod)
    stim.write_text(json.dumps({
        "buffers": [{"address": hex(OUT_VA), "size": 4096}],
        "modules": [{"path": str(mod), "address": hex(MODULE_VA)}],
        "commands": [{"cmd": "compute_walker", "kernel": "bp", "group_size": [8, 1, 1], "groups": [2, 1, 1],
                      "args": struct.pack("<Q", OUT_VA).hex()}],
        "debug": {}}))
    cfg.write_text(json.dumps({"debug_block": run.mode}))
    with zedaemon.Daemon(run.gpu, "--preset", "tiny", "--config", str(cfg)) as d:
        res = d.stimulus(stim)
        got = d.debug_snapshots()
        again = d.debug_snapshots()
    want = res["debug"]["snapshots"]
    expect(len(want) == 8 and got == want, f"test channel: {len(got)} snapshots, the run reported {len(want)}", probs)
    expect(again == [], "test channel: DEBUG_SNAPSHOTS does not drain", probs)
    return probs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpu", required=True)
    ap.add_argument("--as", dest="asm", required=True)
    ap.add_argument("--mode", default="check", choices=("check", "rtl", "twin"))
    ap.add_argument("--random", type=int, default=12, help="random programs")
    ap.add_argument("--first", type=int, default=500, help="first random seed")
    a = ap.parse_args()
    probs = []
    with tempfile.TemporaryDirectory() as tmp:
        run = Runner(a.gpu, a.asm, pathlib.Path(tmp), a.mode)
        for test in (test_breakpoint, test_halt_all, test_page_fault, test_slm, test_test_channel):
            try:
                probs += test(run)
            except AssertionError as e:
                probs.append(f"{test.__name__}: {e}")
        directed = run.stops
        probs += random_runs(run, a.random, a.first)
    for p in probs[:40]:
        print("test_debug_sip: FAILED:", p)
    if probs:
        return 1
    print(f"test_debug_sip: breakpoint, halt-all, page fault and SLM commands through the SIP ({directed} stops), "
          f"{a.random} random programs with breakpoints and requests ({run.stops - directed} stops) equal the ISS; "
          f"debug_block {a.mode}: 0 RTL/twin differences")
    return 0


if __name__ == "__main__":
    sys.exit(main())
