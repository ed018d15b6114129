#!/usr/bin/python3
"""Faulting calls between native modules (test_native_call.c, faults mode).

    native_call.py [--quiet] -- zesim run ... e2e_native_call call_a.elf call_b.elf faults

The program checks each launch's DEVICE_LOST and prints "fault-case NAME key=0x.." per
case; this script checks that the daemon's fault line of each case (shown by `zesim run`
on its stderr) names what docs/isa.md §3.5 and the KMD's message (kmd_shim/kernel/exec.c)
say: a callee's store fault with the callee's base ("in code at <callee> + 0x50", the
store's offset in b_fault), a misaligned pointer at the calla in the calling kernel
(+ 0x20) with the whole target as the address, a destroyed module's code as a read fault
at the fetch (+ 0x0).  --quiet (under the validation layer): nothing else may be printed.
"""

import argparse
import re
import subprocess
import sys


def fail(msg):
    print('native_call.py: FAIL: ' + msg)
    sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quiet', action='store_true', help='fail on any other output (validation layer run)')
    ap.add_argument('command', nargs=argparse.REMAINDER, help='-- the program under zesim run')
    opts = ap.parse_args()
    cmd = opts.command[1:] if opts.command[:1] == ['--'] else opts.command
    if not cmd:
        ap.error('no command')
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    out = p.stdout + p.stderr
    if p.returncode != 0:
        fail('the program exited %d:\n%s' % (p.returncode, out))
    cases = re.findall(r'^fault-case (\S+) (\w+)=(0x[0-9a-f]+) kernel=(0x[0-9a-f]+)$', p.stdout, re.M)
    if [c[0] for c in cases] != ['callee', 'misaligned', 'destroyed']:
        fail('fault cases %r\n%s' % (cases, out))
    lines = [l for l in p.stderr.splitlines() if 'GPU fault:' in l]
    if len(lines) != len(cases):
        fail('%d GPU fault lines, expected %d:\n%s' % (len(lines), len(cases), out))
    for (name, _, addr, kernel), line in zip(cases, lines):
        if name == 'callee':
            # b_fault stores gid * 4 bytes past 0x1000 (32 work items).
            want = (r'GPU fault: page fault \(not present, write\) at address 0x10[0-7][0-9a-f], '
                    r'kernel at %s, in code at %s \+ 0x50, ' % (kernel, addr))
        elif name == 'misaligned':
            want = r'GPU fault: misaligned access at address %s, kernel at %s \+ 0x20, ' % (addr, kernel)
        else:
            want = (r'GPU fault: page fault \(not present, read\) at address %s, kernel at %s, '
                    r'in code at %s \+ 0x0, ' % (addr, kernel, addr))
        if not re.search(want, line) or 'job failed' not in line:
            fail('%s: %r does not match %r' % (name, line, want))
    if opts.quiet:
        allowed = re.compile(r'^(fault-case .*|zesim: the simulator reported:|zesim-gpu: GPU fault: .*|)$')
        other = [l for l in out.splitlines() if not allowed.match(l)]
        if other:
            fail('unexpected output:\n' + '\n'.join(other))
    print('native_call.py: OK: %d faulting calls reported with their code addresses' % len(cases))


if __name__ == '__main__':
    main()
