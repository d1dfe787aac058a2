#!/usr/bin/env python3
"""Every reference into the repository's documents resolves.

    links.py FILE...

In the markdown files among FILE: every relative link [text](path#anchor)
names a file that exists and, with an anchor, a heading of that file.  In
every FILE: every `docs/X.md, "Section"` (or `docs/X.md's "Section"`)
reference names the start of a heading of docs/X.md, and every
`X.md#anchor` an anchor of it.  Anchors are GitHub's: the heading in lower
case, punctuation other than '-' and '_' dropped, spaces as '-', a
repeated heading suffixed -1, -2, ...  Prints each broken reference and
exits 1, or prints what it checked.
"""
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
SECTION = re.compile(r"(docs/[A-Za-z]+\.md)(?:,|'s) \"([^\"]+)")
ANCHOR_REF = re.compile(r"((?:docs/)?[A-Za-z]+\.md)#([a-z0-9_-]+)")


def headings(path, cache={}):
    if path not in cache:
        names, slugs, seen, block = [], set(), {}, False
        for line in open(path, encoding="utf-8"):
            if line.startswith("```"):
                block = not block
            m = None if block else re.match(r"^#{1,6} (.*)", line)
            if m:
                h = m.group(1).strip()
                names.append(h)
                s = re.sub(r"[^a-z0-9 _-]", "", h.lower()).replace(" ", "-")
                n = seen.get(s, 0)
                seen[s] = n + 1
                slugs.add(s if n == 0 else "%s-%d" % (s, n))
        cache[path] = (names, slugs)
    return cache[path]


bad, links, sections = [], 0, 0
for f in sys.argv[1:]:
    text = open(f, encoding="utf-8", errors="replace").read()
    if f.endswith(".md"):
        body = re.sub(r"```.*?```", "", text, flags=re.S)
        for tgt in LINK.findall(body):
            if re.match(r"^[a-z]+:", tgt):
                continue
            path, _, anchor = tgt.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) if path else f
            if not os.path.exists(dest):
                bad.append("%s: link to %s: no such file" % (f, tgt))
            elif anchor and dest.endswith(".md") and anchor not in headings(dest)[1]:
                bad.append("%s: link to %s: %s has no such heading" % (f, tgt, dest))
            links += 1
    for doc, name in SECTION.findall(text):
        name = " ".join(re.sub(r"\n\s*(\*|#|//)?", " ", name).split())
        if not os.path.exists(doc):
            bad.append("%s: refers to %s, which does not exist" % (f, doc))
        elif not any(h.startswith(name) for h in headings(doc)[0]):
            bad.append("%s: %s has no section \"%s\"" % (f, doc, name))
        sections += 1
    for doc, anchor in ANCHOR_REF.findall(text):
        if f.endswith(".md"):
            continue  # links, checked above against their own directory
        path = doc if doc.startswith("docs/") else "docs/" + doc
        if not os.path.exists(path) or anchor not in headings(path)[1]:
            bad.append("%s: %s#%s: no such heading" % (f, doc, anchor))
        sections += 1
for b in bad:
    print(b)
if links < 40 or sections < 10:
    bad.append("too few references found (%d links, %d sections)" % (links, sections))
    print(bad[-1])
if not bad:
    print("every link and section reference in the documents and the code resolves")
sys.exit(1 if bad else 0)
