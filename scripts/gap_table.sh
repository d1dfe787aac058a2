#!/usr/bin/env bash
# What FAST's distance from the LP bound is made of, in the simulator:
#
#   scripts/gap_table.sh [FAST] [PRESET] [SERVERS...]
#
# For random and Zipf traffic at 256 MiB per GPU (seed 1) on PRESET
# (default h200) with SERVERS x 8 GPUs (default 4 16), prints a markdown
# table with the LP, the bound ratios divide by (the LP plus the latency
# floor), FAST / bound, and FAST time - LP split into:
#   stages x (alpha + overhead)   every rail stage pays the scale-out
#                                 latency and per-step overhead
#   padding                       the stage budgets add up to more than the
#                                 LP's busiest NIC carries (budget sum /
#                                 effective NIC rate - LP)
#   before stage 1                NICs idle while stage 1's tiles balance
#   after the last stage          the last redistribution over scale-up
#   rest                          anything else (stalls between stages)
# from `fast sim --steps` and the plan file.  Needs python3.
set -eu
fast=${1:-build/bin/fast}
preset=${2:-h200}
shift $(($# > 2 ? 2 : $#))
servers=("$@")
[ ${#servers[@]} -gt 0 ] || servers=(4 16)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "| $preset, servers x 8, traffic | LP | bound | FAST | FAST / bound | rail stages | stages x (α + overhead) | padding | before stage 1 | after the last stage | rest |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for n in "${servers[@]}"; do
	for pat in random zipf; do
		"$fast" topo show --preset "$preset" --servers "$n" -o "$tmp/t.json"
		"$fast" gen --topo "$tmp/t.json" --pattern "$pat" --mean-bytes 256M --seed 1 \
			-o "$tmp/m.json" >/dev/null
		"$fast" plan --topo "$tmp/t.json" --traffic "$tmp/m.json" -o "$tmp/p.json" >/dev/null
		"$fast" sim --topo "$tmp/t.json" --plan "$tmp/p.json" --traffic "$tmp/m.json" \
			--steps >"$tmp/s.txt"
		python3 - "$tmp" "$n" "$pat" <<'EOF'
import json, sys
tmp, n, pat = sys.argv[1:4]
topo = json.load(open(tmp + "/t.json"))
out = topo["scale_out"]
rate = out["bw_GBps"] * 1e9 * out["efficiency"]           # bytes/s per NIC
stage_us = out["latency_us"] + out["step_overhead_us"]
plan = json.load(open(tmp + "/p.json"))["plans"][0]
rails = [s for s in plan["steps"] if "rail" in s]
budget_us = sum(s["rail"]["bytes"] for s in rails) / rate * 1e6
lines = open(tmp + "/s.txt").read().splitlines()
def ms(key, col):
    return float(next(l for l in lines if key in l).split()[col]) * 1e3
# "  bound  B ms   time/bound R   LP L ms   (binding: ...)"
bound, lp_bound, time = ms("time/bound", 1), ms("time/bound", 6), ms("completion", 1)
rows = [l.split() for l in lines if l.split() and l.split()[0].isdigit()]
rail_rows = [r for r in rows if r[1] == "rail"]
first = min(float(r[3]) for r in rail_rows) - stage_us   # start - its own alpha+overhead
last = max(float(r[4]) for r in rail_rows)
stages = len(rails) * stage_us
pad = budget_us - lp_bound
before, after = first, time - last
rest = (time - lp_bound) - stages - pad - before - after
def pc(us):
    us = 0.0 if abs(us) < 0.5 else us  # rounding noise of the sums
    return f"{us:.0f} µs ({100 * us / lp_bound:.1f}%)"
print(f"| {n} x 8, {pat} | {lp_bound:.1f} µs | {bound:.1f} µs | {time:.1f} µs | {time / bound:.3f} | {len(rails)} "
      f"| {pc(stages)} | {pc(pad)} | {pc(before)} | {pc(after)} | {pc(rest)} |")
EOF
	done
done
