#!/usr/bin/python3
"""Check launch dumps of the e2e tests against the Python ISS (tests/stimulus/zeiss.py).

    iss_check.py DIR [--launches N]

DIR holds the JSON files a test wrote with E2E_DUMP=DIR (format: tests/e2e/e2e.h,
e2e_dump_launch).  For each launch: build the argument area from the module's argument
layout (zeisa) and the dumped argument values, run the dispatch on the ISS with the
buffers as they were before the launch, and compare the ISS's final memory with the
buffers after the launch on the simulated GPU, byte for byte (or, for buffers marked
"dword-multiset", as multisets of dwords).  Every ISS thread must end with `eot`.

Exits 1 on any mismatch, on a malformed or unfinished dump, when DIR holds no dump, or
when it holds another number of launches than --launches.
"""

import argparse
import collections
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'stimulus'))
import zeisa  # noqa: E402
import zeiss  # noqa: E402


class Mismatch(Exception):
    pass


def argument_area(kernel, values):
    """(args bytes, local_sizes) for run_dispatch from the values in argument order."""
    if len(values) != len(kernel.args):
        raise Mismatch('%d argument values dumped, kernel %s declares %d'
                       % (len(values), kernel.name, len(kernel.args)))
    area, local_sizes = bytearray(kernel.arg_bytes), {}
    for i, (arg, value) in enumerate(zip(kernel.args, values)):
        if arg.kind == 'local':
            if 'local' not in value:
                raise Mismatch('argument %d (%s) is local, the dump gives a value' % (i, arg.name))
            local_sizes[arg.name] = value['local']
            continue
        if 'value' not in value:
            raise Mismatch('argument %d (%s) is %s, the dump gives a local size' % (i, arg.name, arg.kind))
        data = bytes.fromhex(value['value'])
        if len(data) != arg.size:
            raise Mismatch('argument %d (%s): %d bytes dumped, the kernel takes %d'
                           % (i, arg.name, len(data), arg.size))
        area[arg.offset:arg.offset + arg.size] = data
    return bytes(area), local_sizes


def dword(data, offset):
    offset &= ~3
    return int.from_bytes(data[offset:offset + 4].ljust(4, b'\0'), 'little')


def compare(index, buf, model, iss):
    """A description of how the model's buffer differs from the ISS's, or None."""
    where = 'buffer %d at %s (%d bytes)' % (index, buf['address'], len(model))
    if len(iss) != len(model):
        return '%s: the ISS returned %d bytes' % (where, len(iss))
    if buf['compare'] == 'dword-multiset':
        if len(model) % 4:
            return '%s: not whole dwords, cannot compare as a multiset' % where
        m = collections.Counter(dword(model, o) for o in range(0, len(model), 4))
        s = collections.Counter(dword(iss, o) for o in range(0, len(iss), 4))
        if m == s:
            return None
        only_m, only_s = sorted((m - s).elements()), sorted((s - m).elements())
        return ('%s, compared as a multiset of dwords: %d dwords only in the model (first %s), '
                '%d only in the ISS (first %s)'
                % (where, len(only_m), ', '.join('%#x' % v for v in only_m[:4]),
                   len(only_s), ', '.join('%#x' % v for v in only_s[:4])))
    if buf['compare'] != 'bytes':
        raise Mismatch('%s: unknown compare mode %r' % (where, buf['compare']))
    if model == iss:
        return None
    diff = [o for o in range(len(model)) if model[o] != iss[o]]
    o = diff[0]
    return ('%s: %d bytes differ, first at offset %#x: model byte %#04x, ISS byte %#04x '
            '(dword at %#x: model %#010x, ISS %#010x)'
            % (where, len(diff), o, model[o], iss[o], o & ~3, dword(model, o), dword(iss, o)))


def check_launch(path):
    """Runs one dumped launch on the ISS: (problems, empty when it matches; ISS instructions)."""
    d = json.loads(path.read_text())
    module = zeisa.read_module(d['module'])
    kernel = module.kernels.get(d['kernel'])
    if kernel is None:
        raise Mismatch('no kernel %s in %s' % (d['kernel'], d['module']))
    args, local_sizes = argument_area(kernel, d['args'])
    buffers = d['buffers']
    if len(d['after']) != len(buffers):
        raise Mismatch('%d buffers before the launch, %d after' % (len(buffers), len(d['after'])))
    before = {int(b['address'], 16): bytes.fromhex(b['before']) for b in buffers}
    if len(before) != len(buffers):
        raise Mismatch('two buffers at the same address')
    result = zeiss.run_dispatch(d['module'], d['kernel'], groups=tuple(d['groups']),
                                group_size=tuple(d['group_size']), args=args, buffers=before,
                                local_sizes=local_sizes)
    problems = []
    if result.hang:
        problems.append('the ISS reports a hang: %s' % result.hang)
    for t in result.threads:
        if t.status != 'eot':
            e = t.exception
            problems.append('ISS thread %d of group %s ended with %s%s' % (
                t.index, t.group, t.status,
                '' if e is None else ': %s at ip %#x, address %s (%s)' % (
                    e.name, e.ip, 'none' if e.address is None else '%#x' % e.address, e.detail)))
            if len(problems) >= 8:
                break
    for i, (buf, after) in enumerate(zip(buffers, d['after'])):
        problem = compare(i, buf, bytes.fromhex(after), result.memory[int(buf['address'], 16)])
        if problem:
            problems.append(problem)
    return problems, result.steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('dir', type=Path)
    parser.add_argument('--launches', type=int, help='the number of launch dumps DIR must hold')
    opts = parser.parse_args()
    dumps = sorted(opts.dir.glob('*.json'))
    failed = False
    for part in sorted(opts.dir.glob('*.part')):
        print('%s: a launch without results (e2e_dump_results was never called)' % part)
        failed = True
    if not dumps:
        print('%s: no launch dumps (was the test run with E2E_DUMP=%s?)' % (opts.dir, opts.dir))
        return 1
    if opts.launches is not None and len(dumps) != opts.launches:
        print('%s: %d launch dumps, expected %d' % (opts.dir, len(dumps), opts.launches))
        failed = True
    for path in dumps:
        start = time.monotonic()
        try:
            problems, steps = check_launch(path)
        except (Mismatch, zeiss.DispatchError, zeisa.ModuleError, KeyError, ValueError) as e:
            problems, steps = ['cannot check: %s: %s' % (type(e).__name__, e)], 0
        seconds = time.monotonic() - start
        if problems:
            failed = True
            print('%s: MISMATCH between the model and the ISS' % path)
            for p in problems:
                print('  ' + p)
        else:
            print('%s: matches the ISS (%d instructions, %.2f s)' % (path.name, steps, seconds))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
