#!/usr/bin/python3
"""`zesim run --waves DIR` writes the interrupt controller's FST, and it holds the run:
fst2vcd reads it, the signals of waves/irq.gtkw are in it, and the interrupt line rose
as many times as the KMD saw interrupts (at least once per launch)."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def fail(msg):
    print('waves.py: FAILED: %s' % msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--zesim', '--program', '--misc'):
        ap.add_argument(opt, required=True)
    a = ap.parse_args()
    fst2vcd = shutil.which('fst2vcd')
    if not fst2vcd:
        fail('fst2vcd (Debian package gtkwave) is not installed')
    with tempfile.TemporaryDirectory() as tmp:
        w = Path(tmp, 'w')
        env = dict(os.environ)
        env.pop('ZESIM_SOCKET', None)
        p = subprocess.run([a.zesim, 'run', '--preset', 'tiny', '--waves', str(w), '--', a.program, a.misc, '4'],
                           env=env, capture_output=True, text=True, timeout=100)
        if p.returncode != 0:
            fail('zesim run exited %d: %s%s' % (p.returncode, p.stdout, p.stderr))
        fst = w / 'irq.fst'
        if not fst.is_file():
            fail('no %s' % fst)
        vcd = subprocess.run([fst2vcd, str(fst)], capture_output=True, text=True).stdout
        ids = dict(re.findall(r'\$var \w+ \d+ (\S+) (\S+)', vcd)[::-1])
        names = {v: k for k, v in ids.items()}
        gtkw = (Path(__file__).resolve().parents[2] / 'waves' / 'irq.gtkw').read_text()
        for sig in re.findall(r'^irq\.(?:zs_irq\.)?(\w+)', gtkw, re.M):
            if sig not in names:
                fail('signal %s of waves/irq.gtkw is not in the waveform' % sig)
        line = names['irq']
        rises = len(re.findall(r'^1' + re.escape(line) + r'$', vcd, re.M))
        if rises < 4:
            fail('the interrupt line rose %d times for 4 launches' % rises)
        print('waves.py: %s: %d bytes, the interrupt line rose %d times' % (fst.name, fst.stat().st_size, rises))


if __name__ == '__main__':
    main()
