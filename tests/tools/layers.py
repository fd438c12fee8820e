#!/usr/bin/env python3
"""Check lib/'s includes against the layer order of lib/LAYERS.

Usage: layers.py [REPO_ROOT]

Every `#include "dir/file.h"` in lib/ must name a header of the same
folder or of a folder on a lower line of lib/LAYERS, every folder of lib/
must be listed there, and no two files may include each other through any
chain (X.c, X.h and X_impl.h are one file).  Prints one line per fault and
exits 1 when there is any, else prints a summary and exits 0.
"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'
lib = os.path.join(root, 'lib')
level = {}
with open(os.path.join(lib, 'LAYERS')) as fh:
    n = 0
    for line in fh:
        line = line.split('#', 1)[0].split()
        if not line:
            continue
        for name in line:
            if name in level:
                sys.exit('lib/LAYERS: %s is listed twice' % name)
            level[name] = n
        n += 1

faults = []
folders = sorted(d for d in os.listdir(lib)
                 if os.path.isdir(os.path.join(lib, d)))
for d in folders:
    if d not in level:
        faults.append('lib/%s: folder not in lib/LAYERS' % d)
for d in level:
    if d not in folders:
        faults.append('lib/LAYERS: %s is not a folder of lib/' % d)

inc = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
edges = {}
files = 0
for d in folders:
    for f in sorted(os.listdir(os.path.join(lib, d))):
        if not f.endswith(('.c', '.h')):
            continue
        files += 1
        src = '%s/%s' % (d, f)
        text = open(os.path.join(lib, src), errors='replace').read()
        for m in inc.finditer(text):
            name = m.group(1)
            line = text.count('\n', 0, m.start()) + 1
            if '/' not in name:
                faults.append('lib/%s:%d: include "%s" without its folder'
                              % (src, line, name))
                continue
            to = name.split('/', 1)[0]
            if not os.path.exists(os.path.join(lib, name)):
                faults.append('lib/%s:%d: "%s" is not a file of lib/'
                              % (src, line, name))
                continue
            if to != d and d in level and to in level:
                if level[to] == level[d]:
                    faults.append('lib/%s:%d: includes "%s" sideways '
                                  '(%s and %s share a layer)'
                                  % (src, line, name, d, to))
                elif level[to] > level[d]:
                    faults.append('lib/%s:%d: includes "%s" upwards '
                                  '(%s is above %s)'
                                  % (src, line, name, to, d))

            def unit(p):
                u = os.path.splitext(p)[0]
                return u[:-5] if u.endswith('_impl') else u
            a, b = unit(src), unit(name)
            if a != b:
                edges.setdefault(a, set()).add(b)

# Cycles between files: Tarjan's strongly connected components.
index, low, stack, on = {}, {}, [], set()
counter = [0]
sys.setrecursionlimit(100000)


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in sorted(edges.get(v, ())):
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            faults.append('lib/: files include each other: %s'
                          % ' -> '.join(sorted(comp)))


for v in sorted(set(edges) | {w for ws in edges.values() for w in ws}):
    if v not in index:
        visit(v)

for f in faults:
    print(f)
if faults:
    sys.exit(1)
print('%d folders on %d layers, %d files: no include goes up or sideways, '
      'no file cycle' % (len(folders), n, files))
