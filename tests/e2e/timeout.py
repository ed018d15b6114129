#!/usr/bin/python3
"""The KMD's job timeout end to end (docs/kmd.md §6).

    timeout.py --gpu ZESIM_GPU --zesim ZESIM --timeout-test E2E_TIMEOUT --hang HANG_ELF
               --vadd E2E_VADD --vadd-elf VADD_ELF

Starts a daemon (test channel on) with job_timeout_ms = 3000, runs test_timeout.c (a
kernel that never ends: DEVICE_LOST after the timeout, banned queue, new queues work)
and, while its job holds the engine, another client (e2e_vadd), which must complete
before the hung job is stopped (time slicing, docs/kmd.md §6).  Then checks the daemon: still serving, one timed-out job
in its KMD statistics, everything freed, and one message naming the hung client's pid,
its queue and the timeout on its stderr.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zedaemon  # noqa: E402

TIMEOUT_MS = 3000


def fail(msg, daemon=None):
    zedaemon.fail('timeout.py', msg, daemon)



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--gpu', '--zesim', '--timeout-test', '--hang', '--vadd', '--vadd-elf'):
        ap.add_argument(opt, required=True)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp, 'config.json')
        config.write_text(json.dumps({'preset': 'tiny', 'job_timeout_ms': TIMEOUT_MS}))
        with zedaemon.Daemon(opts.gpu, '--config', str(config)) as d:
            if not d.alive():
                fail('the daemon did not start', d)
            env = dict(os.environ, ZESIM_SOCKET=d.path)
            start = time.monotonic()
            hung = subprocess.Popen([opts.zesim, 'run', '--', opts.timeout_test, opts.hang, str(TIMEOUT_MS)],
                                    env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            first = hung.stdout.readline()
            m = re.match(r'timeout: pid (\d+)', first)
            if not m:
                hung.kill()
                fail('test_timeout printed %r first' % (first + hung.communicate()[0]), d)
            pid = int(m.group(1))
            # Another client, whose job runs beside the one that never ends
            # (time slicing, docs/kmd.md §6): it completes before the timeout.
            other = subprocess.Popen([opts.zesim, 'run', '--', opts.vadd, opts.vadd_elf], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            other_out = other.communicate(timeout=120)[0]
            st = d.kmd_stats()
            queued = not st['jobs_timed_out'] and st['timeslices'] >= 1
            out = first + hung.communicate(timeout=120)[0]
            elapsed = time.monotonic() - start
            print(out, end='')
            print(other_out, end='')
            if hung.returncode != 0:
                fail('test_timeout exited with %d' % hung.returncode, d)
            if other.returncode != 0:
                fail('the other client exited with %d' % other.returncode, d)
            if not queued:
                fail('the other client did not complete beside the hung job before its timeout', d)
            if not d.alive():
                fail('the daemon died', d)
            st = d.kmd_stats()
            body = json.dumps(st)
            print('timeout.py: KMD statistics %s' % body)
            if st['jobs_timed_out'] != 1:
                fail('jobs_timed_out is %d, expected 1' % st['jobs_timed_out'], d)
            if st['jobs_cancelled'] < 1 or st['engine_resets'] < 1:
                fail('the timed-out job is not counted as cancelled with an engine reset', d)
            if st['jobs_completed'] < 3:
                fail('%d jobs completed: the new queues and the other client need 3' % st['jobs_completed'], d)
            if (st['files'], st['bos'], st['vms'], st['queues'], st['jobs']) != (0, 0, 0, 0, 0):
                fail('objects left after every client closed: %s' % body, d)
            lines = [l for l in d.stderr().splitlines() if 'job timeout:' in l]
            want = re.compile(r'zesim-gpu: job timeout: pid %d, exec queue \d+, context \d+: .*job_timeout_ms = %d ms'
                              % (pid, TIMEOUT_MS))
            if len(lines) != 1 or not want.search(lines[0]):
                fail('expected one job-timeout message for pid %d, got %r' % (pid, lines), d)
            print('timeout.py: %s' % lines[0])
            if 'job timeout %d ms; listening on' % TIMEOUT_MS not in d.stderr():
                fail('the start-up line does not give the job timeout', d)
            print('timeout.py: ok in %.1f s' % elapsed)
    return 0


if __name__ == '__main__':
    sys.exit(main())
