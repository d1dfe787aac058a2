#!/usr/bin/env python3
"""The source tree's layering, read from its #include lines.

    layers.py        (run from the repository root)

Each folder is a layer of the pipeline, and a file may include headers of
its own folder and of layers below its own, never of a layer beside or
above it.  The public headers (include/fast/) belong to the layer of the
concept they declare.  Prints the layers and the number of includes read,
or every include that runs sideways or up, and exits 1.
"""
import os
import re
import subprocess
import sys

# lowest first; folders on one line are peers (neither includes the other)
LAYERS = [
    ["base"],                                   # errors, limits, JSON I/O, byte-range store
    ["model"],                                  # topology, traffic, token groups
    ["plan", "workload"],                       # the plan IR; generators and MoE import
    ["compile", "check", "bound", "export", "calib"],
    ["sim"],                                    # the flow-level simulator
    ["exec", "eval"],                           # the MPI executor; one case evaluated
    ["cmd", "api"],                             # the CLI; libfast.so's API for foreign callers
]
PUBLIC = {"common.h": "base", "topo.h": "model", "traffic.h": "model", "plan.h": "plan",
          "algo.h": "compile", "check.h": "check", "bound.h": "bound", "sim.h": "sim",
          "exec.h": "exec", "prog.h": "exec", "eval.h": "eval", "api.h": "api"}
level = {name: i for i, row in enumerate(LAYERS) for name in row}


def folder(path):
    parts = path.split("/")
    if parts[0] == "include":
        if parts[-1] not in PUBLIC:
            sys.exit("layers.py: %s: a public header this table does not place" % path)
        return PUBLIC[parts[-1]]
    return parts[1] if parts[0] == "lib" else parts[0]


files = subprocess.check_output(["git", "ls-files", "include", "lib", "sim", "exec", "eval", "cmd", "api"],
                                text=True).split()
bad, n = [], 0
for f in files:
    if not f.endswith((".c", ".h", ".cu")):
        continue
    here = folder(f)
    for name in re.findall(r'^#include "([^"]+)"', open(f).read(), re.M):
        if name.startswith("fast/"):
            dest = "include/" + name
        elif "/" in name:
            dest = name
        else:
            dest = os.path.join(os.path.dirname(f), name)
        if not os.path.exists(dest):
            continue  # generated (config.h) or outside the tree
        there = folder(dest)
        n += 1
        if there != here and level[there] >= level[here]:
            bad.append("%s includes %s: %s may not use %s" % (f, name, here, there))
for b in bad:
    print(b)
if n < 200:
    bad.append("only %d includes read" % n)
    print(bad[-1])
if not bad:
    for i, row in enumerate(LAYERS):
        print("%d %s" % (i, ", ".join(row)))
    print("no include runs sideways or up")
sys.exit(1 if bad else 0)
