#!/usr/bin/env python3
"""Modules of one idea: no source file over 800 lines, no long function
without its reason.

    sizes.py [ALLOW]       (run from the repository root)

Reads every tracked .c, .h and .cu file outside tests/.  A file over
MAX_FILE lines is too long.  A function is a name line and a `{` at column
0 through the next `}` at column 0 (the style of this tree); one over
MAX_FUNC lines, counted from its name line to its closing brace, is too
long unless the first line of the comment just above it, or of the first
comment inside it, starts with "Long:" and says why splitting would hurt.
ALLOW names files and functions that are allowed for now, one a line:
`path reason` or `path:function reason`; `#` starts a comment.  Prints the
limits and the number of files and functions read, or every offender, and
exits 1.
"""
import re
import subprocess
import sys

MAX_FILE = 800
MAX_FUNC = 120


def allowed(path):
    """The allow-list: a set of `path` and `path:function` keys."""
    keys = set()
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            keys.add(line.split()[0])
    return keys


def comment_first_line(lines, i):
    """The text of the first line of a comment that starts at lines[i]."""
    text = lines[i].strip()
    text = re.sub(r"^(/\*+|//+)\s*", "", text)
    return text


def comment_above(lines, start):
    """The first line of the comment block that ends just above lines[start]."""
    i = start - 1
    if i < 0:
        return None
    end = lines[i].rstrip()
    if end.endswith("*/"):
        while i >= 0 and "/*" not in lines[i]:
            i -= 1
        return comment_first_line(lines, i) if i >= 0 else None
    if end.lstrip().startswith("//"):
        while i > 0 and lines[i - 1].lstrip().startswith("//"):
            i -= 1
        return comment_first_line(lines, i)
    return None


def comment_inside(lines, brace, end):
    """The first line of the first comment in lines[brace+1 .. end)."""
    for i in range(brace + 1, end):
        s = lines[i].strip()
        if s.startswith("/*") or s.startswith("//"):
            return comment_first_line(lines, i)
    return None


def functions(lines):
    """(name, first line, length) of each function of a file."""
    out = []
    i = 0
    while i < len(lines):
        if lines[i].rstrip() != "{":
            i += 1
            continue
        # the name line: back to the first line of the signature
        start = i - 1
        while start > 0 and lines[start][:1] in (" ", "\t") and lines[start].strip():
            start -= 1
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", "".join(lines[start:i]))
        end = i + 1
        while end < len(lines) and not lines[end].startswith("}"):
            end += 1
        if m and end < len(lines):
            out.append((m.group(1), start, i, end))
        i = end + 1
    return out


def main():
    allow = allowed(sys.argv[1]) if len(sys.argv) > 1 else set()
    files = subprocess.check_output(["git", "ls-files", "*.c", "*.h", "*.cu"], text=True).split()
    files = [f for f in files if not f.startswith("tests/")]
    bad, nfiles, nfuncs, used = [], 0, 0, set()
    for f in files:
        lines = open(f, encoding="utf-8").read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        nfiles += 1
        if len(lines) > MAX_FILE:
            if f in allow:
                used.add(f)
            else:
                bad.append("%s: %d lines (at most %d)" % (f, len(lines), MAX_FILE))
        for name, start, brace, end in functions(lines):
            nfuncs += 1
            n = end - start + 1
            if n <= MAX_FUNC:
                continue
            why = comment_above(lines, start)
            if why is None or not why.startswith("Long:"):
                why = comment_inside(lines, brace, end)
            if why is not None and why.startswith("Long:"):
                continue
            key = "%s:%s" % (f, name)
            if key in allow:
                used.add(key)
            else:
                bad.append("%s:%d: %s: %d lines (at most %d without a \"Long:\" reason)"
                           % (f, start + 1, name, n, MAX_FUNC))
    for key in sorted(allow - used):
        bad.append("allow-list: %s: nothing to allow (remove it)" % key)
    for b in bad:
        print(b)
    if nfiles < 100 or nfuncs < 1000:
        bad.append("only %d files and %d functions read" % (nfiles, nfuncs))
        print(bad[-1])
    if not bad:
        print("files at most %d lines, functions at most %d or with a reason" % (MAX_FILE, MAX_FUNC))
    sys.exit(1 if bad else 0)


main()
