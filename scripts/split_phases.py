#!/usr/bin/env python3
"""Split a MoE trace into its dispatch and its combine matrices.

    split_phases.py TRACE PREFIX

writes PREFIX-dispatch.json and PREFIX-combine.json: the trace with only
the matrices whose label ends in /dispatch (or /combine), in their order,
everything else as it was (version, gpus_total, source), so that `fast
compare` on each file totals one phase (scripts/token_study.sh,
scripts/demo.sh).  Exit 0; 2 usage; 3 a trace without both phases.
"""
import json
import sys


def main(argv):
    if len(argv) != 3 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if len(argv) == 2 else sys.stderr)
        return 0 if len(argv) == 2 else 2
    with open(argv[1]) as f:
        trace = json.load(f)
    for phase in ("dispatch", "combine"):
        out = dict(trace)
        out["matrices"] = [m for m in trace["matrices"] if m.get("label", "").endswith("/" + phase)]
        if not out["matrices"]:
            print("split_phases: %s: no matrix labelled .../%s" % (argv[1], phase), file=sys.stderr)
            return 3
        with open("%s-%s.json" % (argv[2], phase), "w") as f:
            json.dump(out, f, separators=(",", ":"))
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
