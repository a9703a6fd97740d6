#!/usr/bin/env python3
# Charges a CPU profile's samples to the goroutine each stack runs on (its
# root: the benchmark's own goroutine, net/http's readLoop and writeLoop,
# the engine's loop and reader, the scheduler, the GC), per operation, for
# comparing two clients' profiles of the same benchmark cell.
#
# Usage: python3 pprof_roots.py BINARY OPS PROFILE [PROFILE ...]
import collections, re, subprocess, sys

ROOTS = ['gcBgMarkWorker', 'bgsweep', 'bgscavenge', 'readLoop', 'writeLoop', 'Session).loop',
         'Session).reader', 'dialConnFor', 'httpConn).spawn', 'runN', 'sysmon', 'mcall', 'dispatcher']


def samples(binary, profile):
    out = subprocess.run(['go', 'tool', 'pprof', '-traces', binary, profile],
                         capture_output=True, text=True, check=True).stdout
    for block in out.split('-----------+-------------------------------------------------------')[1:]:
        lines = [l for l in block.strip('\n').split('\n') if l.strip()]
        m = lines and re.match(r'\s*([\d.]+)(ms|s)\s+(.*)', lines[0])
        if not m:
            continue
        value = float(m.group(1)) * (1000 if m.group(2) == 's' else 1)  # ms
        yield value, [m.group(3).strip()] + [l.strip() for l in lines[1:]]


def root(frames):
    for key in ROOTS:
        if any(key in f for f in frames):
            return key
    return frames[-1]


if len(sys.argv) < 4:
    sys.exit(__doc__ or 'usage: pprof_roots.py BINARY OPS PROFILE [PROFILE ...]')
binary, ops = sys.argv[1], int(sys.argv[2])
for profile in sys.argv[3:]:
    per = collections.Counter()
    for value, frames in samples(binary, profile):
        per[root(frames)] += value
    print(f'{profile}: {sum(per.values()) * 1000 / ops:.1f} µs/op of CPU')
    for name, value in per.most_common(12):
        print(f'   {name[:60]:60} {value * 1000 / ops:6.1f} µs/op')
