#!/usr/bin/env python3
"""Refresh the command outputs shown in README.md and docs/*.md from real runs.

Every block of the form

    <!-- run: COMMAND -->
    ```console
    ...
    ```

is replaced by `$ COMMAND` (with build/bin/fast shown as `fast`) and the
command's stdout and stderr, run from the repository root with `fast` on the
PATH.  The files are run in the order of tour_files() (README.md, then
docs/guide.md, then the other documents), so a later block may use a file
an earlier one wrote.

    scripts/readme_tour.py [build/bin/fast [FILE...]]   (FILEs: only these)
"""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build/bin/fast"))
bindir = os.path.join(root, "build", "readme-bin")
os.makedirs(bindir, exist_ok=True)
link = os.path.join(bindir, "fast")
if os.path.lexists(link):
    os.unlink(link)
os.symlink(binary, link)
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"],
           OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

pattern = re.compile(r"<!-- run: ([^\n]*?) -->\n```console\n.*?```", re.S)


def run(match):
    cmd = match.group(1)
    out = subprocess.run(["bash", "-c", cmd], cwd=root, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=600).stdout
    shown = cmd.split(" # ")[0]
    return "<!-- run: %s -->\n```console\n$ %s\n%s```" % (cmd, shown, out if out.endswith("\n") or not out else out + "\n")


def tour_files():
    docs = sorted(f for f in os.listdir(os.path.join(root, "docs")) if f.endswith(".md"))
    docs.remove("guide.md")
    return ["README.md", "docs/guide.md"] + ["docs/" + f for f in docs]


for name in sys.argv[2:] or tour_files():
    path = os.path.join(root, name)
    text = open(path).read()
    if not pattern.search(text):
        continue
    new = pattern.sub(run, text)
    if new != text:
        with open(path + ".tmp", "w") as f:
            f.write(new)
        os.replace(path + ".tmp", path)
    print("%s: %d command outputs refreshed" % (name, len(pattern.findall(text))))
