#!/usr/bin/env python3
# Counts, per operation, the goroutine state transitions of two execution
# traces of the same benchmark cell (go test -trace), by where they
# happened: a goroutine blocking (Running->Waiting, at the stack it
# blocked on) and a goroutine unblocked (Waiting->Runnable, at the stack
# of the goroutine that woke it), the first non-runtime frames. A client
# that wakes goroutines the other does not shows as a row that differs.
#
# Usage: python3 trace_transitions.py A.trace B.trace OPS [ROWS]
import collections, re, subprocess, sys


def transitions(path):
    out = subprocess.run(['go', 'tool', 'trace', '-d=parsed', path],
                         capture_output=True, text=True, check=True).stdout
    counts = collections.Counter()
    for ev in re.split(r'\n(?=M=)', out):
        lines = ev.split('\n')
        m = re.search(r'StateTransition .*GoID=\d+ (\w+)->(\w+)', lines[0])
        if not m or (m.group(1), m.group(2)) not in (('Running', 'Waiting'), ('Waiting', 'Runnable')):
            continue
        frames, section = [], None
        for line in lines[1:]:
            if line.startswith(('Stack=', 'TransitionStack=')):
                section = line.split('=')[0]
            elif section == 'Stack' and line.startswith('\t') and not line.startswith('\t\t'):
                frames.append(line.strip().split(' @')[0])
        own = [f for f in frames if not f.startswith(('runtime.', 'internal/', 'sync.'))][:3]
        where = ' < '.join(own) or '(runtime) ' + (frames[0] if frames else '-')
        counts[(m.group(1) + '->' + m.group(2), where)] += 1
    return counts


def main():
    a, b, ops = transitions(sys.argv[1]), transitions(sys.argv[2]), float(sys.argv[3])
    rows = int(sys.argv[4]) if len(sys.argv) > 4 else 20
    keys = sorted(set(a) | set(b), key=lambda k: (-abs(b[k] - a[k]), -b[k]))
    print('| A per op | B per op | transition | where |')
    print('|--:|--:|---|---|')
    for k in keys[:rows]:
        print(f'| {a[k] / ops:.2f} | {b[k] / ops:.2f} | {k[0]} | {k[1][:120]} |')
    total = lambda c: sum(v for (t, _), v in c.items() if t == 'Waiting->Runnable') / ops
    print(f'\nwake-ups per op: A {total(a):.2f}, B {total(b):.2f}')


if __name__ == '__main__':
    main()
