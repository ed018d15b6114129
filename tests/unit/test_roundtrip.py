#!/usr/bin/env python3
"""zesim-as -> zesim-dis -> zesim-as must be byte-identical.

--doc PAGE      every ```zeasm example of the page; also checks that readelf
                and objdump read the -g module without warnings and that the
                decoded line table names each instruction's source line.
--generated N   N random programs from tests/stimulus/zegen.py (seeds 0..N-1);
                the assembled text must also equal the encoding computed by
                the independent Python encoder (zeisa.py)."""
import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402


def roundtrip(as_path, dis_path, tmp, name, text):
    """Returns (problem or None, first module path)."""
    d = pathlib.Path(tmp)
    src, m1, m2, back = d / f"{name}.zeasm", d / f"{name}.elf", d / f"{name}.2.elf", d / f"{name}.dis"
    src.write_text(text)
    r = zetools.assemble(as_path, src, m1)
    if r.returncode:
        return f"{name}: does not assemble:\n{r.stderr}", None
    dis = zetools.disassemble(dis_path, m1)
    if dis.returncode:
        return f"{name}: does not disassemble:\n{dis.stderr}", None
    back.write_text(dis.stdout)
    r = zetools.assemble(as_path, back, m2)
    if r.returncode:
        return f"{name}: disassembly does not assemble:\n{r.stderr}\n{dis.stdout}", None
    if m1.read_bytes() != m2.read_bytes():
        return f"{name}: round trip changed the module\n{dis.stdout}", None
    return None, m1


def instruction_lines(text):
    """Source line numbers of instructions: non-blank, non-comment, non-directive,
    non-label-only lines (counted independently of the assembler)."""
    lines = []
    for no, line in enumerate(text.splitlines(), 1):
        code = re.split(r"//|;", line, maxsplit=1)[0].strip()
        code = re.sub(r"^[A-Za-z_]\w*:\s*", "", code)
        if code and not code.startswith("."):
            lines.append(no)
    return lines


def check_binutils(as_path, tmp, name, text):
    d = pathlib.Path(tmp)
    src, mod = d / f"{name}.g.zeasm", d / f"{name}.g.elf"
    src.write_text(text)
    r = zetools.assemble(as_path, src, mod, debug=True)
    if r.returncode:
        return f"{name} -g: {r.stderr}"
    for cmd in (["readelf", "-a", "-W", str(mod)], ["objdump", "--dwarf=decodedline", str(mod)]):
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode or p.stderr.strip() or "warning" in p.stdout.lower():
            return f"{name}: {' '.join(cmd[:2])} complained:\n{p.stderr}{p.stdout}"
    p = subprocess.run(["objdump", "--dwarf=decodedline", str(mod)], capture_output=True, text=True)
    got = [int(x) for x in re.findall(rf"^\S*{re.escape(src.name)}\s+(\d+)\s", p.stdout, re.M)]
    want = instruction_lines(text)
    if got != want:
        return f"{name}: line table {got} != source instruction lines {want}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--dis", required=True)
    ap.add_argument("--doc")
    ap.add_argument("--generated", type=int, default=0)
    a = ap.parse_args()
    failures, total = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        if a.doc:
            examples = zetools.doc_examples(a.doc)
            if not examples:
                sys.exit(f"{a.doc}: no zeasm examples")
            for name, text in examples:
                total += 1
                problem, _ = roundtrip(a.as_path, a.dis, tmp, name, text)
                problem = problem or check_binutils(a.as_path, tmp, name, text)
                if problem:
                    failures.append(problem)
        if a.generated:
            import zegen
            import zeisa
            for seed in range(a.generated):
                total += 1
                text, _setup, expected = zegen.generate(seed)
                problem, mod = roundtrip(a.as_path, a.dis, tmp, f"gen{seed}", text)
                if not problem:
                    module = zeisa.read_module(mod)
                    for kname, want in expected.items():
                        got = module.kernels[kname].text
                        if got != want:
                            problem = f"gen{seed}: kernel {kname}: C assembler and Python encoder disagree"
                if problem:
                    failures.append(problem)
                if seed % 250 == 249:
                    print(f"  {seed + 1}/{a.generated} generated programs", flush=True)
    for f in failures[:20]:
        print("FAIL", f)
    print(f"round trip: {total - len(failures)}/{total} programs byte-identical")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
