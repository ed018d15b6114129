#!/usr/bin/env python3
"""Model checks that the differential test cannot make: timing derived from
the documented latencies (include/zs/ze_isa.def, docs/memory.md),
determinism, topology-dependent dispatch, and malformed stimuli and command
buffers.  Needs ZESIM_AS and ZESIM_GPU (set by CTest)."""
import json
import os
import pathlib
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zeisa  # noqa: E402

AS = os.environ.get("ZESIM_AS")
GPU = os.environ.get("ZESIM_GPU")
LAT = {l.name: l.cycles for l in zeisa.ISA.latencies.values()}
# docs/memory.md defaults (MemConfig in model/memory.h); the tiny preset keeps them.
L3_LATENCY, DRAM_LATENCY = 50, 150
BARRIER_CYCLES = 8
OUT = 0x10000


@unittest.skipUnless(AS and GPU, "ZESIM_AS and ZESIM_GPU must name the built tools")
class ModelTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = pathlib.Path(self.tmp.name)

    def tearDown(self):
        self.tmp.cleanup()

    def run_gpu(self, source, commands=None, buffers=None, preset="tiny", extra=(), expect_rc=0, stimulus=None):
        src, mod, stim = self.dir / "k.zeasm", self.dir / "k.elf", self.dir / "s.json"
        src.write_text(source)
        r = subprocess.run([AS, "-o", str(mod), str(src)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        if stimulus is None:
            stimulus = {"buffers": buffers if buffers is not None else [{"address": hex(OUT), "size": 4096}],
                        "modules": [{"path": str(mod), "address": "0x40000000"}],
                        "commands": commands}
        stim.write_text(json.dumps(stimulus))
        r = subprocess.run([GPU, "--preset", preset, "--capture-threads", "--stimulus", str(stim), *extra],
                           capture_output=True, text=True, timeout=300,
                           env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
        self.assertEqual(r.returncode, expect_rc, r.stderr)
        return json.loads(r.stdout) if r.returncode == 0 else r.stderr

    @staticmethod
    def walker(kernel="k", group_size=(8, 1, 1), groups=(1, 1, 1), args=b""):
        return {"cmd": "compute_walker", "kernel": kernel, "group_size": list(group_size),
                "groups": list(groups), "args": args.hex()}

    @staticmethod
    def stamp(thread, reg):
        lo, hi = thread["grf"][reg][0], thread["grf"][reg][1]
        return lo | hi << 32

    # ---- timing ------------------------------------------------------------

    def chain_cycles(self, op, typ, n):
        body = "\n".join(f"        {op} (8) r10:{typ} r10:{typ} r11:{typ}" + (f" r12:{typ}" if op == "mad" else "")
                         for _ in range(n))
        src = f""".kernel k
.simd 8
        send.timestamp (1) r20.0
{body}
        send.timestamp (1) r21.0
        send.eot
"""
        t = self.run_gpu(src, [self.walker()])["threads"][0]
        return self.stamp(t, 21) - self.stamp(t, 20)

    def test_dependent_chain_takes_n_times_latency(self):
        for op, typ, cls in (("add", "d", "alu"), ("mad", "f", "mad"), ("math.sqrt", "f", "math")):
            with self.subTest(op=op):
                if op == "math.sqrt":
                    def chain(n):
                        body = "\n".join("        math.sqrt (8) r10:f r10:f" for _ in range(n))
                        src = f".kernel k\n.simd 8\n        send.timestamp (1) r20.0\n{body}\n" \
                              f"        send.timestamp (1) r21.0\n        send.eot\n"
                        t = self.run_gpu(src, [self.walker()])["threads"][0]
                        return self.stamp(t, 21) - self.stamp(t, 20)
                else:
                    def chain(n):
                        return self.chain_cycles(op, typ, n)
                self.assertEqual(chain(11) - chain(1), 10 * LAT[cls])

    def test_load_latency_miss_then_hit(self):
        src = """.kernel k
.simd 8
.arg buf global
        mov (8) r4:ud 0:ud
        nop
        nop
        nop
        send.timestamp (1) r20.0
        send.load (1) r30 r4 r7.0
        add (1) r31.0:ud r30.0:ud 1:ud
        send.timestamp (1) r21.0
        send.load (1) r32 r4 r7.0
        add (1) r33.0:ud r32.0:ud 1:ud
        send.timestamp (1) r22.0
        send.eot
"""
        res = self.run_gpu(src, [self.walker(args=struct.pack("<Q", OUT))])
        t = res["threads"][0]
        # (the nops let the address register become ready first)
        # timestamp -> load issue (1) + load latency + dependent add -> timestamp (1)
        self.assertEqual(self.stamp(t, 21) - self.stamp(t, 20), L3_LATENCY + DRAM_LATENCY + 2)
        self.assertEqual(self.stamp(t, 22) - self.stamp(t, 21), L3_LATENCY + 2)

    def test_barrier_waits_for_the_slowest_thread(self):
        slow = "\n".join("        math.sqrt (8) r10:f r10:f" for _ in range(20))
        src = f""".kernel k
.simd 8
        cmp.eq.f0 (1) null r0.3:ud 1:ud
        (!f0) jmpi fast
{slow}
fast:
        send.timestamp (1) r20.0
        send.barrier
        send.timestamp (1) r21.0
        send.eot
"""
        res = self.run_gpu(src, [self.walker(group_size=(16, 1, 1))])
        th = {t["thread"]: t for t in res["threads"]}
        arrive_slow = self.stamp(th[1], 20) + 1
        # 20 dependent sqrts: the last issues 19 latencies after the first.
        self.assertGreaterEqual(arrive_slow - self.stamp(th[0], 20), 19 * LAT["math"])
        for t in th.values():
            self.assertEqual(self.stamp(t, 21), arrive_slow + BARRIER_CYCLES)

    # ---- determinism and topology -------------------------------------------

    def placement_kernel(self):
        return """.kernel k
.simd 8
.arg out global
        mov (1) r10.0:ud sr0.0:ud
        mul (1) r11.0:ud r0.7:ud r0.0:ud
        add (1) r11.0:ud r11.0:ud r0.3:ud
        shl (1) r12.0:ud r11.0:ud 2:ud
        send.store (1) r12 r10 r7.0
        send.eot
"""

    def test_two_runs_are_byte_identical(self):
        src = self.placement_kernel()
        cmd = [self.walker(group_size=(32, 1, 1), groups=(24, 1, 1), args=struct.pack("<Q", OUT))]
        ledgers = []
        results = []
        for i in range(2):
            ledger = self.dir / f"l{i}.jsonl"
            results.append(self.run_gpu(src, cmd, preset="xe-lp", extra=("--ledger", str(ledger))))
            ledgers.append(ledger.read_bytes())
        self.assertEqual(results[0], results[1])
        self.assertEqual(ledgers[0], ledgers[1])
        self.assertGreater(len(ledgers[0]), 0)

    def placements(self, preset, topology=None):
        extra = ("--topology", topology) if topology else ()
        # 4 threads per group; groups = every sub-slice once, so the first wave is all there is.
        subslices = {"tiny": 1, "xe-lp": 6, "2x4x8x8": 8}[topology or preset]
        res = self.run_gpu(self.placement_kernel(),
                           [self.walker(group_size=(32, 1, 1), groups=(subslices, 1, 1), args=struct.pack("<Q", OUT))],
                           preset=preset, extra=extra)
        data = bytes.fromhex(res["buffers"][0]["data"])
        return [struct.unpack_from("<I", data, 4 * i)[0] for i in range(subslices * 4)], subslices

    def test_topology_changes_dispatch(self):
        for preset, topo, per_slice in (("tiny", None, 1), ("xe-lp", None, 6), ("xe-lp", "2x4x8x8", 4)):
            with self.subTest(topology=topo or preset):
                words, groups = self.placements(preset, topo)
                eus = {"tiny": 2, "xe-lp": 16, "2x4x8x8": 8}[topo or preset]
                for g in range(groups):
                    for t in range(4):
                        w = words[g * 4 + t]
                        slice_, ss, eu = w >> 24, (w >> 16) & 0xFF, (w >> 8) & 0xFF
                        # docs/model.md: group g goes to sub-slice g (round-robin), its
                        # threads to consecutive EUs of that sub-slice.
                        self.assertEqual(slice_ * per_slice + ss, g, f"group {g} thread {t}")
                        self.assertEqual(eu, t % eus, f"group {g} thread {t}")

    # ---- malformed input ----------------------------------------------------

    def test_malformed_commands_raise_engine_errors(self):
        cases = [
            ([0xEE000001], 1, "unknown command opcode 238"),
            ([0x04000002], 2, "length 2, expected 4"),
            ([0x00010001], 3, "reserved header bits"),
            ([0x01000003, 0, 0], 5, "BATCH_START inside a batch"),
            ([0x06000003, 0x0000, 7], 6, "privileged register"),
            # a user batch must not repoint the page tables (isolation)
            ([0x06000003, 0x1018, 0x1000], 6, "privileged register"),
        ]
        src = ".kernel k\n.simd 8\n        send.eot\n"
        for dwords, reason, text in cases:
            with self.subTest(dwords=dwords):
                res = self.run_gpu(src, [{"cmd": "raw", "dwords": dwords}])
                self.assertEqual(res["engine_error"], reason)
                self.assertEqual(res["engine_status"], 3)
                self.assertIn(text, res["error_text"])
                self.assertTrue(res["irq_status"] & 2)

    def test_batches_may_load_scratch_registers(self):
        res = self.run_gpu(".kernel k\n.simd 8\n        send.eot\n",
                           [{"cmd": "load_register_imm", "register": "0x1040", "value": 5}])
        self.assertEqual(res["engine_error"], 0)

    def test_bad_walker_is_an_engine_error(self):
        res = self.run_gpu(".kernel k\n.simd 8\n        send.eot\n", [self.walker(group_size=(1024, 1, 1))])
        self.assertEqual(res["engine_error"], 7)
        self.assertIn("thread group needs 128 threads", res["error_text"])

    def test_page_fault_is_reported(self):
        src = """.kernel k
.simd 8
.arg buf global
        mov (8) r4:ud 0:ud
        send.load (8) r30 r4 r7.0
        send.eot
"""
        res = self.run_gpu(src, [self.walker(args=struct.pack("<Q", 0x5000000))])
        self.assertEqual(res["threads"][0]["status"], "exception")
        self.assertEqual(res["threads"][0]["exception"]["bits"], 1 << 2)
        self.assertEqual(res["faults"][0]["address"], "0x5000000")
        self.assertTrue(res["irq_status"] & 4)

    def test_write_to_read_only_page_faults(self):
        src = """.kernel k
.simd 8
.arg buf global
        mov (8) r4:ud 0:ud
        send.store (8) r4 r4 r7.0
        send.eot
"""
        res = self.run_gpu(src, [self.walker(args=struct.pack("<Q", OUT))],
                           buffers=[{"address": hex(OUT), "size": 4096, "writable": False}])
        self.assertEqual(res["threads"][0]["status"], "exception")
        self.assertEqual(res["faults"], [{"address": hex(OUT), "reason": 2, "write": True}])

    def test_64k_pages_map_like_4k_pages(self):
        src = """.kernel k
.simd 16
.arg buf global
        shl (16) r4:ud r1:ud 12:ud
        send.store (16) r4 r1 r7.0
        send.load (16) r30 r4 r7.0
        add (16) r31:ud r30:ud 1:ud
        send.store (16) r4 r31 r7.0
        send.eot
"""
        outs = []
        for page in (4096, 65536):
            res = self.run_gpu(src, [self.walker(group_size=(16, 1, 1), args=struct.pack("<Q", 0x200000))],
                               buffers=[{"address": "0x200000", "size": 65536, "page_size": page}])
            self.assertEqual(res["faults"], [])
            outs.append(bytes.fromhex(res["buffers"][0]["data"]))
        self.assertEqual(outs[0], outs[1])
        for lane in range(16):
            self.assertEqual(struct.unpack_from("<I", outs[0], lane * 4096)[0], lane + 1)
        err = self.run_gpu(src, stimulus={"buffers": [{"address": "0x200000", "size": 4096},
                                                      {"address": "0x210000", "size": 65536, "page_size": 65536}]},
                           expect_rc=1)
        self.assertIn("4 KiB and 64 KiB pages mixed", err)

    def test_unreadable_argument_area_faults_the_thread(self):
        walker = [0x03000010, 0x40000000, 0, 8, 128, 0, 8, 1, 1, 1, 1, 1, 0x6000000, 0, 8, 0]
        res = self.run_gpu(".kernel k\n.simd 8\n.arg a global\n        send.eot\n", [{"cmd": "raw", "dwords": walker}])
        self.assertTrue(res["idle"])
        self.assertEqual(res["threads"][0]["status"], "exception")
        self.assertEqual(res["faults"], [{"address": "0x6000000", "reason": 1, "write": False}])
        self.assertTrue(res["irq_status"] & 4)

    def test_semaphore_wait(self):
        src = ".kernel k\n.simd 8\n        send.eot\n"
        sem = lambda value, op: {"cmd": "raw", "dwords": [0x07000005, OUT, 0, value, op]}
        store = {"cmd": "store_data", "address": hex(OUT + 4), "value": 7}
        res = self.run_gpu(src, [sem(0, 0), store])  # memory holds 0: satisfied at once
        self.assertEqual(res["engine_status"], 0)
        self.assertEqual(bytes.fromhex(res["buffers"][0]["data"])[4], 7)
        res = self.run_gpu(src, [sem(1, 0), store])  # never satisfied: waits, GT idle, run ends
        self.assertEqual(res["engine_status"], 2)
        self.assertEqual(bytes.fromhex(res["buffers"][0]["data"])[4], 0)
        res = self.run_gpu(src, [sem(0, 9)])
        self.assertEqual(res["engine_error"], 10)
        self.assertIn("unknown compare 9", res["error_text"])

    def test_post_sync_commands_take_time(self):
        res = self.run_gpu(".kernel k\n.simd 8\n        send.eot\n",
                           [{"cmd": "timestamp_write", "address": hex(OUT)},
                            {"cmd": "timestamp_write", "address": hex(OUT + 8)}])
        t0, t1 = struct.unpack_from("<QQ", bytes.fromhex(res["buffers"][0]["data"]))
        self.assertLessEqual(t0, t1)
        # docs/commands.md: each command costs 4 cycles and a post-sync command takes
        # effect after them: BATCH_START, two TIMESTAMP_WRITEs, BATCH_END.
        self.assertEqual(res["cycles"], 4 * 4)
        self.assertTrue(res["irq_status"] & 8, "engine-idle interrupt")

    def test_ledger_windows_are_consistent(self):
        cmd = [self.walker(group_size=(32, 1, 1), groups=(40, 1, 1), args=struct.pack("<Q", OUT))]
        ledger = self.dir / "l.jsonl"
        res = self.run_gpu(self.placement_kernel(), cmd, preset="tiny", extra=("--ledger", str(ledger)))
        windows = [json.loads(l) for l in ledger.read_text().splitlines()]
        self.assertGreater(len(windows), 1)
        self.assertEqual(windows[-1]["end"], res["cycles"] + 1)  # closed after the run's last cycle
        self.assertEqual(windows[0]["start"], 0)
        for a, b in zip(windows, windows[1:]):
            self.assertEqual(a["end"], b["start"])
        for w in windows:
            n = w["end"] - w["start"]
            for e in range(len(w["eu_active"])):
                self.assertEqual(w["eu_active"][e] + w["eu_stall"][e] + w["eu_idle"][e], n, (w["window"], e))
        total = lambda k: sum(w[k] for w in windows)
        self.assertEqual(total("threads_dispatched"), 160)
        self.assertEqual(total("threads_retired"), 160)
        self.assertEqual(sum(w["sends"]["eot"] for w in windows), 160)
        self.assertEqual(sum(sum(w["inst"].values()) for w in windows), 160 * 6)

    def test_malformed_stimulus_files_give_clear_errors(self):
        src = ".kernel k\n.simd 8\n        send.eot\n"
        for stim, text in (
            ({"commands": [{"cmd": "frobnicate"}]}, "unknown command 'frobnicate'"),
            ({"buffers": [{"address": "0x1001", "size": 16}]}, "must be 4 KiB aligned"),
            ({"commands": [{"cmd": "compute_walker", "kernel": "k", "group_size": [8, 1, 1], "groups": [1, 1, 1]}]},
             "no module 0"),
            ({"buffers": [{"address": "0x1000", "data": "abc"}]}, "odd number of hex digits"),
            ({"buffers": [{"address": "99999999999999999999999", "size": 4}]}, "is not a 64-bit unsigned number"),
        ):
            with self.subTest(text=text):
                err = self.run_gpu(src, stimulus=stim, expect_rc=1)
                self.assertIn(text, err)
                self.assertNotIn("terminate called", err)
        (self.dir / "bad.json").write_text("{not json")
        r = subprocess.run([GPU, "--preset", "tiny", "--stimulus", str(self.dir / "bad.json")],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 1)
        self.assertIn("parse error", r.stderr)


if __name__ == "__main__":
    unittest.main()
