#!/usr/bin/env python3
"""Seed a corpus and run one libFuzzer target for a bounded time.

Seeds: the ```zeasm examples of the given Markdown pages and every .zeasm file
under the given folders; for --kind module they are assembled (with and
without -g) so the fuzzer starts from valid modules."""
import argparse
import pathlib
import shutil
import subprocess
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "stimulus"))
import zetools  # noqa: E402


def seeds(paths):
    for p in map(pathlib.Path, paths):
        if p.is_dir():
            for f in sorted(p.rglob("*.zeasm")):
                yield f.name, f.read_text()
        elif p.suffix == ".md":
            yield from zetools.doc_examples(p)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fuzzer", required=True)
    ap.add_argument("--kind", choices=["asm", "module"], required=True)
    ap.add_argument("--seconds", type=int, default=25, help="time cap")
    ap.add_argument("--runs", type=int, default=0,
                    help="inputs to try (0: until --seconds); with the fixed seed a CI run is reproducible")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--as", dest="as_path", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--seeds", nargs="+", default=[])
    a = ap.parse_args()

    work = pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    corpus = work / "corpus"
    corpus.mkdir(parents=True)
    n = 0
    for name, text in seeds(a.seeds):
        src = work / f"{n}-{name}"
        src.write_text(text)
        if a.kind == "asm":
            shutil.copy(src, corpus / src.name)
        else:
            for debug in (False, True):
                out = corpus / f"{n}-{int(debug)}.elf"
                if zetools.assemble(a.as_path, src, out, debug).returncode != 0:
                    out.unlink(missing_ok=True)
        n += 1
    # Inputs that once crashed a target stay in its corpus as regressions.
    regress = pathlib.Path(__file__).resolve().parent / "regress" / a.kind
    for f in sorted(regress.glob("*")):
        shutil.copy(f, corpus / f"regress-{f.name}")
    count = len(list(corpus.iterdir()))
    if count == 0:
        sys.exit("run_fuzz: no seeds")
    print(f"run_fuzz: {count} seeds, fuzzing {pathlib.Path(a.fuzzer).name} for {a.seconds} s", flush=True)
    limits = [f"-max_total_time={a.seconds}", f"-seed={a.seed}"] + ([f"-runs={a.runs}"] if a.runs else [])
    r = subprocess.run([a.fuzzer, *limits, "-rss_limit_mb=2048", "-timeout=20",
                        "-print_final_stats=1", f"-artifact_prefix={work}/", str(corpus)],
                       capture_output=True, text=True)
    stats = [l for l in r.stderr.splitlines() if l.startswith("stat::") or "DONE" in l]
    print("\n".join(stats))
    if r.returncode != 0:
        print(r.stderr[-6000:])
        sys.exit(f"run_fuzz: {pathlib.Path(a.fuzzer).name} failed (exit {r.returncode}); artifacts in {work}")


if __name__ == "__main__":
    main()
