#!/usr/bin/env python3
"""tests/testbed/flight.py - the degraded fabrics' cells simulated as the
executor runs them: by step (the plan format's barrier, what
tests/testbed/degraded.sh reports), by rank with one wave in flight, and
by rank with two (`fast run`'s default; sim.h "Waves in flight").  No
root, no testbed: from kept data.

    python3 tests/testbed/flight.py build/bin/fast results/testbed/degraded/eager-run1/slow-nic ...

Each DIR is one fabric as tests/testbed/degraded.sh leaves it (cells.tsv,
cells/, topo.json, topo-healthy.json; or a healthy fabric as
tests/testbed/bench.sh leaves it).  Every cell's plan is simulated on
the fabric's topo.json as `up` fitted it: FAST, fanout and hier compiled
for the degraded topology, fast-unaware compiled for the healthy one,
each on the cell's .one.json matrix.  Prints per fabric a table of every
cell (measured median, simulated time and error each way) and the cells
within +-15% each way.
"""
import json
import os
import subprocess
import sys
import tempfile

WAYS = [("step", ["--sync", "step"]), ("rank", ["--sync", "rank"]),
        ("rank, 2 in flight", ["--sync", "rank", "--in-flight", "2"])]


def run(args):
    """args' stdout; a failure ends the script with the command's own error."""
    try:
        return subprocess.run(args, check=True, capture_output=True, text=True).stdout
    except OSError as e:
        sys.exit("flight.py: cannot run %s: %s" % (args[0], e.strerror))
    except subprocess.CalledProcessError as e:
        sys.exit("flight.py: %s failed (exit %d): %s" % (" ".join(args[:2]), e.returncode, e.stderr.strip()))


def sim_ms(fast, args):
    return json.loads(run([fast, "sim", "--json"] + args))["plans"][0]["time_s"] * 1e3


def read_cells(d):
    """The rows of DIR/cells.tsv after its header."""
    path = os.path.join(d, "cells.tsv")
    try:
        return [l.rstrip("\n").split("\t") for l in open(path)][1:]
    except OSError as e:
        sys.exit("flight.py: %s: %s (a fabric as tests/testbed/degraded.sh or bench.sh leaves it)"
                 % (path, e.strerror))


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fast, within = sys.argv[1], [0] * len(WAYS)
    ncells = 0
    with tempfile.TemporaryDirectory() as tmp:
        for d in sys.argv[2:]:
            rows = read_cells(d)
            print("\n## %s\n" % d)
            print("| traffic | algo | measured ms | " + " | ".join("%s ms | error" % w for w, _ in WAYS) + " |")
            print("|---|---|---:|" + "---:|---:|" * len(WAYS))
            for rate, size, pat, algo, med, *rest in rows:
                if rest[4] == "nan":  # not simulated (mpi)
                    continue
                one = os.path.join(d, "cells", "%s-%s-%s.one.json" % (rate, size, pat))
                how = ["--algo", algo]
                if algo == "fast-unaware":
                    plan = os.path.join(tmp, "unaware.json")
                    run([fast, "plan", "--topo", os.path.join(d, "topo-healthy.json"), "--traffic", one, "-o", plan])
                    how = ["--plan", plan]
                cells = []
                for k, (_, way) in enumerate(WAYS):
                    t = sim_ms(fast, ["--topo", os.path.join(d, "topo.json"), "--traffic", one] + how + way)
                    err = t / float(med) - 1
                    within[k] += abs(err) <= 0.15
                    cells.append("%.1f | %+.1f%%" % (t, 100 * err))
                ncells += 1
                print("| %s | %s | %s | %s |" % (pat, algo, med, " | ".join(cells)))
    print("\nwithin +-15%% of %d cells: %s" % (ncells, ", ".join("%s %d" % (w, n) for (w, _), n in zip(WAYS, within))))


if __name__ == "__main__":
    main()
