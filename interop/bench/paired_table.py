#!/usr/bin/env python3
# Tables of BenchmarkConnectPaired runs: per cell, the median over the
# given files of each client's time and of its ratio to the raw client.
#
# Usage: python3 paired_table.py FILE... [--before FILE...]
#
# When the runs report each client's Close apart (<client>-close-ns/op),
# a second table gives those medians; clients other than the four (a
# name BENCH_CLIENTS lists twice, conduit-2) get a third.
import re, statistics, sys

def load(files):
    cells = {}
    for f in files:
        for line in open(f):
            m = re.match(r'BenchmarkConnectPaired/([\w-]+?)-\d+\s', line)
            if not m:
                continue
            vals = {u: float(v) for v, u in re.findall(r'([\d.]+) ([\w/-]+)', line[m.end():])}
            cells.setdefault(m.group(1), []).append(vals)
    return cells

def med(rows, key):
    xs = [r[key] for r in rows if key in r]
    return statistics.median(xs) if xs else None

def us(ns):
    return '—' if ns is None else (f'{ns / 1e6:.2f} ms' if ns >= 1e6 else f'{ns / 1e3:.1f} µs')

def spread(xs):
    return f'({min(xs):.2f}–{max(xs):.2f})' if xs else ''

def ratio(x):
    return '—' if x is None else f'{x:.2f}×'

args = sys.argv[1:]
before = []
if '--before' in args:
    i = args.index('--before')
    args, before = args[:i], args[i + 1:]
now, then = load(args), load(before)
head = '| cell | raw | Conduit | go-sdk | mcp-go | Conduit/raw (min–max) | go-sdk/raw | mcp-go/raw |'
if then:
    head += ' Conduit/raw before |'
print(head)
print('|' + '---|' * head.count('|')[:-1] if False else '|' + '|'.join(['---'] + ['--:'] * (head.count('|') - 2)) + '|')
for cell, rows in now.items():
    cr = [r['conduit/raw'] for r in rows if 'conduit/raw' in r]
    line = (f'| {cell} | {us(med(rows, "raw-ns/op"))} | {us(med(rows, "conduit-ns/op"))} | {us(med(rows, "go-sdk-ns/op"))} | '
            f'{us(med(rows, "mcp-go-ns/op"))} | **{ratio(med(rows, "conduit/raw"))}** {spread(cr)} | '
            f'{ratio(med(rows, "go-sdk/raw"))} | {ratio(med(rows, "mcp-go/raw"))} |')
    if then:
        line += f' {ratio(med(then.get(cell, []), "conduit/raw"))} |'
    print(line)

if any('conduit-close-ns/op' in r for rows in now.values() for r in rows):
    print()
    head = '| cell | Close: raw | Conduit | go-sdk | mcp-go |'
    if then:
        head += ' Conduit before |'
    print(head)
    print('|' + '|'.join(['---'] + ['--:'] * (head.count('|') - 2)) + '|')
    for cell, rows in now.items():
        line = '| ' + cell + ' | ' + ' | '.join(us(med(rows, c + '-close-ns/op')) for c in ('raw', 'conduit', 'go-sdk', 'mcp-go')) + ' |'
        if then:
            line += f' {us(med(then.get(cell, []), "conduit-close-ns/op"))} |'
        print(line)

# Clients beyond the four (BENCH_CLIENTS naming one twice: conduit-2).
known = {'raw', 'conduit', 'go-sdk', 'mcp-go'}
others = sorted({k[:-len('-ns/op')] for rows in now.values() for r in rows for k in r
                 if k.endswith('-ns/op') and not k.endswith('-close-ns/op')} - known)
if others:
    print()
    print('| cell | client | time | client/raw (min–max) |')
    print('|---|---|--:|--:|')
    for cell, rows in now.items():
        for c in others:
            cr = [r[c + '/raw'] for r in rows if c + '/raw' in r]
            if cr:
                print(f'| {cell} | {c} | {us(med(rows, c + "-ns/op"))} | **{ratio(med(rows, c + "/raw"))}** {spread(cr)} |')
