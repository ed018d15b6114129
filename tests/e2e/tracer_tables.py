#!/usr/bin/python3
"""What the driver's dispatch tables hold, with and without the driver tracer.

    tracer_tables.py --driver libze_zesim.so.1 --api ze_api.h --ddi ze_ddi.h --expect direct|wrapped

Loads the driver in this process, calls the getter of every table that ze_callbacks_t
names (as the loader does, API version 1.4) and names each entry after the driver's
symbol table (`nm`).  `direct` (ZET_ENABLE_API_TRACING_EXP unset): no entry is a
tracing wrapper, so the call path is exactly the untraced driver's.  `wrapped` (the
variable set): every implemented entry that a callback names is its wrapper
`trace_<Domain>_<Name>`, and every other entry (APIs newer than the 1.0 callback
table) is still the driver's own function.
"""

import argparse
import ctypes
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'driver'))
import gen_tracer  # noqa: E402  (the generator's header reader)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--driver', required=True)
    ap.add_argument('--api', required=True)
    ap.add_argument('--ddi', required=True)
    ap.add_argument('--expect', choices=('direct', 'wrapped'), required=True)
    opts = ap.parse_args()
    want_wrapped = opts.expect == 'wrapped'
    if want_wrapped != (os.environ.get('ZET_ENABLE_API_TRACING_EXP') == '1'):
        sys.exit('tracer_tables.py: ZET_ENABLE_API_TRACING_EXP does not match --expect')

    with open(opts.api) as f:
        api = gen_tracer.structs(gen_tracer.strip_comments(f.read()))
    with open(opts.ddi) as f:
        ddi = gen_tracer.structs(gen_tracer.strip_comments(f.read()))
    tables = {member: ttype for ttype, member in ddi['ze_dditable_t']}

    path = os.path.realpath(opts.driver)
    lib = ctypes.CDLL(path)
    base = None
    with open('/proc/self/maps') as f:
        for line in f:
            fields = line.split()
            if len(fields) >= 6 and fields[5] == path and int(fields[2], 16) == 0:
                base = int(fields[0].split('-')[0], 16)
                break
    if base is None:
        sys.exit(f'tracer_tables.py: {path} is not mapped')
    names = {}
    for line in subprocess.run(['nm', '--defined-only', path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        value, kind, name = line.split()[:3]
        if kind in 'tT':
            names[base + int(value, 16)] = name

    errors, wrapped, direct = [], 0, 0
    for cbtype, domain in api['ze_callbacks_t']:
        traced = {m[3:-2] for _, m in api[cbtype]}  # pfnXxxCb -> Xxx
        entries = [m for _, m in ddi[tables[domain]]]
        buf = (ctypes.c_void_p * len(entries))()
        r = getattr(lib, f'zeGet{domain}ProcAddrTable')(ctypes.c_uint32(0x10004), buf)
        if r != 0:
            errors.append(f'zeGet{domain}ProcAddrTable returned {r:#x}')
            continue
        for member, ptr in zip(entries, buf):
            if not ptr:
                continue
            name = names.get(ptr, f'{ptr:#x}')
            fn = member[3:]
            if want_wrapped and fn in traced:
                ok = name == f'trace_{domain}_{fn}'
            else:
                ok = name.startswith('zs_')
            if not ok:
                errors.append(f'{domain}.{member} is {name}')
            wrapped += name.startswith('trace_')
            direct += name.startswith('zs_')
    for e in errors:
        print(f'tracer_tables.py: {e}')
    print(f'{opts.expect}: {wrapped} wrappers, {direct} driver functions in the tables')
    if errors or (want_wrapped and not wrapped) or (not want_wrapped and not direct):
        sys.exit(1)


if __name__ == '__main__':
    main()
