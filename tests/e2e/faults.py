#!/usr/bin/python3
"""EU faults end to end (issue 11, item 2; docs/kmd.md §8).

    faults.py --gpu ZESIM_GPU --zesim ZESIM --faults-test E2E_FAULTS --misc MISC_ELF

Runs test_faults.c on a daemon of its own with fault_mode "fail" (the default): each of
five bad stores gives DEVICE_LOST, and the daemon's log names the fault, its address,
the kernel, the engine and the program's pid; `zesim run` shows those lines on its
stderr.  Then with fault_mode "continue": the launches succeed and the faults are still
logged.  The KMD's statistics count the faults and end with every object freed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zedaemon  # noqa: E402


def fail(msg, daemon=None):
    zedaemon.fail('faults.py', msg, daemon)



def run_mode(opts, mode, tmp):
    config = Path(tmp, mode + '.json')
    config.write_text(json.dumps({'preset': 'tiny', 'job_timeout_ms': 120000, 'fault_mode': mode}))
    with zedaemon.Daemon(opts.gpu, '--config', str(config)) as d:
        if not d.alive():
            fail('the daemon did not start', d)
        env = dict(os.environ, ZESIM_SOCKET=d.path)
        p = subprocess.run([opts.zesim, 'run', '--', opts.faults_test, opts.misc, mode], env=env,
                           capture_output=True, text=True, timeout=240)
        if p.returncode != 0:
            fail('%s: test_faults exited %d:\n%s%s' % (mode, p.returncode, p.stdout, p.stderr), d)
        cases = re.findall(r'^fault-case (\S+) (0x[0-9a-f]+)$', p.stdout, re.M)
        if len(cases) != 5:
            fail('%s: expected 5 fault cases, got %r' % (mode, cases), d)
        log = d.stderr()
        lines = [l for l in log.splitlines() if 'GPU fault:' in l]
        if len(lines) != 5:
            fail('%s: %d GPU fault lines in the daemon log, expected 5' % (mode, len(lines)), d)
        what = {'low': 'page fault (not present, write)', 'high': 'page fault (not present, write)',
                'non-canonical': 'page fault (non-canonical address, write)',
                'freed': 'page fault (not present, write)', 'misaligned': 'misaligned access'}
        for (name, addr), line in zip(cases, lines):
            want = 'GPU fault: %s at address %s, kernel at 0x' % (what[name], addr)
            if want not in line or 'engine compute0' not in line:
                fail('%s: case %s: %r does not contain %r' % (mode, name, line, want), d)
            verdict = 'job failed' if mode == 'fail' else 'the job goes on'
            if verdict not in line:
                fail('%s: case %s: %r does not say %r' % (mode, name, line, verdict), d)
        st = d.kmd_stats()
        want_failed = 5 if mode == 'fail' else 0
        if st['eu_faults'] != 5 or st['jobs_faulted'] != want_failed:
            fail('%s: statistics %r' % (mode, st), d)
        if (st['files'], st['bos'], st['vms'], st['queues'], st['jobs']) != (0, 0, 0, 0, 0):
            fail('%s: objects left after the program: %r' % (mode, st), d)
        print('faults.py: %s: %d faults logged with their addresses, %d jobs failed' % (mode, 5, want_failed))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--gpu', '--zesim', '--faults-test', '--misc'):
        ap.add_argument(opt, required=True)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run_mode(opts, 'fail', tmp)
        run_mode(opts, 'continue', tmp)
    print('faults.py: OK')


if __name__ == '__main__':
    main()
