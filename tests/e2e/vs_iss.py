#!/usr/bin/python3
"""Run an e2e test with launch dumps on, then check the dumps against the Python ISS.

    vs_iss.py --launches N -- COMMAND...

COMMAND (e.g. `zesim run --preset tiny -- e2e_vadd vadd.elf`) runs with E2E_DUMP set to
a fresh directory; iss_check.py then checks the N launches it must have dumped.  The
directory is removed when everything passes and kept (its path printed) otherwise, so
that `iss_check.py DIR` reproduces the check.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--launches', type=int, required=True)
    parser.add_argument('command', nargs='+')
    opts = parser.parse_args()
    dump = tempfile.mkdtemp(prefix='e2e-dump-')
    rc = subprocess.run(opts.command, env=dict(os.environ, E2E_DUMP=dump)).returncode
    if rc != 0:
        print('vs_iss: the test failed (exit %d); dumps kept in %s' % (rc, dump))
        return 1
    rc = subprocess.run([sys.executable, str(HERE / 'iss_check.py'), dump,
                         '--launches', str(opts.launches)]).returncode
    if rc != 0:
        print('vs_iss: dumps kept in %s; re-check with: %s %s %s'
              % (dump, sys.executable, HERE / 'iss_check.py', dump))
        return 1
    shutil.rmtree(dump)
    return 0


if __name__ == '__main__':
    sys.exit(main())
