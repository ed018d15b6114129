#!/usr/bin/python3
"""A runaway kernel does not stop other programs (issue 11, item 4; docs/kmd.md §6).

    runaway.py --gpu ZESIM_GPU --zesim ZESIM --launches E2E_LAUNCHES --misc MISC_ELF --hang HANG_ELF
               [--count N] [--timeslice CYCLES]

One program launches a kernel that never ends (hang.elf, an odd bound) and waits on it;
while it spins, another program completes N checked launches (default 100).  The
daemon's job timeout is 10 minutes, so without time slicing the second program would
wait that long.  Then the spinning program is killed: the daemon frees everything
(KMD statistics back to zero objects, no saved context state left on the device).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zedaemon  # noqa: E402

CTX_IMAGES = 0x1054


def fail(msg, daemon=None):
    zedaemon.fail('runaway.py', msg, daemon)




def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--gpu', '--zesim', '--launches', '--misc', '--hang'):
        ap.add_argument(opt, required=True)
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--timeslice', type=int, default=None, help='timeslice_cycles (default: the daemon\'s)')
    ap.add_argument('--deadline', type=float, default=120.0, help='seconds the launches may take')
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = {'preset': 'tiny', 'job_timeout_ms': 600000}
        if opts.timeslice is not None:
            cfg['timeslice_cycles'] = opts.timeslice
        config = Path(tmp, 'config.json')
        config.write_text(json.dumps(cfg))
        with zedaemon.Daemon(opts.gpu, '--config', str(config)) as d:
            if not d.alive():
                fail('the daemon did not start', d)
            env = dict(os.environ, ZESIM_SOCKET=d.path)
            hung = subprocess.Popen([opts.zesim, 'run', '--', opts.launches, opts.hang, 'spin'], env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    start_new_session=True)
            first = hung.stdout.readline()
            if not first.startswith('spinning'):
                hung.kill()
                fail('the spinning program printed %r' % (first + hung.communicate()[0]), d)
            time.sleep(0.5)  # it holds the engine
            start = time.monotonic()
            try:
                other = subprocess.run([opts.zesim, 'run', '--', opts.launches, opts.misc, str(opts.count)],
                                       env=env, capture_output=True, text=True, timeout=opts.deadline)
            except subprocess.TimeoutExpired:
                os.killpg(hung.pid, signal.SIGKILL)
                fail('%d launches did not complete within %.0f s while a runaway kernel ran'
                     % (opts.count, opts.deadline), d)
            elapsed = time.monotonic() - start
            print(other.stdout, end='')
            if other.returncode != 0:
                os.killpg(hung.pid, signal.SIGKILL)
                fail('the launching program exited %d:\n%s' % (other.returncode, other.stderr), d)
            if hung.poll() is not None:
                fail('the spinning program ended early: %s' % hung.communicate()[0], d)
            st = d.kmd_stats()
            if st['jobs_timed_out'] or st['timeslices'] < 1:
                fail('statistics while spinning: %r' % st, d)
            print('runaway.py: %d checked launches in %.2f s beside a runaway kernel (%d time slices)'
                  % (opts.count, elapsed, st['timeslices']))
            os.killpg(hung.pid, signal.SIGKILL)
            hung.wait()
            for _ in range(200):
                st = d.kmd_stats()
                if st['files'] == 0:
                    break
                time.sleep(0.02)
            if (st['files'], st['bos'], st['vms'], st['queues'], st['jobs']) != (0, 0, 0, 0, 0):
                fail('objects left after the spinning program was killed: %r' % st, d)
            images = d.mmio_read(CTX_IMAGES)
            if images:
                fail('%d saved context states left on the device' % images, d)
            if not d.alive():
                fail('the daemon died', d)
    print('runaway.py: OK')


if __name__ == '__main__':
    main()
