#!/usr/bin/env python3
# Per-operation instruction and cache-miss counts from valgrind's
# cachegrind, to compare two clients (or two builds of one) where the
# wall clock is too noisy to see a few hundred instructions: the counts
# are the same run after run.
#
# Record each side with the same operation count N, e.g.
#
#   GOMAXPROCS=1 valgrind --tool=cachegrind --cache-sim=yes \
#     --cachegrind-out-file=raw.cg ./bench.test -test.run '^$' \
#     -test.bench 'BenchmarkConnect$/raw/raw-http-modern' -test.benchtime 2000x
#
# (the same with conduit/ for the other side), then
#
#   python3 cg_table.py raw.cg conduit.cg 2000 [TOP]
#
# It prints the totals per operation of both files (Ir instructions, I1mr
# first-level instruction-cache misses, D1mr/D1mw data misses), with and
# without the Go runtime, the totals per package, the runtime's by what
# its functions do (named by their names: a rough split), and the TOP
# functions (default 40) that differ most in instructions. Everything one process executes is counted: the
# bench's servers run as other processes and are not; setup (the server's
# start, the benchmark's first b.N=1 round) is shared and divided by N.
import collections, re, signal, sys

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under head


def load(path):
    events, fn = None, None
    costs = collections.defaultdict(lambda: None)
    for line in open(path, errors='replace'):
        if line.startswith('events:'):
            events = line.split()[1:]
        elif line.startswith('fn='):
            fn = line[3:].strip()
        elif line[:1].isdigit() and fn is not None:
            vals = [int(v) for v in line.split()[1:]]
            cur = costs[fn]
            if cur is None:
                costs[fn] = vals + [0] * (len(events) - len(vals))
            else:
                for i, v in enumerate(vals):
                    cur[i] += v
    return events, dict(costs)


def is_runtime(fn):
    return (fn.startswith(('runtime.', 'internal/runtime/', 'gc', 'memclr', 'memmove', 'indexbytebody',
                           'memeqbody', 'aeshash', 'cmpbody', 'gogo', 'gosave', 'mcall', 'systemstack'))
            or fn.startswith('type:.'))


# What the runtime's functions do, by name, for the runtime's breakdown.
RUNTIME_PARTS = [
    ('GC (mark, sweep, barriers)', ['scan', 'grey', 'mark', 'gcDrain', 'gcw', 'wbBuf', 'findObject', 'tryDefer', 'sweep',
                                    'Barrier', 'heapBits', 'spanSet', 'pallocBits', 'typePointers', 'spanOf', 'pcvalue',
                                    'runtime.step']),
    ('allocation', ['malloc', 'newobject', 'memclr', 'nextFree', 'refill', 'initSpan', 'makeslice', 'growslice',
                    'newarray', 'mcache', 'mcentral', 'mheap', 'deductAssist']),
    ('channels, select', ['chan', 'select', 'sellock', 'selunlock', 'recv', 'send']),
    ('scheduler, locks', ['park', 'ready', 'schedule', 'findRunnable', 'stealWork', 'runq', 'execute', 'netpoll',
                          'wakep', 'futex', 'note', 'mPark', 'lock2', 'unlock2', 'sema', 'casgstatus', 'newproc', 'gfget',
                          'gfput', 'goexit', 'mcall', 'gogo', 'systemstack', 'startm', 'stopm', 'spinning']),
    ('timers', ['timer', 'Timer', 'siftDown', 'siftUp', 'nanotime']),
    ('maps', ['map', 'Map', 'hash', 'Iter']),
]


def runtime_part(fn):
    for name, keys in RUNTIME_PARTS:
        if any(k in fn for k in keys):
            return name
    return 'other'


def package(fn):
    base = fn.split('(')[0].rstrip('.')
    head, _, tail = base.rpartition('/')
    name = tail.split('.')[0]
    return f'{head}/{name}' if head else name


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__ or 'usage: cg_table.py A.cg B.cg N [TOP]')
    events, a = load(sys.argv[1])
    events_b, b = load(sys.argv[2])
    if events != events_b:
        sys.exit('the two files count different events')
    n = float(sys.argv[3])
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 40
    ix = {e: i for i, e in enumerate(events)}
    shown = [e for e in ('Ir', 'I1mr', 'D1mr', 'D1mw') if e in ix]

    def total(costs, e):
        return sum(v[ix[e]] for v in costs.values()) / n

    # The Go runtime's share (scheduler, GC, allocator) depends on timing
    # (whether an answer had arrived when a goroutine parked, when the GC
    # ran), so it moves between runs of one binary; the rest does not.
    def user(costs):
        return {f: v for f, v in costs.items() if not is_runtime(f)}

    print('| per op | A | B | B − A |')
    print('|---|--:|--:|--:|')
    for e in shown:
        ta, tb = total(a, e), total(b, e)
        print(f'| {e} | {ta:,.0f} | {tb:,.0f} | {tb - ta:+,.0f} |')
    for e in shown:
        ta, tb = total(user(a), e), total(user(b), e)
        print(f'| {e}, without the runtime | {ta:,.0f} | {tb:,.0f} | {tb - ta:+,.0f} |')

    def by_package(costs):
        out = collections.defaultdict(lambda: [0] * len(events))
        for fn, v in costs.items():
            p = out[package(fn)]
            for i, x in enumerate(v):
                p[i] += x
        return out

    pa, pb = by_package(a), by_package(b)
    rows = sorted(set(pa) | set(pb), key=lambda p: -abs(pb.get(p, [0] * 9)[ix['Ir']] - pa.get(p, [0] * 9)[ix['Ir']]))
    print('\n| package | Ir A | Ir B | I1mr A | I1mr B |')
    print('|---|--:|--:|--:|--:|')
    zero = [0] * len(events)
    for p in rows[:20]:
        va, vb = pa.get(p, zero), pb.get(p, zero)
        print(f'| {p} | {va[ix["Ir"]] / n:,.0f} | {vb[ix["Ir"]] / n:,.0f} | {va[ix["I1mr"]] / n:,.1f} | {vb[ix["I1mr"]] / n:,.1f} |')

    parts = collections.defaultdict(lambda: [0, 0, 0, 0])
    for costs, k in ((a, 0), (b, 1)):
        for f, v in costs.items():
            if is_runtime(f):
                p = parts[runtime_part(f)]
                p[k] += v[ix['Ir']] / n
                p[k + 2] += v[ix['I1mr']] / n
    print('\n| the runtime, by what it does | Ir A | Ir B | I1mr A | I1mr B |')
    print('|---|--:|--:|--:|--:|')
    for name, p in sorted(parts.items(), key=lambda x: -(x[1][1] - x[1][0])):
        print(f'| {name} | {p[0]:,.0f} | {p[1]:,.0f} | {p[2]:,.1f} | {p[3]:,.1f} |')

    fns = sorted(set(a) | set(b), key=lambda f: -abs(b.get(f, zero)[ix['Ir']] - a.get(f, zero)[ix['Ir']]))
    print(f'\n| function | Ir A | Ir B | I1mr A | I1mr B |')
    print('|---|--:|--:|--:|--:|')
    for f in fns[:top]:
        va, vb = a.get(f, zero), b.get(f, zero)
        name = re.sub(r'^github\.com/conduitmcp/conduit/', '', f)
        print(f'| {name} | {va[ix["Ir"]] / n:,.0f} | {vb[ix["Ir"]] / n:,.0f} | {va[ix["I1mr"]] / n:,.1f} | {vb[ix["I1mr"]] / n:,.1f} |')


if __name__ == '__main__':
    main()
