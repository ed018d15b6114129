#!/usr/bin/env python3
"""Layering rules (DESIGN.md §1, §2), checked on the source tree and on built binaries.

    check_layering.py --root DIR [--lib NAME=PATH ...]

Sources under ROOT:
  driver/             may include only system headers (<...>), the Level Zero headers
                      (<level_zero/...>), the uAPI ("uapi/zesim_drm.h", its ioctl table
                      "uapi/zesim_ioctl_table.h" and the state save area's layout
                      "uapi/zesim_ssa.h"), the ISA / module / command / OA report
                      headers ("zs/ze_isa.h", "zs/ze_module.h", "zs/gpu_cmds.h",
                      "zs/oa_report.h", "zs/oa_events.def"), the program-snapshot
                      extension ("zs/zex_program_snapshot.h") and the debug-notifier one
                      ("zs/zex_debug_notifier.h"), the ISA disassembler
                      ("zdis.h", the zeisa snapshot's text) and its own headers (files of driver/);
  kmd_shim/kernel/    may not include a model or simulator header (model/, sim/, rtl/,
                      Verilator, SystemC): only system headers, its own, the uAPI (with
                      "uapi/zesim_ssa.h") and the
                      hardware interface's headers ("zs/hw_if.h", "zs/gpu_cmds.h",
                      "zs/gpu_regs.def", "zs/pt_format.h", "zs/oa_report.h");
  kmd_shim/preload/   like driver/, without the Level Zero headers, plus the wire protocol
                      ("uapi/zesim_wire.h").
Binaries (--lib): the driver and the preload library must not contain the fake KMD
(zk_* functions), the hardware interface (zs_hw_*) or the model (zesim:: C++ symbols):
they talk to the daemon only through the device node.  Prints every violation with its
file and line; exits 1 if there is any.
"""
import argparse
import pathlib
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
DRIVER_OK = {"uapi/zesim_drm.h", "uapi/zesim_ioctl_table.h", "uapi/zesim_ssa.h", "zs/ze_isa.h", "zs/ze_module.h", "zs/gpu_cmds.h",
             "zs/oa_report.h", "zs/oa_events.def",
             # the program-snapshot extension's API, and the ISA disassembler its zeisa stage prints with
             "zs/zex_program_snapshot.h", "zdis.h",
             # the debug session's notifier extension (and the register-set types it names)
             "zs/zex_debug_notifier.h"}
GENERATED = {"driver": {"spv_grammar.h", "zs_tracer_gen.h"}}  # the driver's own headers generated at build time
PRELOAD_OK = DRIVER_OK | {"uapi/zesim_wire.h"}  # the wire protocol: daemon, preload and benches
KERNEL_OK = {"uapi/zesim_drm.h", "uapi/zesim_ioctl_table.h", "uapi/zesim_ssa.h", "zs/hw_if.h", "zs/gpu_cmds.h", "zs/gpu_regs.def", "zs/pt_format.h",
             "zs/oa_report.h", "zs/sip.h"}
FORBIDDEN_SYSTEM = ("systemc", "verilated", "sysc/", "tlm")


def own_headers(folder):
    return {p.name for p in folder.rglob("*.h")} | {p.name for p in folder.rglob("*.def")}


def check_tree(root):
    errors = []
    rules = [
        ("driver", DRIVER_OK, True),
        ("kmd_shim/kernel", KERNEL_OK, False),
        ("kmd_shim/preload", PRELOAD_OK, False),
    ]
    for sub, allowed, level_zero in rules:
        folder = root / sub
        if not folder.is_dir():
            continue
        own = own_headers(folder) | GENERATED.get(sub, set())
        for path in sorted(folder.rglob("*")):
            if path.suffix not in (".c", ".h", ".cc", ".cpp"):
                continue
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                kind, name = m.groups()
                where = f"{path.relative_to(root)}:{n}"
                if kind == "<":
                    if name.startswith("level_zero/") and not level_zero:
                        errors.append(f"{where}: {sub}/ may not include <{name}>")
                    elif name.lower().startswith(FORBIDDEN_SYSTEM):
                        errors.append(f"{where}: {sub}/ may not include the simulator's <{name}>")
                    continue
                base = pathlib.PurePosixPath(name).name
                if name in allowed or ("/" not in name and base in own):
                    continue
                errors.append(f'{where}: {sub}/ may not include "{name}"')
    return errors


def check_lib(name, path):
    out = subprocess.run(["nm", "-C", "--defined-only", path], capture_output=True, text=True)
    if out.returncode != 0:
        return [f"{name}: nm {path} failed: {out.stderr.strip()}"]
    errors = []
    for line in out.stdout.splitlines():
        sym = line.split(" ", 2)[-1]
        if re.match(r"zk_\w+$", sym) or sym.startswith("zs_hw_") or sym.startswith("zesim::"):
            errors.append(f"{name} ({path}) contains {sym}: it may reach the device only through the device node")
    return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True, type=pathlib.Path)
    ap.add_argument("--lib", action="append", default=[], help="NAME=PATH of a built library to check")
    ap.add_argument("--expect-violations", type=int, default=None,
                    help="(test of this script) succeed only if exactly this many rules are broken, counting each "
                         "library as one")
    a = ap.parse_args()
    errors = check_tree(a.root)
    broken = len(errors)
    for spec in a.lib:
        name, _, path = spec.partition("=")
        found = check_lib(name, path)
        errors += found
        broken += bool(found)
    for e in errors:
        print(f"check_layering: {e}")
    if a.expect_violations is not None:
        ok = broken == a.expect_violations
        print(f"check_layering: {broken} violations, expected {a.expect_violations}: {'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    if errors:
        return 1
    print(f"check_layering: {a.root}: the layering rules hold" + (f" ({len(a.lib)} libraries checked)" if a.lib else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
