#!/usr/bin/python3
"""zesim-dbg driven through tmux, as a person would (issue 14 item 6).

    dbg_tmux.py --gpu zesim-gpu --preload libzesim_preload.so --driver libze_zesim.so.1
                --dbg zesim-dbg --target dbg_target --module dbg.elf --source dbg.zeasm
                --saxpy-spv saxpy_g.spv --saxpy-source saxpy.cl --work DIR

A target program (tests/e2e/dbg_target.c) loads the kernel of tests/e2e/dbg.zeasm
(assembled with -g) and waits; zesim-dbg attaches to its pid in another tmux window;
the test types commands (send-keys) and reads the screen (capture-pane):
  * break dbg.zeasm:LINE (LINE: the line after "// BREAK" in the source) is placed at
    dbgk+16*k, k = the instructions before it in the source;
  * the breakpoint bit is set in the GPU's copy of the instruction: x/4x there shows
    the module file's instruction with bit 8 of dword 0 set (readelf finds it in the file);
  * the target launches; the stop is reported at that line with reason breakpoint;
  * info registers grf 10 shows lid + 0x1000 in every channel and grf 0 the dispatch
    payload (docs/isa.md §6: group id 0, group size 8, 1 thread); x/8x at the output
    buffer (r7.0/1) shows the target's fill, 0xdeadbeef (the store has not run);
  * set $r10.3 = 0x77, continue: the target prints lid + 0x1000 except out[3] = 0x77
    (the Python expectation below) and exits 0; zesim-dbg reports the detach;
  * clear errors: an unknown command, a second debugger on the same pid, a pid that
    does not exist;
  * zesim-dbg -- PROGRAM: started by the debugger, break dbgk+OFFSET, the stop there,
    detach: the kernel's own result, the program's exit code reported;
  * interrupt on a long kernel (spin): every thread stopped once, reason interrupted,
    in spin's lines; info threads lists them; continue: the right result;
  * break saxpy.cl:LINE in an OpenCL C kernel (SPIR-V built with -g: the driver's line
    table): the stop at that line, continue, the host's result.
Exit 77 (CTest skip) when tmux is missing or the driver does not offer the debug
API (zetDeviceGetDebugProperties without ATTACH), with the reason.
"""

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

SKIP = 77


class Fail(Exception):
    pass


class Tmux:
    def __init__(self, work):
        self.sock = 'zesim-dbg-test-%d' % os.getpid()
        self.base = ['tmux', '-L', self.sock, '-f', '/dev/null']
        self.session = 'zdbg'

    def __call__(self, *args, check=True):
        r = subprocess.run(self.base + list(args), capture_output=True, text=True)
        if check and r.returncode != 0:
            raise Fail('tmux %s: %s' % (' '.join(args), r.stderr.strip()))
        return r.stdout

    def screen(self, window):
        # Without the pane's blank rows below the text: offsets into it stay valid as it grows.
        return self('capture-pane', '-p', '-J', '-S', '-3000', '-t', self.session + ':' + window).rstrip()

    def type(self, window, text):
        self('send-keys', '-t', self.session + ':' + window, '-l', text)
        self('send-keys', '-t', self.session + ':' + window, 'Enter')

    def wait(self, window, pattern, timeout=60, after=0):
        """The first match of pattern in the window's text after offset `after`."""
        end = time.time() + timeout
        while True:
            text = self.screen(window)
            m = re.compile(pattern, re.M).search(text, after)
            if m:
                return m, text
            if time.time() > end:
                raise Fail('no %r in window %s after %d s; the window shows:\n%s' % (pattern, window, timeout, text))
            time.sleep(0.1)

    def kill(self):
        self('kill-server', check=False)


def expected_break(source):
    """(line, byte offset in the kernel) of the instruction after the BREAK marker."""
    lines = Path(source).read_text().splitlines()
    insts = 0
    in_kernel = False
    for i, ln in enumerate(lines):
        s = ln.strip()
        if s.startswith('.kernel'):
            in_kernel = True
            continue
        if s.startswith('// BREAK'):
            return i + 2, insts * 16
        if in_kernel and s and not s.startswith('//') and not s.startswith('.'):
            insts += 1
    raise Fail('no "// BREAK" marker in %s' % source)


def text_dword0(module, kernel, offset):
    """Dword 0 of the instruction at offset in .text.<kernel> of the module file
    (the section's file offset from readelf -S)."""
    out = subprocess.run(['readelf', '-SW', str(module)], capture_output=True, text=True, check=True).stdout
    for ln in out.splitlines():
        m = re.match(r'^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s', ln)
        if m and m.group(1) == '.text.' + kernel:
            data = Path(module).read_bytes()
            at = int(m.group(2), 16) + offset
            return int.from_bytes(data[at:at + 4], 'little')
    raise Fail('%s has no section .text.%s' % (module, kernel))


def session(a, tm, work, env):
    line, offset = expected_break(a.source)
    pidfile, gofile = work / 'target.pid', work / 'go'
    for f in (pidfile, gofile):
        if f.exists():
            f.unlink()
    tenv = ' '.join('%s=%s' % (k, shlex.quote(v)) for k, v in env.items())
    tm('new-session', '-d', '-s', 'zdbg', '-x', '200', '-y', '50', '-n', 'app',
       'env %s ZET_ENABLE_PROGRAM_DEBUGGING=1 %s %s %s %s; echo TARGET-EXIT $?; sleep 600' % (
           tenv, shlex.quote(a.target), shlex.quote(a.module), shlex.quote(str(pidfile)), shlex.quote(str(gofile))))
    tm.wait('app', r'dbg_target: pid (\d+), module loaded')
    pid = int(pidfile.read_text())
    tm('new-window', '-t', 'zdbg', '-n', 'dbg',
       'env %s %s -p %d; echo DBG-EXIT $?; sleep 600' % (tenv, shlex.quote(a.dbg), pid))
    m, text = tm.wait('dbg', r'^(attached to \d+.*|zesim-dbg: .*)$')
    if 'does not support attaching' in m.group(1):
        print('SKIP: the driver does not offer program debugging yet: %s' % m.group(1))
        return SKIP
    if not m.group(1).startswith('attached'):
        raise Fail('attach failed: %s' % m.group(1))
    print('ok   attached to the target (pid %d) in tmux' % pid)
    tm.wait('dbg', r'\[module \d+ loaded at 0x[0-9a-f]+: 2 kernels \(dbgk, spin\), with source lines\]')
    print('ok   the module-load event: kernel dbgk, with source lines')

    # A second debugger on the same pid is refused, a missing pid too, with the reason.
    r = subprocess.run([a.dbg, '-p', str(pid)], input='', capture_output=True, text=True, env=dict(os.environ, **env),
                       timeout=60)
    if r.returncode != 1 or 'a debugger is already attached' not in r.stderr:
        raise Fail('second debugger: exit %d, %r' % (r.returncode, r.stderr))
    r = subprocess.run([a.dbg, '-p', '999999999'], capture_output=True, text=True, timeout=60)
    if r.returncode == 0 or 'no process with pid' not in r.stderr and 'needs a process id' not in r.stderr:
        raise Fail('missing pid: exit %d, %r' % (r.returncode, r.stderr))
    print('ok   a second debugger and a missing pid are refused with the reason')

    tm.type('dbg', 'frobnicate')
    tm.wait('dbg', r'unknown command "frobnicate" \(help lists the commands\)')

    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'break dbg.zeasm:%d' % line)
    m, _ = tm.wait('dbg', r'breakpoint 1 at 0x([0-9a-f]+): (\S+) at dbg\.zeasm:(\d+)', after=mark)
    bp_addr = int(m.group(1), 16)
    if m.group(2) != 'dbgk+0x%x' % offset or int(m.group(3)) != line:
        raise Fail('breakpoint at %s line %s, expected dbgk+0x%x line %d' % (m.group(2), m.group(3), offset, line))
    print('ok   break dbg.zeasm:%d -> 0x%x = dbgk+0x%x' % (line, bp_addr, offset))

    want0 = text_dword0(a.module, 'dbgk', offset) | 0x100
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'x/4x 0x%x' % bp_addr)
    m, _ = tm.wait('dbg', r'^0x%x: 0x([0-9a-f]{8}) ' % bp_addr, after=mark)
    if int(m.group(1), 16) != want0:
        raise Fail('instruction dword 0 on the GPU: 0x%s, expected 0x%08x (the file\'s | bit 8)' % (m.group(1), want0))
    print('ok   the GPU copy of the instruction has the breakpoint bit: 0x%08x' % want0)

    gofile.write_text('go\n')
    m, _ = tm.wait('dbg', r'\[thread 0 \((\d+/\d+/\d+/\d+)\) stopped: (\w+), ip 0x([0-9a-f]+) (\S+) at dbg\.zeasm:(\d+)\]')
    if m.group(2) != 'breakpoint' or m.group(4) != 'dbgk+0x%x' % offset or int(m.group(5)) != line:
        raise Fail('stop reported as %r' % m.group(0))
    print('ok   stop reported: thread %s, breakpoint at dbgk+0x%x, dbg.zeasm:%d' % (m.group(1), offset, line))

    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'info threads')
    tm.wait('dbg', r'^\* 0 +%s +ip 0x[0-9a-f]+ dbgk\+0x%x at dbg\.zeasm:%d$' % (re.escape(m.group(1)), offset, line),
            after=mark)

    def regs(n):
        mk = len(tm.screen('dbg'))
        tm.type('dbg', 'info registers grf %d' % n)
        mm, _ = tm.wait('dbg', r'^r%d +((?:0x[0-9a-f]{8} ?){8})$' % n, after=mk)
        return [int(v, 16) for v in mm.group(1).split()]

    r10 = regs(10)
    if r10 != [lid + 0x1000 for lid in range(8)]:
        raise Fail('r10 = %s, expected lid + 0x1000' % [hex(v) for v in r10])
    r0 = regs(0)
    if r0[0:3] != [0, 0, 0] or r0[3] != 0 or r0[4:7] != [8, 1, 1] or r0[7] != 1:
        raise Fail('r0 (dispatch payload) = %s' % [hex(v) for v in r0])
    print('ok   info registers grf: r10 = lid + 0x1000, r0 = the dispatch payload')

    r7 = regs(7)
    out_addr = r7[0] | r7[1] << 32
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'x/8x 0x%x' % out_addr)
    m2, _ = tm.wait('dbg', r'^0x%x: ((?:0x[0-9a-f]{8} ?){4})\n0x[0-9a-f]+: ((?:0x[0-9a-f]{8} ?){4})$' % out_addr,
                    after=mark)
    mem = [int(v, 16) for v in (m2.group(1) + ' ' + m2.group(2)).split()]
    if mem != [0xdeadbeef] * 8:
        raise Fail('x/8x at the output buffer: %s' % [hex(v) for v in mem])
    print('ok   x/8x at the output buffer (r7.0/1 = 0x%x): the target\'s fill' % out_addr)

    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'set $r10.3 = 0x77')
    tm.wait('dbg', r'^\$r10\.3 = 0x77$', after=mark)
    r10 = regs(10)
    if r10[3] != 0x77:
        raise Fail('r10 after set: %s' % [hex(v) for v in r10])
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'continue')
    tm.wait('dbg', r'^continuing 1 thread$', after=mark)

    want = [lid + 0x1000 for lid in range(8)]
    want[3] = 0x77
    m, text = tm.wait('app', r'dbg_target: out =((?: 0x[0-9a-f]+){8})')
    got = [int(v, 16) for v in m.group(1).split()]
    if got != want:
        raise Fail('the target computed %s, expected %s' % ([hex(v) for v in got], [hex(v) for v in want]))
    tm.wait('app', r'^TARGET-EXIT 0$')
    print('ok   continue: the target completes with out[3] = 0x77 (the debugger\'s write), the rest lid + 0x1000')
    tm.wait('dbg', r'\[detached: the program exited\]')
    tm.type('dbg', 'quit')
    tm.wait('dbg', r'^DBG-EXIT 0$')
    print('ok   zesim-dbg reports the detach and quits')
    return launched(a, tm, work, tenv, offset, line)


def under_dbg(a, tm, work, tenv, session, *target_args, module=None):
    """A new tmux session running `zesim-dbg -- dbg_target ...` (the old session
    ends once the new one runs: the tmux server stays up); returns the go file."""
    pidfile, gofile = work / (session + '.pid'), work / (session + '.go')
    for f in (pidfile, gofile):
        if f.exists():
            f.unlink()
    args = [a.dbg, '--', a.target, module or a.module, str(pidfile), str(gofile)] + list(target_args)
    tm('new-session', '-d', '-s', session, '-x', '200', '-y', '50', '-n', 'dbg',
       'env %s %s; echo DBG-EXIT $?; sleep 600' % (tenv, ' '.join(shlex.quote(x) for x in args)))
    tm('kill-session', '-t', tm.session)
    tm.session = session
    return gofile


def launched(a, tm, work, tenv, offset, line):
    """zesim-dbg -- PROGRAM: it starts the target, attaches, breaks at dbgk+OFFSET
    (the same instruction by its kernel offset); detach removes the breakpoint and
    resumes: the target completes with the kernel's own result, zesim-dbg reports
    its exit code and ends."""
    gofile = under_dbg(a, tm, work, tenv, 'zdbg2')
    m, _ = tm.wait('dbg', r'^attached to (\d+)')
    tm.wait('dbg', r'\[module \d+ loaded at 0x[0-9a-f]+: 2 kernels \(dbgk, spin\), with source lines\]')
    tm.wait('dbg', r'dbg_target: pid %s, module loaded' % m.group(1))
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'break dbgk+0x%x' % offset)
    tm.wait('dbg', r'breakpoint 1 at 0x[0-9a-f]+: dbgk\+0x%x at dbg\.zeasm:%d' % (offset, line), after=mark)
    gofile.write_text('go\n')
    tm.wait('dbg', r'\[thread 0 \(\d+/\d+/\d+/\d+\) stopped: breakpoint, ip 0x%x dbgk\+0x%x at dbg\.zeasm:%d\]'
            % (offset, offset, line))
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'detach')
    tm.wait('dbg', r'^detached from \d+$', after=mark)
    m, _ = tm.wait('dbg', r'dbg_target: out =((?: 0x[0-9a-f]+){8})', after=mark)
    got = [int(v, 16) for v in m.group(1).split()]
    if got != [lid + 0x1000 for lid in range(8)]:
        raise Fail('launched target computed %s' % [hex(v) for v in got])
    tm.wait('dbg', r'\[program \d+ exited with code 0\]', after=mark)
    tm.wait('dbg', r'^DBG-EXIT 0$', after=mark)
    print('ok   zesim-dbg -- PROGRAM: attached at start, break dbgk+0x%x, stop, detach: the program completes, '
          'exit code 0' % offset)
    return interrupted(a, tm, work, tenv)


def interrupted(a, tm, work, tenv, groups=4, count=300000):
    """interrupt on a long kernel (spin: 4 groups of 8, one hardware thread each, all
    resident on tiny's 8 threads): one stop per thread, reason interrupted, in spin's
    code; info threads lists them; continue; the kernel's result is right."""
    gofile = under_dbg(a, tm, work, tenv, 'zdbg3', 'spin', str(groups), str(count))
    tm.wait('dbg', r'dbg_target: pid \d+, module loaded')
    gofile.write_text('go\n')
    m, text = tm.wait('dbg', r'dbg_target: launched')
    mark = len(text)
    tm.type('dbg', 'interrupt')
    tm.wait('dbg', r'^interrupting every thread$', after=mark)
    stops = []
    end = time.time() + 60
    while len(stops) < groups:
        text = tm.screen('dbg')
        # cr0.2 is an offset from the thread's instruction base, the SBA register set:
        # sba + ip is in spin's code, whatever offset dbgk is long enough for
        # (tools/dbg/README.md "How it works"): one place, no "(one of: ...)".
        stops = re.findall(r'\[thread (\d+) \((\d+/\d+/\d+/\d+)\) stopped: (\w+), ip 0x[0-9a-f]+ '
                           r'(spin\+0x[0-9a-f]+) at dbg\.zeasm:(\d+)\]', text[mark:])
        if 'one of:' in text[mark:]:
            raise Fail('a stop shown at several places:\n%s' % text[mark:])
        if time.time() > end:
            raise Fail('%d of %d threads stopped after interrupt:\n%s' % (len(stops), groups, text))
        time.sleep(0.1)
    src = Path(a.source).read_text().splitlines()
    first = next(i for i, ln in enumerate(src) if ln.startswith('.kernel spin')) + 1
    for idx, thread, reason, where, line in stops:
        if reason != 'interrupted' or not first < int(line) <= len(src):
            raise Fail('stop %s: %s at %s line %s (spin starts at line %d)' % (idx, reason, where, line, first))
    if len({s[1] for s in stops}) != groups or sorted(int(s[0]) for s in stops) != list(range(groups)):
        raise Fail('stops: %s' % stops)
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'info threads')
    _, text = tm.wait('dbg', r'^  %d +\S+ +ip 0x' % (groups - 1), after=mark)
    if len(re.findall(r'^[ *] \d+ +\d+/\d+/\d+/\d+ +ip 0x[0-9a-f]+ .*spin\+', text[mark:], re.M)) != groups:
        raise Fail('info threads:\n%s' % text[mark:])
    print('ok   interrupt: %d threads stopped once each in spin (%s), info threads lists them'
          % (groups, ', '.join(sorted({s[3] for s in stops}))))
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'continue')
    tm.wait('dbg', r'^continuing %d threads$' % groups, after=mark)
    tm.wait('dbg', r'dbg_target: spin: ok', after=mark)
    tm.wait('dbg', r'\[program \d+ exited with code 0\]', after=mark)
    tm.type('dbg', 'quit')
    tm.wait('dbg', r'^DBG-EXIT 0$')
    print('ok   continue after the interrupt: spin completes with out[gid] = n + gid')
    return opencl(a, tm, work, tenv)


def continue_to_exit(tm, ok):
    """continue; the target prints `ok` and exits 0, zesim-dbg says so; quit."""
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'continue')
    tm.wait('dbg', ok, after=mark)
    tm.wait('dbg', r'\[program \d+ exited with code 0\]', after=mark)
    tm.type('dbg', 'quit')
    tm.wait('dbg', r'^DBG-EXIT 0$', after=mark)


def opencl(a, tm, work, tenv):
    """break FILE.cl:LINE in an OpenCL C kernel (saxpy.cl, the line marked // LINE),
    through the line table the driver writes for a SPIR-V module built with -g: the
    stop is reported at that line; continue; the result equals the host's fmaf."""
    src = Path(a.saxpy_source).read_text().splitlines()
    line = next(i + 1 for i, ln in enumerate(src) if '// LINE' in ln)
    name = Path(a.saxpy_source).name
    gofile = under_dbg(a, tm, work, tenv, 'zdbg4', 'saxpy', module=a.saxpy_spv)
    tm.wait('dbg', r'\[module \d+ loaded at 0x[0-9a-f]+: 1 kernel \(saxpy\), with source lines\]')
    tm.wait('dbg', r'dbg_target: pid \d+, module loaded')
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'break %s:%d' % (name, line))
    m, _ = tm.wait('dbg', r'breakpoint 1 at 0x[0-9a-f]+: (saxpy\+0x[0-9a-f]+) at %s:%d' % (re.escape(name), line),
                   after=mark)
    gofile.write_text('go\n')
    tm.wait('dbg', r'\[thread 0 \(\d+/\d+/\d+/\d+\) stopped: breakpoint, ip 0x[0-9a-f]+ %s at %s:%d\]'
            % (re.escape(m.group(1)), re.escape(name), line), after=mark)
    continue_to_exit(tm, r'dbg_target: saxpy: ok')
    print('ok   break %s:%d in OpenCL C (%s): the stop at that line, continue, y = fmaf(a, x, y)'
          % (name, line, m.group(1)))
    return calla(a, tm, work, tenv)


def calla(a, tm, work, tenv):
    """A breakpoint in a function of another module reached by calla (dbg_call.zeasm,
    loaded twice; callk of the first calls `twice` of the second): the stop is shown at
    twice+0x10 and its line, from sba + cr0.2 (cr0.2 alone is 0x10, which callk's code
    also holds, in both modules); `info registers sba` is the function's address the
    target printed; continue; out = 2 * (lid + 0x100) + 5."""
    src = Path(a.call_source).read_text().splitlines()
    line = next(i + 2 for i, ln in enumerate(src) if ln.startswith('// BREAK'))
    gofile = under_dbg(a, tm, work, tenv, 'zdbg5', 'calla', module=a.call_module)
    tm.wait('dbg', r'\[module 1 loaded at 0x[0-9a-f]+: 1 kernel \(callk\), with source lines\]')
    m, _ = tm.wait('dbg', r'dbg_target: twice at (0x[0-9a-f]+)')
    fn = int(m.group(1), 16)
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'break twice+0x10')
    tm.wait('dbg', r'twice\+0x10 at dbg_call\.zeasm:%d' % line, after=mark)
    gofile.write_text('go\n')
    _, text = tm.wait('dbg', r'\[thread 0 \(\d+/\d+/\d+/\d+\) stopped: (.*)\]', after=mark)
    want = r'\[thread 0 \(\d+/\d+/\d+/\d+\) stopped: breakpoint, ip 0x10 twice\+0x10 at dbg_call\.zeasm:%d\]' % line
    if not re.search(want, text[mark:]):
        raise Fail('calla: the stop is not shown at twice+0x10, line %d:\n%s' % (line, text[mark:]))
    mark = len(tm.screen('dbg'))
    tm.type('dbg', 'info registers sba')
    m, text = tm.wait('dbg', r'^sba0 +0x([0-9a-f]{8}) 0x([0-9a-f]{8})$', after=mark)
    if int(m.group(2), 16) << 32 | int(m.group(1), 16) != fn:
        raise Fail('calla: info registers sba does not show 0x%x (the second module\'s twice):\n%s'
                   % (fn, text[mark:]))
    continue_to_exit(tm, r'dbg_target: calla: ok')
    print('ok   break twice+0x10 in a callee of another module (calla): the stop there (sba 0x%x), continue,'
          ' the right result' % fn)
    return 0


def main():
    ap = argparse.ArgumentParser()
    for opt in ('gpu', 'preload', 'driver', 'dbg', 'target', 'module', 'source', 'saxpy_spv', 'saxpy_source',
                'call_module', 'call_source', 'work'):
        ap.add_argument('--' + opt.replace('_', '-'), dest=opt, required=True)
    a = ap.parse_args()
    if not shutil.which('tmux'):
        print('SKIP: tmux is not installed (Debian package tmux; ./zesim setup installs it)')
        return SKIP
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o700)
    sock = work / 'gpu.sock'
    if sock.exists():
        sock.unlink()
    cfg = work / 'daemon.json'
    cfg.write_text('{"preset": "tiny", "job_timeout_ms": 120000}\n')
    log = open(work / 'daemon.log', 'w')
    daemon = subprocess.Popen([a.gpu, '--config', str(cfg), '--socket', str(sock)], stderr=log,
                              env=dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE='1'))
    for _ in range(200):
        if sock.exists() or daemon.poll() is not None:
            break
        time.sleep(0.05)
    env = {'ZESIM_SOCKET': str(sock), 'LD_PRELOAD': a.preload, 'ZE_ENABLE_ALT_DRIVERS': a.driver}
    tm = Tmux(work)
    rc = 1
    try:
        rc = session(a, tm, work, env)
    except Fail as e:
        print('FAIL: %s' % e)
        for w in ('app', 'dbg'):
            try:
                print('--- window %s ---\n%s' % (w, tm.screen(w)))
            except Fail:
                pass
    finally:
        tm.kill()
        daemon.terminate()
        daemon.wait()
        log.close()
    if rc == 1:
        print('--- daemon log ---\n' + (work / 'daemon.log').read_text()[-3000:])
    if rc == 0:
        print('PASS')
    return rc


if __name__ == '__main__':
    sys.exit(main())
