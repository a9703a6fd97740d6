#!/usr/bin/env python3
# Makes the RESULTS.md tables from benchmark outputs (one file per round):
# medians per benchmark, Conduit/raw from the medians plus the min-max of the
# per-round ratios. Usage: python3 results_table.py results/<date>/round*.txt
import re, glob, statistics as st, collections, sys
files = sorted(sys.argv[1:]) or sys.exit('usage: results_table.py round0.txt round1.txt ...')
data = collections.defaultdict(lambda: collections.defaultdict(list))  # key -> metric -> [vals per round]
pat = re.compile(r'^Benchmark(\w+)/([\w-]+)/([\w-]+?)-(stdio|http)-(legacy|modern)-\d+\s+\d+\s+(.*)$')
for f in files:
    for line in open(f):
        m = pat.match(line)
        if not m: continue
        wl, cl, srv, tr, era, rest = m.groups()
        vals = dict((u, float(v)) for v, u in re.findall(r'([\d.]+) (\S+)', rest))
        key = (wl, srv, tr, era)
        for u in ('ns/op', 'B/op', 'allocs/op'):
            data[(key, cl)][u].append(vals[u])
        data[(key, cl)]['round'].append(f)
wls = ['Connect', 'SequentialCalls', 'ConcurrentCalls', 'LargeResult', 'ListTools500']
cls = ['raw', 'conduit', 'go-sdk', 'mcp-go']
def med(key, cl, u):
    v = data[(key, cl)][u]
    return st.median(v) if v else None
def fmt_ns(x):
    if x is None: return '—'
    if x >= 1e6: return f'{x/1e6:.2f} ms'
    return f'{x/1e3:.1f} µs'
def fmt_b(x):
    if x is None: return '—'
    if x >= 1<<20: return f'{x/(1<<20):.2f} MiB'
    if x >= 10240: return f'{x/1024:.0f} KiB'
    return f'{x:.0f} B'
def ratio_range(key, a, b, u='ns/op'):
    # per-round ratios a/b (same round file)
    ra = dict(zip(data[(key,a)]['round'], data[(key,a)][u])); rb = dict(zip(data[(key,b)]['round'], data[(key,b)][u]))
    rs = [ra[r]/rb[r] for r in ra if r in rb and rb[r] > 0]
    return (min(rs), max(rs)) if rs else (None, None)
nrounds = len(files)
out = []
out.append(f'Medians of {nrounds} rounds. Time: ns/op (wall clock per operation; for ConcurrentCalls, per call with 64 in flight). ')
out.append('')
out.append('| workload | server | transport | era | raw | Conduit | go-sdk | mcp-go | Conduit/raw (min–max of rounds) | go-sdk/Conduit | mcp-go/Conduit |')
out.append('|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|')
for wl in wls:
    for srv in ['raw', 'go-sdk']:
        for tr in ['stdio', 'http']:
            for era in ['legacy', 'modern']:
                key = (wl, srv, tr, era)
                if not data[(key,'conduit')]['ns/op']: continue
                r, c, g, mg = (med(key, x, 'ns/op') for x in cls)
                lo, hi = ratio_range(key, 'conduit', 'raw')
                out.append(f'| {wl} | {srv} | {tr} | {era} | {fmt_ns(r)} | {fmt_ns(c)} | {fmt_ns(g)} | {fmt_ns(mg)} | **{c/r:.2f}×** ({lo:.2f}–{hi:.2f}) | {g/c:.2f}× | {mg/c:.2f}× |')
out.append('')
out.append('Memory: B/op and allocs/op (client process only: the server is another process). Medians (they barely vary).')
out.append('')
out.append('| workload | server | transport | era | raw B | Conduit B | go-sdk B | mcp-go B | raw allocs | Conduit allocs | go-sdk allocs | mcp-go allocs | Conduit/raw allocs | go-sdk/Conduit allocs |')
out.append('|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|')
for wl in wls:
    for srv in ['raw', 'go-sdk']:
        for tr in ['stdio', 'http']:
            for era in ['legacy', 'modern']:
                key = (wl, srv, tr, era)
                if not data[(key,'conduit')]['ns/op']: continue
                b = [med(key, x, 'B/op') for x in cls]
                a = [med(key, x, 'allocs/op') for x in cls]
                out.append(f'| {wl} | {srv} | {tr} | {era} | ' + ' | '.join(fmt_b(x) for x in b) + ' | ' + ' | '.join(f'{x:.0f}' for x in a) + f' | **{a[1]/a[0]:.2f}×** | {a[2]/a[1]:.2f}× |')
print('\n'.join(out))
