#!/usr/bin/python3
"""The OA block's waveform holds what its reports hold: test_oa drives the RTL (checked
against the twin) with an FST open and lists every buffer report with its waveform time;
fst2vcd reads the FST back, and at each report's time buf_wr is high, buf_addr and
buf_data are the report, and the counter flops (A0-A29, the marker, B0-B7, C0-C7, the
ticks, the timestamp and context registers), the reason and the tail hold the values
the report carries.  Every signal of waves/oa.gtkw is in the waveform, its counter names
are the lines of include/zs/oa_events.def.  A second run dumps only a cycle window:
exactly the clocks of that window are in it, with their reports."""
import argparse
import bisect
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fail(msg):
    print('oa_waves.py: FAILED: %s' % msg)
    sys.exit(1)


class Vcd:
    """The value changes of the signals whose full names `want` accepts."""

    def __init__(self, stream, want):
        self.ids = {}      # full name -> id
        self.changes = {}  # id -> ([times], [values])
        self.times = []
        scopes = []
        keep = set()
        header = True
        t = 0
        for line in stream:
            if header:
                f = line.split()
                if not f:
                    continue
                if f[0] == '$scope':
                    scopes.append(f[2])
                elif f[0] == '$upscope':
                    scopes.pop()
                elif f[0] == '$var':
                    name = '.'.join(scopes + [f[4]])
                    self.ids.setdefault(name, f[3])
                    if want(name):
                        keep.add(f[3])
                        self.changes.setdefault(f[3], ([], []))
                elif f[0] == '$enddefinitions':
                    header = False
                continue
            c = line[0]
            if c == '#':
                t = int(line[1:])
                self.times.append(t)
            elif c == 'b':
                val, ident = line[1:].split()
                if ident in keep:
                    self.changes[ident][0].append(t)
                    self.changes[ident][1].append(None if 'x' in val or 'z' in val else int(val, 2))
            elif c in '01xz':
                ident = line[1:].strip()
                if ident in keep:
                    self.changes[ident][0].append(t)
                    self.changes[ident][1].append(None if c in 'xz' else int(c))

    def at(self, name, t):
        if name not in self.ids:
            fail('signal %s is not in the waveform' % name)
        times, values = self.changes[self.ids[name]]
        i = bisect.bisect_right(times, t) - 1
        if i < 0:
            fail('%s has no value at time %d' % (name, t))
        return values[i]


def run_test_oa(test_oa, tmp, tag, clocks, seed, window=None):
    fst, rep = Path(tmp, tag + '.fst'), Path(tmp, tag + '.txt')
    cmd = [test_oa, '--waves', str(fst), '--reports', str(rep)] + (['--window', window] if window else []) + \
        [str(clocks), str(seed)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail('%s exited %d:\n%s%s' % (' '.join(cmd), p.returncode, p.stdout, p.stderr))
    m = re.search(r'waves: (\d+) clocks dumped, times (\d+) to (\d+)', p.stdout)
    if not m:
        fail('test_oa did not say what it dumped:\n' + p.stdout)
    reports = []
    for line in rep.read_text().splitlines():
        f = line.split()
        reports.append(dict(cycle=int(f[0]), time=int(f[1]), addr=int(f[2]), tail=int(f[3]),
                            dw=[int(x, 16) for x in f[4:]]))
    return fst, reports, tuple(int(x) for x in m.groups())


def read_vcd(fst2vcd, fst, want):
    p = subprocess.Popen([fst2vcd, str(fst)], stdout=subprocess.PIPE, text=True)
    vcd = Vcd(p.stdout, want)
    if p.wait() != 0:
        fail('fst2vcd %s failed' % fst)
    return vcd


def check_reports(vcd, reports, top):
    z = top + '.zs_oa.'
    for n, r in enumerate(reports):
        t, dw = r['time'], r['dw']
        data = vcd.at(top + '.buf_data', t)
        got = {
            'buf_wr': (vcd.at(top + '.buf_wr', t), 1),
            'buf_addr': (vcd.at(top + '.buf_addr', t), r['addr']),
            'buf_data': (data, sum(d << (32 * k) for k, d in enumerate(dw))),
            'timestamp register (DW1)': (vcd.at(z + 'ts_q', t) & 0xffffffff, dw[1]),
            'context register (DW2)': (vcd.at(z + 'ctx_q', t), dw[2]),
            'ticks (DW3)': (vcd.at(top + '.ticks', t), dw[3]),
            'A35 marker': (vcd.at(z + 'marker_q', t), dw[4 + 35]),
            'reason (DW0 bits 24:19)': (vcd.at(top + '.reason', t), dw[0] >> 19 & 0x3f),
            'trig': (vcd.at(top + '.trig', t), dw[0] >> 19 & 0x3f),
            'tail': (vcd.at(top + '.tail', t), r['tail']),
        }
        for k in range(30):
            got['A%d' % k] = (vcd.at(z + 'g_a[%d].cnt' % k, t), dw[4 + k] | (dw[40 + k // 4] >> (8 * (k % 4)) & 0xff) << 32)
        for k in range(30, 35):
            got['A%d (reserved)' % k] = (0, dw[4 + k])
        for i in range(16):
            got['%s%d' % ('BC'[i // 8], i % 8)] = (vcd.at(z + 'g_bc[%d].cnt' % i, t), dw[48 + i])
        bad = ['%s: waveform %s, report %s' % (name, hex(a) if a is not None else 'x', hex(b))
               for name, (a, b) in got.items() if a != b and name != 'buf_data']
        if got['buf_data'][0] != got['buf_data'][1]:
            bad.append('buf_data differs from the report')
        if bad:
            fail('report %d (cycle %d, time %d):\n  %s' % (n, r['cycle'], t, '\n  '.join(bad)))


def check_gtkw(vcd):
    gtkw = (ROOT / 'waves' / 'oa.gtkw').read_text()
    sigs = re.findall(r'^(?:\+\{[^}]*\} )?(oa\.\S+?)(?:\[\d+:\d+\])?$', gtkw, re.M)
    if len(sigs) < 60:
        fail('waves/oa.gtkw lists only %d signals' % len(sigs))
    for s in sigs:
        if s not in vcd.ids:
            fail('signal %s of waves/oa.gtkw is not in the waveform' % s)
    names = dict((int(k), n) for n, k in re.findall(r'^ZE_OA_EVENT\((\w+),\s*(\d+)', (ROOT / 'include/zs/oa_events.def').read_text(), re.M))
    for k, n in re.findall(r'^\+\{A(\d+) (\w+)\} oa\.zs_oa\.g_a\[', gtkw, re.M):
        if names.get(int(k)) != n:
            fail('waves/oa.gtkw calls A%s %s, oa_events.def %s' % (k, n, names.get(int(k))))
    return len(sigs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--test-oa', required=True)
    ap.add_argument('--clocks', type=int, default=1500)
    ap.add_argument('--seed', type=int, default=3)
    a = ap.parse_args()
    fst2vcd = shutil.which('fst2vcd')
    if not fst2vcd:
        fail('fst2vcd (Debian package gtkwave) is not installed')
    top = 'oa'
    want = lambda name: name.startswith(top + '.')  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        # The whole run.
        fst, reports, (dumped, t0, t1) = run_test_oa(a.test_oa, tmp, 'all', a.clocks, a.seed)
        if len(reports) < 100:
            fail('only %d reports' % len(reports))
        vcd = read_vcd(fst2vcd, fst, want)
        nsig = check_gtkw(vcd)
        check_reports(vcd, reports, top)
        if len(vcd.times) != 2 * dumped or vcd.times[0] != t0 or vcd.times[-1] != t1:
            fail('the waveform has %d times (%d to %d), test_oa dumped %d clocks (%d to %d)' %
                 (len(vcd.times), vcd.times[0], vcd.times[-1], dumped, t0, t1))
        print('oa_waves.py: %s: %d bytes, %d clocks, %d reports: the counters, buf_data, reason and tail match every '
              'report; the %d signals of waves/oa.gtkw are there' % (fst.name, fst.stat().st_size, dumped, len(reports), nsig))
        # A window [A, B) of cycles: the 100th to the 200th report.
        first, last = reports[100]['cycle'], reports[200]['cycle']
        fst, wreports, (wdumped, w0, w1) = run_test_oa(a.test_oa, tmp, 'window', a.clocks, a.seed,
                                                       '%d:%d' % (first, last))
        inside = [r for r in wreports if first <= r['cycle'] < last]
        if [r['dw'] for r in wreports] != [r['dw'] for r in reports] or len(inside) < 90:
            fail('the windowed run differs from the whole one, or has %d reports in its window' % len(inside))
        vcd = read_vcd(fst2vcd, fst, want)
        check_reports(vcd, inside, top)
        if not vcd.times or vcd.times[0] < 2 * first or len(vcd.times) != 2 * wdumped or wdumped >= dumped:
            fail('window %d:%d: the waveform has %d times from %s, %d clocks dumped of %d' %
                 (first, last, len(vcd.times), vcd.times[0] if vcd.times else '-', wdumped, dumped))
        print('oa_waves.py: window %d:%d: %d of %d clocks dumped (times %d to %d), its %d reports match' %
              (first, last, wdumped, dumped, w0, w1, len(inside)))


if __name__ == '__main__':
    main()
