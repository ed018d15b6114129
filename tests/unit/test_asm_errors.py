#!/usr/bin/env python3
"""Malformed assembly: each file in tests/asm/errors names the diagnostic it
must produce in its first line (`// expect: LINE:COL: error: TEXT`).  The
assembler must exit 1, print that diagnostic, write no output file, and (for
the sanitized build) report no ASan/UBSan finding."""
import argparse
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402

EXPECT = re.compile(r"^// expect: (?:(\d+):(\d+): )?error: (.*)$")


def check(as_path, src, tmp):
    m = EXPECT.match(src.read_text().splitlines()[0])
    if not m:
        return f"{src.name}: first line has no '// expect:'"
    line, col, text = m.groups()
    out = pathlib.Path(tmp) / (src.stem + ".elf")
    r = zetools.assemble(as_path, src, out)
    problems = []
    if r.returncode != 1:
        problems.append(f"exit code {r.returncode}, expected 1")
    if out.exists():
        problems.append("an output file was written")
    report = zetools.sanitizer_report(r.stderr)
    if report:
        problems.append(f"sanitizer: {report}")
    prefix = f"{src}:{line}:{col}: error: " if line else "error: "
    if not any(prefix in l and text in l.split(prefix, 1)[1] for l in r.stderr.splitlines()):
        problems.append(f"no diagnostic '{prefix}{text}'")
    return f"{src.name}: " + "; ".join(problems) + f"\n--- stderr:\n{r.stderr}" if problems else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--dir", required=True)
    a = ap.parse_args()
    files = sorted(pathlib.Path(a.dir).glob("*.zeasm"))
    if not files:
        sys.exit("no test inputs")
    with tempfile.TemporaryDirectory() as tmp:
        failures = [f for f in (check(a.as_path, s, tmp) for s in files) if f]
    for f in failures:
        print("FAIL", f)
    print(f"asm errors: {len(files) - len(failures)}/{len(files)} inputs diagnosed as expected")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
