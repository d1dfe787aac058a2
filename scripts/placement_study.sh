#!/usr/bin/env bash
# The placement study (issue 26, item 4): which pays more, where the experts
# sit or how the bytes are scheduled?  Expert placements x schedules on two
# routings, h200 and mi300x-100g, EP32 (4 servers x 8 GPUs) and EP64 (8 x 8):
#
#   deepseek-v2-lite  the bundled per-token routing (task intent, 8,222
#                     tokens, top-6 of 64 experts, all 26 layers) as token
#                     traffic with per-server dedup (`fast trace import --tokens`)
#   olmoe             the bundled OLMoE-1B-7B counts (arxiv, top-8 of 64,
#                     layers 0, 7, 15) as byte traffic: counts carry no
#                     per-token routing, so no --tokens; and the bundled
#                     source refuses eplb:R, so its counts are written as a
#                     [layers][experts] routing file and imported with
#                     --routing (contiguous: byte for byte the bundled
#                     import, checked below)
#
# Placements: contiguous, round-robin, eplb:0 (rebalanced, no replicas),
# eplb:EP and eplb:2EP (one and two redundant slots per GPU; EPLB needs
# 64 + R slots to split evenly over the GPUs, so at EP32 R = 16 is refused
# and R = 32, 64 are the E/2 and E points; at EP64 R = 64, 128), each token
# using a replica by --replica-choice local (the default until spread replaced it), and eplb:EP
# again with --replica-choice spread.  Schedules: fast, hier, fanout, auto
# (`fast compare --csv --no-timing`: on token traffic its total rows per
# phase; on byte traffic, which has none, the phase's matrices summed here).
# Compute imbalance: `fast traffic show --json`'s compute_imbalance of each
# dispatch matrix (combine's is the same).
#
# OUTDIR/placement.csv, one row per (model, ep, preset, placement,
# replicas, algo):
#   model,ep,servers,preset,traffic     traffic: tokens (dedup) or bytes
#   placement,replicas                  the --placement, the --replica-choice
#   algo                                the schedule
#   dispatch_s,combine_s,total_s        simulated time summed over the layers
#   bound_s,ratio                       bound of dispatch + combine (LP, token
#                                       LP on token traffic, plus the latency
#                                       floor); total_s / bound_s
#   bytes_out                           bytes the plans move across servers
#   imbalance_max,imbalance_mean        compute imbalance (most (token,
#                                       expert) pairs on a GPU / the mean)
#                                       over the layers: the worst, the mean
# OUTDIR/placement_layers.csv: model,ep,placement,replicas,layer,
# compute_imbalance,pairs_max,pairs_mean (one row per layer).
# Figures (OUTDIR/figures/placement_<preset>.png): scripts/results_plot.py OUTDIR.
#
#   scripts/placement_study.sh [--fast PATH] [OUTDIR]     (default results)
set -eu
cd "$(dirname "$0")/.."
fast=${FAST:-build/bin/fast}
if [ "${1:-}" = --fast ]; then fast=$2; shift 2; fi
case ${1:-} in -h|--help) sed -n '2,44p' "$0"; exit 0 ;; esac
out=${1:-results}
algos=fast,hier,fanout,auto
[ -x "$fast" ] || { echo "placement_study.sh: $fast not found; run make first" >&2; exit 2; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The OLMoE counts as a routing file: [layer][expert] over layers 0, 7, 15.
python3 - "$tmp/olmoe.json" <<'EOF'
import csv, json, sys
c = {}
with open("data/moe/olmoe_allenai/expert_counts.csv", newline="") as f:
    for r in csv.DictReader(f):
        if (r["model"], r["selection"], r["domain"]) == ("olmoe", "topk", "arxiv"):
            c.setdefault(int(r["layer"]), {})[int(r["expert"])] = int(r["count"])
with open(sys.argv[1], "w") as f:
    json.dump([[c[l][e] for e in range(64)] for l in sorted(c)], f)
EOF

# import_trace MODEL EP PLACEMENT REPLICAS FILE: one trace (REPLICAS - : the
# placement has none, no --replica-choice).
import_trace() {
	local how rc=()
	case $1 in
	deepseek-v2-lite) how=(--source deepseek-v2-lite --tokens) ;;
	olmoe) how=(--routing "$tmp/olmoe.json" --experts 64 --token-bytes 4096) ;;
	esac
	[ "$4" = - ] || rc=(--replica-choice "$4")
	"$fast" trace import "${how[@]}" --ep "$2" --placement "$3" "${rc[@]}" -o "$5" >/dev/null
}

# The routing-file OLMoE import is the bundled one (bytes and compute pairs).
import_trace olmoe 32 contiguous - "$tmp/a.json"
"$fast" trace import --source olmoe --ep 32 -o "$tmp/b.json" >/dev/null
for f in a b; do "$fast" traffic convert "$tmp/$f.json" --to json -o "$tmp/$f.d.json"; done
python3 - "$tmp/a.d.json" "$tmp/b.d.json" <<'EOF'
import json, sys
a, b = ([(m["rows"], m["compute_pairs"]) for m in json.load(open(p))["matrices"]]
        for p in sys.argv[1:])
if a != b:
    sys.exit("placement_study.sh: the OLMoE routing file does not give the bundled traffic")
EOF

# One trace per (model, EP, placement, replica choice); on each preset one
# `fast compare`.  manifest: the CSV's leading columns, the show JSON,
# the compare CSV.
: > "$tmp/manifest"
n=0
for model in deepseek-v2-lite olmoe; do
	traffic=bytes
	[ $model = deepseek-v2-lite ] && traffic=tokens
	for ep in 32 64; do
		servers=$((ep / 8))
		for pl in contiguous round-robin eplb:0 eplb:$ep/local eplb:$((2 * ep))/local \
			eplb:$ep/spread; do
			place=${pl%/*} rc=-
			[ "$place" = "$pl" ] || rc=${pl#*/}
			n=$((n + 1))
			import_trace $model $ep "$place" "$rc" "$tmp/t$n.json"
			"$fast" traffic show "$tmp/t$n.json" --preset h200 --servers $servers --json > "$tmp/s$n.json"
			for preset in h200 mi300x-100g; do
				"$fast" compare --preset $preset --servers $servers --traffic "$tmp/t$n.json" \
					--csv --no-timing --algos $algos > "$tmp/c$n-$preset.csv"
				echo "$model,$ep,$servers,$preset,$traffic,$place,$rc $tmp/s$n.json" \
					"$tmp/c$n-$preset.csv" >> "$tmp/manifest"
			done
			rm "$tmp/t$n.json"
		done
	done
done

# Both CSVs from the manifest.  Dispatch and combine times: compare's total
# rows per phase on token traffic; on byte traffic (no such rows) the sum
# of the phase's matrices, as compare's own total row sums them all.
python3 - "$tmp/manifest" "$tmp/placement.csv" "$tmp/layers.csv" <<'EOF'
import csv, json, sys
man, out, lay = sys.argv[1:]
with open(out, "w") as fo, open(lay, "w") as fl:
    fo.write("model,ep,servers,preset,traffic,placement,replicas,algo,dispatch_s,combine_s,"
             "total_s,bound_s,ratio,bytes_out,imbalance_max,imbalance_mean\n")
    fl.write("model,ep,placement,replicas,layer,compute_imbalance,pairs_max,pairs_mean\n")
    done = set()
    for line in open(man):
        lead, show, comp = line.split()
        f = lead.split(",")
        ms = [m for m in json.load(open(show))["matrices"] if m["label"].endswith("/dispatch")]
        imb = [m["compute_imbalance"] for m in ms]
        if show not in done:
            done.add(show)
            for m in ms:
                layer = int(m["label"].split("/")[0][len("layer"):])
                if f[0] == "olmoe":  # the routing file's layers 0, 1, 2
                    layer = (0, 7, 15)[layer]
                fl.write("%s,%s,%s,%s,%d,%.4f,%d,%.3f\n" % (f[0], f[1], f[5], f[6], layer,
                         m["compute_imbalance"], m["compute_pairs_max"],
                         m["compute_pairs_mean"]))
        phase, tot = {}, {}
        with open(comp, newline="") as fc:
            for r in csv.DictReader(fc):
                a = r["algo"]
                if r["matrix"] == "total":
                    tot.setdefault(a, {})[r["label"]] = float(r["time_s"]), r
                else:
                    k = (a, r["label"].split("/")[-1])
                    phase[k] = phase.get(k, 0.0) + float(r["time_s"])
        for a, t in tot.items():
            d, c = (t[p][0] if p in t else phase[(a, p)] for p in ("dispatch", "combine"))
            r = t["total"][1]
            fo.write("%s,%s,%.6g,%.6g,%s,%s,%s,%s,%.4f,%.4f\n" % (lead, a, d, c, r["time_s"],
                     r["bound_s"], r["ratio"], r["bytes_out"], max(imb), sum(imb) / len(imb)))
EOF
mv "$tmp/layers.csv" "$out/placement_layers.csv"
mv "$tmp/placement.csv" "$out/placement.csv"
echo "wrote $out/placement.csv, $out/placement_layers.csv"
