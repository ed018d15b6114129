#!/usr/bin/env python3
"""zesim regress: run a suite of simulations side by side, locally or as a Slurm job array,
and write one report (docs/regress.md).

    zesim regress SUITE [--jobs N] [--out DIR] [--filter RE] [--baseline DIR] [--list]
    zesim regress SUITE --slurm [--partition P] [--array-max N] [--wait] [--out DIR] [--filter RE]
    zesim regress --collect DIR [--baseline DIR]

SUITE is a suite file (.toml or .json) or the name of a shipped suite (tests/regress/suites/).
Every case is self-contained: its own daemon (zesim-gpu), socket, temporary directory and
output folder OUT/cases/NAME (stdout.txt, stderr.txt, daemon.log, ledger.jsonl, result.json).
Reports: OUT/summary.json, OUT/junit.xml, OUT/report.html.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import html
import json
import os
import pathlib
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

HERE = pathlib.Path(__file__).resolve().parents[2]
SUITES = HERE / "tests" / "regress" / "suites"
STATUSES = ("pass", "fail", "crash", "timeout", "daemon-died", "error")
CASE_KEYS = {"name", "program", "generator", "seeds", "preset", "topology", "config", "config_file", "env",
             "timeout", "expect", "matrix", "daemon", "ledger", "deterministic", "description"}
EXPECT_KEYS = {"exit", "stdout", "stdout_file", "ledger_digest"}


def say(msg):
    print(f"zesim regress: {msg}", file=sys.stderr, flush=True)


class SuiteError(Exception):
    pass


# ---------------------------------------------------------------- suite file

def find_suite(arg):
    p = pathlib.Path(arg)
    if p.is_file():
        return p
    for ext in (".toml", ".json"):
        q = SUITES / f"{arg}{ext}"
        if q.is_file():
            return q
    names = sorted(f.stem for f in SUITES.glob("*.*")) if SUITES.is_dir() else []
    raise SuiteError(f"no suite file {arg} (shipped suites: {', '.join(names) or 'none'})")


def load_suite(path):
    text = path.read_text()
    try:
        if path.suffix == ".toml":
            if tomllib is None:
                raise SuiteError(f"{path}: TOML needs Python 3.11 (tomllib); use a .json suite")
            data = tomllib.loads(text)
        elif path.suffix == ".json":
            data = json.loads(text)
        else:
            raise SuiteError(f"{path}: a suite file ends in .toml or .json")
    except (ValueError, tomllib.TOMLDecodeError if tomllib else ValueError) as e:
        raise SuiteError(f"{path}: {e}") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: the top level must be a table")
    unknown = set(data) - {"suite", "defaults", "case"}
    if unknown:
        raise SuiteError(f"{path}: unknown top-level key(s) {', '.join(sorted(unknown))} (suite, defaults, case)")
    cases = data.get("case", [])
    if not isinstance(cases, list) or not cases:
        raise SuiteError(f"{path}: no [[case]] entries")
    return data


def subst(value, mapping):
    """{name} placeholders in a string (or a list of strings); {{ and }} are literal braces."""
    if isinstance(value, list):
        return [subst(v, mapping) for v in value]
    if not isinstance(value, str):
        return value

    def one(m):
        key = m.group(1)
        if key not in mapping:
            raise SuiteError(f"unknown placeholder {{{key}}} in {value!r} (known: {', '.join(sorted(mapping))})")
        return str(mapping[key])
    return re.sub(r"\{(\w+)\}", one, value.replace("{{", "\0").replace("}}", "\1")).replace("\0", "{").replace("\1", "}")


def parse_seeds(v, where):
    if isinstance(v, list) and len(v) == 2 and all(isinstance(x, int) for x in v) and v[0] <= v[1]:
        return list(range(v[0], v[1] + 1))
    if isinstance(v, str) and re.fullmatch(r"\d+(-\d+)?(,\d+(-\d+)?)*", v):
        seeds = []
        for part in v.split(","):
            a, _, b = part.partition("-")
            if int(a) > int(b or a):
                break
            seeds += range(int(a), int(b or a) + 1)
        else:
            if len(set(seeds)) == len(seeds):
                return seeds
    raise SuiteError(f"{where}: seeds must be [FIRST, LAST] or a string of ranges \"A-B,C,D-E\" "
                     f"(inclusive, increasing, no repeats), not {v!r}")


def expand(suite, path, build):
    """The suite's cases, one dict per run: matrix and seed ranges expanded, defaults applied."""
    defaults = suite.get("defaults", {})
    bad = set(defaults) - CASE_KEYS
    if bad:
        raise SuiteError(f"{path}: unknown key(s) in [defaults]: {', '.join(sorted(bad))}")
    out, seen = [], set()
    for i, raw in enumerate(suite["case"]):
        where = f"{path}: case {i + 1}" + (f" ({raw.get('name')})" if isinstance(raw, dict) and raw.get("name") else "")
        if not isinstance(raw, dict):
            raise SuiteError(f"{where}: a case is a table")
        bad = set(raw) - CASE_KEYS
        if bad:
            raise SuiteError(f"{where}: unknown key(s) {', '.join(sorted(bad))} (known: {', '.join(sorted(CASE_KEYS))})")
        c = dict(defaults)
        for k, v in raw.items():
            if k in ("env", "config", "expect") and isinstance(c.get(k), dict):
                c[k] = {**c[k], **v}
            else:
                c[k] = v
        if not isinstance(c.get("name"), str) or not re.fullmatch(r"[A-Za-z0-9_.+-]+", c["name"]):
            raise SuiteError(f"{where}: name must be letters, digits and _ . + - only")
        if not isinstance(c.get("program"), list) or not c["program"] or not all(isinstance(a, str) for a in c["program"]):
            raise SuiteError(f"{where}: program must be a non-empty list of strings")
        if "generator" in c and (not isinstance(c["generator"], list) or not c["generator"]):
            raise SuiteError(f"{where}: generator must be a non-empty list of strings")
        if not isinstance(c.get("timeout", 60), (int, float)) or c.get("timeout", 60) <= 0:
            raise SuiteError(f"{where}: timeout must be a positive number of seconds")
        exp = c.get("expect", {})
        if not isinstance(exp, dict) or set(exp) - EXPECT_KEYS:
            raise SuiteError(f"{where}: expect takes {', '.join(sorted(EXPECT_KEYS))}")
        for k in ("env", "config"):
            if not isinstance(c.get(k, {}), dict):
                raise SuiteError(f"{where}: {k} must be a table")
        if "stdout" in exp:
            try:
                re.compile(exp["stdout"])
            except re.error as e:
                raise SuiteError(f"{where}: expect.stdout is not a regular expression: {e}") from None
        variants = [{}]
        matrix = c.get("matrix", {})
        if not isinstance(matrix, dict) or set(matrix) - {"preset", "topology"}:
            raise SuiteError(f"{where}: matrix takes preset and topology lists")
        for key in ("preset", "topology"):
            if key in matrix:
                vals = matrix[key]
                if not isinstance(vals, list) or not vals:
                    raise SuiteError(f"{where}: matrix.{key} must be a non-empty list")
                variants = [dict(v, **{key: x}) for v in variants for x in vals]
        seeds = parse_seeds(c["seeds"], where) if "seeds" in c else [None]
        for var in variants:
            for seed in seeds:
                case = {k: v for k, v in c.items() if k not in ("matrix", "seeds")}
                case.update(var)
                name = c["name"]
                if var:
                    # topology "" is the preset's own shape
                    name += "@" + ",".join(str(var[k]) or "default" for k in ("preset", "topology") if k in var)
                if seed is not None:
                    name += f"/s{seed}"
                    case["seed"] = seed
                case["name"] = name
                if name in seen:
                    raise SuiteError(f"{where}: case name {name} appears twice")
                seen.add(name)
                case.setdefault("timeout", 60)
                case.setdefault("daemon", True)
                case.setdefault("deterministic", True)
                case["expect"] = dict(exp)
                case["expect"].setdefault("exit", 0)
                out.append(case)
    return out


def case_dirname(name):
    return name.replace("/", "~").replace("@", "_at_").replace(",", "_")


# ---------------------------------------------------------------- one case

def stop_group(proc, grace=2.0):
    """SIGTERM to the process group of `proc`, SIGKILL after `grace` s; True if SIGKILL was needed."""
    if proc is None or proc.poll() is not None and not _group_alive(proc.pid):
        return False
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return False
        if wait_for(proc, wait):
            return sig == signal.SIGKILL
    return True


def wait_for(proc, seconds):
    """Wait up to `seconds` for `proc` to end (on its pidfd: Popen.wait(timeout) sleeps in steps); True if it did."""
    waiter = Waiter(proc)
    deadline = time.monotonic() + seconds
    try:
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            waiter.wait(left)
        return True
    finally:
        waiter.close()


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def tail(path, n=4000):
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError:
        return ""
    return data[-n:].decode(errors="replace")


def signame(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return f"signal {n}"


class Runner:
    def __init__(self, build, out, suite_path):
        self.build = pathlib.Path(build)
        self.out = pathlib.Path(out)
        self.suite_path = suite_path
        self.gpu = self.build / "sim" / "zesim-gpu"
        self.preload = self.build / "lib" / "libzesim_preload.so"
        self.driver = self.build / "lib" / "libze_zesim.so.1"
        self.stopping = False
        self.max_ledger = 512 << 20  # bytes; a runaway case is stopped beyond (--max-ledger-mb)

    def check_build(self):
        for f in (self.gpu, self.preload, self.driver):
            if not f.exists():
                raise SuiteError(f"{f} is missing: build first (./zesim build, or set ZESIM_BUILD)")

    def repro(self, case):
        return (f"ZESIM_BUILD={shlex.quote(str(self.build))} {shlex.quote(str(HERE / 'zesim'))} regress "
                f"{shlex.quote(str(self.suite_path))} --filter {shlex.quote('^' + re.escape(case['name']) + '$')} "
                f"--out /tmp/zesim-repro")

    def run_case(self, case):
        cdir = self.out / "cases" / case_dirname(case["name"])
        if cdir.exists():
            shutil.rmtree(cdir)
        work = cdir / "work"
        work.mkdir(parents=True)
        res = {"name": case["name"], "status": "error", "reason": "", "exit": None, "host_s": 0.0,
               "cycles": None, "speed": None, "ledger_digest": None, "deterministic": case["deterministic"],
               "dir": str(cdir.relative_to(self.out)), "repro": self.repro(case), "host": socket.gethostname(),
               "preset": case.get("preset"), "topology": case.get("topology"), "seed": case.get("seed")}
        # A short private directory for the socket (sun_path is 108 bytes), mode 0700.
        tmp = tempfile.mkdtemp(prefix="zr.")
        t0 = time.monotonic()
        try:
            self._run(case, cdir, work, tmp, res, t0 + case["timeout"])
        except (OSError, SuiteError) as e:
            res["status"], res["reason"] = "error", str(e)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        res["host_s"] = round(time.monotonic() - t0, 3)
        if res["cycles"] and res["host_s"] > 0:
            res["speed"] = round(res["cycles"] / res["host_s"])
        (cdir / "result.json").write_text(json.dumps(res, indent=1) + "\n")
        return res

    def _spawn(self, argv, cwd, env, stdout, stderr):
        return subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                                start_new_session=True)

    def _run(self, case, cdir, work, tmp, res, deadline):
        mapping = {"src": HERE, "build": self.build, "work": work, "case": case["name"],
                   "seed": case.get("seed", ""), "out": self.out}
        env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
        for k, v in case.get("env", {}).items():
            env[str(k)] = subst(str(v), mapping)
        program = subst(case["program"], mapping)
        # The generator (a seed's program and its independent expectation), without a daemon.
        if "generator" in case:
            gen = subst(case["generator"], mapping)
            with open(cdir / "generator.log", "wb") as log:
                p = self._spawn(gen, work, env, log, subprocess.STDOUT)
                rc = self._wait(p, deadline)
            if rc is None and self.stopping:
                res["status"], res["reason"] = "error", "interrupted"
                return
            if rc is None:
                res["status"], res["reason"] = "timeout", f"the generator ran past the {case['timeout']} s timeout"
                return
            if rc != 0:
                last = [ln.strip() for ln in tail(cdir / "generator.log", 2000).splitlines() if ln.strip()][-3:]
                res["status"], res["reason"] = "error", f"the generator failed (exit {rc}): {' / '.join(last)}"
                return
        daemon = None
        dlog = None
        if case["daemon"]:
            sock = os.path.join(tmp, "gpu.sock")
            argv = [str(self.gpu), "--socket", sock]
            if case.get("preset"):
                argv += ["--preset", case["preset"]]
            if case.get("topology"):
                argv += ["--topology", case["topology"]]
            if case.get("config"):
                cfg = cdir / "config.json"
                cfg.write_text(json.dumps(case["config"]) + "\n")
                argv += ["--config", str(cfg)]
            elif case.get("config_file"):
                argv += ["--config", subst(case["config_file"], mapping)]
            if case.get("ledger", True):
                argv += ["--ledger", str(cdir / "ledger.jsonl")]
            (cdir / "daemon.cmd").write_text(shlex.join(argv) + "\n")
            dlog = open(cdir / "daemon.log", "wb")
            daemon = self._spawn(argv, tmp, env, subprocess.DEVNULL, dlog)
            while not os.path.exists(sock) and daemon.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            if not os.path.exists(sock):
                stop_group(daemon)
                dlog.close()
                res["status"] = "error"
                res["reason"] = f"the daemon did not start: {tail(cdir / 'daemon.log', 300).strip()}"
                return
            env["ZESIM_SOCKET"] = sock
            env["LD_PRELOAD"] = str(self.preload) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
            env["ZE_ENABLE_ALT_DRIVERS"] = str(self.driver)
        (cdir / "program.cmd").write_text(shlex.join(program) + "\n")
        daemon_died = None
        ledger_over = False
        ledger_path = cdir / "ledger.jsonl" if daemon is not None and case.get("ledger", True) else None
        try:
            with open(cdir / "stdout.txt", "wb") as so, open(cdir / "stderr.txt", "wb") as se:
                prog = self._spawn(program, work, env, so, se)
                # Sleep until the program or the daemon ends (pidfds), the deadline or an interrupt.
                waiter = Waiter(prog, daemon)
                try:
                    while True:
                        rc = prog.poll()
                        if rc is not None:
                            break
                        if daemon is not None and daemon_died is None and daemon.poll() is not None:
                            daemon_died = daemon.returncode
                            waiter.forget(daemon)
                            # The program may notice (lost device) or wait forever: a grace period.
                            deadline = min(deadline, time.monotonic() + 5)
                        now = time.monotonic()
                        if now >= deadline or self.stopping:
                            break
                        if ledger_path and self.max_ledger and ledger_path.exists() \
                                and ledger_path.stat().st_size > self.max_ledger:
                            ledger_over = True
                            break
                        waiter.wait(min(deadline - now, 0.25))
                finally:
                    waiter.close()
                timed_out = rc is None
                if timed_out:
                    stop_group(prog)
                    rc = prog.returncode
        finally:
            if daemon is not None:
                if daemon_died is None and daemon.poll() is not None:
                    daemon_died = daemon.returncode
                killed = stop_group(daemon, grace=5.0)
                # Killed by a signal that was not ours: it died while the program ended (a
                # SIGKILL closes the socket before the process is reaped).
                if daemon_died is None and not killed and daemon.returncode is not None \
                        and daemon.returncode < 0 and daemon.returncode != -signal.SIGTERM:
                    daemon_died = daemon.returncode
                dlog.close()
        res["exit"] = rc
        if daemon is not None and (cdir / "ledger.jsonl").exists():
            data = (cdir / "ledger.jsonl").read_bytes()
            res["ledger_digest"] = "sha256:" + hashlib.sha256(data).hexdigest()
            last = data.rstrip(b"\n").rsplit(b"\n", 1)[-1]
            try:
                res["cycles"] = json.loads(last)["end"] if last else 0
            except (ValueError, KeyError):
                res["cycles"] = None
        exp = case["expect"]
        if self.stopping and timed_out:
            res["status"], res["reason"] = "error", "interrupted"
        elif daemon_died is not None:
            how = f"killed by {signame(-daemon_died)}" if daemon_died < 0 else f"exit {daemon_died}"
            res["status"] = "daemon-died"
            res["reason"] = (f"the daemon died while the program ran ({how}); the program "
                             + ("was stopped after it" if timed_out else f"then ended with {describe_rc(rc)}"))
        elif ledger_over:
            res["status"] = "timeout"
            res["reason"] = (f"stopped when its ledger passed {self.max_ledger >> 20} MB (a runaway kernel? "
                             "--max-ledger-mb, or ledger = false for the case)")
        elif timed_out:
            res["status"], res["reason"] = "timeout", f"stopped at the {case['timeout']} s timeout"
        elif rc < 0:
            res["status"], res["reason"] = "crash", f"the program was killed by {signame(-rc)}"
        elif rc != exp["exit"]:
            res["status"], res["reason"] = "fail", f"exit status {rc}, expected {exp['exit']}"
        elif daemon is not None and daemon.returncode not in (0, -signal.SIGTERM):
            res["status"], res["reason"] = "fail", f"the daemon ended with {describe_rc(daemon.returncode)} at shutdown"
        else:
            res["status"] = "pass"
            out_text = (cdir / "stdout.txt").read_text(errors="replace")
            if "stdout" in exp and not re.search(exp["stdout"], out_text, re.M):
                res["status"], res["reason"] = "fail", f"stdout does not match {exp['stdout']!r}"
            elif "stdout_file" in exp:
                want = pathlib.Path(subst(exp["stdout_file"], mapping)).read_text(errors="replace")
                if want != out_text:
                    res["status"], res["reason"] = "fail", f"stdout differs from {exp['stdout_file']}"
            if res["status"] == "pass" and "ledger_digest" in exp and exp["ledger_digest"] != res["ledger_digest"]:
                res["status"] = "fail"
                res["reason"] = f"ledger digest {res['ledger_digest']}, expected {exp['ledger_digest']}"

    def _wait(self, p, deadline):
        waiter = Waiter(p)
        try:
            while p.poll() is None:
                now = time.monotonic()
                if now >= deadline or self.stopping:
                    stop_group(p)
                    return None
                waiter.wait(min(deadline - now, 0.25))
        finally:
            waiter.close()
        return p.returncode


class Waiter:
    """Sleeps until one of some child processes ends, without polling: their pidfds (Linux
    5.3; a fallback of short sleeps elsewhere)."""

    def __init__(self, *procs):
        self.poller = select.poll()
        self.fds = {}
        for p in procs:
            if p is None:
                continue
            try:
                fd = os.pidfd_open(p.pid)
            except (AttributeError, OSError):
                self.fds = None
                return
            self.fds[p.pid] = fd
            self.poller.register(fd, select.POLLIN)

    def forget(self, p):
        if self.fds and p.pid in self.fds:
            self.poller.unregister(self.fds[p.pid])
            os.close(self.fds.pop(p.pid))

    def wait(self, seconds):
        if self.fds is None:
            time.sleep(min(seconds, 0.01))
        else:
            self.poller.poll(max(0, int(seconds * 1000)) + 1)

    def close(self):
        for fd in (self.fds or {}).values():
            os.close(fd)
        self.fds = {}


def describe_rc(rc):
    return f"{signame(-rc)}" if rc is not None and rc < 0 else f"exit {rc}"


# ---------------------------------------------------------------- running many

class Progress:
    def __init__(self, total, stream=sys.stderr):
        self.total, self.done, self.failed, self.running = total, 0, 0, 0
        self.t0 = time.monotonic()
        self.stream = stream
        self.tty = stream.isatty()
        self.last = 0.0
        self.lock = threading.Lock()

    def line(self):
        el = time.monotonic() - self.t0
        eta = "?"
        if self.done:
            eta = str(datetime.timedelta(seconds=round(el / self.done * (self.total - self.done))))
        return (f"[{self.done}/{self.total}] done {self.done}, failed {self.failed}, running {self.running}, "
                f"elapsed {datetime.timedelta(seconds=round(el))}, ETA {eta}")

    def show(self, force=False, note=None):
        with self.lock:
            now = time.monotonic()
            if note:
                if self.tty:
                    self.stream.write("\r\033[K")
                self.stream.write(note + "\n")
            if self.tty:
                self.stream.write("\r\033[K" + self.line())
            elif force or now - self.last >= 5:
                self.stream.write(self.line() + "\n")
                self.last = now
            self.stream.flush()

    def finish(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def run_cases(runner, cases, jobs, quiet=False):
    prog = Progress(len(cases))
    results = []
    stop = threading.Event()

    def one(case):
        with prog.lock:
            prog.running += 1
        if not quiet:
            prog.show()
        r = runner.run_case(case)
        with prog.lock:
            prog.running -= 1
            prog.done += 1
            prog.failed += r["status"] != "pass"
        if not quiet:
            note = None if r["status"] == "pass" else f"{r['status'].upper()} {r['name']}: {r['reason']}"
            prog.show(force=True, note=note)
        return r

    old = {}

    def on_signal(sig, _frame):
        runner.stopping = True
        stop.set()
    for s in (signal.SIGINT, signal.SIGTERM):
        try:
            old[s] = signal.signal(s, on_signal)
        except ValueError:  # not the main thread
            pass
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            futs = []
            for c in cases:
                futs.append(ex.submit(lambda c=c: None if stop.is_set() else one(c)))
            for f in futs:
                r = f.result()
                if r is not None:
                    results.append(r)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if not quiet:
            prog.finish()
    if runner.stopping:
        say("interrupted: the running cases were stopped")
    return results


# ---------------------------------------------------------------- reports

def summarize(results, meta):
    order = {s: i for i, s in enumerate(STATUSES)}
    results = sorted(results, key=lambda r: (r["status"] == "pass", order.get(r["status"], 9), r["name"]))
    counts = {s: sum(r["status"] == s for r in results) for s in STATUSES}
    return dict(meta, counts=counts, total=len(results), cases=results)


def compare(summary, base, noise, floor=0.5):
    """New failures, fixed cases, ledger digests that changed, host time changed by more than
    `noise` (a fraction) and by at least `floor` seconds (shorter cases are all noise)."""
    old = {c["name"]: c for c in base["cases"]}
    cmp = {"baseline": base.get("out", ""), "new_failures": [], "fixed": [], "digest_changed": [],
           "slower": [], "faster": [], "new_cases": [], "missing_cases": sorted(set(old) - {c["name"] for c in summary["cases"]}),
           "noise": noise, "floor_s": floor}
    for c in summary["cases"]:
        o = old.get(c["name"])
        if o is None:
            cmp["new_cases"].append(c["name"])
            continue
        if c["status"] != "pass" and o["status"] == "pass":
            cmp["new_failures"].append(c["name"])
        if c["status"] == "pass" and o["status"] != "pass":
            cmp["fixed"].append(c["name"])
        if c.get("ledger_digest") and o.get("ledger_digest") and c["ledger_digest"] != o["ledger_digest"] \
                and c.get("deterministic", True):
            cmp["digest_changed"].append(c["name"])
        if c["status"] == "pass" and o["status"] == "pass" and c.get("host_s") and o.get("host_s") \
                and abs(c["host_s"] - o["host_s"]) >= floor:
            ratio = c["host_s"] / o["host_s"]
            if ratio > 1 + noise:
                cmp["slower"].append({"name": c["name"], "ratio": round(ratio, 3)})
            elif ratio < 1 / (1 + noise):
                cmp["faster"].append({"name": c["name"], "ratio": round(ratio, 3)})
    return cmp


def write_junit(summary, path, out):
    ts = ET.Element("testsuite", name=summary["suite"], tests=str(summary["total"]),
                    failures=str(summary["total"] - summary["counts"]["pass"] - summary["counts"]["error"]),
                    errors=str(summary["counts"]["error"]), time=f"{summary.get('wall_s', 0):.3f}",
                    hostname=socket.gethostname())
    for c in summary["cases"]:
        tc = ET.SubElement(ts, "testcase", classname=f"regress.{summary['suite']}", name=c["name"],
                           time=f"{c['host_s']:.3f}")
        props = ET.SubElement(tc, "properties")
        for k in ("status", "cycles", "speed", "ledger_digest", "host", "repro"):
            ET.SubElement(props, "property", name=k, value=str(c.get(k)))
        if c["status"] != "pass":
            el = ET.SubElement(tc, "error" if c["status"] == "error" else "failure",
                               message=f"{c['status']}: {c['reason']}", type=c["status"])
            el.text = f"repro: {c['repro']}\n"
            ET.SubElement(tc, "system-out").text = tail(out / c["dir"] / "stdout.txt")
            ET.SubElement(tc, "system-err").text = (tail(out / c["dir"] / "stderr.txt") + "\n--- daemon.log ---\n"
                                                    + tail(out / c["dir"] / "daemon.log"))
    ET.ElementTree(ts).write(path, encoding="utf-8", xml_declaration=True)


CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#eee}td.num{text-align:right;font-variant-numeric:tabular-nums}
.pass{background:#dfd}.fail,.crash,.timeout,.daemon-died,.error{background:#fdd;font-weight:bold}
code{font-size:.85em;word-break:break-all}pre{background:#f6f6f6;padding:.5em;max-height:20em;overflow:auto;font-size:.8em}
.counts span{margin-right:1em}details{margin:.2em 0}
"""


def fmt_num(v):
    return "" if v is None else f"{v:,}"


def write_html(summary, path, out):
    e = html.escape
    rows = []
    for c in summary["cases"]:
        logs = ""
        if c["status"] != "pass":
            parts = []
            for f in ("stderr.txt", "stdout.txt", "daemon.log", "generator.log"):
                t = tail(out / c["dir"] / f, 3000)
                if t.strip():
                    parts.append(f"<details><summary>{e(f)}</summary><pre>{e(t)}</pre></details>")
            logs = "".join(parts)
        speed = "" if c.get("speed") is None else f"{c['speed'] / 1e6:.3f}"
        rows.append(
            f"<tr><td class=\"{e(c['status'])}\">{e(c['status'])}</td><td>{e(c['name'])}"
            f"<div>{e(c.get('reason') or '')}</div>{logs}</td><td class=\"num\">{c['host_s']:.2f}</td>"
            f"<td class=\"num\">{fmt_num(c.get('cycles'))}</td><td class=\"num\">{speed}</td>"
            f"<td><code>{e((c.get('ledger_digest') or '')[:23])}</code></td><td>{e(c.get('host') or '')}</td>"
            f"<td><code>{e(c['repro'])}</code></td></tr>")
    counts = "".join(f"<span class=\"{s}\">{s}: {n}</span>" for s, n in summary["counts"].items() if n)
    base = ""
    cmp = summary.get("comparison")
    if cmp:
        items = []
        for key, label in (("new_failures", "new failures"), ("fixed", "fixed"), ("digest_changed", "ledger digest changed"),
                           ("slower", f"slower by more than {cmp['noise']:.0%} and {cmp['floor_s']} s"),
                           ("faster", f"faster by more than {cmp['noise']:.0%} and {cmp['floor_s']} s"),
                           ("new_cases", "new cases"), ("missing_cases", "cases no longer run")):
            vals = [v if isinstance(v, str) else f"{v['name']} ×{v['ratio']}" for v in cmp[key]]
            items.append(f"<li>{e(label)} ({len(vals)}): {e(', '.join(vals)) or '—'}</li>")
        base = f"<h2>Against the baseline {e(cmp['baseline'])}</h2><ul>{''.join(items)}</ul>"
    doc = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>zesim regress: {e(summary['suite'])}</title>
<link rel="icon" href="data:,">
<style>{CSS}</style></head><body>
<h1>zesim regress: {e(summary['suite'])}</h1>
<p>{e(summary.get('description', ''))}</p>
<p>{e(summary.get('started', ''))} · {summary['total']} cases · wall time {summary.get('wall_s', 0):.1f} s ·
{e(summary.get('mode', 'local'))}</p>
<p class="counts">{counts}</p>
{base}
<table><thead><tr><th>status</th><th>case</th><th>host s</th><th>simulated cycles</th><th>M cycles/s</th>
<th>ledger digest</th><th>host</th><th>reproduce</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
</body></html>
"""
    path.write_text(doc)


def write_reports(out, results, meta, baseline, noise, floor):
    summary = summarize(results, meta)
    if baseline:
        bpath = pathlib.Path(baseline) / "summary.json"
        try:
            base = json.loads(bpath.read_text())
        except (OSError, ValueError) as e:
            raise SuiteError(f"baseline {bpath}: {e}") from None
        base.setdefault("out", str(baseline))
        summary["comparison"] = compare(summary, base, noise, floor)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    write_junit(summary, out / "junit.xml", out)
    write_html(summary, out / "report.html", out)
    c = summary["counts"]
    say(f"{summary['total']} cases: " + ", ".join(f"{n} {s}" for s, n in c.items() if n)
        + f"; reports: {out / 'report.html'}, {out / 'junit.xml'}, {out / 'summary.json'}")
    cmp = summary.get("comparison")
    if cmp:
        say(f"against {cmp['baseline']}: {len(cmp['new_failures'])} new failures, {len(cmp['fixed'])} fixed, "
            f"{len(cmp['digest_changed'])} ledger digests changed, {len(cmp['slower'])} slower and "
            f"{len(cmp['faster'])} faster beyond {cmp['noise']:.0%}")
        for k in ("new_failures", "digest_changed"):
            for n in cmp[k]:
                say(f"  {k.replace('_', ' ')}: {n}")
    return summary


# ---------------------------------------------------------------- Slurm

def slurm_submit(a, runner, cases, suite_path, description=""):
    sbatch = shutil.which("sbatch")
    if not sbatch:
        raise SuiteError("sbatch not found: install Debian's slurm-client (and point SLURM_CONF at the cluster)")
    out = runner.out
    (out / "slurm").mkdir(parents=True, exist_ok=True)
    ntasks = max(1, min(len(cases), a.array_max))
    plan = {"suite": str(suite_path), "build": str(runner.build), "tasks": ntasks, "description": description,
            "max_ledger": runner.max_ledger,
            "cases": cases, "submitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    (out / "plan.json").write_text(json.dumps(plan, indent=1, default=str) + "\n")
    script = out / "slurm" / "task.sh"
    script.write_text("#!/bin/sh\n# One shard of a zesim regress suite (zesim regress --slurm).\n"
                      f"exec {shlex.quote(sys.executable)} {shlex.quote(str(pathlib.Path(__file__).resolve()))} "
                      f"--run-shard {shlex.quote(str(out))} \"$SLURM_ARRAY_TASK_ID\"\n")
    script.chmod(0o755)
    argv = [sbatch, "--parsable", f"--array=0-{ntasks - 1}", "--job-name", f"zesim-regress-{plan_name(suite_path)}",
            "--output", str(out / "slurm" / "task-%a.out"), "--cpus-per-task", "1", "--chdir", str(out)]
    if a.partition:
        argv += ["--partition", a.partition]
    argv.append(str(script))
    say(f"submitting {len(cases)} cases as a job array of {ntasks} tasks: {shlex.join(argv)}")
    env = dict(os.environ, ZESIM_BUILD=str(runner.build))
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    jobid = r.stdout.strip().split(";")[0]
    if r.returncode != 0 or not jobid:
        raise SuiteError(f"sbatch failed (exit {r.returncode}): {r.stderr.strip()}")
    (out / "slurm" / "jobid").write_text(jobid + "\n")
    if not a.wait:
        say(f"job {jobid} submitted; when it is done: zesim regress --collect {out}")
        return None
    # Wait for the array by asking Slurm (squeue) and show the results arriving.
    squeue = shutil.which("squeue")
    if not squeue:
        raise SuiteError("squeue not found (Debian slurm-client)")
    prog = Progress(len(cases))
    prog.t0 = time.monotonic()
    names = [out / "cases" / case_dirname(c["name"]) / "result.json" for c in cases]
    while True:
        q = subprocess.run([squeue, "-h", "-j", jobid, "-o", "%T"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env)
        states = q.stdout.split()
        prog.done = sum(f.exists() for f in names)
        prog.running = states.count("RUNNING")
        prog.failed = 0
        prog.show()
        if q.returncode == 0 and not states:
            break
        if q.returncode != 0 and "Invalid job id" not in q.stderr:
            raise SuiteError(f"squeue failed: {q.stderr.strip()}")
        if q.returncode != 0:
            break
        time.sleep(0.5)
    prog.finish()
    say(f"job {jobid} has ended; collecting")
    return collect(out, a.baseline, a.noise, a.noise_floor)


def plan_name(p):
    return pathlib.Path(p).stem


def run_shard(out, index):
    out = pathlib.Path(out)
    plan = json.loads((out / "plan.json").read_text())
    mine = [c for i, c in enumerate(plan["cases"]) if i % plan["tasks"] == index]
    runner = Runner(plan["build"], out, plan["suite"])
    runner.max_ledger = plan.get("max_ledger", runner.max_ledger)
    runner.check_build()
    say(f"shard {index} of {plan['tasks']} on {socket.gethostname()}: {len(mine)} cases")
    jobs = int(os.environ.get("SLURM_CPUS_PER_TASK", "1") or 1)
    results = run_cases(runner, mine, jobs)
    bad = [r for r in results if r["status"] != "pass"]
    say(f"shard {index}: {len(results) - len(bad)} passed, {len(bad)} did not")
    return 0


def collect(out, baseline, noise, floor):
    out = pathlib.Path(out)
    try:
        plan = json.loads((out / "plan.json").read_text())
    except (OSError, ValueError) as e:
        raise SuiteError(f"{out} has no readable plan.json (made by --slurm): {e}") from None
    results = []
    for c in plan["cases"]:
        f = out / "cases" / case_dirname(c["name"]) / "result.json"
        try:
            results.append(json.loads(f.read_text()))
        except (OSError, ValueError):
            results.append({"name": c["name"], "status": "error", "reason": "no result: the array task did not run it "
                            "(see slurm/task-*.out)", "exit": None, "host_s": 0.0, "cycles": None, "speed": None,
                            "ledger_digest": None, "dir": str((out / "cases" / case_dirname(c["name"])).relative_to(out)),
                            "repro": Runner(plan["build"], out, plan["suite"]).repro(c), "host": None})
    meta = {"suite": plan_name(plan["suite"]), "suite_file": plan["suite"], "out": str(out), "mode": "slurm",
            "description": plan.get("description", ""),
            "started": plan.get("submitted", ""), "wall_s": sum(r["host_s"] for r in results),
            "jobid": (out / "slurm" / "jobid").read_text().strip() if (out / "slurm" / "jobid").exists() else None}
    return write_reports(out, results, meta, baseline, noise, floor)


# ---------------------------------------------------------------- command line

def parse(argv):
    ap = argparse.ArgumentParser(prog="zesim regress", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="Statuses: pass, fail (exit status, output or ledger digest), crash (the "
                                        "program died of a signal), timeout, daemon-died, error (set-up or "
                                        "generator). Exit status 0 only if every case passed. docs/regress.md")
    ap.add_argument("suite", nargs="?", help="suite file (.toml/.json) or shipped suite name (smoke, nightly, ...)")
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1, help="cases run at once (default: cores)")
    ap.add_argument("--out", help="output folder (default: regress-SUITE-DATE in the current folder)")
    ap.add_argument("--filter", help="only the cases whose name matches this regular expression (re.search)")
    ap.add_argument("--max-ledger-mb", type=int, default=512, metavar="MB",
                    help="stop a case whose ledger file grows past this (a runaway kernel writes ~15 MB/s "
                         "on tiny; 0 = no limit; default 512)")
    ap.add_argument("--list", action="store_true", help="print the expanded case names and stop")
    ap.add_argument("--baseline", help="a previous run's output folder to compare with")
    ap.add_argument("--noise", type=float, default=0.25, help="speed change counted as real beyond this fraction (0.25)")
    ap.add_argument("--noise-floor", type=float, default=0.5, metavar="SECONDS",
                    help="host-time changes smaller than this are noise whatever the ratio (0.5)")
    ap.add_argument("--slurm", action="store_true", help="submit as a Slurm job array (sbatch --array) instead")
    ap.add_argument("--partition", help="Slurm partition (--slurm)")
    ap.add_argument("--array-max", type=int, default=64, help="at most this many array tasks; cases are dealt "
                    "round-robin to them (--slurm, default 64)")
    ap.add_argument("--wait", action="store_true", help="--slurm: wait for the array (squeue), then collect")
    ap.add_argument("--collect", metavar="DIR", help="merge the results of a --slurm run in DIR into the reports")
    ap.add_argument("--run-shard", nargs=2, metavar=("DIR", "INDEX"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    if a.max_ledger_mb < 0:
        ap.error("--max-ledger-mb must not be negative")
    if a.array_max < 1:
        ap.error("--array-max must be at least 1")
    if a.noise < 0 or a.noise_floor < 0:
        ap.error("--noise and --noise-floor must not be negative")
    if not (a.suite or a.collect or a.run_shard):
        ap.error("a SUITE (or --collect DIR) is needed")
    if a.collect and a.suite:
        ap.error("--collect DIR takes no SUITE")
    if (a.partition or a.wait) and not a.slurm:
        ap.error("--partition and --wait go with --slurm")
    return a


def main(argv):
    a = parse(argv)
    try:
        if a.run_shard:
            return run_shard(a.run_shard[0], int(a.run_shard[1]))
        if a.collect:
            s = collect(a.collect, a.baseline, a.noise, a.noise_floor)
            return 0 if s["counts"]["pass"] == s["total"] else 1
        build = pathlib.Path(os.environ.get("ZESIM_BUILD", HERE / "build")).resolve()
        suite_path = find_suite(a.suite).resolve()
        suite = load_suite(suite_path)
        cases = expand(suite, suite_path, build)
        if a.filter:
            try:
                rx = re.compile(a.filter)
            except re.error as e:
                raise SuiteError(f"--filter: {e}") from None
            cases = [c for c in cases if rx.search(c["name"])]
            if not cases:
                raise SuiteError(f"no case matches --filter {a.filter!r}")
        if a.list:
            for c in cases:
                print(c["name"])
            return 0
        stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
        out = pathlib.Path(a.out or f"regress-{suite_path.stem}-{stamp}").resolve()
        out.mkdir(parents=True, exist_ok=True)
        runner = Runner(build, out, suite_path)
        runner.max_ledger = a.max_ledger_mb << 20
        runner.check_build()
        if a.slurm:
            s = slurm_submit(a, runner, cases, suite_path, str(suite.get("suite", {}).get("description", "")))
            return 0 if s is None or s["counts"]["pass"] == s["total"] else 1
        say(f"{len(cases)} cases of {suite_path.name}, {a.jobs} at a time, into {out}")
        started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        t0 = time.monotonic()
        results = run_cases(runner, cases, a.jobs)
        meta = {"suite": suite_path.stem, "suite_file": str(suite_path), "out": str(out), "mode": "local",
                "description": str(suite.get("suite", {}).get("description", "")),
                "jobs": a.jobs, "started": started, "wall_s": round(time.monotonic() - t0, 3)}
        s = write_reports(out, results, meta, a.baseline, a.noise, a.noise_floor)
        if runner.stopping:
            return 130
        return 0 if s["counts"]["pass"] == s["total"] else 1
    except SuiteError as e:
        say(f"error: {e}")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
