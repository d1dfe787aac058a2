#!/usr/bin/env bash
# tests/mpi/run.sh - the MPI stage: `fast run` under mpirun with the host
# backend, 8 ranks (2 servers x 4 GPUs) and 16 ranks (4 x 4), oversubscribed
# on whatever cores there are.
#
#   bash tests/mpi/run.sh build/bin/fast [build/lib/libfast_interpose.so]
#
# Every algorithm (and MPI_Alltoallv) on the fly and every IR algorithm
# replayed from a `fast plan` file, on traffic with zero rows and columns, a
# single hot receiver and random pairs (tests/mpi/data), and on a real MoE
# trace (traces/*.json of the right size, else `fast trace import` from
# the bundled data/moe, else a generated moe pattern), all with -c 1: zero
# wrong bytes; every algorithm again on 2 x 4 with a NIC down and with a
# slow shared NIC, on the fly and replayed.  Then: an unmodified MPI program under LD_PRELOAD of the
# interposer, send/receive counts that disagree between ranks (a clean
# error, never a hang), a rank count that does not fit the topology, a
# staging cap, a size sweep; token traffic run as tokens (dispatch and
# combine, on the fly and replayed, a wrong token plan refused, a corrupted
# byte counted).  Prints "N passed, N failed"; exit 1 on failure.
set -u
FAST=${1:?usage: tests/mpi/run.sh FAST_BINARY [INTERPOSER_SO]}
FAST=$(cd "$(dirname "$FAST")" && pwd)/$(basename "$FAST")
BUILD=$(dirname "$(dirname "$FAST")")
INTERPOSE=${2:-$BUILD/lib/libfast_interpose.so}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Open MPI as root, oversubscribed, in a container: shared memory without
# the CMA single-copy path (ptrace is often not allowed), no core binding.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none
MPIRUN="timeout 120 mpirun --oversubscribe --mca btl self,vader,tcp"
QUICK="-n 2 -w 1 -c 1"

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; sed 's/^/    /' "$TMP/out" | tail -25; }
# run NAME EXPECTED_STATUS CMD...: output in $TMP/out
run() {
	local name=$1 want=$2
	shift 2
	"$@" >"$TMP/out" 2>&1
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "    (exit $got, expected $want)" >>"$TMP/out"
		bad "$name"
		return 1
	fi
	if [ "$want" = 0 ] && ! grep -q "Out of bounds values : 0 OK\|\"wrong\": 0\|0 wrong elements: OK" "$TMP/out"; then
		bad "$name (no zero-wrong summary)"
		return 1
	fi
	ok "$name"
}

# replay_all NP TOPO MIX NAME [ALGOS]: each IR algorithm's (ALGOS, default
# all) `fast plan` file for MIX, merged into one file whose plans k M ..
# k M + M - 1 are algorithm k's (M: MIX's matrices), replayed in one launch
# against MIX's matrices once per algorithm: a row with 0 wrong bytes each.
# An algorithm may carry one option as --algos lists spell it
# (fast:stages=exact: `--algo fast --stages exact`, into ir_fast_stages_exact.json)
IR_ALGOS="fast fast:stages=exact fanout nccl pxn spreadout hier"
replay_all() {
	local np=$1 topo=$2 mix=$3 algos=${5:-$IR_ALGOS} files="" algo rows opt file
	local name="$4: $algos from one plan file"
	for algo in $algos; do
		opt=""
		[ "${algo#*:}" != "$algo" ] && opt="--${algo#*:}" && opt=${opt/=/ }
		file="$TMP/ir_${algo//[:=]/_}.json"
		"$FAST" plan $topo --traffic "$mix" --algo "${algo%%:*}" $opt -o "$file" >"$TMP/out" 2>&1 ||
			{ bad "$name: fast plan --algo $algo"; return 1; }
		files="$files $file"
	done
	rows=$(python3 - "$mix" "$TMP/ir_traffic.json" "$TMP/ir_plans.json" $files <<'PY'
import json, sys
mix, traffic, out, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
t = json.load(open(mix))
m = len(t["matrices"])
t["matrices"] = t["matrices"] * len(files)
json.dump(t, open(traffic, "w"))
ps = json.load(open(files[0]))
ps["plans"] = []
for k, f in enumerate(files):
    one = json.load(open(f))
    ps["version"] = max(ps["version"], one["version"])  # grouped steps: 4
    for p in one["plans"]:
        p["matrix"] += m * k
        ps["plans"].append(p)
json.dump(ps, open(out, "w"))
print(len(ps["plans"]))
PY
	) || { bad "$name: merging the plan files"; return 1; }
	run "$name" 0 $MPIRUN -np "$np" "$FAST" run $topo --traffic "$TMP/ir_traffic.json" \
		--plan "$TMP/ir_plans.json" $QUICK --json &&
		{ [ "$(grep -c '"wrong": 0' "$TMP/out")" = "$rows" ] || bad "$name: not $rows rows with 0 wrong bytes"; }
}

start=$(date +%s)
for cfg in "8 2 4" "16 4 4"; do
	set -- $cfg
	NG=$1 N=$2 G=$3
	TOPO="--preset h200 --servers $N --gpus $G"
	MIX="$HERE/data/mix$NG.json"
	for algo in fast fanout nccl pxn spreadout hier auto mpi; do
		run "np $NG on the fly: $algo (random, zero rows/cols, hot receiver)" 0 \
			$MPIRUN -np "$NG" "$FAST" run $TOPO --traffic "$MIX" --algo $algo $QUICK
	done
	replay_all "$NG" "$TOPO" "$MIX" "np $NG replayed"
	# on 4 x 4 FAST sends these small matrices in rail steps of several
	# shifts (plan version 4, compile_fast_group.c), the redistribution
	# waiting on each pipelined: the run above replayed them; --stages
	# exact keeps one permutation a step
	if [ "$NG" = 16 ]; then
		if grep -q '"perms"' "$TMP/ir_fast_stages_exact.json"; then
			bad "np 16: FAST's exact plan has rail steps of several permutations"
		elif grep -q '"perms"' "$TMP/ir_fast.json" && grep -q '"pipelined"' "$TMP/ir_fast.json"; then
			ok "np 16: FAST's replayed plan has rail steps of several permutations"
		else
			bad "np 16: FAST's replayed plan has no pipelined rail step of several permutations"
		fi
	fi
	# a real MoE trace: bundled, imported from the data set, or generated
	trace=""
	for f in "$ROOT"/traces/*.json; do
		[ -f "$f" ] && grep -q "\"gpus\": *$NG[,}]" "$f" && { trace=$f; break; }
	done
	if [ -z "$trace" ] &&
		"$FAST" trace import --source olmoe --ep "$NG" --gpus-per-server "$G" --layers 0 \
			--data "$ROOT/data/moe" -o "$TMP/trace.json" >/dev/null 2>&1; then
		trace=$TMP/trace.json
	fi
	if [ -z "$trace" ]; then
		"$FAST" gen $TOPO --pattern moe --mean-bytes 64K -o "$TMP/trace.json" >/dev/null 2>&1
		trace=$TMP/trace.json
	fi
	for algo in fast mpi; do
		# scaled so that the largest per-GPU total is 256 KiB
		run "np $NG MoE trace $(basename "$trace") matrix 0: $algo" 0 \
			$MPIRUN -np "$NG" "$FAST" run $TOPO --traffic "$trace" --matrix 0 --algo $algo \
			-b 256K -e 256K $QUICK
	done
done

# NICs as they are (2 x 4): NIC 2 of server 1 down (GPU 6 cut off: its
# bytes go through a proxy GPU over scale-up), and two NICs a server with
# one at half rate (GPUs 2 and 3, the hot receiver one of them, behind
# it).  Every algorithm on the fly where a NIC is down; where one is slow
# only fast and auto (the baselines' plans are the ideal fabric's, run on
# the fly above); every IR algorithm replayed on both (a replayed plan is
# checked: FAST's routes around the down NIC through its peers)
for nic in "--nic 1:2=0" "--nics 2 --nic 0:1=0.5"; do
	TOPO="--preset h200 --servers 2 --gpus 4 $nic"
	case $nic in
	*=0) fly="fast fanout nccl pxn spreadout hier auto" replayed=$IR_ALGOS ;;
	*) fly="fast auto" replayed=$IR_ALGOS ;;
	esac
	for algo in $fly; do
		run "np 8 $nic on the fly: $algo" 0 \
			$MPIRUN -np 8 "$FAST" run $TOPO --traffic "$HERE/data/mix8.json" --algo $algo $QUICK
	done
	replay_all 8 "$TOPO" "$HERE/data/mix8.json" "np 8 $nic replayed" "$replayed"
done

# packed FAST stages in waves: 8 x 2, 7 shifts on 2 rails (4 waves, each
# waiting for the one before on its rails), replayed from a plan file
if "$FAST" plan --preset h200 --servers 8 --gpus 2 --traffic "$HERE/data/mix16.json" \
	--stages packed -o "$TMP/packed.json" >"$TMP/out" 2>&1; then
	run "np 16 replay: fast --stages packed on 8 x 2 (4 waves)" 0 \
		$MPIRUN -np 16 "$FAST" run --preset h200 --servers 8 --gpus 2 \
		--traffic "$HERE/data/mix16.json" --plan "$TMP/packed.json" $QUICK
else
	bad "fast plan --stages packed on 8 x 2"
fi

# a rail step of several permutations (plan version 4): both shifts of
# 3 x 2 at once, each GPU sending to two servers in one step
run "np 6 replay: fast, one rail step of two permutations (3 x 2)" 0 \
	$MPIRUN -np 6 "$FAST" run --preset h200 --servers 3 --gpus 2 \
	--traffic "$ROOT/tests/golden/check_ok_grouped/t.json" \
	--plan "$ROOT/tests/golden/check_ok_grouped/plan.json" $QUICK

# token traffic (dispatch and combine of token groups) run as tokens: fast
# and hier compile token plans on the fly (deduplicated per server, from the
# groups gathered from every rank's own) and replay them from `fast plan`
# files; every row must move its token groups ("moves") with 0 wrong bytes
# (dispatch rows carry their token's identity, combine sums are checked
# byte by byte).  On 16 ranks also DeepSeek-V2-Lite's routing of layer 1
# (EP16, 64-byte tokens to keep it small).
# tokrows NAME FILE: 2 rows, one dispatch and one combine, 0 wrong each
tokrows() {
	if [ "$(grep -c '"wrong": 0, .*"moves": "dispatch"' "$TMP/out")" != 1 ] ||
		[ "$(grep -c '"wrong": 0, .*"moves": "combine"' "$TMP/out")" != 1 ]; then
		bad "$1: not one dispatch and one combine row of token groups with 0 wrong bytes"
	fi
}
for cfg in "8 2 4" "16 4 4"; do
	set -- $cfg
	NG=$1 N=$2 G=$3
	TOPO="--preset h200 --servers $N --gpus $G"
	toks="$TMP/tok$NG.json"
	"$FAST" gen $TOPO --pattern moe --token-groups --tokens 48 --token-bytes 192 -o "$toks" >"$TMP/out" 2>&1 ||
		bad "np $NG: fast gen --token-groups"
	if [ "$NG" = 16 ] && "$FAST" trace import --source deepseek-v2-lite --data "$ROOT/data/moe" \
		--ep 16 --gpus-per-server 4 --layers 1 --domain intent --tokens --token-bytes 64 \
		-o "$TMP/ds16.json" >"$TMP/out" 2>&1; then
		toks="$toks $TMP/ds16.json"
	fi
	for tf in $toks; do
		for algo in fast hier; do
			run "np $NG tokens on the fly: $algo on $(basename "$tf")" 0 \
				$MPIRUN -np "$NG" "$FAST" run $TOPO --traffic "$tf" --algo $algo $QUICK --json &&
				tokrows "np $NG tokens on the fly: $algo"
			if "$FAST" plan $TOPO --traffic "$tf" --algo $algo -o "$TMP/tplan.json" >"$TMP/out" 2>&1; then
				run "np $NG tokens replayed: $algo plan file of $(basename "$tf")" 0 \
					$MPIRUN -np "$NG" "$FAST" run $TOPO --traffic "$tf" --plan "$TMP/tplan.json" $QUICK --json &&
					tokrows "np $NG tokens replayed: $algo"
			else
				bad "np $NG fast plan --algo $algo on $(basename "$tf")"
			fi
		done
	done
done
TOK8=$TMP/tok8.json
TOPO8="--preset h200 --servers 2 --gpus 4"
# a wrong token plan: the hier dispatch plan with one piece dropped from a
# transfer of its last steps, so that a destination misses a token; the
# checker refuses it before anything runs (exit 1, said once)
"$FAST" plan $TOPO8 --traffic "$TOK8" --algo hier -o "$TMP/tplan.json" >/dev/null 2>&1
if python3 - "$TMP/tplan.json" "$TMP/tbad.json" <<'PY'
import json, sys
ps = json.load(open(sys.argv[1]))
for st in reversed(ps["plans"][0]["steps"]):
    xs = [x for x in st.get("transfers", []) if len(x[2]) >= 2]
    if xs:
        xs[-1][2].pop()
        break
else:
    sys.exit(1)
json.dump(ps, open(sys.argv[2], "w"))
PY
then
	run "tokens: a dispatch plan missing a token is refused (exit 1)" 1 \
		$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TOK8" --plan "$TMP/tbad.json" -n 1 -w 0 &&
		{ [ "$(grep -c 'check failed: group [0-9]* (GPU [0-9], [0-9]* tokens) bytes [0-9.]* never reach GPU' "$TMP/out")" = 1 ] ||
			bad "tokens: the refusal names the group and GPU, once"; }
else
	bad "tokens: could not mutate the hier plan"
fi
# groups in any order (the loader takes any): the same traffic with its
# groups reversed, on the fly (served sorted by src, as gathered) and
# replayed (the file's own order, as the plan names the groups)
python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
for m in t["matrices"]:
    m["groups"].reverse()
json.dump(t, open(sys.argv[2], "w"))' "$TOK8" "$TMP/tokrev.json"
run "tokens: groups not in src order, on the fly" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TMP/tokrev.json" --algo fast $QUICK --json &&
	tokrows "tokens: groups not in src order, on the fly"
if "$FAST" plan $TOPO8 --traffic "$TMP/tokrev.json" --algo hier -o "$TMP/trev.json" >"$TMP/out" 2>&1; then
	run "tokens: groups not in src order, replayed" 0 \
		$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TMP/tokrev.json" --plan "$TMP/trev.json" $QUICK --json &&
		tokrows "tokens: groups not in src order, replayed"
else
	bad "tokens: fast plan on reversed groups"
fi
# a token plan serves token traffic of its kind: against the byte matrix
# of the same router it is bad input (exit 3), said once
"$FAST" gen $TOPO8 --pattern moe --tokens 48 --token-bytes 192 -o "$TMP/b8.json" >/dev/null 2>&1
run "tokens: a token plan for a byte matrix is refused (exit 3)" 3 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TMP/b8.json" --plan "$TMP/tplan.json" -n 1 -w 0 &&
	{ [ "$(grep -c 'plans/0: a dispatch plan cannot serve a bytes matrix' "$TMP/out")" = 1 ] ||
		bad "tokens: the kind refusal not said once"; }
# a plan for another topology of the same GPU count (2 x 4 on 4 x 2): refused
# up front, naming the file and plan, before any header or row
run "tokens: a plan for another topology is refused up front (exit 3)" 3 \
	$MPIRUN -np 8 "$FAST" run --preset h200 --servers 4 --gpus 2 --traffic "$TOK8" --plan "$TMP/tplan.json" -n 1 -w 0 &&
	{ [ "$(grep -c "tplan.json: /plans/0: the plan is for 2 servers x 4 GPUs, the topology has 4 x 2" "$TMP/out")" = 1 ] &&
		! grep -q '^# matrix' "$TMP/out" || bad "tokens: the topology refusal not said once, up front"; }
# the check counts what is wrong: one flipped byte received by rank 3 in
# each of the two rows (FAST_TEST_CORRUPT_RANK), exit 1
run "tokens: a corrupted receive buffer counts as wrong (exit 1)" 1 \
	env FAST_TEST_CORRUPT_RANK=3 $MPIRUN -x FAST_TEST_CORRUPT_RANK -np 8 "$FAST" run $TOPO8 \
	--traffic "$TOK8" --algo fast -n 1 -w 0 &&
	{ grep -q "Out of bounds values : 2 FAILED" "$TMP/out" || bad "tokens: 2 wrong bytes not reported"; }
# a byte algorithm runs token traffic through its per-GPU byte matrix
run "tokens: fanout runs the per-GPU bytes" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TOK8" --algo fanout $QUICK --json &&
	{ [ "$(grep -c '"wrong": 0, .*"moves": "bytes"' "$TMP/out")" = 2 ] || bad "tokens: fanout rows do not move bytes"; }
# a staging cap on token programs (57 KiB / 74 KiB uncapped): every group
# sliced into passes, no rank's arena over 8 KiB
run "tokens: --max-staging 8K runs in passes" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TOK8" --algo fast --max-staging 8K $QUICK --json &&
	tokrows "tokens: --max-staging" &&
	{ [ "$(grep -c '"staging_bytes": \([0-9]\{1,3\}\|[0-7][0-9]\{3\}\|8[01][0-9][0-9]\|819[0-2]\), "passes": \([2-9]\|[1-9][0-9]\)' "$TMP/out")" = 2 ] ||
		bad "tokens: --max-staging: rows not within 8 KiB in several passes"; }
run "tokens: a size sweep of token rows is refused (exit 2)" 2 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$TOK8" --algo fast -b 1K -e 4K $QUICK &&
	{ [ "$(grep -c 'matrix 0 (.step0/dispatch.) runs as token groups' "$TMP/out")" = 1 ] || bad "tokens: sweep refusal not said once"; }

# ranks that disagree (MPMD: ranks 4-7 get something else): options and
# input contents are agreed at start, a clear error said once, never a hang
# (the 30 s timeout would make it exit 124)
MPMD="timeout 30 mpirun --oversubscribe --mca btl self,vader,tcp"
# mpmd NAME STATUS MESSAGE ARGS_OF_RANKS_4_7...: ranks 0-3 run the default
mpmd() {
	local name=$1 want=$2 msg=$3
	shift 3
	run "ranks disagree: $name (exit $want, said once)" "$want" \
		$MPMD -np 4 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 $QUICK : \
		-np 4 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 $QUICK "$@" &&
		{ [ "$(grep -c -- "$msg" "$TMP/out")" = 1 ] || bad "$name: expected '$msg' once"; }
}
mpmd "-n" 2 "ranks disagree on -n: rank 0 has 2, rank 4 has 5" -n 5
mpmd "-w" 2 "ranks disagree on -w: rank 0 has 1, rank 4 has 3" -w 3
mpmd "-b/-e" 2 "ranks disagree on -b: rank 0 has 0, rank 4 has 1024" -b 1K -e 4K
mpmd "--max-staging" 2 "ranks disagree on --max-staging: rank 0 has 0, rank 4 has 4096" --max-staging 4K
mpmd "--in-flight" 2 "ranks disagree on --in-flight: rank 0 has 0, rank 4 has 1" --in-flight 1
mpmd "--algo" 2 "ranks disagree on --algo: rank 0 has 'fast', rank 4 has 'pxn'" --algo pxn
# ranks 4-7 read a file whose row 0 differs (their counts would disagree)
mpmd "--traffic contents" 3 "ranks disagree on --traffic: rank 4 loaded other contents than rank 0" \
	--traffic "$HERE/data/mix8_bad.json"
# token files of one byte view but other groups (tok8_regrouped.json: GPU
# 0's tokens [2, 5] and [2, 7] regrouped as [2, 5, 7] and [2]): their
# programs differ, so the contents must disagree, not run wrong bytes
run "ranks disagree: token groups of one byte view (exit 3, said once)" 3 \
	$MPMD -np 4 "$FAST" run $TOPO8 --traffic "$HERE/data/tok8.json" --algo fast -n 1 -w 0 : \
	-np 4 "$FAST" run $TOPO8 --traffic "$HERE/data/tok8_regrouped.json" --algo fast -n 1 -w 0 &&
	{ [ "$(grep -c -- "ranks disagree on --traffic: rank 4 loaded other contents than rank 0" "$TMP/out")" = 1 ] ||
		bad "token groups: expected the --traffic disagreement once"; }
run "a bad input on some ranks only: said once, exit 3 everywhere" 3 \
	$MPMD -np 6 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" $QUICK : \
	-np 2 "$FAST" run $TOPO8 --traffic "$HERE/data/missing.json" $QUICK &&
	{ [ "$(grep -c 'missing.json' "$TMP/out")" = 1 ] || bad "bad input on some ranks: not said exactly once"; }
run "a usage error on every rank: said once" 2 \
	$MPMD -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --bogus &&
	{ [ "$(grep -c "unknown option '--bogus'" "$TMP/out")" = 1 ] || bad "usage error: not said exactly once"; }
# a plan file with fewer plans than the traffic has matrices: refused before
# anything runs (no result row), as fast check refuses it
if "$FAST" plan $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 -o "$TMP/plan1.json" >"$TMP/out" 2>&1; then
	run "fewer plans than matrices: refused up front" 3 \
		$MPMD -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --plan "$TMP/plan1.json" $QUICK &&
		{ grep -q "holds 1 plans but .* has 3 matrices" "$TMP/out" && ! grep -q '^ *0 ' "$TMP/out" ||
			bad "fewer plans: message or a row that ran"; }
else
	bad "fast plan --matrix 0"
fi
run "a broken plan file fails the check on every rank, said once" 1 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 \
	--plan "$HERE/data/pxn8_broken_plan.json" $QUICK &&
	{ [ "$(grep -c 'does not hold' "$TMP/out")" = 1 ] || bad "broken plan: the reason not said exactly once"; }
run "rank count that does not fit the topology" 3 \
	$MPIRUN -np 4 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" $QUICK &&
	{ grep -q "4 MPI ranks for a topology of 8 GPUs" "$TMP/out" || bad "size mismatch message"; }
run "--max-staging splits into passes" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo fast --max-staging 4K --json $QUICK &&
	{ grep -q '"passes": [2-9]' "$TMP/out" || bad "--max-staging: no extra passes"; }
# waves in flight (exec/README.md): two by default on the host backend, one
# when asked; both deliver every byte, with the staging cap too
for k in 1 2; do
	run "--in-flight $k: every byte, said in the header" 0 \
		$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo fast --in-flight $k $QUICK &&
		{ grep -q "check 1, $k waves\? in flight" "$TMP/out" || bad "--in-flight $k: header"; }
done
run "--in-flight default is 2 on the host backend, with --max-staging" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo hier --max-staging 4K --json $QUICK &&
	{ grep -q '"in_flight": 2' "$TMP/out" || bad "--in-flight default: not 2 in the JSON"; }
run "-b/-e/-f sweep" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 2 --algo fast -b 1K -e 16K -f 4 $QUICK &&
	{ [ "$(grep -c '^ *2 hot-receiver' "$TMP/out")" = 3 ] || bad "sweep: expected 3 rows"; }
# nccl-tests' conventions: the sizes of -b/-e/-f are exactly the sizes run
# (the scaled matrix's largest per-GPU total), -e only when the series lands
# on it; the closing lines; NCCL_TESTS_MIN_BW; -b with --plan refused
run "-b/-e/-f sizes exact, closing lines" 0 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 2 --algo fast -b 1000 -e 16K -f 3 $QUICK &&
	{ sizes=$(awk '$2 == "hot-receiver" { printf "%s ", $3 }' "$TMP/out")
	  [ "$sizes" = "1000 3000 9000 " ] || bad "sweep sizes: '$sizes', expected 1000 3000 9000"
	  avg=$(awk '$2 == "hot-receiver" { s += $9; n++ } END { printf "%.3f", s / n }' "$TMP/out")
	  got=$(sed -n 's/^# Avg bus bandwidth    : \([0-9.e+-]*\) $/\1/p' "$TMP/out")
	  # the mean of the busbw column (printed to 3 decimals)
	  [ -n "$got" ] && awk -v a="$avg" -v g="$got" 'BEGIN { d = a - g; exit !(d < 0.002 && d > -0.002) }' &&
		tail -1 "$TMP/out" | grep -qx '#' ||
		bad "closing lines: '# Avg bus bandwidth    : $avg ' then '#' expected"; }
run "progress: FAST_PROGRESS=1 under mpirun (stderr a pipe), none without" 0 \
	env FAST_PROGRESS=1 $MPIRUN -x FAST_PROGRESS -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo fast $QUICK &&
	{ grep -qaF $'\r''run 1/3' "$TMP/out" || bad "progress: no 'run 1/3' with FAST_PROGRESS=1"; } &&
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo fast $QUICK >"$TMP/out" 2>&1 &&
	{ ! grep -qa $'\r' "$TMP/out" || bad "progress: a carriage return without FAST_PROGRESS"; }
# no --servers/--gpus: the shape comes from the traffic (8 GPUs on h200: 1 x 8)
run "shape from the traffic: --preset h200 alone, 8 GPUs = 1 x 8" 0 \
	$MPIRUN -np 8 "$FAST" run --preset h200 --traffic "$ROOT/traces/mixtral-arxiv-ep8.json" --matrix 0 -b 64K -e 64K $QUICK &&
	{ grep -q 'topology h200 (1 servers x 8 GPUs)' "$TMP/out" || bad "shape from the traffic: not 1 x 8"; }
run "NCCL_TESTS_MIN_BW above the average fails" 1 \
	env NCCL_TESTS_MIN_BW=1000000 $MPIRUN -x NCCL_TESTS_MIN_BW -np 8 "$FAST" run $TOPO8 \
	--traffic "$HERE/data/mix8.json" --matrix 2 --algo fast $QUICK &&
	{ grep -q '^# Avg bus bandwidth    : [0-9.e+-]* FAILED$' "$TMP/out" &&
	  [ "$(grep -c 'below 90% of NCCL_TESTS_MIN_BW' "$TMP/out")" = 1 ] || bad "NCCL_TESTS_MIN_BW: FAILED line or message"; }
run "-b/-e with --plan: refused, said once" 2 \
	$MPIRUN -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 \
	--plan "$TMP/plan1.json" -b 1K -e 4K $QUICK &&
	{ [ "$(grep -c 'a --plan holds fixed byte counts: sweep with --algo NAME' "$TMP/out")" = 1 ] || bad "-b with --plan: message"; }
# the memory a row needs, checked before anything is allocated, per
# machine: what its ranks need together against what it has (here
# FAST_MEM_AVAILABLE; all 8 ranks on this one).  The random matrix at 16M
# needs 388 MiB of buffers and their host copies and 39 MiB of staging in
# all: with 400M it is refused with a --max-staging under which every
# machine fits, which then runs
MEM="env FAST_MEM_AVAILABLE=400M $MPIRUN -x FAST_MEM_AVAILABLE"
run "memory: staging over what the machine has, --max-staging suggested" 3 \
	$MEM -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 -b 16M -e 16M -n 1 -w 0 &&
	{ [ "$(grep -c 'not enough memory on host [^ ]*: its 8 ranks need [0-9.]* MiB in total (.*) and 400 MiB is available (FAST_MEM_AVAILABLE): give --max-staging 1M$' "$TMP/out")" = 1 ] || bad "memory: --max-staging advice not said once"; }
run "memory: the suggested --max-staging runs" 0 \
	$MEM -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 -b 16M -e 16M -n 1 -w 0 --max-staging 1M
run "memory: buffers over what the machine has, a size suggested" 3 \
	env FAST_MEM_AVAILABLE=1M $MPIRUN -x FAST_MEM_AVAILABLE -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 0 -b 16M -e 16M -n 1 -w 0 &&
	{ [ "$(grep -c 'not enough memory on host .* run a smaller size (-b [0-9]* -e [0-9]* scale the matrix)' "$TMP/out")" = 1 ] || bad "memory: size advice not said once"; }
# a hot receiver (GPU 3 receives 16M, the others send about 2.4M): rank 3
# alone needs 32 MiB, over an equal share of 160M (20 MiB a rank), but the
# 8 ranks together need 74 MiB of the 160: it runs (issue 23: an equal
# share refused it)
run "memory: a hot receiver over an equal share, within the machine's total, runs" 0 \
	env FAST_MEM_AVAILABLE=160M $MPIRUN -x FAST_MEM_AVAILABLE -np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --matrix 2 -b 16M -e 16M -n 1 -w 0 -c 1

# fast check and fast run accept the same plans: checker-accepted mutants
# (duplicate forwards, spare copies, reordered steps: tests/mpi/mutate.h) of
# every algorithm, as multi-matrix plan files, one launch per shape
MUTANTS=$BUILD/bin/tests/plan_mutants
if [ -x "$MUTANTS" ]; then
	t0=$(date +%s) total=0
	for cfg in "2 2 80" "3 2 80" "2 3 80" "2 4 80"; do
		set -- $cfg
		np=$(($1 * $2))
		if ! "$MUTANTS" "$1" "$2" "$3" "$np$1" "$TMP/mut.json" "$TMP/mut_traffic.json" >"$TMP/out" 2>&1; then
			bad "plan_mutants $1 x $2"
			continue
		fi
		gen=$(cat "$TMP/out")
		run "mutants on $1 x $2: $gen" 0 \
			$MPIRUN -np "$np" "$FAST" run --preset h200 --servers "$1" --gpus "$2" \
			--plan "$TMP/mut.json" --traffic "$TMP/mut_traffic.json" -n 1 -w 0 -c 1 --json || continue
		rows=$(grep -c '"wrong": 0' "$TMP/out")
		if [ "$rows" != "$3" ] || grep -q '"wrong": [1-9]' "$TMP/out"; then
			bad "mutants on $1 x $2: $rows of $3 rows with 0 wrong bytes"
		else
			total=$((total + rows))
		fi
	done
	echo "# $total mutated plans replayed in $(($(date +%s) - t0)) s"
else
	bad "mutants: $MUTANTS missing (make tests-build)"
fi

# a rank that dies mid-job: Open MPI must end the whole job, naming the rank,
# within the timeout (exit 124 from timeout would mean a hang)
t0=$(date +%s)
FAST_TEST_KILL_RANK=3 timeout 60 mpirun --oversubscribe --mca btl self,vader,tcp -x FAST_TEST_KILL_RANK \
	-np 8 "$FAST" run $TOPO8 --traffic "$HERE/data/mix8.json" --algo fast $QUICK >"$TMP/out" 2>&1
got=$?
if [ "$got" = 0 ] || [ "$got" = 124 ] || [ "$got" = 137 ]; then
	echo "    (exit $got)" >>"$TMP/out"
	bad "a dead rank ends the job (exit $got)"
elif ! grep -q "process rank 3" "$TMP/out"; then
	bad "a dead rank ends the job, but mpirun did not name rank 3"
else
	ok "a dead rank ends the job in $(($(date +%s) - t0)) s (exit $got, rank 3 named)"
fi

# an unmodified MPI program, its MPI_Alltoallv replaced through LD_PRELOAD
if [ -f "$INTERPOSE" ] && mpicc -O2 -o "$TMP/alltoallv_prog" "$HERE/alltoallv_prog.c" 2>"$TMP/out"; then
	for cfg in "8 2" "16 4"; do
		set -- $cfg
		run "interposer: alltoallv_prog on $1 ranks" 0 \
			env FAST_PRESET=h200 FAST_SERVERS=$2 FAST_GPUS=4 FAST_INTERPOSE_VERBOSE=1 \
			$MPIRUN -np "$1" -x FAST_PRESET -x FAST_SERVERS -x FAST_GPUS -x FAST_INTERPOSE_VERBOSE \
			-x LD_PRELOAD="$INTERPOSE" "$TMP/alltoallv_prog" 6 || continue
		if ! grep -q "0 wrong elements: OK" "$TMP/out" || ! grep -q "6 calls through fast" "$TMP/out"; then
			bad "interposer on $1 ranks: calls not intercepted or wrong"
		fi
	done
	# a preloaded interposer that cannot work says why, once, on rank 0
	# (FAST_PRESET without the shape: 4 x 8 on 8 ranks), unless told quiet
	for q in 0 1; do
		env FAST_PRESET=h200 FAST_INTERPOSE_QUIET=$q $MPIRUN -np 8 -x FAST_PRESET \
			-x FAST_INTERPOSE_QUIET -x LD_PRELOAD="$INTERPOSE" "$TMP/alltoallv_prog" 2 \
			>"$TMP/out" 2>&1
		got=$?
		n=$(grep -c "passes through: the communicator has 8 ranks, the topology 4 x 8 = 32 GPUs (for 8 ranks: FAST_SERVERS=1 FAST_GPUS=8)" "$TMP/out")
		want=$((1 - q))
		if [ $got = 0 ] && [ "$n" = $want ] && grep -q "0 wrong elements: OK" "$TMP/out"; then
			ok "interposer without a shape (quiet=$q): $n line saying why it passes through"
		else
			bad "interposer without a shape (quiet=$q): exit $got, $n lines saying why (want $want)"
		fi
	done
	# receive counts that disagree with what the others send: the call fails
	# on every rank, each saying why, within the timeout
	env FAST_PRESET=h200 FAST_SERVERS=2 FAST_GPUS=4 ${MPIRUN/timeout 120/timeout 30} -np 8 \
		-x FAST_PRESET -x FAST_SERVERS -x FAST_GPUS -x LD_PRELOAD="$INTERPOSE" \
		"$TMP/alltoallv_prog" mismatch >"$TMP/out" 2>&1
	got=$?
	if [ "$got" = 0 ] && grep -q "failed on 8 of 8 ranks: OK" "$TMP/out" &&
		[ "$(grep -c 'counts disagree' "$TMP/out")" -ge 8 ]; then
		ok "interposer: counts that disagree fail cleanly on every rank"
	else
		echo "    (exit $got)" >>"$TMP/out"
		bad "interposer: counts that disagree"
	fi
else
	bad "interposer: $INTERPOSE missing or alltoallv_prog does not compile"
fi

# the cuda backend's host-side logic (IPC protocol, host staging) on a mock
# device: exec/ rebuilt with -DFAST_WITH_CUDA against tests/gpu/mock_gpu.c
if bash "$ROOT/tests/gpu/mock_check.sh" "$BUILD" >"$TMP/out" 2>&1; then
	ok "cuda backend on the mock device ($(tail -1 "$TMP/out"))"
else
	bad "cuda backend on the mock device"
fi

echo "# MPI stage: $(($(date +%s) - start)) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
