#!/usr/bin/env python3
"""Generated timing tests (issue 18): every latency class and every send message, with
the expected cycle counts computed here from the documented rules -- docs/model.md §3-§5
(scoreboard, issue, dispatch, barriers) and docs/memory.md §4 (L3/DRAM/SLM) -- and the
documented parameter values, read from the documentation, never from the model:

  - the latency classes from docs/model.md §3 (cross-checked with include/zs/ze_isa.def);
  - the memory, SLM and dispatch defaults from docs/config.md §3 (the key table), the
    fixed values from its "Not settable from a file" sentence, the tiny preset's L3 size
    from its §2 preset table;
  - a second configuration whose config file sets every timing key to other values, so
    a key that is read wrongly fails too.

Each case is a pair of generated programs, P and Q, run through `zesim-gpu --stimulus`;
they differ in one place (a dependent chain against an independent one, a fence against
a nop, a miss against a hit ...), so fixed overheads cancel: the test checks
cycles(P) - cycles(Q) (the result JSON's `cycles`) against the difference of the two
programs' schedules computed by `Schedule` below, a literal transcription of the
documented rules.  Timestamps the programs take (`send.timestamp`) are checked against
the same schedule, and every run's ledger totals (`inst.<class>`, `sends.<message>`)
against the generated program, so a program that does not run as generated cannot pass
by accident.  Needs ZESIM_AS and ZESIM_GPU (set by CTest)."""
import json
import math
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "stimulus"))
import zeisa  # noqa: E402

AS = os.environ.get("ZESIM_AS")
GPU = os.environ.get("ZESIM_GPU")
BUF = 0x100000          # the global buffer (17 pages: 16 + 1 lines in one L3 set, below)
BUF_PAGES = 17
KERNEL_VA = 0x40000000
N = 12                  # length of the chains

# ---- the documented parameters ------------------------------------------------------


def documented_latencies():
    """docs/model.md §3: 'ctrl 1, alu 4, mad 6, math 16, branch 2'."""
    text = (ROOT / "docs" / "model.md").read_text()
    m = re.search(r"ctrl (\d+), alu (\d+), mad (\d+), math (\d+), branch (\d+)", text)
    assert m, "docs/model.md §3 no longer lists the latency classes"
    return dict(zip(("ctrl", "alu", "mad", "math", "branch"), map(int, m.groups())))


def documented_config(preset):
    """docs/config.md: the defaults of §3's key table, the fixed values of the 'Not
    settable' sentence, and the preset's L3 size from §2."""
    text = (ROOT / "docs" / "config.md").read_text()
    cfg = {}
    for row in re.finditer(r"^\| `(\w+)` \| [^|]+\| [^|]*\| ([0-9]+) \|", text, re.M):
        cfg[row.group(1)] = int(row.group(2))
    fixed = re.search(r"Not settable from a file \(fixed at the defaults\):(.*?)\.\s", text, re.S)
    assert fixed, "docs/config.md: the fixed values' sentence is gone"
    for key, value in re.findall(r"`(\w+)` (\d+)", fixed.group(1)):
        cfg[key] = int(value)
    topo = re.search(r"^\| topology \(slices × sub-slices × EUs × threads\) \| ([^|]+)\| ([^|]+)\|", text, re.M)
    assert topo, "docs/config.md §2: no topology row in the preset table"
    cfg["topology"] = [int(x) for x in re.findall(r"\d+", topo.group({"xe-lp": 1, "tiny": 2}[preset]))[:4]]
    l3 = re.search(r"^\| L3 \| (\d+) KiB \| (\d+) KiB \|", text, re.M)
    assert l3, "docs/config.md §2: no L3 row in the preset table"
    cfg["l3_kb"] = int(l3.group({"xe-lp": 1, "tiny": 2}[preset]))
    need = ("l3_latency", "dram_latency", "dram_bytes_per_cycle", "slm_latency", "dispatch_cycles",
            "l3_ways", "slm_banks", "atomic_extra", "barrier_cycles", "l3_kb")
    missing = [k for k in need if k not in cfg]
    assert not missing, f"docs/config.md does not document {missing}"
    return cfg


# A second configuration: every timing key of a config file at another value (and a
# topology with 4 EUs in the sub-slice, so that barriers of up to 4 threads run one
# thread per EU).  L3 sets must divide 64 (see Memory).
CUSTOM = {"preset": "tiny", "l3_latency": 37, "dram_latency": 91, "dram_bytes_per_cycle": 16,
          "slm_latency": 13, "dispatch_cycles": 5, "l3_kb": 32, "topology": "1x1x4x2"}


class Params:
    def __init__(self, preset, overrides=None):
        self.lat = documented_latencies()
        c = documented_config(preset)
        c.update({k: v for k, v in (overrides or {}).items() if k != "preset"})
        if isinstance(c["topology"], str):
            c["topology"] = [int(x) for x in c["topology"].split("x")]
        self.__dict__.update(c)
        self.line_cycles = math.ceil(64 / self.dram_bytes_per_cycle)
        self.l3_sets = self.l3_kb * 1024 // 64 // self.l3_ways
        self.eus = self.topology[2]       # EUs of the (one) sub-slice the group runs in


# ---- the documented rules -------------------------------------------------------------


class Memory:
    """docs/memory.md §4.1 and §4.2, GT-wide state.  Lines are named by their VA line
    number: every buffer page is a distinct physical page, and the L3 set of a line,
    (PA / 64) mod sets, equals (VA / 64) mod sets when sets divides 64 (a 4 KiB page is
    64 lines), so VA lines stand for physical ones."""

    def __init__(self, p):
        assert 64 % p.l3_sets == 0, "L3 sets must divide 64"
        self.p = p
        self.sets = [[] for _ in range(p.l3_sets)]   # LRU order, oldest first
        self.port_free = 0
        self.dram_free = 0

    def global_access(self, issue, lines, atomic):
        p, done = self.p, issue
        for line in lines:
            start = max(issue, self.port_free)
            self.port_free = start + 1
            s = self.sets[line % p.l3_sets]
            if line in s:
                s.remove(line)
                ready = start + p.l3_latency
            else:
                dram = max(start, self.dram_free)
                self.dram_free = dram + p.line_cycles
                ready = dram + p.l3_latency + p.dram_latency
                if len(s) == p.l3_ways:
                    s.pop(0)
            s.append(line)
            done = max(done, ready)
        return done + (p.atomic_extra if atomic else 0)

    def slm_access(self, issue, dwords, atomic):
        p = self.p
        per_bank = {}
        for d in set(dwords):
            per_bank[d % p.slm_banks] = per_bank.get(d % p.slm_banks, 0) + 1
        worst = max(per_bank.values(), default=1)
        return issue + p.slm_latency + (worst - 1) + (p.atomic_extra if atomic else 0)


class Inst:
    """One generated instruction: its text, latency class, the GRFs / flags it reads and
    writes (scoreboard names 'r10', 'f0'), and for sends the message and what it touches."""

    def __init__(self, text, cls, reads=(), writes=(), msg=None, lines=(), dwords=(), wait=None, only=None):
        self.text, self.cls, self.reads, self.writes = text, cls, tuple(reads), tuple(writes)
        self.msg, self.lines, self.dwords, self.wait = msg, tuple(lines), tuple(dwords), wait
        self.only = only    # executed only by the threads for which only(tid) holds (None: all)


def regs(base, simd, elements=1):
    """A vector operand covers max(1, esize / 8) registers per element (docs/model.md §3)."""
    return [f"r{base + k}" for k in range(max(1, simd // 8) * elements)]


class Schedule:
    """docs/model.md §3: issue at the latest of the thread's earliest cycle and the
    reg_ready of every register and flag read or written; then the earliest next issue
    and the result cycle by class / message.  One thread per EU (no issue contention);
    barriers (§5) across the threads of one group."""

    def __init__(self, p, mem):
        self.p, self.mem = p, mem

    def step(self, th, ins):
        p = self.p
        issue = max([th["t"]] + [th["ready"].get(r, 0) for r in ins.reads + ins.writes])
        th["issues"].append(issue)
        nxt, result = issue + 1, None
        if ins.cls == "send":
            m = ins.msg
            if m in ("load", "store", "atomic"):
                result = self.mem.global_access(issue, ins.lines, m == "atomic")
            elif m.startswith("slm."):
                result = self.mem.slm_access(issue, ins.dwords, m == "slm.atomic")
            elif m == "fence":
                result = max(issue + 1, th["sends_done"])
                nxt = result
            elif m == "timestamp":
                result = issue + 1
                th["stamps"][ins.writes[0]] = issue     # the register keeps its last stamp
            elif m == "barrier":
                result = issue
            elif m == "eot":
                result = issue
            th["sends_done"] = max(th["sends_done"], result)
        elif ins.cls == "branch":
            nxt = issue + p.lat["branch"]
        else:
            result = issue + p.lat[ins.cls]
            if ins.wait is not None:
                nxt = issue + max(1, ins.wait(th["tid"]))
        for r in ins.writes:
            th["ready"][r] = max(th["ready"].get(r, 0), result)
        th["t"] = nxt
        return issue

    def run(self, prog, nthreads=1, origin=0):
        """Cycle of each thread's eot (and its timestamps) for a group placed at `origin`:
        thread t's first issue is at origin + (t + 1) x dispatch_cycles (§4)."""
        traces = [prog.dynamic(t) for t in range(nthreads)]
        assert nthreads <= self.p.eus
        ths = [dict(tid=t, t=origin + (t + 1) * self.p.dispatch_cycles, ready={}, sends_done=0, issues=[], stamps={},
                    pc=0, end=None) for t in range(nthreads)]
        while any(th["end"] is None for th in ths):
            arrivals, ends = [], []
            for th in ths:
                while th["end"] is None:
                    ins = traces[th["tid"]][th["pc"]]
                    th["pc"] += 1
                    issue = self.step(th, ins)
                    if ins.msg == "eot":
                        th["end"] = issue
                        ends.append(issue)
                    elif ins.msg == "barrier":
                        arrivals.append((th, issue))
                        break
            if arrivals:
                # §5: the barrier releases when the arrivals equal the threads that have
                # not ended: at the last arrival, or when the last thread that does not
                # arrive ends while the others wait
                release = max([a for _, a in arrivals] + ends)
                for th, _ in arrivals:
                    th["t"] = release + self.p.barrier_cycles
        return ths


# ---- the program generator --------------------------------------------------------------

ALU_OPS = ["mov", "not", "and", "or", "xor", "shl", "shr", "asr", "add", "min", "max", "sel"]
MAD_OPS = ["mul", "mad"]
MATH_OPS = ["math.inv", "math.sqrt", "math.exp", "math.log"]
PREAMBLE_WAIT = 300     # longer than the command streamer's steps: the GT's end ends the run


class Program:
    def __init__(self, slm=0):
        self.trace, self.funcs, self.slm = [], [], slm

    def add(self, ins):
        self.trace.append(ins)
        return self

    def dynamic(self, tid):
        """The instructions thread `tid` executes, in order."""
        return [i for i in self.trace if i.cls != "label" and (i.only is None or i.only(tid))]

    def text(self):
        lines = [".kernel k", ".simd 8", f".slm {self.slm}", ".arg buf global"]
        lines += [f"        {i.text}" for i in self.trace if not getattr(i, "hidden", False)]
        return "\n".join(lines + self.funcs) + "\n"


def op(name, dst, srcs, simd=8, typ="d"):
    """An ALU / mad / math instruction on vectors rN (or scalars 'rN.k')."""
    ops = {"mov": 1, "not": 1, "mad": 3}.get(name, 1 if name.startswith("math.") else 2)
    srcs = list(srcs)[:ops]
    cls = "mad" if name in MAD_OPS else "math" if name.startswith("math.") else "alu"
    if name.startswith("math."):
        typ = "f"
    if name in ("mad",):
        typ = "f"

    def operand(r):
        return f"r{r}:{typ}" if isinstance(r, int) else f"{r}:{typ}"

    def covered(r):
        return regs(r, simd) if isinstance(r, int) else [r.split(".")[0]]

    text = f"{name} ({simd}) {operand(dst)} " + " ".join(operand(s) for s in srcs)
    reads = [x for s in srcs for x in covered(s)]
    if name == "sel":                       # sel must be predicated: it reads f0 too
        text, reads = "(f0) " + text, reads + ["f0"]
    return Inst(text, cls, reads=reads, writes=covered(dst))


def mov_imm(reg, lane, value):
    return Inst(f"mov (1) r{reg}.{lane}:ud {value}:ud", "alu", writes=[f"r{reg}"])


def preamble(prog, addr_lanes=(), slm_lanes=()):
    """Address registers, f0 = 0, r12.0 = a wait count; then a long wait so that all of
    it is ready and the command streamer has finished before the body starts."""
    for lane, off in enumerate(addr_lanes):
        prog.add(mov_imm(4, lane, off))
    for lane, off in enumerate(slm_lanes):
        prog.add(mov_imm(5, lane, off))
    prog.add(Inst("cmp.ne.f0 (8) null r11:d r11:d", "alu", reads=["r11"], writes=["f0"]))
    prog.add(mov_imm(12, 0, 57))
    prog.add(Inst(f"wait {PREAMBLE_WAIT}", "ctrl", wait=lambda tid: PREAMBLE_WAIT))
    return prog


def eot(prog):
    return prog.add(Inst("send.eot", "send", msg="eot"))


def lines_of(offsets):
    out = []
    for o in offsets:
        line = (BUF + o) // 64
        if line not in out:
            out.append(line)
    return out


def load(dst, simd, offsets, msg="load", v=1, pred=None):
    """send.load / send.atomic.add of `simd` channels at BUF + offsets[i] (r4 lanes); a
    load of v dwords per channel (.v2-.v4) touches offsets[i] + 4e; with pred (a flag
    that is 0) no channel is enabled."""
    if pred:
        return Inst(f"({pred}) send.load ({simd}) r{dst} r4 r7.0", "send", reads=["r4", "r7", pred],
                    writes=regs(dst, simd), msg="load")
    if v > 1:
        elems = [o + 4 * e for o in offsets for e in range(v)]
        return Inst(f"send.load.v{v} ({simd}) r{dst} r4 r7.0", "send", reads=["r4", "r7"], writes=regs(dst, simd, v),
                    msg="load", lines=lines_of(elems))
    if msg == "atomic":
        text = f"send.atomic.add ({simd}) r{dst} r4 r13 r7.0"
        return Inst(text, "send", reads=["r4", "r13", "r7"], writes=regs(dst, simd), msg="atomic",
                    lines=lines_of(offsets))
    return Inst(f"send.load ({simd}) r{dst} r4 r7.0", "send", reads=["r4", "r7"], writes=regs(dst, simd),
                msg="load", lines=lines_of(offsets))


def store(simd, offsets):
    return Inst(f"send.store ({simd}) r4 r14 r7.0", "send", reads=["r4", "r14", "r7"], msg="store",
                lines=lines_of(offsets))


def slm(msg, simd, offsets, dst=30, pred=None):
    dw = [o // 4 for o in offsets]    # the group's SLM base is 0: the first group, first fit
    if pred:
        return Inst(f"({pred}) send.slm.load ({simd}) r{dst} r5", "send", reads=["r5", pred], writes=regs(dst, simd),
                    msg=msg)
    if msg == "slm.load":
        return Inst(f"send.slm.load ({simd}) r{dst} r5", "send", reads=["r5"], writes=regs(dst, simd), msg=msg,
                    dwords=dw)
    if msg == "slm.store":
        return Inst(f"send.slm.store ({simd}) r5 r14", "send", reads=["r5", "r14"], msg=msg, dwords=dw)
    return Inst(f"send.slm.atomic.add ({simd}) r{dst} r5 r14", "send", reads=["r5", "r14"], writes=regs(dst, simd),
                msg=msg, dwords=dw)


def fence():
    return Inst("send.fence", "send", msg="fence")


def nop():
    return Inst("nop", "ctrl")


def stamp(reg):
    return Inst(f"send.timestamp (1) r{reg}.0", "send", writes=[f"r{reg}"], msg="timestamp")


def use(src, dst=40):
    """An ALU consumer of r<src> (dependent when src is the value just produced)."""
    return op("add", dst, [src, src], simd=8)


# ---- the cases --------------------------------------------------------------------------


def chain_cases():
    """Latency classes: N dependent instructions (each reads the previous result) against
    N independent ones: the difference is (N - 1) x (latency - 1)."""
    out = []
    for cls, ops in (("alu", ALU_OPS), ("mad", MAD_OPS), ("math", MATH_OPS)):
        p, q = preamble(Program()), preamble(Program())
        for k in range(N):
            name = ops[k % len(ops)]
            p.add(op(name, 10, [10, 11, 12]))
            q.add(op(name, 20 + k, [10, 11, 12]))
        out.append((f"{cls}: {N} dependent vs independent ({', '.join(ops)})", eot(p), eot(q), 1))
    # cmp writes a flag: the next cmp to the same flag waits for it (write after write)
    p, q = preamble(Program()), preamble(Program())
    for k in range(N):
        p.add(Inst("cmp.eq.f1 (8) null r11:d r12:d", "alu", reads=["r11", "r12"], writes=["f1"]))
        q.add(op("add", 20 + k, [11, 12]))
    out.append(("alu: cmp chain on one flag vs independent adds", eot(p), eot(q), 1))
    # a predicate reads the flag cmp wrote
    p, q = preamble(Program()), preamble(Program())
    for k in range(N // 2):
        p.add(Inst(f"cmp.eq.f{k % 2} (8) null r11:d r12:d", "alu", reads=["r11", "r12"], writes=[f"f{k % 2}"]))
        p.add(Inst(f"(f{k % 2}) add (8) r{20 + k}:d r11:d r12:d", "alu", reads=["r11", "r12", f"f{k % 2}"],
                   writes=[f"r{20 + k}"]))
        q.add(Inst(f"cmp.eq.f{k % 2} (8) null r11:d r12:d", "alu", reads=["r11", "r12"], writes=[f"f{k % 2}"]))
        q.add(op("add", 20 + k, [11, 12]))
    out.append(("alu: predicated add waits for its flag", eot(p), eot(q), 1))
    # SIMD16 operands cover two registers: reading the upper one waits too
    p, q = preamble(Program()), preamble(Program())
    for prog, src in ((p, 21), (q, 22)):
        prog.add(op("add", 20, [40, 40], simd=16))
        prog.add(op("add", 30, [src, src], simd=8))
    out.append(("alu: a SIMD16 result covers two registers", eot(p), eot(q), 1))
    # ctrl: nop and wait
    p, q = preamble(Program()), preamble(Program())
    for _ in range(N):
        p.add(nop())
    out.append((f"ctrl: {N} nops issue one per cycle", eot(p), eot(q), 1))
    p, q = preamble(Program()), preamble(Program())
    p.add(Inst("wait 41", "ctrl", wait=lambda tid: 41))
    p.add(Inst("wait 0", "ctrl", wait=lambda tid: 0))
    p.add(Inst("wait r12.0", "ctrl", reads=["r12"], wait=lambda tid: 57))
    q.add(nop())
    out.append(("ctrl: wait 41, wait 0, wait r12.0 (= 57)", eot(p), eot(q), 1))
    # branch: issue + 2, taken or not
    p, q = preamble(Program()), preamble(Program())
    for k in range(N):
        p.add(Inst(f"jmpi j{k}", "branch"))
        p.trace.append(Inst(f"j{k}:", "label"))
        q.add(nop())
    out.append((f"branch: {N} taken jmpi vs nops", eot(p), eot(q), 1))
    p, q = preamble(Program()), preamble(Program())
    for k in range(N):
        p.add(Inst(f"(f0) jmpi u{k}", "branch", reads=["f0"]))
        p.trace.append(Inst(f"u{k}:", "label"))
        q.add(nop())
    out.append((f"branch: {N} jmpi not taken (f0 = 0) vs nops", eot(p), eot(q), 1))
    p, q = preamble(Program()), preamble(Program())
    for _ in range(N // 2):
        p.add(Inst("call fn", "branch"))
        p.trace.append(Inst("ret", "branch"))
        p.trace[-1].hidden = True     # executed in fn, below
        q.add(nop())
    p.funcs = [".func fn", "        ret"]
    out.append((f"branch: {N // 2} call + ret vs nops", eot(p), eot(q), 1))
    return out


def send_cases():
    out = []
    a = 0x40                                         # one dword, line 1 of the buffer
    # load: miss (unloaded: issue + l3 + dram), dependent use vs independent use
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(load(30, 1, [a])).add(use(30))
    q.add(load(30, 1, [a])).add(use(31))
    out.append(("load: L3 miss", eot(p), eot(q), 1))
    # load: hit (the line was loaded before; the fence waits for that load)
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    for prog, src in ((p, 32), (q, 33)):
        prog.add(load(30, 1, [a])).add(fence()).add(load(32, 1, [a])).add(use(src))
    out.append(("load: L3 hit after a miss", eot(p), eot(q), 1))
    # load: 8 channels in 8 lines, all missing: the L3 port takes a line per cycle, DRAM
    # one per ceil(64 / dram_bytes_per_cycle)
    offs = [0x1000 + 64 * i for i in range(8)]
    p, q = preamble(Program(), offs), preamble(Program(), offs)
    p.add(load(30, 8, offs)).add(use(30))
    q.add(load(30, 8, offs)).add(use(31))
    out.append(("load: SIMD8, 8 missing lines (L3 port, DRAM bandwidth)", eot(p), eot(q), 1))
    # ... the same 8 lines again: 8 hits through the port
    p, q = preamble(Program(), offs), preamble(Program(), offs)
    for prog, src in ((p, 32), (q, 34)):
        prog.add(load(30, 8, offs)).add(fence()).add(load(32, 8, offs)).add(use(src))
    out.append(("load: SIMD8, 8 lines hit", eot(p), eot(q), 1))
    # ... 8 channels in one line: one miss
    same = [0x2000 + 4 * i for i in range(8)]
    p, q = preamble(Program(), same), preamble(Program(), same)
    p.add(load(30, 8, same)).add(use(30))
    q.add(load(30, 8, same)).add(use(31))
    out.append(("load: SIMD8 in one line: one miss", eot(p), eot(q), 1))
    # a second access to a line right after its miss is a hit (no miss merging)
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(load(30, 1, [a])).add(load(32, 1, [a])).add(use(32))
    q.add(load(30, 1, [a])).add(load(32, 1, [a])).add(use(33))
    out.append(("load: a second access right after the miss hits (no miss merging)", eot(p), eot(q), 1))
    # vector loads: 8 channels x 4 dwords, 16 bytes apart: 128 bytes, two missing lines
    vec = [0x3000 + 16 * i for i in range(8)]
    p, q = preamble(Program(), vec), preamble(Program(), vec)
    p.add(load(30, 8, vec, v=4)).add(use(33))
    q.add(load(30, 8, vec, v=4)).add(use(34))
    out.append(("load.v4: SIMD8 x 4 dwords, 2 lines; the last element's register", eot(p), eot(q), 1))
    # no channel enabled (predicate f0 = 0): complete at issue
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(load(30, 8, [a], pred="f0")).add(use(30))
    q.add(load(30, 8, [a], pred="f0")).add(use(31))
    out.append(("load with no channel enabled completes at issue", eot(p), eot(q), 1))
    # L3 capacity: ways + 1 lines of one set (offset 0 of distinct pages) evict the first
    out += l3_set_cases()
    # store: completion only waited for by a fence
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(store(1, [a])).add(fence())
    q.add(store(1, [a])).add(nop())
    out.append(("store miss + fence vs + nop", eot(p), eot(q), 1))
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    for prog, last in ((p, fence()), (q, nop())):
        prog.add(load(30, 1, [a])).add(fence()).add(store(1, [a])).add(last)
    out.append(("store hit + fence vs + nop", eot(p), eot(q), 1))
    # fence: waits for loads too; with nothing outstanding it is issue + 1
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(load(30, 1, [a])).add(fence())
    q.add(load(30, 1, [a])).add(nop())
    out.append(("fence after a load miss vs nop", eot(p), eot(q), 1))
    p, q = preamble(Program()), preamble(Program())
    for _ in range(N):
        p.add(fence())
        q.add(nop())
    out.append((f"fence: {N} with nothing outstanding vs nops", eot(p), eot(q), 1))
    # atomic: memory latency + atomic_extra
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    p.add(load(30, 1, [a], msg="atomic")).add(use(30))
    q.add(load(30, 1, [a], msg="atomic")).add(use(31))
    out.append(("atomic: miss + atomic_extra", eot(p), eot(q), 1))
    p, q = preamble(Program(), [a]), preamble(Program(), [a])
    for prog, src in ((p, 32), (q, 33)):
        prog.add(load(30, 1, [a])).add(fence()).add(load(32, 1, [a], msg="atomic")).add(use(src))
    out.append(("atomic: hit + atomic_extra", eot(p), eot(q), 1))
    # SLM: slm_latency + bank conflicts (+ atomic_extra)
    spread = [4 * i for i in range(8)]                      # 8 banks, no conflict
    conflict = [64 * i for i in range(8)]                   # dword 16 i: bank 0 for 16 banks
    shared = [8] * 8                                        # one dword: no conflict
    for offs_, what in ((spread, "8 banks"), (conflict, f"8 dwords in one bank"), (shared, "8 channels, one dword")):
        p, q = preamble(Program(slm=1024), slm_lanes=offs_), preamble(Program(slm=1024), slm_lanes=offs_)
        p.add(slm("slm.load", 8, offs_)).add(use(30))
        q.add(slm("slm.load", 8, offs_)).add(use(31))
        out.append((f"slm.load: {what}", eot(p), eot(q), 1))
    p, q = preamble(Program(slm=1024), slm_lanes=spread), preamble(Program(slm=1024), slm_lanes=spread)
    p.add(slm("slm.load", 8, spread, pred="f0")).add(use(30))
    q.add(slm("slm.load", 8, spread, pred="f0")).add(use(31))
    out.append(("slm.load with no channel enabled still takes slm_latency", eot(p), eot(q), 1))
    p, q = preamble(Program(slm=1024), slm_lanes=conflict), preamble(Program(slm=1024), slm_lanes=conflict)
    p.add(slm("slm.store", 8, conflict)).add(fence())
    q.add(slm("slm.store", 8, conflict)).add(nop())
    out.append(("slm.store: 8 dwords in one bank + fence vs nop", eot(p), eot(q), 1))
    p, q = preamble(Program(slm=1024), slm_lanes=[12]), preamble(Program(slm=1024), slm_lanes=[12])
    p.add(slm("slm.atomic", 1, [12])).add(use(30))
    q.add(slm("slm.atomic", 1, [12])).add(use(31))
    out.append(("slm.atomic: slm_latency + atomic_extra", eot(p), eot(q), 1))
    # timestamp: next issue and result at issue + 1 (a dependent add right behind it)
    p, q = preamble(Program()), preamble(Program())
    for k in range(N):
        p.add(stamp(20)).add(use(20, 41 + k))
        q.add(stamp(20)).add(use(19, 41 + k))
    out.append((f"timestamp: {N} x timestamp + dependent add", eot(p), eot(q), 1))
    p, q = preamble(Program()), preamble(Program())
    p.add(stamp(20)).add(Inst("wait 37", "ctrl", wait=lambda tid: 37)).add(stamp(22)).add(op("mul", 24, [11, 11]))
    p.add(op("add", 24, [24, 24])).add(stamp(26))
    q.add(stamp(20)).add(stamp(22)).add(stamp(26))
    out.append(("timestamp: values are issue cycles", eot(p), eot(q), 1))
    return out


def l3_set_cases():
    """ways + 1 lines of one L3 set evict the first (true LRU); ways - 1 do not.  Offset 0
    of every page is in set 0 (see Memory)."""
    out = []
    ways = documented_config("tiny")["l3_ways"]
    for others, what in ((ways, "l3_ways others in its set: evicted, a miss"), (ways - 1, "l3_ways - 1 others: a hit")):
        offs = [4096 * k for k in range(others + 1)]
        # r4 lane 0 walks the pages: one SIMD1 load per line, each waited for by a fence
        progs = []
        for src in (32, 33):
            prog = preamble(Program(), [0])
            for k, o in enumerate(offs + [0]):
                prog.add(mov_imm(4, 0, o))
                last = k == len(offs)
                prog.add(load(32 if last else 30, 1, [o]))
                if not last:
                    prog.add(fence())
            progs.append(eot(prog.add(use(src))))
        out.append((f"load: first line again after {what}", progs[0], progs[1], 1))
    return out


def dispatch_cases():
    """Threads of a group: the dispatcher places one per dispatch_cycles (§4);
    barriers: the last arrival releases every thread barrier_cycles later (§5)."""
    out = []
    for nthreads in (2, 3, 4):
        p = preamble(Program())
        q = preamble(Program())
        out.append((f"dispatch: {nthreads} threads vs 1", eot(p), eot(q), (nthreads, 1)))
    for nthreads, slow in ((2, 1), (2, 0), (3, 1), (4, 2)):
        # thread `slow` waits 150 cycles more before the barrier; every thread takes a
        # timestamp before and after it
        def body(prog, barrier, slow=slow):
            prog.add(Inst(f"cmp.eq.f1 (1) null r0.3:ud {slow}:ud", "alu", reads=["r0"], writes=["f1"]))
            prog.add(Inst("(f1) mov (1) r15.0:ud 150:ud", "alu", reads=["f1"], writes=["r15"]))
            prog.add(Inst("wait r15.0", "ctrl", reads=["r15"], wait=lambda tid, slow=slow: 150 if tid == slow else 0))
            prog.add(stamp(20))
            prog.add(Inst("send.barrier", "send", msg="barrier") if barrier else nop())
            prog.add(stamp(22))
            return eot(prog)
        out.append((f"barrier: {nthreads} threads, thread {slow} last", body(preamble(Program()), True),
                    body(preamble(Program()), False), (nthreads, nthreads)))
    for nthreads, slow in ((2, 1), (2, 0), (4, 3)):
        # thread `slow` skips the barrier and ends late: its end releases the others
        def body(prog, barrier, slow=slow):
            is_slow = lambda tid, slow=slow: tid == slow          # noqa: E731
            prog.add(Inst(f"cmp.eq.f1 (1) null r0.3:ud {slow}:ud", "alu", reads=["r0"], writes=["f1"]))
            prog.add(Inst("(f1) mov (1) r15.0:ud 150:ud", "alu", reads=["f1"], writes=["r15"]))
            prog.add(Inst("wait r15.0", "ctrl", reads=["r15"], wait=lambda tid: 150 if is_slow(tid) else 0))
            prog.add(stamp(20))
            prog.add(Inst("(f1) jmpi out", "branch", reads=["f1"]))
            if barrier:
                prog.add(Inst("send.barrier", "send", msg="barrier", only=lambda tid: not is_slow(tid)))
            else:
                prog.add(Inst("nop", "ctrl", only=lambda tid: not is_slow(tid)))
            prog.add(Inst("out:", "label"))
            prog.add(stamp(22))
            return eot(prog)
        out.append((f"barrier: {nthreads} threads released by thread {slow}'s end", body(preamble(Program()), True),
                    body(preamble(Program()), False), (nthreads, nthreads)))
    return out


# ---- running ------------------------------------------------------------------------------


@unittest.skipUnless(AS and GPU, "ZESIM_AS and ZESIM_GPU must name the built tools")
class TimingTest(unittest.TestCase):
    CONFIGS = (("tiny (documented defaults)", "tiny", None), ("tiny + custom timing config", "tiny", CUSTOM))

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def test_documented_latencies_are_the_isa_tables(self):
        """docs/model.md names the classes of include/zs/ze_isa.def with their values."""
        isa = {l.name: l.cycles for l in zeisa.ISA.latencies.values()}
        for cls, cycles in documented_latencies().items():
            self.assertEqual(isa[cls], cycles, f"docs/model.md says {cls} {cycles}, ze_isa.def {isa[cls]}")

    def run_program(self, prog, threads, walkers, config, tag):
        src, mod = self.dir / f"{tag}.zeasm", self.dir / f"{tag}.elf"
        src.write_text(prog.text())
        r = subprocess.run([AS, "-o", str(mod), str(src)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr + prog.text())
        walker = {"cmd": "compute_walker", "kernel": "k", "group_size": [8 * threads, 1, 1], "groups": [1, 1, 1],
                  "args": BUF.to_bytes(8, "little").hex()}
        stim = {"buffers": [{"address": hex(BUF), "size": 4096 * BUF_PAGES}],
                "modules": [{"path": str(mod), "address": hex(KERNEL_VA)}],
                "commands": [walker] * walkers}
        (self.dir / f"{tag}.json").write_text(json.dumps(stim))
        cmd = [GPU, "--preset", "tiny", "--capture-threads", "--stimulus", str(self.dir / f"{tag}.json"),
               "--ledger", str(self.dir / f"{tag}.jsonl")]
        if config:
            (self.dir / "config.json").write_text(json.dumps(config))
            cmd += ["--config", str(self.dir / "config.json")]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                           env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        self.assertEqual(r.returncode, 0, r.stderr)
        res = json.loads(r.stdout)
        self.assertEqual((res["engine_error"], res["faults"]), (0, []), res.get("error_text"))
        self.assertEqual(len(res["threads"]), threads * walkers)
        # the ledger saw exactly the generated instructions
        inst, sends = {}, {}
        for line in (self.dir / f"{tag}.jsonl").read_text().splitlines():
            w = json.loads(line)
            for k, v in w["inst"].items():
                inst[k] = inst.get(k, 0) + v
            for k, v in w["sends"].items():
                sends[k] = sends.get(k, 0) + v
        want_inst, want_sends = {}, {}
        for i in (i for tid in range(threads) for i in prog.dynamic(tid)):
            want_inst[i.cls] = want_inst.get(i.cls, 0) + walkers
            if i.msg:
                want_sends[i.msg] = want_sends.get(i.msg, 0) + walkers
        self.assertEqual({k: v for k, v in inst.items() if v}, want_inst, f"{tag}: ledger inst.*")
        self.assertEqual({k: v for k, v in sends.items() if v}, want_sends, f"{tag}: ledger sends.*")
        return res

    def expect(self, p, prog, threads, walkers=1):
        """Cycle of the last eot after the first group's placement, and the last
        timestamp in each register of each thread of the last walker, by the documented
        rules."""
        mem, origin = Memory(p), 0
        for w in range(walkers):
            ths = Schedule(p, mem).run(prog, threads, origin)
            end = max(th["end"] for th in ths)
            # the next walker's first group is placed in the cycle after the last thread
            # of the previous one ended (§4)
            origin = end + 1
        return end, {th["tid"]: th["stamps"] for th in ths}

    def check_stamps(self, name, res, want):
        """Every thread's timestamps, as cycles after thread 0's first one (the GT cycle
        counter is one for all threads)."""
        if not want[0]:
            return
        first = sorted(want[0])[0]
        got = {t["thread"]: {r: (t["grf"][int(r[1:])][0] | t["grf"][int(r[1:])][1] << 32) for r in want[t["thread"]]}
               for t in res["threads"]}
        base_got, base_want = got[0][first], want[0][first]
        got = {tid: {r: v - base_got for r, v in st.items()} for tid, st in got.items()}
        want = {tid: {r: v - base_want for r, v in st.items()} for tid, st in want.items()}
        self.assertEqual(got, want, f"{name}: timestamps per thread and register, cycles after thread 0's {first}: "
                                    f"the run vs the documented rules")

    def check_case(self, name, p_prog, q_prog, shape, config):
        params = Params("tiny", config)
        pt, qt = (shape, shape) if isinstance(shape, int) else shape
        if max(pt, qt) > params.eus:
            return None
        res_p = self.run_program(p_prog, pt, 1, config, "p")
        res_q = self.run_program(q_prog, qt, 1, config, "q")
        exp_p, st_p = self.expect(params, p_prog, pt)
        exp_q, st_q = self.expect(params, q_prog, qt)
        got = res_p["cycles"] - res_q["cycles"]
        self.assertEqual(got, exp_p - exp_q,
                         f"{name}: cycles(P) - cycles(Q) = {res_p['cycles']} - {res_q['cycles']} = {got}, "
                         f"documented rules give {exp_p} - {exp_q} = {exp_p - exp_q}")
        self.check_stamps(name + " (P)", res_p, st_p)
        self.check_stamps(name + " (Q)", res_q, st_q)
        return got

    def run_cases(self, cases):
        for label, preset, config in self.CONFIGS:
            for name, p_prog, q_prog, shape in cases:
                with self.subTest(config=label, case=name):
                    got = self.check_case(name, p_prog, q_prog, shape, config)
                    if got is not None and os.environ.get("ZESIM_TIMING_VERBOSE"):
                        print(f"{label}: {name}: {got}", file=sys.stderr)

    def test_latency_classes(self):
        self.run_cases(chain_cases())

    def test_send_messages(self):
        self.run_cases(send_cases())

    def test_dispatch_and_barriers(self):
        self.run_cases(dispatch_cases())

    def test_walkers_run_one_after_another(self):
        """eot ends a thread; the next walker's first group is placed in the cycle after
        the previous walker's last thread ended, its thread starts dispatch_cycles later."""
        for label, preset, config in self.CONFIGS:
            with self.subTest(config=label):
                params = Params("tiny", config)
                prog = eot(preamble(Program()).add(op("mul", 20, [11, 11])).add(use(20)))
                one = self.run_program(prog, 1, 1, config, "w1")["cycles"]
                two = self.run_program(prog, 1, 2, config, "w2")["cycles"]
                e1, _ = self.expect(params, prog, 1, 1)
                e2, _ = self.expect(params, prog, 1, 2)
                self.assertEqual(two - one, e2 - e1, f"{label}: two walkers - one walker")


if __name__ == "__main__":
    unittest.main()
