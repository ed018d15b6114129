#!/usr/bin/env python3
"""`calla` (docs/isa.md section 3.5) on the SystemC model against the reference ISS.

Hand-written programs in three modules at different GPU VAs (A, the dispatched one, at
0x40000000; B above 4 GiB at 0x1_2345_0000; C at 0x6000_0000), the kernel receiving the
function addresses as qword kernel arguments and calling them with `calla`: a
cross-module call and return, nested calls A -> B -> C -> B -> A's own text -> back,
`call`/`ret` inside the callee, divergent if/else, jmpi and a loop inside the callee,
recursion through `calla` 16 deep and then one more (stack exception), a misaligned and
an unmapped target (page fault at the fetch), predicated-off `calla` and `send.eot`
inside the callee.  For each case zesim-gpu --stimulus --capture-threads and
zeiss.run_dispatch(..., module_va=, code=) must give the same memory, GRF, flags,
thread status, exception bits / ip / address (cr0.1-3, and the full page-fault
address) and ledger totals (the helpers of test_diff_iss.py); a few results are also
checked against values computed here in Python.

    ZESIM_AS=build/tools/zesim-as ZESIM_GPU=build/sim/zesim-gpu python3 tests/model/test_calla.py
"""
import json
import os
import pathlib
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import zeiss  # noqa: E402
import zetools  # noqa: E402
from test_debug_sip import OFF, decode_slot, slot_vs_snapshot  # noqa: E402
from test_diff_iss import compare, run_model  # noqa: E402

AS, GPU = os.environ.get("ZESIM_AS"), os.environ.get("ZESIM_GPU")
A_VA, B_VA, C_VA = 0x40000000, 0x123450000, 0x60000000
OUT_VA = 0x50000000
MAX_CYCLES = ("--max-cycles", "5000000")  # these programs end in a few thousand cycles: a bug may loop
UNMAPPED = 0x300012340  # nothing is mapped there (16-byte aligned)
M32 = 0xFFFFFFFF

# The dispatched module.  Arguments: out (r7.0), then function addresses p1 (r7.2),
# p2 (r7.4), p3 (r7.6), p4 (r8.0).  r20 = the work item's index in the group (r1);
# r10/r11: its byte offsets in out (out[item] and out[64 + item]); the epilogue
# stores r20 and r21 there.
A_SRC = """.kernel main
.simd 8
.arg out global
.arg p1 global
.arg p2 global
.arg p3 global
.arg p4 global
        mov (8) r10:ud r1:ud
        mov (8) r20:ud r10:ud
        mov (8) r21:ud 0:ud
        shl (8) r10:ud r10:ud 2:ud
        add (8) r11:ud r10:ud 256:ud
{body}
        send.store (8) r10 r20 r7.0
        send.store (8) r11 r21 r7.0
        send.eot
.func a_back
        add (8) r20:ud r20:ud 7:ud
        mov (1) r22.3:ud ip.0:ud
        ret
"""

B_SRC = """.kernel b_twice
.simd 8
        add (8) r20:ud r20:ud r20:ud
        add (8) r20:ud r20:ud 1:ud
        ret
.kernel b_nested
.simd 8
        add (8) r20:ud r20:ud 100:ud
        calla (1) r7.4:ud r7.5:ud
        add (8) r20:ud r20:ud 1000:ud
        calla (1) r7.6:ud r7.7:ud
        mov (1) r22.4:ud ip.0:ud
        ret
.kernel b_local
.simd 8
        mov (1) r22.0:ud ip.0:ud
        call b_inner
        mov (1) r22.2:ud ip.0:ud
        mul (8) r20:ud r20:ud 3:ud
        ret
.func b_inner
        add (8) r20:ud r20:ud 5:ud
        mov (1) r22.1:ud ip.0:ud
        ret
.kernel b_cf
.simd 8
        and (8) r23:ud r20:ud 1:ud
        cmp.eq.f0 (8) null r23:ud 0:ud
        (f0) if (8)
            mul (8) r21:ud r20:ud 10:ud
        else (8)
            add (8) r21:ud r20:ud 7:ud
        endif (8)
        cmp.eq.f0 (1) null r0.3:ud 0:ud
        (f0) jmpi no_bonus
        add (8) r21:ud r21:ud 50000:ud
no_bonus:
        and (8) r24:ud r20:ud 3:ud
        add (8) r24:ud r24:ud 1:ud
        mov (8) r25:ud 0:ud
        do (8)
            add (8) r25:ud r25:ud r20:ud
            add (8) r24:d r24:d -1:d
            cmp.gt.f1 (8) null r24:d 0:d
        (f1) while (8)
        mov (8) r20:ud r25:ud
        ret
.kernel b_rec
.simd 8
        add (1) r40.0:ud r40.0:ud 1:ud
        add (8) r20:ud r20:ud r40.0:ud
        cmp.lt.f0 (1) null r40.0:ud r9.4:ud
        (f0) calla (1) r7.2:ud r7.3:ud
        ret
.kernel b_finish
.simd 8
        add (8) r20:ud r20:ud 40:ud
        send.store (8) r10 r20 r7.0
        send.eot
"""

# For the debugger: a breakpoint in d_outer's own function d_inner (return stack: main,
# then d_outer); d_other has other code at d_inner's offset (64) for a redirected SBA.
D_SRC = """.kernel d_outer
.simd 8
        add (8) r20:ud r20:ud r20:ud
        call d_inner
        add (8) r20:ud r20:ud 3:ud
        ret
.func d_inner
        add (8) r20:ud r20:ud 1:ud{bp}
        mul (8) r21:ud r20:ud 5:ud
        ret
.kernel d_other
.simd 8
        nop
        nop
        nop
        nop
        add (8) r20:ud r20:ud 1000:ud
        mul (8) r21:ud r20:ud 7:ud
        ret
"""
D_BP_IP = 64

C_SRC = """.kernel c_leaf
.simd 8
        mul (8) r20:ud r20:ud 3:ud
        ret
"""


def assemble(tmp, name, source):
    """(ELF path, zeisa.Module) of `source` assembled by zesim-as: the model and the ISS run the same bytes."""
    src, elf = tmp / f"{name}.zeasm", tmp / f"{name}.elf"
    src.write_text(source)
    r = zetools.assemble(AS, src, elf)
    if r.returncode:
        raise AssertionError(f"{name} does not assemble: {r.stderr}")
    return elf, zeiss._load_module(str(elf))


def out_words(memory, n, at=0):
    return list(struct.unpack_from(f"<{n}I", memory[OUT_VA], 4 * at))


@unittest.skipUnless(AS and GPU, "ZESIM_AS and ZESIM_GPU must name zesim-as and zesim-gpu")
class TestCallaModelVsIss(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp_dir = tempfile.TemporaryDirectory()
        cls.tmp = pathlib.Path(cls.tmp_dir.name)
        cls.b = assemble(cls.tmp, "b", B_SRC)
        cls.c = assemble(cls.tmp, "c", C_SRC)
        cls.n = 0

    @classmethod
    def tearDownClass(cls):
        cls.tmp_dir.cleanup()

    def fn(self, module, kernel, offset=0, func=None):
        """The GPU VA of a kernel's section (plus a .func's offset or `offset`) in A, B or C."""
        elf, mod = module
        base = {self.b[0]: B_VA, self.c[0]: C_VA}.get(elf, A_VA)
        k = mod.kernels[kernel]
        if func:
            offset += next(f.offset for f in k.functions if f.name == func)
        return base + k.address + offset

    def run_both(self, body, pointers, group_size=8, expect=None):
        """Run A (main with `body`) on the model and the ISS; returns (ISS result, model result)."""
        type(self).n += 1
        a = assemble(self.tmp, f"a{self.n}", A_SRC.format(body=body))
        pointers = [p(a) if callable(p) else p for p in list(pointers) + [0] * (4 - len(pointers))]
        args = struct.pack("<5Q", OUT_VA, *pointers)
        out = bytes(1024)
        stim = self.tmp / f"s{self.n}.json"
        stim.write_text(json.dumps({
            "buffers": [{"address": hex(OUT_VA), "data": out.hex()}],
            "modules": [{"path": str(a[0]), "address": hex(A_VA)}, {"path": str(self.b[0]), "address": hex(B_VA)},
                        {"path": str(self.c[0]), "address": hex(C_VA)}],
            "commands": [{"cmd": "compute_walker", "kernel": "main", "group_size": [group_size, 1, 1],
                          "groups": [1, 1, 1], "args": args.hex()}]}))
        model = run_model(GPU, "tiny", stim, MAX_CYCLES, ledger_path=self.tmp / f"s{self.n}.ledger")
        iss = zeiss.run_dispatch(a[1], "main", (1, 1, 1), (group_size, 1, 1), args, {OUT_VA: out},
                                 module_va=A_VA, code={B_VA: self.b[1], C_VA: self.c[1]})
        self.assertEqual(compare(self.id(), iss, model), [])  # also cr0.1-3 and page-fault addresses
        if expect is not None:
            self.assertEqual([t.status for t in iss.threads], expect,
                             [t.exception for t in iss.threads])
        return iss, model

    @staticmethod
    def out(iss, n=8, at=0):
        return out_words(iss.memory, n, at)

    # ---- the cases ------------------------------------------------------------------

    def test_cross_module_call_and_return(self):
        body = "        calla (1) r7.2:ud r7.3:ud\n        mov (1) r22.5:ud ip.0:ud"
        iss, _ = self.run_both(body, [self.fn(self.b, "b_twice")], expect=["eot"])
        self.assertEqual(self.out(iss), [2 * x + 1 for x in range(8)])
        self.assertEqual(iss.threads[0].reg(22)[5], 6 * 16)  # back at main's ip, not at B's
        self.assertEqual(iss.ledger.inst["branch"], 2)

    def test_nested_calls_and_back_into_the_callers_module(self):
        # main -> B.b_nested -> C.c_leaf -> B -> A.a_back (main's own section) -> B -> main
        iss, _ = self.run_both("        calla (1) r7.2:ud r7.3:ud",
                               [self.fn(self.b, "b_nested"), self.fn(self.c, "c_leaf"),
                                lambda a: self.fn(a, "main", func="a_back")], group_size=13,
                               expect=["eot", "eot"])
        self.assertEqual(self.out(iss, 13), [(x + 100) * 3 + 1007 for x in range(13)])
        t = iss.threads[0]
        self.assertEqual((t.reg(22)[3], t.reg(22)[4]), (16, 64))  # ips relative to a_back and b_nested

    def test_call_and_ret_inside_the_callee(self):
        iss, _ = self.run_both("        calla (1) r7.2:ud r7.3:ud", [self.fn(self.b, "b_local")], expect=["eot"])
        self.assertEqual(self.out(iss), [(x + 5) * 3 for x in range(8)])
        self.assertEqual(iss.threads[0].reg(22)[:3], [0, 96, 32])

    def test_divergent_control_flow_inside_the_callee(self):
        iss, _ = self.run_both("        calla (1) r7.2:ud r7.3:ud", [self.fn(self.b, "b_cf")], group_size=13,
                               expect=["eot", "eot"])
        self.assertEqual(self.out(iss, 13), [x * ((x & 3) + 1) for x in range(13)])
        self.assertEqual(self.out(iss, 13, 64),
                         [(x * 10 if x % 2 == 0 else x + 7) + (50000 if x >= 8 else 0) for x in range(13)])

    def test_recursion_16_deep(self):
        body = "        mov (1) r9.4:ud 16:ud\n        calla (1) r7.2:ud r7.3:ud"
        iss, _ = self.run_both(body, [self.fn(self.b, "b_rec")], expect=["eot"])
        self.assertEqual(self.out(iss), [x + 136 for x in range(8)])  # 1 + 2 + ... + 16

    def test_recursion_17_deep_overflows(self):
        body = "        mov (1) r9.4:ud 17:ud\n        calla (1) r7.2:ud r7.3:ud"
        iss, _ = self.run_both(body, [self.fn(self.b, "b_rec")], expect=["exception"])
        t = iss.threads[0]
        self.assertEqual((t.exception.name, t.exception.ip, t.exception.ib, t.reg(40)[0]),
                         ("stack", 48, self.fn(self.b, "b_rec"), 16))

    def test_misaligned_target_in_one_thread(self):
        body = """        mul (1) r12.0:ud r0.3:ud 8:ud
        add (1) r12.0:ud r12.0:ud r7.2:ud
        mov (1) r12.1:ud r7.3:ud
        calla (1) r12.0:ud r12.1:ud"""
        twice = self.fn(self.b, "b_twice")
        iss, _ = self.run_both(body, [twice], group_size=16, expect=["eot", "exception"])
        self.assertEqual(iss.threads[1].arf["cr0"][1:], [1 << 3, 8 * 16, (twice + 8) & M32])
        self.assertEqual(self.out(iss), [2 * x + 1 for x in range(8)])

    def test_unmapped_target_and_predicated_off_calla(self):
        # thread 0 calls B (its second calla is predicated off), thread 1 faults at the fetch
        body = """        cmp.eq.f0 (1) null r0.3:ud 0:ud
        (f0) calla (1) r7.2:ud r7.3:ud
        (!f0) calla (1) r8.0:ud r8.1:ud"""
        iss, model = self.run_both(body, [self.fn(self.b, "b_twice"), 0, 0, UNMAPPED], group_size=16,
                                   expect=["eot", "exception"])
        self.assertEqual(iss.threads[1].arf["cr0"][1:], [1 << 2, 0, UNMAPPED & M32])
        self.assertEqual([f["address"] for f in model["faults"]], [hex(UNMAPPED)])
        self.assertEqual(self.out(iss, 16), [2 * x + 1 for x in range(8)] + [0] * 8)

    def test_predicate_bit_0_only(self):
        body = """        mov (1) f0.0:ud 0xfffffffe:ud
        (f0) calla (1) r7.2:ud r7.3:ud
        (!f0) calla (1) r7.4:ud r7.5:ud"""
        iss, _ = self.run_both(body, [self.fn(self.b, "b_twice"), self.fn(self.c, "c_leaf")], expect=["eot"])
        self.assertEqual(self.out(iss), [3 * x for x in range(8)])
        self.assertEqual(iss.ledger.inst["branch"], 3)

    def test_eot_inside_the_callee(self):
        body = "        calla (1) r7.2:ud r7.3:ud\n        mov (8) r20:ud 0xdead:ud"
        iss, _ = self.run_both(body, [self.fn(self.b, "b_finish")], group_size=13, expect=["eot", "eot"])
        self.assertEqual(self.out(iss, 13), [x + 40 for x in range(13)])
        self.assertEqual(self.out(iss, 13, 64), [0] * 13)


@unittest.skipUnless(AS and GPU, "ZESIM_AS and ZESIM_GPU must name zesim-as and zesim-gpu")
class TestCallaDebug(unittest.TestCase):
    """A breakpoint inside a callee of another module, through the SIP with the debug
    block in check mode (as tests/model/test_debug_sip.py runs it)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp_dir = tempfile.TemporaryDirectory()
        cls.tmp = pathlib.Path(cls.tmp_dir.name)
        cls.a = assemble(cls.tmp, "a", A_SRC.format(body="        calla (1) r7.2:ud r7.3:ud"))
        cls.d_bp = assemble(cls.tmp, "d_bp", D_SRC.format(bp=" {bp}"))
        cls.d = assemble(cls.tmp, "d", D_SRC.format(bp=""))

    @classmethod
    def tearDownClass(cls):
        cls.tmp_dir.cleanup()

    def va(self, kernel):
        return B_VA + self.d[1].kernels[kernel].address

    def run_debug(self, on_stop=()):
        args = struct.pack("<5Q", OUT_VA, self.va("d_outer"), 0, 0, 0)
        stim, cfg = self.tmp / "dbg.json", self.tmp / "cfg.json"
        stim.write_text(json.dumps({
            "buffers": [{"address": hex(OUT_VA), "data": bytes(1024).hex()}],
            "modules": [{"path": str(self.a[0]), "address": hex(A_VA)}, {"path": str(self.d_bp[0]), "address": hex(B_VA)}],
            "commands": [{"cmd": "compute_walker", "kernel": "main", "group_size": [13, 1, 1], "groups": [1, 1, 1],
                          "args": args.hex()}],
            "debug": {"on_stop": list(on_stop)}}))
        cfg.write_text(json.dumps({"debug_block": "check"}))
        model = run_model(GPU, "tiny", stim, extra=("--topology", "1x2x2x4", "--config", str(cfg), *MAX_CYCLES))
        iss = zeiss.run_dispatch(self.a[1], "main", (1, 1, 1), (13, 1, 1), args, {OUT_VA: bytes(1024)},
                                 module_va=A_VA, code={B_VA: self.d[1]})
        return iss, model

    def test_breakpoint_in_a_callee_of_another_module(self):
        iss, model = self.run_debug()
        self.assertEqual(compare("debug", iss, model), [])
        self.assertEqual(out_words(iss.memory, 13), [2 * x + 4 for x in range(13)])
        self.assertEqual(out_words(iss.memory, 13, 64), [(2 * x + 1) * 5 for x in range(13)])
        d = model["debug"]
        stops = [s for s in d["snapshots"] if s["kind"] == "stop"]
        resumes = [s for s in d["snapshots"] if s["kind"] == "resume"]
        self.assertEqual((len(d["stops"]), len(stops), len(resumes)), (2, 2, 2))  # one per thread
        kernel_va = A_VA + self.a[1].kernels["main"].address
        for stop in d["stops"]:
            snap = next(s for s in stops if s["tid"] == stop["tid"])
            slot = decode_slot(stop["slot"])
            self.assertEqual(slot_vs_snapshot(slot, snap), [])
            self.assertEqual((slot["sba"], snap["ib"], snap["kernel_va"]), (self.va("d_outer"), self.va("d_outer"),
                                                                          kernel_va))
            self.assertEqual((slot["cr0"][2], snap["ip"], snap["ret_depth"]), (D_BP_IP, D_BP_IP, 2))
            # the return stack: back to main after its calla (ip 80), then to d_outer after its call
            self.assertEqual(slot["ret_ib"][:2], [kernel_va, self.va("d_outer")])
            self.assertEqual(slot["ret_ip"][:2], [96, 32])
        for snap in resumes:
            self.assertEqual((snap["ib"], snap["ip"]), (self.va("d_outer"), D_BP_IP))

    def test_sipret_reloads_the_base_from_the_slot(self):
        # The debugger moves both threads to d_other at the same offset: sipret takes the
        # new base (docs/debug.md 2.3), ret still goes back to d_outer, then to main.
        write = {"write": [{"offset": OFF["SBA"], "data": struct.pack("<Q", self.va("d_other")).hex()}]}
        _, model = self.run_debug([write, write])
        self.assertFalse(model["engine_error"])
        self.assertEqual([t["status"] for t in model["threads"]], ["eot", "eot"])
        out = {OUT_VA: bytes.fromhex(model["buffers"][0]["data"])}
        self.assertEqual(out_words(out, 13), [2 * x + 1003 for x in range(13)])
        self.assertEqual(out_words(out, 13, 64), [(2 * x + 1000) * 7 for x in range(13)])
        self.assertEqual([s["ib"] for s in model["debug"]["snapshots"] if s["kind"] == "resume"],
                         [self.va("d_other")] * 2)


if __name__ == "__main__":
    unittest.main()
