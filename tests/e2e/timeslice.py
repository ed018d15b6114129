#!/usr/bin/python3
"""Programs checked against their host references while the KMD switches between them
every few hundred GT cycles (issue 11, item 4; docs/kmd.md §6, docs/model.md §8).

    timeslice.py --gpu ZESIM_GPU --zesim ZESIM [--timeslice CYCLES] [--preset P]
                 --program "PROGRAM ARGS..." [--program ...]

All programs run at once on one daemon with a tiny time slice, beside a kernel that
never ends (--spinner, killed at the end), so their kernels are preempted in the middle
(threads, registers, SLM, barriers and queued walkers saved and restored) over and over;
each program checks its own results.  Passes when every
program exits 0, the KMD counted time slices, and the daemon ends with every object
freed and no saved context state left.
"""

import argparse
import json
import os
import shlex
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
    zedaemon.fail('timeslice.py', msg, daemon)



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--gpu', required=True)
    ap.add_argument('--zesim', required=True)
    ap.add_argument('--timeslice', type=int, default=500)
    ap.add_argument('--preset', default='tiny')
    ap.add_argument('--program', action='append', required=True)
    ap.add_argument('--spinner', help='a program whose kernel never ends (printing "spinning" first)')
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp, 'config.json')
        config.write_text(json.dumps({'preset': opts.preset, 'job_timeout_ms': 120000,
                                      'timeslice_cycles': opts.timeslice}))
        with zedaemon.Daemon(opts.gpu, '--config', str(config)) as d:
            if not d.alive():
                fail('the daemon did not start', d)
            env = dict(os.environ, ZESIM_SOCKET=d.path)
            spinner = None
            if opts.spinner:
                spinner = subprocess.Popen([opts.zesim, 'run', '--'] + shlex.split(opts.spinner), env=env,
                                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                           start_new_session=True)
                if not spinner.stdout.readline().startswith('spinning'):
                    spinner.kill()
                    fail('the spinner did not start', d)
            procs = [subprocess.Popen([opts.zesim, 'run', '--'] + shlex.split(p), env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for p in opts.program]
            failed = []
            for p, cmd in zip(procs, opts.program):
                out = p.communicate(timeout=600)[0]
                if p.returncode != 0:
                    failed.append('%s exited %d:\n%s' % (cmd, p.returncode, out))
            if spinner:
                os.killpg(spinner.pid, signal.SIGKILL)
                spinner.wait()
            if failed:
                fail('\n'.join(failed), d)
            for _ in range(200):
                st = d.kmd_stats()
                if st['files'] == 0:
                    break
                time.sleep(0.02)
            if st['timeslices'] < 1:
                fail('no time slice happened: %r' % st, d)
            if (st['files'], st['bos'], st['vms'], st['queues'], st['jobs']) != (0, 0, 0, 0, 0):
                fail('objects left: %r' % st, d)
            images = d.mmio_read(CTX_IMAGES)
            if images:
                fail('%d saved context states left on the device' % images, d)
            print('timeslice.py: %d programs correct across %d time slices of %d cycles'
                  % (len(procs), st['timeslices'], opts.timeslice))


if __name__ == '__main__':
    main()
