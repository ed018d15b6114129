"""Helpers shared by the Python test drivers: the docs' assembly examples and
calls to the C toolchain (zesim-as, zesim-dis)."""
import pathlib
import re
import subprocess

_EXAMPLE = re.compile(r"```zeasm\n(.*?)```", re.S)


def doc_examples(markdown_path):
    """The ```zeasm blocks of a Markdown page, as (name, text) pairs."""
    text = pathlib.Path(markdown_path).read_text()
    return [(f"example{i}", block) for i, block in enumerate(_EXAMPLE.findall(text))]


def assemble(as_path, source, out, debug=False):
    """Run zesim-as; returns the CompletedProcess (text output captured)."""
    cmd = [str(as_path)] + (["-g"] if debug else []) + ["-o", str(out), str(source)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def disassemble(dis_path, module, raw=False):
    cmd = [str(dis_path)] + (["--raw"] if raw else []) + [str(module)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def sanitizer_report(stderr):
    """The first line of an ASan/UBSan report in stderr, or None."""
    for line in stderr.splitlines():
        if "AddressSanitizer" in line or "runtime error:" in line or "LeakSanitizer" in line:
            return line
    return None
