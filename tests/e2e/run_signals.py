#!/usr/bin/python3
"""`zesim run` killed by a signal leaves nothing behind (issue 11 item 7).

    run_signals.py --zesim ZESIM

For SIGTERM, SIGINT and SIGHUP: starts `zesim run -- sleep 30` with a private
$TMPDIR, waits for its daemon's socket, sends the signal to `zesim` and checks
that it ends within 10 s dying of that signal, that the daemon and the program
are gone and that its temporary folder was removed.  Needs $ZESIM_BUILD with
a built zesim-gpu.
"""

import argparse
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time


def children(pid):
    try:
        with open('/proc/%d/task/%d/children' % (pid, pid)) as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as f:
            return f.read().split(') ')[1][0] != 'Z'
    except OSError:
        return False


def one(opts, sig):
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k != 'ZESIM_SOCKET'}
        env['TMPDIR'] = tmp
        p = subprocess.Popen([opts.zesim, 'run', '--preset', 'tiny', '--', 'sleep', '30'], env=env,
                             stdin=subprocess.DEVNULL)
        end = time.monotonic() + 60
        kids = []
        while time.monotonic() < end:
            socks = glob.glob(os.path.join(tmp, 'zesim-run.*', 'gpu.sock'))
            kids = children(p.pid)
            if socks and len(kids) >= 2:  # the daemon and the program
                break
            time.sleep(0.05)
        else:
            p.kill()
            return ['%s: no daemon socket and program after 60 s' % sig.name]
        names = {k: open('/proc/%d/comm' % k).read().strip() for k in kids if alive(k)}
        t0 = time.monotonic()
        p.send_signal(sig)
        try:
            rc = p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            for k in kids:
                if alive(k):
                    os.kill(k, signal.SIGKILL)
            return ['%s: zesim run still running 10 s after the signal' % sig.name]
        took = time.monotonic() - t0
        errors = []
        if rc != -sig:
            errors.append('%s: zesim run exited with %d, expected death by the signal' % (sig.name, rc))
        left = [k for k in kids if alive(k)]
        for k in left:
            os.kill(k, signal.SIGKILL)
        if left:
            errors.append('%s: processes left: %s' % (sig.name, ', '.join('%d %s' % (k, names.get(k)) for k in left)))
        if os.listdir(tmp):
            errors.append('%s: temporary files left: %s' % (sig.name, os.listdir(tmp)))
        print('run_signals.py: %s: exit %d after %.2f s (daemon and program: %s)' % (sig.name, rc, took, names))
        return errors


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--zesim', required=True)
    opts = ap.parse_args()
    errors = []
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        errors += one(opts, sig)
    if errors:
        print('run_signals.py: FAILED:\n  ' + '\n  '.join(errors))
        return 1
    print('run_signals.py: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
