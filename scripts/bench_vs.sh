#!/usr/bin/env bash
# The expansion-heavy commands, timed side by side with another revision:
#
#   scripts/bench_vs.sh [-n REPS] [--servers N] [--gpus G] [--expansions | --instructions]
#                       REV [NEW]
#   make bench-vs REV=rev [REPS=7] [SERVERS=40]
#
# Builds REV (any git revision) in a temporary worktree under build/
# (removed on exit) and times `fast inspect`, `fast check`, `fast gate
# --plan`, `fast sim --plan` and `fast export` with REV's binary and with
# NEW (default build/bin/fast, this tree's), on one plan: `fast plan --algo
# fast` for Zipf traffic (64 MiB per GPU, seed 1) on h200 SERVERS x G
# (default 40 x 8), made by the binary whose files both read (the older).  Each repetition runs every command with
# both binaries, interleaved (the order of the two alternating between
# repetitions), so both see the same machine load.  Reported per command:
# median and interquartile range [q1..q3] of the CPU time (user + system:
# on a shared machine the wall time measures the neighbours), the ratio
# old / new of the medians (> 1: NEW is faster), the median wall time, and
# whether both printed the same stdout; `uptime` before and after.
#
# --expansions counts instead how often each command expands and validates
# a plan: calls of fast_plan_expand and fast_plan_validate under gdb
# (breakpoints with a large ignore count, so the run never stops; a hit
# whose caller is the function itself is not counted: GCC may split a
# function into an inlined head and an out-of-line body, two locations for
# one call).  Needs gdb with Python ($_caller_is) and the -g build both
# binaries have.
# --instructions counts the instructions each command executes, and those
# inside fast_plan_expand, under callgrind (valgrind): a figure the load of
# a shared machine does not move, for differences too small for its CPU
# times (one run each; about 50 times slower than the command).
#
# Needs bash, git, make, awk; gdb for --expansions, valgrind for
# --instructions.
set -eu
reps=7
servers=40
gpus=8
expansions=0
instructions=0
while [ $# -gt 0 ]; do
	case $1 in
	-n) reps=$2; shift 2 ;;
	--servers) servers=$2; shift 2 ;;
	--gpus) gpus=$2; shift 2 ;;
	--expansions) expansions=1; shift ;;
	--instructions) instructions=1; shift ;;
	-h|--help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench_vs.sh: unknown option '$1'" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: scripts/bench_vs.sh [-n REPS] [--servers N] [--gpus G] [--expansions | --instructions] REV [NEW]" >&2
	exit 2
fi
rev=$1
new=$(realpath "${2:-build/bin/fast}")
root=$(git rev-parse --show-toplevel)
sha=$(git rev-parse --short "$rev^{commit}")
[ -x "$new" ] || { echo "bench_vs.sh: $new: no such binary (make all first)" >&2; exit 2; }

wt="$root/build/bench-vs-$sha-$$" # this run's own: two runs may overlap
made_wt=0
tmp=$(mktemp -d)
cleanup() {
	rm -rf "$tmp"
	if [ "$made_wt" = 1 ]; then
		git -C "$root" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
		git -C "$root" worktree prune
	fi
}
trap cleanup EXIT
mkdir -p "$root/build"
git -C "$root" worktree add --detach -q "$wt" "$sha"
made_wt=1
echo "building $rev ($sha) in $wt ..." >&2
make -C "$wt" -j2 build/bin/fast >"$tmp/build.log" 2>&1 ||
	{ tail -20 "$tmp/build.log" >&2; echo "bench_vs.sh: building $sha failed" >&2; exit 4; }
old="$tmp/fast-$sha"
cp "$wt/build/bin/fast" "$old"

topo=(--preset h200 --servers "$servers" --gpus "$gpus")
# the inputs in a format both binaries read: the older's (a newer build
# reads older versions), else the other's
made=
for maker in "$old" "$new"; do
	"$maker" gen "${topo[@]}" --pattern zipf --seed 1 -o "$tmp/t.json" >/dev/null 2>&1 &&
		"$maker" plan "${topo[@]}" --traffic "$tmp/t.json" --algo fast -o "$tmp/p.json" \
			>/dev/null 2>&1 &&
		"$old" check "${topo[@]}" --plan "$tmp/p.json" --traffic "$tmp/t.json" >/dev/null 2>&1 &&
		"$new" check "${topo[@]}" --plan "$tmp/p.json" --traffic "$tmp/t.json" >/dev/null 2>&1 &&
		{ made=$maker; break; }
done
[ -n "$made" ] || { echo "bench_vs.sh: no traffic and plan file that both binaries read" >&2; exit 3; }
names=(inspect check gate sim export)
args=(
	"inspect --plan $tmp/p.json"
	"check ${topo[*]} --plan $tmp/p.json --traffic $tmp/t.json"
	"gate ${topo[*]} --plan $tmp/p.json --traffic $tmp/t.json --max-ratio 100"
	"sim ${topo[*]} --plan $tmp/p.json --traffic $tmp/t.json"
	"export --plan $tmp/p.json -o $tmp/out.xml"
)

if [ "$expansions" = 1 ]; then
	echo "calls per command (gdb): fast_plan_expand / fast_plan_validate; h200 $servers x $gpus zipf, fast plan"
	printf '%-8s %10s %10s\n' command "$sha" new
	for i in "${!names[@]}"; do
		row=()
		for bin in "$old" "$new"; do
			# shellcheck disable=SC2016,SC2086 # gdb's $_caller_is; the command's words
			n=$(gdb -batch -nx -ex 'set breakpoint pending on' \
				-ex 'break fast_plan_expand if !$_caller_is("fast_plan_expand")' \
				-ex 'break fast_plan_validate if !$_caller_is("fast_plan_validate")' \
				-ex 'ignore 1 100000000' -ex 'ignore 2 100000000' -ex run -ex 'info breakpoints' \
				--args "$bin" ${args[$i]} 2>/dev/null |
				awk '/^[0-9]+ +breakpoint/ { b = $1 } /already hit/ { h[b] = $4 }
				     END { printf "%d / %d", h[1], h[2] }')
			row+=("$n")
		done
		printf '%-8s %10s %10s\n' "${names[$i]}" "${row[0]}" "${row[1]}"
	done
	exit 0
fi

if [ "$instructions" = 1 ]; then
	echo "instructions per command (callgrind, millions): all / in fast_plan_expand; h200 $servers x $gpus zipf, fast plan"
	printf '%-8s %22s %22s %9s\n' command "$sha" new old/new
	for i in "${!names[@]}"; do
		row=()
		for bin in "$old" "$new"; do
			# shellcheck disable=SC2086 # the command's words
			valgrind -q --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" ${args[$i]} \
				>/dev/null 2>&1 || true
			row+=("$(callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null | awk '
				{ gsub(",", "", $1) }
				/PROGRAM TOTALS/ { all = $1 }
				# the function, or the body GCC split off (its head may be
				# inlined): the largest inclusive count holds every call
				/[:]fast_plan_expand(\.part\.[0-9]+)? / { if ($1 + 0 > ex + 0) ex = $1 + 0 }
				END { printf "%.1f / %.1f", all / 1e6, ex / 1e6 }')")
		done
		ratio=$(awk -v a="${row[0]%% *}" -v b="${row[1]%% *}" 'BEGIN { printf "%.2fx", a / b }')
		printf '%-8s %22s %22s %9s\n' "${names[$i]}" "${row[0]}" "${row[1]}" "$ratio"
	done
	exit 0
fi

# one timed run: "cpu_s wall_s" appended to $tmp/<cmd>.<which>
timed() {
	local which=$1 bin=$2 i=$3
	local TIMEFORMAT='%3U %3S %3R' # bash's time: the child's rusage, in ms
	# shellcheck disable=SC2086 # the command's words
	{ time "$bin" ${args[$i]} >"$tmp/stdout.$which" 2>/dev/null; } 2>"$tmp/time" || true
	awk '{ printf "%.3f %.3f\n", $1 + $2, $3 }' "$tmp/time" >>"$tmp/${names[$i]}.$which"
}

echo "load before: $(uptime)"
for ((r = 0; r < reps; r++)); do
	for i in "${!names[@]}"; do
		if ((r % 2 == 0)); then
			timed old "$old" "$i"
			timed new "$new" "$i"
		else
			timed new "$new" "$i"
			timed old "$old" "$i"
		fi
		if ((r == 0)); then
			# both read the same files: the same stdout unless REV prints otherwise
			cmp -s "$tmp/stdout.old" "$tmp/stdout.new" && echo same >"$tmp/${names[$i]}.same" ||
				echo differs >"$tmp/${names[$i]}.same"
		fi
	done
done
echo "load after:  $(uptime)"

# median and quartiles (nearest rank) of column c of a file
stats() {
	sort -n -k"$2,$2" "$1" | awk -v c="$2" '{ v[NR] = $c }
		END { q1 = int((NR + 3) / 4); q3 = int((3 * NR + 3) / 4); m = int((NR + 1) / 2)
		      med = NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2
		      printf "%.3f %.3f %.3f\n", med, v[q1], v[q3] }'
}
echo
maker=new; [ "$made" = "$old" ] && maker=$sha
echo "h200 $servers x $gpus, zipf 64 MiB/GPU, fast plan ($(wc -c <"$tmp/p.json") bytes, made by $maker); $reps runs each, interleaved"
echo "CPU s (user+sys): median [q1..q3]; wall s: median"
printf '%-8s  %-24s %-24s %9s  %9s %9s  %s\n' command "old $sha" new old/new "wall old" "wall new" stdout
for i in "${!names[@]}"; do
	n=${names[$i]}
	read -r om oq1 oq3 < <(stats "$tmp/$n.old" 1)
	read -r nm nq1 nq3 < <(stats "$tmp/$n.new" 1)
	read -r ow _ _ < <(stats "$tmp/$n.old" 2)
	read -r nw _ _ < <(stats "$tmp/$n.new" 2)
	ratio=$(awk -v a="$om" -v b="$nm" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
	printf '%-8s  %-24s %-24s %9s  %9s %9s  %s\n' "$n" "$om [$oq1..$oq3]" "$nm [$nq1..$nq3]" \
		"$ratio" "$ow" "$nw" "$(cat "$tmp/$n.same")"
done
