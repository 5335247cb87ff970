#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check.py DUMP TRUTH PROGRAM [--extra-ok] [--no-device] - a real-runtime trace against the
program's own truth (allocs.cu writes it; trace_dump.c prints the trace).

Every truth line "E op kind addr size device func line" must be recorded
exactly once: the trace holds as many successful events with that op, kind
and address as the truth has lines, taken in order, each with the truth's
size and device, and a stack showing func at that source line of PROGRAM
(addr2line; inlined frames count). The trace must be clean. Trace events
that match no truth line fail the check unless --extra-ok (a library's own
allocations); --no-device skips the device comparison. Truth lines "C func line" name program calls into a library
(cuBLAS): then every event the truth does not list must show one of those
lines in its stack (attributed to the library call that made it), and every
such allocation must be freed. Prints one PASS or FAIL line (and the
reasons); exit 0 on PASS.
"""
import os
import subprocess
import sys
from collections import defaultdict


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    extra_ok = '--extra-ok' in sys.argv
    check_dev = '--no-device' not in sys.argv
    dump, truth_path, prog = args
    prog_real = os.path.realpath(prog)
    truth, calls = [], set()
    for ln in open(truth_path):
        f = ln.split()
        if f and f[0] == 'C':
            calls.add((f[1], int(f[2])))
        if f and f[0] == 'E':
            truth.append(dict(op=int(f[1]), kind=int(f[2]), addr=int(f[3], 16), size=int(f[4]),
                              dev=int(f[5]), func=f[6], line=int(f[7])))
    events, state = [], None
    for ln in open(dump):
        if ln.startswith('E '):
            head, _, frames = ln.partition('|')
            f = head.split()
            events.append(dict(op=int(f[1]), kind=int(f[2]), api=f[3], addr=int(f[4], 16),
                               size=int(f[5]), result=int(f[6]), dev=int(f[7]), frames=frames.split()))
        elif ln.startswith('S '):
            state = ln.split()[1:]
    # symbolise every frame in the program, once
    offs = sorted({fr.rpartition('+')[2] for e in events for fr in e['frames']
                   if os.path.realpath(fr.rpartition('+')[0]) == prog_real or fr.startswith('main+')})
    sym = {}
    if offs:
        out = subprocess.run(['addr2line', '-i', '-f', '-C', '-a', '-e', prog] + offs,
                             capture_output=True, text=True).stdout.splitlines()
        cur = None
        i = 0
        while i < len(out):
            if out[i].startswith('0x') and out[i][2:].strip('0123456789abcdef') == '':
                cur = hex(int(out[i], 16))
                sym[cur] = []
                i += 1
                continue
            fn = out[i].split('(')[0]  # demangled: drop the parameter list
            loc = out[i + 1] if i + 1 < len(out) else '?:0'
            lno = loc.rpartition(':')[2].split()[0]
            sym[cur].append((fn, int(lno) if lno.isdigit() else 0))
            i += 2
    fails = []
    by_key = defaultdict(list)
    for e in events:
        if e['result'] == 0:
            by_key[(e['op'], e['kind'], e['addr'])].append(e)
    used = defaultdict(int)
    for t in truth:
        key = (t['op'], t['kind'], t['addr'])
        cands = by_key.get(key, [])
        k = used[key]
        used[key] += 1
        what = 'op %d kind %d addr %x (%s:%d)' % (t['op'], t['kind'], t['addr'], t['func'], t['line'])
        if k >= len(cands):
            fails.append('not recorded: ' + what)
            continue
        e = cands[k]
        if e['size'] != t['size']:
            fails.append('%s: size %d, program saw %d' % (what, e['size'], t['size']))
        if check_dev and e['dev'] != t['dev']:
            fails.append('%s: device %d, program used %d' % (what, e['dev'], t['dev']))
        seen = [s for fr in e['frames'] for s in sym.get(hex(int(fr.rpartition('+')[2], 16)), [])]
        if (t['func'], t['line']) not in seen:
            fails.append('%s: stack lacks %s:%d (has %s)' % (what, t['func'], t['line'],
                         ', '.join('%s:%d' % s for s in seen[:6]) or 'no program frame'))
    for key, cands in by_key.items():
        if len(cands) > used.get(key, 0) and key in used:
            fails.append('recorded %d times, made %d: op %d kind %d addr %x' %
                         (len(cands), used[key], key[0], key[1], key[2]))
    extra = [e for key, c in by_key.items() if key not in used for e in c]

    def seen_of(e):
        return {s for fr in e['frames'] for s in sym.get(hex(int(fr.rpartition('+')[2], 16)), [])}
    if calls:
        live = {}
        for e in events:
            if e['result'] or (e['op'], e['kind'], e['addr']) in used:
                continue
            if not seen_of(e) & calls:
                fails.append('library event %s addr %x not attributed to a library call' % (e['api'], e['addr']))
            if e['op'] == 1:
                live[(e['kind'], e['addr'])] = e
            elif e['op'] == 2:
                live.pop((e['kind'], e['addr']), None)
        for e in live.values():
            fails.append('library allocation %s addr %x size %d never freed' % (e['api'], e['addr'], e['size']))
        extra_ok = True
    if extra and not extra_ok:
        for e in extra[:5]:
            fails.append('extra event: %s addr %x size %d' % (e['api'], e['addr'], e['size']))
    if state != ['0', '0']:
        fails.append('trace not clean: state %s' % state)
    name = os.path.basename(prog)
    if fails:
        print('FAIL %s: %d of %d calls wrong' % (name, len(fails), len(truth)))
        for f in fails[:20]:
            print('  ' + f)
        return 1
    print('PASS %s: %d calls recorded once each, with address, size, device and the '
          'program\'s function:line; %d other events%s' % (name, len(truth), len(extra),
          ', each attributed to one of the %d library calls' % len(calls) if calls else ''))
    return 0


sys.exit(main())
