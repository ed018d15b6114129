#!/usr/bin/python3
"""Host waits with a stopped or killed daemon (issue 11 item 6, docs/preload.md §5).

    stall.py --gpu ZESIM_GPU --zesim ZESIM --test E2E_STALL --vadd-elf VADD_ELF

Starts a daemon of its own and runs test_stall.c against it, which asks on stdout
for "stop" (SIGSTOP the daemon), "cont" (SIGCONT) and "kill" (SIGKILL) and checks
its waits: NOT_READY within timeout + 100 ms while stopped, correct results once
resumed, DEVICE_LOST within 1 s once killed.  A daemon that is never resumed by
the program's answer is resumed after 30 s, so a broken build fails instead of
hanging.
"""

import argparse
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zedaemon  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for opt in ('--gpu', '--zesim', '--test', '--vadd-elf'):
        ap.add_argument(opt, required=True)
    opts = ap.parse_args()
    failed = []
    with zedaemon.Daemon(opts.gpu, '--preset', 'tiny', test_channel=False) as d:
        if not d.alive():
            print('stall.py: FAILED: the daemon did not start\n%s' % d.stderr())
            return 1
        env = dict(os.environ, ZESIM_SOCKET=d.path)
        p = subprocess.Popen([opts.zesim, 'run', '--', opts.test, opts.vadd_elf], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        lines = queue.Queue()

        def reader():
            for line in p.stdout:
                lines.put(line)
            lines.put('')

        threading.Thread(target=reader, daemon=True).start()
        stopped = False
        deadline = time.monotonic() + 240
        while True:
            try:
                line = lines.get(timeout=30 if stopped else max(0, deadline - time.monotonic()))
            except queue.Empty:
                if stopped:
                    # The program is stuck behind the stopped daemon: the bug.
                    failed.append('no request from the program 30 s after stopping the daemon')
                    os.kill(d.proc.pid, signal.SIGCONT)
                    stopped = False
                    continue
                failed.append('the program hangs')
                p.kill()
                break
            if not line:
                break
            print(line, end='', flush=True)
            cmd = line.strip()
            if cmd in ('stall: stop', 'stall: cont', 'stall: kill'):
                sig = {'stop': signal.SIGSTOP, 'cont': signal.SIGCONT, 'kill': signal.SIGKILL}[cmd[7:]]
                os.kill(d.proc.pid, sig)
                stopped = sig == signal.SIGSTOP
                if sig == signal.SIGKILL:
                    d.proc.wait()
                try:
                    p.stdin.write(cmd[7:] + '\n')
                    p.stdin.flush()
                except BrokenPipeError:
                    pass
        rc = p.wait(60)
        if stopped:
            os.kill(d.proc.pid, signal.SIGCONT)
        if rc != 0:
            failed.append('test_stall exited with %d' % rc)
        if failed:
            print('stall.py: FAILED: %s\n--- daemon stderr ---\n%s' % ('; '.join(failed), d.stderr()))
            return 1
    print('stall.py: ok')
    return 0


if __name__ == '__main__':
    sys.exit(main())
