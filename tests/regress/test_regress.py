#!/usr/bin/env python3
"""The regression runner on misbehaving cases (tests/regress/suites/faults.toml), through
`./zesim regress` as a user runs it: a case that hangs is stopped at its timeout, one that
crashes and one that kills its daemon are reported as such with their logs, a wrong ledger
digest and a wrong output fail, and every other case passes. The expectations come from
what the fixture programs do (tests/regress/fixture.c), and the ledger digests and cycle
counts of the report are recomputed here from the ledger files. Then a baseline
comparison on an edited copy of the report, the JUnit XML, and bad suite files.

    test_regress.py --zesim ./zesim --build build"""
import argparse
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

A = None
EXPECTED = {"ok": "pass", "vadd": "pass", "reduce": "pass", "hang": "timeout", "crash": "crash",
            "kill_daemon": "daemon-died", "wrong_digest": "fail", "wrong_output": "fail"}


def regress(*args, out=None):
    env = {"ZESIM_BUILD": A.build, "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    argv = [A.zesim, "regress", *args] + (["--out", str(out)] if out else [])
    return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=300)


class FaultsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = pathlib.Path(tempfile.mkdtemp(prefix="zesim-regress-test."))
        cls.out = cls.tmp / "faults"
        t0 = time.monotonic()
        cls.r = regress("faults", "--jobs", "2", out=cls.out)
        cls.wall = time.monotonic() - t0
        print(cls.r.stderr, file=sys.stderr)
        cls.summary = json.loads((cls.out / "summary.json").read_text())
        cls.by = {c["name"]: c for c in cls.summary["cases"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_statuses(self):
        self.assertEqual(self.r.returncode, 1, "some cases fail: exit status 1")
        self.assertEqual({n: c["status"] for n, c in self.by.items()}, EXPECTED)
        self.assertEqual(self.summary["counts"]["pass"], 3)

    def test_hang_stopped_at_its_timeout_only(self):
        hang = self.by["hang"]
        self.assertGreaterEqual(hang["host_s"], 4.0)
        self.assertLess(hang["host_s"], 12.0, "stopped at the 4 s timeout (+ the stop's grace)")
        self.assertIn("4 s timeout", hang["reason"])
        # Its daemon was stopped too: no zesim-gpu of this run is left.
        left = subprocess.run(["pgrep", "-f", str(self.out)], stdout=subprocess.PIPE, text=True).stdout.split()
        self.assertEqual(left, [], "processes of the run left behind")

    def test_crash_with_logs(self):
        c = self.by["crash"]
        self.assertIn("SIGSEGV", c["reason"])
        self.assertEqual(c["exit"], -11, "killed by signal 11")
        d = self.out / c["dir"]
        self.assertIn("now a NULL store", (d / "stdout.txt").read_text())
        self.assertIn("listening on", (d / "daemon.log").read_text())

    def test_daemon_death_with_logs(self):
        c = self.by["kill_daemon"]
        self.assertIn("SIGKILL", c["reason"])
        d = self.out / c["dir"]
        self.assertIn("killing the daemon", (d / "stdout.txt").read_text())
        self.assertTrue((d / "daemon.log").read_text().strip())

    def test_failures_first_with_repro(self):
        statuses = [c["status"] for c in self.summary["cases"]]
        self.assertEqual(statuses[-3:], ["pass"] * 3)
        for c in self.summary["cases"]:
            self.assertIn("--filter", c["repro"])
            self.assertIn("regress", c["repro"])

    def test_digest_and_cycles_from_the_ledger(self):
        for name in ("ok", "vadd", "reduce", "crash"):
            c = self.by[name]
            data = (self.out / c["dir"] / "ledger.jsonl").read_bytes()
            self.assertEqual(c["ledger_digest"], "sha256:" + hashlib.sha256(data).hexdigest(), name)
            windows = [json.loads(x) for x in data.decode().splitlines() if x.strip()]
            self.assertEqual(c["cycles"], windows[-1]["end"], name)
            self.assertGreater(sum(w["threads_dispatched"] for w in windows), 0, name)
        # The same program on the same preset: the same ledger (docs/daemon.md §6).
        self.assertEqual(self.by["ok"]["ledger_digest"], self.by["wrong_output"]["ledger_digest"])
        self.assertIn("0000000", self.by["wrong_digest"]["reason"])

    def test_junit(self):
        ts = ET.parse(self.out / "junit.xml").getroot()
        self.assertEqual(ts.get("tests"), str(len(EXPECTED)))
        failed = {tc.get("name"): (tc.find("failure") if tc.find("failure") is not None else tc.find("error"))
                  for tc in ts.iter("testcase")}
        for name, status in EXPECTED.items():
            self.assertEqual(failed[name] is None, status == "pass", name)
            if status != "pass":
                self.assertEqual(failed[name].get("type"), status)

    def test_html(self):
        page = (self.out / "report.html").read_text()
        # Failures first: every failing case appears before the first passing one.
        first_pass = min(page.index(f"<td>{n}<") for n, s in EXPECTED.items() if s == "pass")
        for n, s in EXPECTED.items():
            if s != "pass":
                self.assertLess(page.index(f"<td>{n}<"), first_pass, n)
        self.assertNotIn("<script", page)

    def test_baseline(self):
        base = self.tmp / "base"
        base.mkdir()
        s = json.loads((self.out / "summary.json").read_text())
        for c in s["cases"]:
            if c["name"] == "vadd":
                c["status"] = "fail"          # fixed now
            if c["name"] == "crash":
                c["status"] = "pass"          # a new failure now
            if c["name"] == "ok":
                c["ledger_digest"] = "sha256:" + "1" * 64   # changed now
                c["host_s"] = c["host_s"] / 10              # 10x slower now
        (base / "summary.json").write_text(json.dumps(s))
        out = self.tmp / "again"
        r = regress("faults", "--filter", "^(ok|vadd|crash)$", "--baseline", str(base), "--noise-floor", "0", out=out)
        cmp = json.loads((out / "summary.json").read_text())["comparison"]
        self.assertEqual(cmp["new_failures"], ["crash"])
        self.assertEqual(cmp["fixed"], ["vadd"])
        self.assertEqual(cmp["digest_changed"], ["ok"])
        self.assertEqual([x["name"] for x in cmp["slower"]], ["ok"])
        self.assertEqual(sorted(cmp["missing_cases"]), sorted(set(EXPECTED) - {"ok", "vadd", "crash"}))
        self.assertIn("1 new failures, 1 fixed, 1 ledger digests changed", r.stderr)
        self.assertIn("new failures", (out / "report.html").read_text())


class InterruptTest(unittest.TestCase):
    def test_sigint_stops_the_running_cases(self):
        with tempfile.TemporaryDirectory(prefix="zesim-regress-int.") as tmp:
            out = pathlib.Path(tmp) / "out"
            env = {"ZESIM_BUILD": A.build, "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
            p = subprocess.Popen([A.zesim, "regress", "faults", "--filter", "^(hang|vadd)$", "--jobs", "2",
                                  "--out", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            t0 = time.monotonic()
            while not (out / "cases" / "hang" / "program.cmd").exists() and time.monotonic() - t0 < 30:
                time.sleep(0.05)
            time.sleep(0.5)
            p.send_signal(2)  # SIGINT, as Ctrl-C
            _, err = p.communicate(timeout=30)
            self.assertEqual(p.returncode, 130, err)
            self.assertLess(time.monotonic() - t0, 4.0, "stopped before the hang's 4 s timeout")
            s = json.loads((out / "summary.json").read_text())
            self.assertEqual({c["name"]: (c["status"], c["reason"]) for c in s["cases"]}["hang"], ("error", "interrupted"))
            left = subprocess.run(["pgrep", "-f", str(out)], stdout=subprocess.PIPE, text=True).stdout.split()
            self.assertEqual(left, [], "processes of the run left behind")


    def test_runaway_ledger_stopped(self):
        with tempfile.TemporaryDirectory(prefix="zesim-regress-big.") as tmp:
            out = pathlib.Path(tmp) / "out"
            t0 = time.monotonic()
            r = regress("faults", "--filter", "^hang$", "--max-ledger-mb", "1", out=out)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertLess(time.monotonic() - t0, 4.0, "stopped before the hang's 4 s timeout")
            c = json.loads((out / "summary.json").read_text())["cases"][0]
            self.assertEqual(c["status"], "timeout")
            self.assertIn("ledger passed 1 MB", c["reason"])
            size = (out / c["dir"] / "ledger.jsonl").stat().st_size
            self.assertGreater(size, 1 << 20)
            self.assertLess(size, 32 << 20)


class BadInputTest(unittest.TestCase):
    def check(self, text, want, suffix=".toml"):
        with tempfile.NamedTemporaryFile("w", suffix=suffix) as f:
            f.write(text)
            f.flush()
            r = regress(f.name, "--list")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(want, r.stderr)
        self.assertNotIn("Traceback", r.stderr)

    def test_errors(self):
        self.check("[[case]]\nname='a'\n", "program must be")
        self.check("[[case]]\nname='a b'\nprogram=['x']\n", "name must be")
        self.check("[[case]]\nname='a'\nprogram=['x']\nbogus=1\n", "unknown key(s) bogus")
        self.check("[[case]]\nname='a'\nprogram=['x']\nseeds=[3,1]\n", "seeds must be")
        self.check("[[case]]\nname='a'\nprogram=['x']\nseeds='1-3,2'\n", "seeds must be")
        self.check("[[case]]\nname='a'\nprogram=['x']\n[[case]]\nname='a'\nprogram=['y']\n", "appears twice")
        self.check("[[case]\n", "Expected ']]'")
        self.check('{"case": []}', "no [[case]]", suffix=".json")
        self.check("[[case]]\nname='a'\nprogram=['{nope}']\nexpect={stdout='('}\n", "not a regular expression")
        r = regress("no-such-suite")
        self.assertEqual(r.returncode, 2)
        self.assertIn("shipped suites", r.stderr)
        r = regress("faults", "--filter", "^nothing$")
        self.assertIn("no case matches", r.stderr)

    def test_seeds_and_matrix(self):
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            json.dump({"case": [{"name": "g", "program": ["p", "{seed}"], "seeds": "3-4,6",
                                 "matrix": {"preset": ["tiny", "xe-lp"]}}]}, f)
            f.flush()
            r = regress(f.name, "--list")
        self.assertEqual(r.stdout.split(), ["g@tiny/s3", "g@tiny/s4", "g@tiny/s6",
                                            "g@xe-lp/s3", "g@xe-lp/s4", "g@xe-lp/s6"])


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--build", required=True)
    A, rest = ap.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)
