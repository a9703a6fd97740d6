#!/usr/bin/env python3
# Makes the RESULTS.md tables from benchmark outputs (one file per round):
# medians per benchmark, Conduit/raw from the medians plus the min-max of the
# per-round ratios, the verdict against the targets and, with --before, the
# Conduit/raw ratios of an earlier set of rounds beside the new ones.
#
# Usage: python3 results_table.py [--before 'old/round*.txt'] results/<dir>/round*.txt
import re, glob, os, statistics as st, collections, sys

args = sys.argv[1:]
before = None
if len(args) >= 2 and args[0] == '--before':
    before, args = sorted(glob.glob(args[1])), args[2:]
files = sorted(args) or sys.exit("usage: results_table.py [--before 'old/round*.txt'] round0.txt round1.txt ...")
pat = re.compile(r'^Benchmark(\w+)/([\w-]+)/([\w-]+?)-(stdio|http|ws)-(legacy|modern)-\d+\s+\d+\s+(.*)$')


def load(files):
    data = collections.defaultdict(lambda: collections.defaultdict(list))  # (key, client) -> metric -> [vals per round]
    for f in files:
        for line in open(f):
            m = pat.match(line)
            if not m:
                continue
            wl, cl, srv, tr, era, rest = m.groups()
            vals = dict((u, float(v)) for v, u in re.findall(r'([\d.]+) (\S+)', rest))
            key = (wl, srv, tr, era)
            for u in ('ns/op', 'B/op', 'allocs/op'):
                data[(key, cl)][u].append(vals[u])
            data[(key, cl)]['round'].append(f)
    return data


data = load(files)
old = load(before) if before else None
wls = ['Connect', 'SequentialCalls', 'ConcurrentCalls', 'LargeResult', 'ListTools500']
cls = ['raw', 'conduit', 'go-sdk', 'mcp-go']
servers, transports, eras = ['raw', 'go-sdk'], ['stdio', 'http', 'ws'], ['legacy', 'modern']
if os.environ.get('TRANSPORTS'):  # e.g. TRANSPORTS=http,ws: only those columns and rows
    transports = os.environ['TRANSPORTS'].split(',')


def med(d, key, cl, u):
    v = d[(key, cl)][u]
    return st.median(v) if v else None


def fmt_ns(x):
    if x is None: return '—'
    if x >= 1e6: return f'{x/1e6:.2f} ms'
    return f'{x/1e3:.1f} µs'


def fmt_b(x):
    if x is None: return '—'
    if x >= 1 << 20: return f'{x/(1<<20):.2f} MiB'
    if x >= 10240: return f'{x/1024:.0f} KiB'
    return f'{x:.0f} B'


def ratio_range(d, key, a, b, u='ns/op'):
    # per-round ratios a/b (same round file)
    ra = dict(zip(d[(key, a)]['round'], d[(key, a)][u]))
    rb = dict(zip(d[(key, b)]['round'], d[(key, b)][u]))
    rs = [ra[r] / rb[r] for r in ra if r in rb and rb[r] > 0]
    return (min(rs), max(rs)) if rs else (None, None)


def x(a, b):
    # a/b formatted as a ratio, '—' when either is missing
    return f'{a/b:.2f}×' if a and b else '—'


def rng(lo, hi):
    return f' ({lo:.2f}–{hi:.2f})' if lo is not None else ''


def ratio(d, key, u='ns/op'):
    r, c = med(d, key, 'raw', u), med(d, key, 'conduit', u)
    return c / r if r and c else None


def keys(d):
    for wl in wls:
        for srv in servers:
            for tr in transports:
                for era in eras:
                    key = (wl, srv, tr, era)
                    if d[(key, 'conduit')]['ns/op']:
                        yield key


out = []
out.append(f'Medians of {len(files)} rounds. Time: ns/op (wall clock per operation; for ConcurrentCalls, per call with 64 in flight).')
out.append('')
out.append('| workload | server | transport | era | raw | Conduit | go-sdk | mcp-go | Conduit/raw (min–max of rounds) | go-sdk/Conduit | mcp-go/Conduit |')
out.append('|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|')
for key in keys(data):
    r, c, g, mg = (med(data, key, x, 'ns/op') for x in cls)
    lo, hi = ratio_range(data, key, 'conduit', 'raw')
    out.append(f'| {" | ".join(key)} | {fmt_ns(r)} | {fmt_ns(c)} | {fmt_ns(g)} | {fmt_ns(mg)} | **{x(c, r)}**{rng(lo, hi)} | {x(g, c)} | {x(mg, c)} |')
out.append('')
out.append('Memory: B/op and allocs/op (client process only: the server is another process). Medians (they barely vary).')
out.append('')
out.append('| workload | server | transport | era | raw B | Conduit B | go-sdk B | mcp-go B | raw allocs | Conduit allocs | go-sdk allocs | mcp-go allocs | Conduit/raw allocs | go-sdk/Conduit allocs | mcp-go/Conduit allocs |')
out.append('|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
for key in keys(data):
    b = [med(data, key, x, 'B/op') for x in cls]
    a = [med(data, key, x, 'allocs/op') for x in cls]
    out.append(f'| {" | ".join(key)} | ' + ' | '.join(fmt_b(v) for v in b) + ' | ' + ' | '.join('—' if v is None else f'{v:.0f}' for v in a)
               + f' | **{x(a[1], a[0])}** | {x(a[2], a[1])} | {x(a[3], a[1])} |')

# Verdict: time ≤ 1.15× raw (median ratio; the per-round range is shown when it
# crosses the line), allocs ≤ 1.5× raw.
for srv in servers:
    if not any(k[1] == srv for k in keys(data)):
        continue
    out.append('')
    out.append(f'Verdict, {srv} server (✓ = median within the target; per-round min–max shown):')
    out.append('')
    cols = [(tr, era) for tr in transports for era in eras]
    out.append('| target | ' + ' | '.join(f'{"HTTP" if tr == "http" else tr} {era}' for tr, era in cols) + ' |')
    out.append('|---|' + '---|' * len(cols))
    for wl in wls:
        for u, lim, what in (('ns/op', 1.15, 'time'), ('allocs/op', 1.5, 'allocs')):
            cells = []
            for tr, era in cols:
                key = (wl, srv, tr, era)
                v = ratio(data, key, u)
                if v is None:
                    cells.append('—'); continue
                lo, hi = ratio_range(data, key, 'conduit', 'raw', u)
                cells.append(f'{"✓" if v <= lim else "✗"} {v:.2f}×' + (rng(lo, hi) if u == 'ns/op' else ''))
            out.append(f'| {wl} {what} ≤ {lim}× raw | ' + ' | '.join(cells) + ' |')
        cells = []
        for tr, era in cols:
            key = (wl, srv, tr, era)
            c = med(data, key, 'conduit', 'ns/op')
            peers = [v for v in (med(data, key, p, 'ns/op') for p in ('go-sdk', 'mcp-go')) if v]
            if not c or not peers:
                cells.append('—'); continue
            cells.append(f'{"✓" if c < min(peers) else "✗"} {min(peers)/c:.2f}×')
        out.append(f'| {wl} ahead of go-sdk and mcp-go (fastest peer/Conduit) | ' + ' | '.join(cells) + ' |')

if old is not None:
    out.append('')
    out.append(f'Conduit/raw, earlier ({len(before)} rounds) → now ({len(files)} rounds): time (median ratio), allocs; and Conduit allocs/op.')
    out.append('')
    out.append('| workload | server | transport | era | time earlier | time now | allocs ratio earlier | allocs ratio now | Conduit allocs earlier → now | Conduit B/op earlier → now |')
    out.append('|---|---|---|---|--:|--:|--:|--:|--:|--:|')
    for key in keys(data):
        if not old[(key, 'conduit')]['ns/op']:
            continue
        to, tn = ratio(old, key), ratio(data, key)
        ao, an = ratio(old, key, 'allocs/op'), ratio(data, key, 'allocs/op')
        out.append(f'| {" | ".join(key)} | {to:.2f}× | **{tn:.2f}×** | {ao:.2f}× | **{an:.2f}×** | '
                   f'{med(old, key, "conduit", "allocs/op"):.0f} → {med(data, key, "conduit", "allocs/op"):.0f} | '
                   f'{fmt_b(med(old, key, "conduit", "B/op"))} → {fmt_b(med(data, key, "conduit", "B/op"))} |')
print('\n'.join(out))
