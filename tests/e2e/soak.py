#!/usr/bin/python3
"""Soak: several programs of checked launches at once, with faulting kernels and killed
clients injected, on one daemon (issue 11; docs/kmd.md).

    soak.py --gpu ZESIM_GPU --zesim ZESIM --launches E2E_LAUNCHES --misc MISC_ELF --hang HANG_ELF
            [--programs 4] [--count 1000] [--fault-every 50] [--kills 4] [--seed 1]

Runs --programs copies of test_launches (each --count launches checked one by one,
every --fault-every-th one a store to an unmapped address that must give DEVICE_LOST),
and meanwhile, one after another, --kills clients that launch a kernel that never ends
and are killed with SIGKILL after a random delay (seeded; the run lasts until all were
killed).  Passes when every launching program exits 0,
the daemon still serves, and its KMD statistics end with zero files, objects and jobs,
all physical memory back, and no saved context state on the device.  A progress line
goes to stderr.
"""

import argparse
import json
import os
import random
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
    zedaemon.fail('soak.py', msg, daemon, tail=40)



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--gpu', '--zesim', '--launches', '--misc', '--hang'):
        ap.add_argument(opt, required=True)
    ap.add_argument('--programs', type=int, default=4)
    ap.add_argument('--count', type=int, default=1000)
    ap.add_argument('--fault-every', type=int, default=50)
    ap.add_argument('--kills', type=int, default=4)
    ap.add_argument('--seed', type=int, default=1)
    opts = ap.parse_args()
    rng = random.Random(opts.seed)
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp, 'config.json')
        config.write_text(json.dumps({'preset': 'tiny', 'job_timeout_ms': 120000}))
        with zedaemon.Daemon(opts.gpu, '--config', str(config)) as d:
            if not d.alive():
                fail('the daemon did not start', d)
            before = d.kmd_stats()
            env = dict(os.environ, ZESIM_SOCKET=d.path)
            start = time.monotonic()
            progs = [subprocess.Popen([opts.zesim, 'run', '--', opts.launches, opts.misc, str(opts.count),
                                       str(opts.fault_every)], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True) for _ in range(opts.programs)]
            kills = 0
            victim = None
            tty = sys.stderr.isatty()
            next_line = time.monotonic() + 10
            while any(p.poll() is None for p in progs) or kills < opts.kills:
                if victim is None and kills < opts.kills:
                    victim = subprocess.Popen([opts.zesim, 'run', '--', opts.launches, opts.hang, 'spin'], env=env,
                                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                              start_new_session=True)
                    victim_deadline = time.monotonic() + rng.uniform(0.05, 0.5)
                elif victim is not None and time.monotonic() >= victim_deadline:
                    os.killpg(victim.pid, signal.SIGKILL)
                    victim.wait()
                    victim = None
                    kills += 1
                st = d.kmd_stats()
                line = ('soak: %.0f s, %d programs running, %d clients killed, %d jobs completed, %d faulted, '
                        '%d time slices' % (time.monotonic() - start, sum(p.poll() is None for p in progs), kills,
                                            st['jobs_completed'], st['jobs_faulted'], st['timeslices']))
                if tty:
                    sys.stderr.write('\r' + line + '   ')
                elif time.monotonic() >= next_line:
                    print(line, flush=True)
                    next_line += 10
                time.sleep(0.05)
            if tty:
                sys.stderr.write('\n')
            if victim is not None:
                os.killpg(victim.pid, signal.SIGKILL)
                victim.wait()
                kills += 1
            outs = [p.communicate()[0] for p in progs]
            for p, out in zip(progs, outs):
                if p.returncode != 0:
                    fail('a launching program exited %d:\n%s' % (p.returncode, out), d)
            if not d.alive():
                fail('the daemon died', d)
            for _ in range(250):
                st = d.kmd_stats()
                if st['files'] == 0:
                    break
                time.sleep(0.02)
            objs = {k: st[k] for k in ('files', 'bos', 'vms', 'queues', 'jobs', 'bo_bytes', 'pt_bytes')}
            if any(objs.values()) or st['free_bytes'] != before['free_bytes']:
                fail('the KMD did not get back to zero objects: %r' % st, d)
            images = d.mmio_read(CTX_IMAGES)
            if images:
                fail('%d saved context states left on the device' % images, d)
            faults = opts.count // opts.fault_every if opts.fault_every else 0
            if st['jobs_faulted'] < opts.programs * faults:
                fail('%d jobs faulted, expected at least %d' % (st['jobs_faulted'], opts.programs * faults), d)
            print('soak.py: %d programs x %d launches (%d faulting each), %d clients killed mid-kernel, '
                  '%d time slices, in %.1f s; the KMD is back to zero objects'
                  % (opts.programs, opts.count, faults, kills, st['timeslices'], time.monotonic() - start))


if __name__ == '__main__':
    main()
