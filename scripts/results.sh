#!/usr/bin/env bash
# Regenerate the what-if study results: one resumable `fast sweep` per spec
# in results/specs/ (CSV in results/<spec>.csv), the token-traffic study
# (scripts/token_study.sh: results/tokens.csv, named "tokens" below), the
# placement study (scripts/placement_study.sh: results/placement.csv and
# placement_layers.csv, named "placement"), then the figures
# (results/figures/*.png and *.svg, data in results/data/) with gnuplot.
#
#   scripts/results.sh [--full] [--jobs K] [--fast PATH] [--plots-only] [SPEC...]
#
#   --full        also run the slow specs (scale_full: up to 4096 GPUs)
#   --jobs K      worker processes per sweep (default: online cores); the
#                 synthesis-time study always runs with 1 so that timings
#                 do not compete for cores
#   --fast PATH   the fast binary (default build/bin/fast, or $FAST)
#   --plots-only  redraw the figures from the CSVs already there
#   SPEC...       only these specs (names without .json; tokens, placement:
#                 the two studies that are scripts)
#
# Figures for a sweep of your own: scripts/results_plot.py my.csv -o DIR.
# An interrupted run resumes where it stopped (sweeps skip finished rows).
# The default set finishes in well under 15 minutes on 2 cores.  Under
# mpirun, run the sweeps themselves: mpirun -np K fast sweep --spec ...
set -eu
cd "$(dirname "$0")/.."
fast=${FAST:-build/bin/fast}
jobs=""
full=0
plots_only=0
specs=()
while [ $# -gt 0 ]; do
	case $1 in
	--full) full=1 ;;
	--jobs) jobs=$2; shift ;;
	--fast) fast=$2; shift ;;
	--plots-only) plots_only=1 ;;
	-h|--help) sed -n '2,23p' "$0"; exit 0 ;;
	-*) echo "results.sh: unknown option $1" >&2; exit 2 ;;
	*) specs+=("$1") ;;
	esac
	shift
done
if [ ${#specs[@]} = 0 ]; then
	specs=(skew size scale synth moe tokens placement)
	[ $full = 1 ] && specs+=(scale_full)
fi
if [ $plots_only = 0 ]; then
	[ -x "$fast" ] || { echo "results.sh: $fast not found; run make first" >&2; exit 2; }
	for s in "${specs[@]}"; do
		if [ "$s" = tokens ] || [ "$s" = placement ]; then
			echo "== $s"
			t0=$(date +%s)
			bash "scripts/${s/tokens/token}_study.sh" --fast "$fast" results
			echo "   $(( $(date +%s) - t0 )) s"
			continue
		fi
		spec=results/specs/$s.json
		[ -f "$spec" ] || { echo "results.sh: no spec $spec" >&2; exit 2; }
		j=${jobs:+--jobs $jobs}
		[ "$s" = synth ] && j="--jobs 1"
		echo "== $s"
		t0=$(date +%s)
		# shellcheck disable=SC2086
		"$fast" sweep --spec "$spec" -o "results/$s.csv" $j
		echo "   $(( $(date +%s) - t0 )) s"
	done
fi
python3 scripts/results_plot.py results
