#!/usr/bin/python3
"""Why there is no GPU, said once (issue 11 item 7, docs/preload.md §4).

    no_daemon.py --build BUILD --init E2E_INIT

Runs a Level Zero program (test_init.c: zeInit must then fail) with the preload
library and the driver, as `zesim run` would, but with $ZESIM_SOCKET unset, naming a
missing file, a socket nobody listens on, and a socket the program may not connect
to (run as nobody when we are root).  Each time stderr must hold exactly one line
"zesim: no simulated GPU: ..." naming the socket and the reason.
"""

import argparse
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path


def run(opts, sock, user=None):
    env = {k: v for k, v in os.environ.items() if k != 'ZESIM_SOCKET'}
    if sock is not None:
        env['ZESIM_SOCKET'] = sock
    env['LD_PRELOAD'] = str(Path(opts.build, 'lib', 'libzesim_preload.so'))
    env['ZE_ENABLE_ALT_DRIVERS'] = str(Path(opts.build, 'lib', 'libze_zesim.so.1'))
    cmd = [opts.init]
    if user is not None:
        cmd = ['setpriv', '--reuid=%d' % user, '--regid=%d' % user, '--clear-groups', '--'] + cmd
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', required=True)
    ap.add_argument('--init', required=True)
    opts = ap.parse_args()
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        missing = os.path.join(tmp, 'missing.sock')
        refused = os.path.join(tmp, 'refused.sock')
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(refused)  # a socket file nobody listens on
        denied = os.path.join(tmp, 'denied.sock')
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(denied)
        listener.listen(4)
        user = None
        if os.geteuid() == 0:
            os.chmod(denied, 0o600)  # root's, mode 0600: nobody may not connect
            user = 65534
        else:
            os.chmod(denied, 0)
        cases = [
            ('unset', None, None, 'ZESIM_SOCKET is not set'),
            ('missing', missing, None, 'daemon socket %s: No such file or directory' % missing),
            ('refused', refused, None, 'cannot connect to the daemon socket %s: Connection refused' % refused),
            ('denied', denied, user, 'cannot connect to the daemon socket %s: Permission denied' % denied),
        ]
        for name, sock, uid, want in cases:
            r = run(opts, sock, uid)
            lines = [l for l in r.stderr.splitlines() if l.startswith('zesim: no simulated GPU: ')]
            print('%s: exit %d, stderr %r' % (name, r.returncode, r.stderr))
            if r.returncode == 0:
                failed.append('%s: the program ran without a daemon' % name)
            if len(lines) != 1 or want not in lines[0]:
                failed.append('%s: expected one line with %r, got %r' % (name, want, lines))
        s.close()
        listener.close()
    if failed:
        print('no_daemon.py: FAILED:\n  ' + '\n  '.join(failed))
        return 1
    print('no_daemon.py: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
