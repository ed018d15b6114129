#!/usr/bin/python3
"""The EU debug unit's waveform holds what its twin holds: test_debug drives the RTL
(checked against the twin) with an FST open and logs the twin's state after every clock;
fst2vcd reads the FST back, and after every clock's edge (time 2n+1) the attention,
halt-request and exception-request bitmaps, the interrupt pulse, DBG_STOPPED and
DBG_ATTN_COUNT equal the twin's.  Every signal of waves/debug.gtkw is in the waveform."""
import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from oa_waves import Vcd  # noqa: E402


def fail(msg):
    print('debug_waves.py: FAILED: %s' % msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--test-debug', required=True)
    ap.add_argument('--clocks', type=int, default=3000)
    ap.add_argument('--seed', type=int, default=5)
    a = ap.parse_args()
    fst2vcd = shutil.which('fst2vcd')
    if not fst2vcd:
        fail('fst2vcd (Debian package gtkwave) is not installed')
    with tempfile.TemporaryDirectory() as tmp:
        fst, log = Path(tmp, 'debug.fst'), Path(tmp, 'debug.txt')
        cmd = [a.test_debug, '--random-only', '--fst', str(fst), '--log', str(log), str(a.clocks), str(a.seed)]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            fail('%s exited %d:\n%s%s' % (' '.join(cmd), p.returncode, p.stdout, p.stderr))
        pr = subprocess.Popen([fst2vcd, str(fst)], stdout=subprocess.PIPE, text=True)
        vcd = Vcd(pr.stdout, lambda n: n.startswith('dbg.'))
        if pr.wait() != 0:
            fail('fst2vcd %s failed' % fst)
        gtkw = (ROOT / 'waves' / 'debug.gtkw').read_text()
        sigs = re.findall(r'^(dbg\.\S+?)(?:\[\d+:\d+\])?$', gtkw, re.M)
        if len(sigs) < 20:
            fail('waves/debug.gtkw lists only %d signals' % len(sigs))
        for s in sigs:
            if s not in vcd.ids:
                fail('signal %s of waves/debug.gtkw is not in the waveform' % s)
        lines = log.read_text().splitlines()
        if len(lines) != a.clocks or len(vcd.times) != 2 * a.clocks:
            fail('%d log lines, %d waveform times for %d clocks' % (len(lines), len(vcd.times), a.clocks))
        stops = irqs = 0
        for line in lines:
            n, irq, stopped, count, attn, halt, exc = line.split()
            t = 2 * int(n) + 1
            want = dict(irq=int(irq), stopped=int(stopped), attn_count=int(count), attn=int(attn, 16),
                        halt_req=int(halt, 16), exc_req=int(exc, 16))
            for sig, v in want.items():
                got = vcd.at('dbg.' + sig, t)
                if got != v:
                    fail('clock %s: dbg.%s is %s in the waveform, %s in the twin' % (n, sig, got, v))
            irqs += int(irq)
            stops = int(stopped)
        if stops < a.clocks // 10 or irqs == 0:
            fail('only %d stops, %d interrupts' % (stops, irqs))
        print('debug_waves.py: %s: %d bytes, %d clocks, %d stops, %d interrupt pulses: the bitmaps, the pulse and '
              'the counters match the twin after every clock; the %d signals of waves/debug.gtkw are there' %
              (fst.name, fst.stat().st_size, a.clocks, stops, irqs, len(sigs)))


if __name__ == '__main__':
    main()
