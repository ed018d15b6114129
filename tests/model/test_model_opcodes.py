#!/usr/bin/env python3
"""The per-opcode, divergence, send and barrier tests written for the reference
ISS (tests/stimulus/test_iss.py, expected values worked out from docs/isa.md)
run again on the SystemC model: each test class gets an *OnModel copy whose
run_kernel executes the program with zesim-gpu instead of the ISS."""
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import test_iss  # noqa: E402
import zeisa  # noqa: E402
import zeiss  # noqa: E402

GPU = os.environ.get("ZESIM_GPU")
PAGE = 4096


class _Thread:
    """The slice of zeiss.ThreadResult the ISS tests look at."""

    def __init__(self, t):
        self.group = tuple(t["group"])
        self.index = t["thread"]
        self.status = t["status"]
        self.grf = [v for reg in t["grf"] for v in reg]
        self.arf = {"f0": [t["f0"]], "f1": [t["f1"]]}
        self.exception = None
        if "exception" in t:
            e = t["exception"]
            bit = e["bits"].bit_length() - 1
            self.exception = zeiss.ExceptionReport(zeiss.EXCEPTION_NAMES[bit], bit, e["ip"], e["address"], "model")

    def reg(self, n):
        return self.grf[n * 8:(n + 1) * 8]

    @property
    def flags(self):
        return self.arf["f0"][0], self.arf["f1"][0]


class _Result:
    def __init__(self, res, kernel):
        self.kernel = kernel
        self.memory = {int(b["address"], 16): bytes.fromhex(b["data"]) for b in res["buffers"]}
        key = lambda t: (t["group"][2], t["group"][1], t["group"][0], t["thread"])
        self.threads = [_Thread(t) for t in sorted(res["threads"], key=key)]
        self.steps = None
        self.hang = None if res["idle"] else "model did not go idle"


def model_run_kernel(self, source, kernel=None, groups=(1, 1, 1), group_size=None, args=b"", buffers=None,
                     local_sizes=None, schedule=None, **_):
    module = self.build(source)
    kernel = kernel or next(iter(module.kernels))
    k = module.kernels[kernel]
    for addr in buffers or {}:
        if addr % PAGE:
            self.skipTest(f"buffer at {addr:#x} is not page aligned: the model maps whole pages")
    with tempfile.TemporaryDirectory() as tmp:
        mod, stim = pathlib.Path(tmp) / "m.elf", pathlib.Path(tmp) / "s.json"
        mod.write_bytes(zeisa.write_module(module))
        stim.write_text(json.dumps({
            "buffers": [{"address": hex(a), "data": bytes(d).hex(), "size": max(len(d), 4)}
                        for a, d in (buffers or {}).items()],
            "modules": [{"path": str(mod), "address": "0x40000000"}],
            "commands": [{"cmd": "compute_walker", "kernel": kernel, "groups": list(groups),
                          "group_size": list(group_size or (k.simd, 1, 1)), "args": bytes(args).hex(),
                          "local_sizes": dict(local_sizes or {})}]}))
        r = subprocess.run([GPU, "--preset", "xe-lp", "--capture-threads", "--stimulus", str(stim)],
                           capture_output=True, text=True, timeout=120,
                           env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    if r.returncode:
        raise zeiss.DispatchError(r.stderr.strip())
    res = json.loads(r.stdout)
    if res["engine_error"]:
        raise zeiss.DispatchError(res.get("error_text", "engine error"))
    return _Result(res, kernel)


# Tests about the ISS itself, not the ISA: they stay ISS-only.
ISS_ONLY = {
    "test_each_group_has_its_own_slm": "reads the ISS's per-group SLM dump",
    "test_without_the_barrier_the_serial_schedule_sees_unwritten_slm": "a race observed under the ISS's serial schedule",
    "test_timestamp_and_fence": "tm0 counts ISS instructions; the model's counts cycles (docs/isa.md §1.1)",
}


def _iss_only(reason):
    @unittest.skip("ISS-only: " + reason)
    def skipped(self):
        pass
    return skipped


CLASSES = ("TestAluInteger", "TestAluFloat", "TestConversions", "TestCmpSelPredication", "TestControlFlow",
           "TestSends", "TestBarrierAndSlm")
for _name in CLASSES:
    _cls = getattr(test_iss, _name)
    globals()[_name + "OnModel"] = unittest.skipUnless(GPU, "ZESIM_GPU must name zesim-gpu")(
        type(_name + "OnModel", (_cls,), {"run_kernel": model_run_kernel,
                                          **{t: _iss_only(r) for t, r in ISS_ONLY.items() if hasattr(_cls, t)}}))
del _cls

if __name__ == "__main__":
    unittest.main()
