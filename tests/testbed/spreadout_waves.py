#!/usr/bin/env python3
"""tests/testbed/spreadout_waves.py - SpreadOut's rounds, barriered or not.

    python3 tests/testbed/spreadout_waves.py TRAFFIC.json GPUS_PER_SERVER RAIL_BYTES_PER_S

A contention-free estimate of SpreadOut (round d: GPU i sends to i + d mod
n) on the first matrix of TRAFFIC, counting only the cross-server messages
(each at the rail rate alone; intra-server ones cost nothing), two ways:

  barriers:  the simulator's reading of the plan - round d starts when
             every message of round d - 1 is done, so the time is the sum
             over rounds of the round's slowest message;
  waves:     the executor's (exec/prog.c) - a rank posts round d once its
             own round d - 1 messages completed, so message i -> i + d
             starts when both its ranks finished round d - 1.

docs/testbed.md's fidelity section quotes both for the Zipf 1 MiB cell; `fast
sim --sync step` and `--sync rank` give the same two numbers on a topology
with this rail rate, no latency and free scale-up.
"""
import json
import sys


def main():
    path, gpus, rate = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    rows = json.load(open(path))["matrices"][0]["rows"]
    n = len(rows)

    def t(i, j):
        return 0.0 if i // gpus == j // gpus else rows[i][j] / rate

    barriers = sum(max(t(i, (i + d) % n) for i in range(n)) for d in range(1, n))
    done = [0.0] * n
    for d in range(1, n):
        nxt = [0.0] * n
        for i in range(n):
            j = (i + d) % n
            end = max(done[i], done[j]) + t(i, j)
            nxt[i] = max(nxt[i], end)
            nxt[j] = max(nxt[j], end)
        done = nxt
    print("barriers %.1f ms, waves %.1f ms" % (barriers * 1e3, max(done) * 1e3))


if __name__ == "__main__":
    main()
