#!/usr/bin/env python3
"""Check the comments of lib/ and cmd/ for issue numbers and dead paths.

Usage: comments.py [REPO_ROOT]

Reads every .c, .h and .cu file under REPO_ROOT/lib and REPO_ROOT/cmd,
takes its comments (/* ... */ and // ..., not string or character
literals) and prints one line per fault:

  FILE:LINE: cites an issue: 'issue 31'
  FILE:LINE: names a missing file: 'lib/dist/buckets_ckpt.c'

A citation is the word "issue" or "issues" followed by a number, with or
without '#', on one line or across two of a comment.  A path is a word that starts with lib/, cmd/, tests/ or
bench/, or a file name that starts with a folder of lib/ or cmd/ as an
#include spells it ('compute/devops.h', found in lib/ or cmd/); it must
name a file or folder under REPO_ROOT, a glob ('devops_*.h') must match
one, and a brace list ('model.{c,h}') must name existing files for each
member.  Paths with placeholders ('<tool>')
are left alone.  Exits 1 when there is any fault, else prints a summary
and exits 0.
"""
import glob
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else '.'

ISSUE = re.compile(r'\bissues?(?:\s|\*)*#?\s*\d+', re.IGNORECASE)
PATH = re.compile(r'(?<![\w/.-])((?:lib|cmd|tests|bench)/[\w./*{},-]*)')
FOLDERS = sorted(d for top in ('lib', 'cmd')
                 if os.path.isdir(os.path.join(root, top))
                 for d in os.listdir(os.path.join(root, top))
                 if os.path.isdir(os.path.join(root, top, d)))
REL = re.compile(r'(?<![\w/.-])((?:%s)/[\w/*-]+\.(?:c|h|cu))(?![\w/])' %
                 '|'.join(map(re.escape, FOLDERS or ['-'])))


def comments(text):
    """Yield (line, comment text) for each comment of C source text."""
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1
            i += 1
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            yield line, text[i:j]
            line += text.count('\n', i, j)
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            yield line, text[i:j]
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            i = j + 1
        else:
            i += 1


def expand(path):
    """The paths a brace list stands for ('a.{c,h}': a.c, a.h)."""
    m = re.search(r'\{([^{}]*)\}', path)
    if m is None:
        return [path]
    out = []
    for alt in m.group(1).split(','):
        out += expand(path[:m.start()] + alt + path[m.end():])
    return out


def exists(path):
    full = os.path.join(root, path)
    if any(ch in path for ch in '*?['):
        return bool(glob.glob(full))
    return os.path.exists(full)


def paths(body):
    """The file paths a comment names, with trailing punctuation off."""
    for m in PATH.finditer(body):
        p = m.group(1)
        while p and p[-1] in '.,;:)}-':
            if p[-1] == '}' and p.count('{') >= p.count('}'):
                break
            p = p[:-1]
        if p.count('{') != p.count('}'):
            p = p.split('{', 1)[0]
        if p.rstrip('/') in ('lib', 'cmd', 'tests', 'bench'):
            continue
        end = m.start(1) + len(p)
        if end < len(body) and body[end] == '<':
            continue
        yield p
    for m in REL.finditer(body):
        yield m.group(1)


faults = []
nfiles = 0
for top in ('lib', 'cmd'):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith(('.c', '.h', '.cu')):
                continue
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            nfiles += 1
            with open(full, encoding='utf-8', errors='replace') as fh:
                text = fh.read()
            for line, body in comments(text):
                for m in ISSUE.finditer(body):
                    cite = re.sub(r'(?:\s|\*)+', ' ', m.group(0))
                    faults.append("%s:%d: cites an issue: '%s'" %
                                  (rel, line + body.count('\n', 0,
                                                          m.start()), cite))
                for k, part in enumerate(body.split('\n')):
                    for p in paths(part):
                        missing = [x for x in expand(p) if not
                                   (exists(x) or exists('lib/' + x) or
                                    exists('cmd/' + x))]
                        if missing:
                            faults.append("%s:%d: names a missing file: "
                                          "'%s'" % (rel, line + k, p))

for f in faults:
    print(f)
if faults:
    sys.exit(1)
print('%d files of lib/ and cmd/: no comment cites an issue or names a '
      'missing file' % nfiles)
