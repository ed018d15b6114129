#!/usr/bin/env python3
"""`zesim regress SUITE --slurm` on a real single-node Slurm cluster brought up in a temporary
directory (tests/regress/slurm_cluster.py: Debian's slurmctld, slurmd, munge; generated
config, nothing under /etc touched, torn down at the end): the suite runs locally and as a
job array, and both runs must give every case the same status and the same ledger digest
(cases marked deterministic = false only the same status); every case must pass. The
array's tasks must really have run under Slurm (SLURM_ARRAY_TASK_ID in their output).

    test_slurm.py --zesim ./zesim --build build [--suite smoke] [--array-max 4]

Exit 77 (CTest skip) if not root or the Slurm packages are missing."""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from slurm_cluster import ClusterError, SlurmCluster  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--suite", default="smoke")
    ap.add_argument("--array-max", default="4")
    ap.add_argument("--jobs", default="2")
    a = ap.parse_args()
    probe = SlurmCluster()
    if os.geteuid() != 0 or probe.missing():
        print(f"SKIP: needs root and {', '.join(probe.missing()) or 'nothing else'} "
              "(apt-get install slurmctld slurmd slurm-client munge; ./zesim setup does)")
        return 77
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="zesim-slurm-test."))
    tmp.chmod(0o755)
    env = {"ZESIM_BUILD": a.build, "PATH": "/usr/bin:/bin:/usr/sbin:/sbin"}
    try:
        t0 = time.monotonic()
        local = tmp / "local"
        r = subprocess.run([a.zesim, "regress", a.suite, "--jobs", a.jobs, "--out", str(local)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
        print(r.stderr, end="")
        t1 = time.monotonic()
        with SlurmCluster() as cluster:
            sl = tmp / "slurm"
            r2 = subprocess.run([a.zesim, "regress", a.suite, "--slurm", "--wait", "--array-max", a.array_max,
                                 "--partition", "regress", "--out", str(sl)], env=dict(env, **{"SLURM_CONF": cluster.env["SLURM_CONF"]}),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
            print(r2.stderr, end="")
            if not (sl / "summary.json").exists():
                print("FAIL: the Slurm run wrote no summary\n" + cluster.logs())
                return 1
        t2 = time.monotonic()
        # --collect again, after the fact: the same merged report.
        r3 = subprocess.run([a.zesim, "regress", "--collect", str(sl)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, timeout=120)
        ls = json.loads((local / "summary.json").read_text())
        ss = json.loads((sl / "summary.json").read_text())
        problems = []
        lc = {c["name"]: c for c in ls["cases"]}
        sc = {c["name"]: c for c in ss["cases"]}
        if set(lc) != set(sc):
            problems.append(f"different cases: local only {sorted(set(lc) - set(sc))}, slurm only {sorted(set(sc) - set(lc))}")
        for n in sorted(set(lc) & set(sc)):
            x, y = lc[n], sc[n]
            if x["status"] != "pass":
                problems.append(f"{n}: {x['status']} locally: {x['reason']}")
            if x["status"] != y["status"]:
                problems.append(f"{n}: {x['status']} locally, {y['status']} under Slurm ({y['reason']})")
            if x.get("deterministic", True) and x["ledger_digest"] != y["ledger_digest"]:
                problems.append(f"{n}: ledger digest {x['ledger_digest']} locally, {y['ledger_digest']} under Slurm")
            if not x["ledger_digest"]:
                problems.append(f"{n}: no ledger digest")
        tasks = sorted((sl / "slurm").glob("task-*.out"))
        want = min(len(sc), int(a.array_max))
        if len(tasks) != want:
            problems.append(f"{len(tasks)} array task outputs, expected {want}")
        for t in tasks:
            idx = t.stem.split("-")[1]
            if f"shard {idx} of {want}" not in t.read_text():
                problems.append(f"{t.name} is not the output of shard {idx}: {t.read_text()[-300:]}")
        if r3.returncode != r2.returncode or json.loads((sl / "summary.json").read_text())["counts"] != ss["counts"]:
            problems.append(f"--collect again: exit {r3.returncode} (submit: {r2.returncode}): {r3.stderr}")
        print(f"local run {t1 - t0:.1f} s, Slurm cluster up + array + down {t2 - t1:.1f} s; "
              f"{len(lc)} cases, {sum(1 for c in sc.values() if c.get('ledger_digest'))} ledger digests compared")
        if problems:
            print("FAIL:\n  " + "\n  ".join(problems))
            return 1
        print("PASS: the Slurm job array gave the local run's statuses and ledger digests")
        return 0
    except ClusterError as e:
        print(f"FAIL: {e}")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
