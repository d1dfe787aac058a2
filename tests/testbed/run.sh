#!/usr/bin/env bash
# tests/testbed/run.sh - the testbed stage: `fast run` over a real network,
# an emulated cluster of 4 servers x 4 ranks (scripts/testbed.sh, 200 Mbit/s
# rails).
#
#   bash tests/testbed/run.sh build/bin/fast
#
# Every algorithm and MPI_Alltoallv on the fly, every IR algorithm replayed
# from a `fast plan` file, each on three matrices in one traffic file:
# random, Zipf, and a bundled real trace (traces/olmoe-c4-ep16.json layer 0
# dispatch) scaled so its largest per-GPU total is 4 MiB; -c 1: zero wrong
# bytes, and the executor sees 4 hosts.  Token traffic (DeepSeek-V2-Lite
# layer 1 dispatch and combine) run as tokens by fast and hier, on the fly
# and replayed: zero wrong bytes.  Then: a rank killed mid-run (its
# pid from `ip netns pids`) ends the job with a nonzero exit and mpirun's
# error within a bound; the memory check counts the 16 ranks of the 4
# namespaces together (one machine); SIGINT to the process group of
# `testbed.sh mpirun` (Ctrl-C), SIGTERM and SIGHUP to the script end the
# job within a bound and leave no process or Open MPI file of it, and
# SIGINT to an `up` in calibration tears it all down; a second `up` over a
# live instance is refused and leaves it alone; an `up` whose calibration
# fails leaves nothing; `up --nic 1:2=0.25` rate-limits that rail alone
# (the tc rates in the namespaces) and a FAST plan for the degraded
# topology runs on it with 0 wrong bytes; a stale
# instance (its owner dead) is removed by the next `up`; after `down` no
# namespace of the stage's instances, no process inside and no host link
# is left.  Where the machine cannot host namespaces (not root, no netns,
# no tc) the stage says it skipped and why; FAST_TESTBED=require makes that
# a failure.  Prints "N passed, N failed"; exit 1 on failure.
set -u
FAST=${1:?usage: tests/testbed/run.sh FAST_BINARY}
FAST=$(cd "$(dirname "$FAST")" && pwd)/$(basename "$FAST")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
TB=$ROOT/scripts/testbed.sh
TMP=$(mktemp -d)
export FAST FAST_TESTBED_DIR=$TMP/tb FAST_TESTBED_TIMEOUT=120
start=$(date +%s)

skip() {
	if [ "${FAST_TESTBED:-}" = require ]; then
		echo "not ok - testbed required (FAST_TESTBED=require) but unavailable: $1"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "skipped: $1"
	exit 77 # the suite's "skipped" status
}
[ "$(id -u)" = 0 ] || skip "not root (network namespaces need root)"
command -v ip >/dev/null && command -v tc >/dev/null || skip "no ip/tc (iproute2 not installed)"
unshare --net true 2>/dev/null || skip "no network namespaces (unshare --net fails)"
command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin not installed)"
command -v python3 >/dev/null || skip "no python3"

links_before=$(ip -o link show | awk -F': ' '{ print $2 }' | sort)
cleanup() {
	FAST_TESTBED_DIR=$TMP/tb "$TB" down >/dev/null 2>&1
	FAST_TESTBED_DIR=$TMP/tb2 "$TB" down >/dev/null 2>&1
	FAST_TESTBED_DIR=$TMP/tb3 "$TB" down >/dev/null 2>&1
	FAST_TESTBED_DIR=$TMP/tb4 "$TB" down >/dev/null 2>&1
	FAST_TESTBED_DIR=$TMP/tb5 "$TB" down >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; sed 's/^/    /' "$TMP/out" | tail -20; }
instance_of() { cat "$1/instance" 2>/dev/null; }
netns_of() { ip netns list | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'; }

# --- refusals: one line saying why, nothing made ------------------------------
ns_before=$(ip netns list | awk '{ print $1 }' | sort)
refuse() { # name expected-exit expected-text cmd...
	local name=$1 want=$2 text=$3
	shift 3
	"$@" >"$TMP/out" 2>&1
	local got=$?
	if [ $got = "$want" ] && grep -q -- "$text" "$TMP/out" && [ "$(grep -c '^testbed:' "$TMP/out")" = 1 ] &&
		[ "$(ip netns list | awk '{ print $1 }' | sort)" = "$ns_before" ]; then
		ok "$name: $(head -1 "$TMP/out")"
	else
		echo "    (exit $got, expected $want)" >>"$TMP/out"
		bad "$name"
	fi
}
if command -v setpriv >/dev/null; then
	refuse "up as a non-root user" 4 "not root" \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate
fi
refuse "up with a bad rate" 2 "--rate: expected" "$TB" up --servers 2 --gpus 2 --rate fast --no-calibrate
refuse "up with a bad delay" 2 "--delay: expected" \
	"$TB" up --servers 2 --gpus 2 --rate 100mbit --delay 1ms --no-calibrate
refuse "mpirun with no testbed up" 1 "no testbed up" "$TB" mpirun -np 4 true
refuse "up with a core sharing it does not know" 2 "FAST_TESTBED_CORE_SHARING: expected demand or maxmin" \
	env FAST_TESTBED_CORE_SHARING=fair "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate
refuse "up with a fit size that is no size" 2 "FAST_TESTBED_FIT_MEAN: expected bytes" \
	env FAST_TESTBED_FIT_MEAN=big "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate
refuse "up with an eager limit that is no size" 2 "FAST_TESTBED_EAGER: expected bytes" \
	env FAST_TESTBED_EAGER=-1 "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate
refuse "up with a NIC it does not have" 2 "no NIC 4 on server 1" \
	"$TB" up --servers 2 --gpus 4 --rate 100mbit --nic 1:4=0.5 --no-calibrate

# --- up, calibrated --------------------------------------------------------
t0=$(date +%s.%N)
if "$TB" up --servers 4 --gpus 4 --rate 200mbit >"$TMP/out" 2>&1 &&
	"$FAST" topo show "$FAST_TESTBED_DIR/topo.json" >>"$TMP/out" 2>&1 &&
	grep -q "scale-out .* 6 " "$TMP/out" && grep -q "fitted by fast calibrate" "$FAST_TESTBED_DIR/topo.json" &&
	grep -q "fitted on collectives: /scale_out/step_overhead_us" "$FAST_TESTBED_DIR/topo.json"; then
	ok "up 4 x 4 at 200mbit, calibrated ($(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s): $(grep 'scale-out ' "$TMP/out" | head -1 | tr -s ' ')"
else
	bad "up 4 x 4 at 200mbit"
	echo "$pass passed, $fail failed"
	exit 1
fi
P=$(instance_of "$FAST_TESTBED_DIR")
TOPO=(--topo "$FAST_TESTBED_DIR/topo.json")
# every job of the instance sends eagerly up to 8 MiB (no rendezvous
# handshake queued behind the peer's bulk), as its calibration did
if [ "$(FAST_TESTBED_EAGER=0 "$TB" mpirun -np 2 sh -c 'echo "$OMPI_MCA_btl_tcp_eager_limit $OMPI_MCA_btl_tcp_rndv_eager_limit"' 2>&1 | sort -u)" = "8388608 8388608" ] &&
	grep -q "MPI eager up to 8388608 B" "$FAST_TESTBED_DIR/topo.json" && "$TB" status | grep -q "MPI eager up to 8388608 B"; then
	ok "jobs send eagerly up to 8 MiB, as up recorded (the environment of a later mpirun aside)"
else
	bad "jobs send eagerly up to 8 MiB"
fi

# a second up of the same tree while the instance is alive: refused, untouched
"$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate >"$TMP/out" 2>&1
got=$?
if [ $got = 1 ] && grep -q "is up" "$TMP/out" && [ "$(netns_of "$P" | wc -l)" = 6 ]; then
	ok "a second up over a live instance is refused and leaves it alone"
else
	echo "    (exit $got, $(netns_of "$P" | wc -l) namespaces of $P)" >>"$TMP/out"
	bad "a second up over a live instance"
fi

# --- the traffic: random, Zipf, a real trace (4 MiB at most per GPU) ----------
"$FAST" gen "${TOPO[@]}" --pattern random --mean-bytes 2M --seed 3 -o "$TMP/random.json" >/dev/null &&
	"$FAST" gen "${TOPO[@]}" --pattern zipf --mean-bytes 2M --seed 4 -o "$TMP/zipf.json" >/dev/null &&
	python3 - "$TMP/random.json" "$TMP/zipf.json" "$ROOT/traces/olmoe-c4-ep16.json" >"$TMP/mix.json" <<'EOF'
import json, sys
mats = []
for path, label in zip(sys.argv[1:], ["random", "zipf", None]):
    m = json.load(open(path))["matrices"][0]
    rows = m["rows"]
    if label is None:  # the trace: scaled so the largest send or receive total is 4 MiB
        n = len(rows)
        top = max(max(sum(r) for r in rows), max(sum(r[j] for r in rows) for j in range(n)))
        rows = [[v * (4 << 20) // top for v in r] for r in rows]
        label = "olmoe-c4/" + m["label"]
    mats.append({"label": label, "rows": rows})
json.dump({"version": 2, "gpus_total": len(mats[0]["rows"]), "matrices": mats}, sys.stdout)
EOF
[ $? = 0 ] || { echo "not ok - traffic generation"; exit 1; }

# check_rows NAME: the run's --json in $TMP/out has 3 rows, all 0 wrong
check_run() {
	local name=$1
	shift
	"$TB" mpirun -np 16 "$FAST" run "${TOPO[@]}" --traffic "$TMP/mix.json" -n 2 -w 1 -c 1 --json "$@" >"$TMP/out" 2>&1
	local got=$?
	if [ $got != 0 ]; then
		echo "    (exit $got)" >>"$TMP/out"
		bad "$name"
		return
	fi
	if grep -q "emulated on 1 host" "$TMP/out"; then
		bad "$name: the executor saw one host"
		return
	fi
	local res
	res=$(python3 -c '
import json, sys
text = open(sys.argv[1]).read()
d = json.loads(text[text.index("{"):text.rindex("}") + 1])
rows = d["rows"]
bad = sum(r["wrong"] for r in rows)
print("%d rows, %d wrong, median %s ms" % (len(rows), bad, "/".join("%.0f" % (r["median_s"] * 1e3) for r in rows)))
sys.exit(0 if len(rows) == 3 and bad == 0 else 1)' "$TMP/out") || { bad "$name: $res"; return; }
	ok "$name: $res"
}

for algo in fast fanout nccl pxn spreadout hier mpi; do
	check_run "on the fly: $algo (random / zipf / trace)" --algo $algo
done
for algo in fast fanout nccl pxn spreadout hier; do
	if "$FAST" plan "${TOPO[@]}" --traffic "$TMP/mix.json" --algo $algo -o "$TMP/plan.json" >"$TMP/out" 2>&1; then
		check_run "replayed: $algo plan file (random / zipf / trace)" --plan "$TMP/plan.json"
	else
		bad "fast plan --algo $algo"
	fi
done

# --- token traffic: DeepSeek-V2-Lite layer 1 at EP16 as token groups --------
# (512-byte tokens: about 2 MiB at most per GPU), run as tokens by fast and
# hier (per-server dedup), on the fly and replayed: a dispatch and a combine
# row, 0 wrong bytes, over the 4 hosts
check_tokens() {
	local name=$1
	shift
	"$TB" mpirun -np 16 "$FAST" run "${TOPO[@]}" --traffic "$TMP/tok.json" -n 2 -w 1 -c 1 --json "$@" >"$TMP/out" 2>&1
	local got=$? res
	if [ $got != 0 ] || grep -q "emulated on 1 host" "$TMP/out"; then
		echo "    (exit $got)" >>"$TMP/out"
		bad "$name"
		return
	fi
	res=$(python3 -c '
import json, sys
text = open(sys.argv[1]).read()
rows = json.loads(text[text.index("{"):text.rindex("}") + 1])["rows"]
print("%s, %d wrong, median %s ms" % ("/".join(r["moves"] for r in rows), sum(r["wrong"] for r in rows),
                                    "/".join("%.0f" % (r["median_s"] * 1e3) for r in rows)))
sys.exit(0 if [r["moves"] for r in rows] == ["dispatch", "combine"] and
         all(r["wrong"] == 0 for r in rows) else 1)' "$TMP/out") || { bad "$name: $res"; return; }
	ok "$name: $res"
}
if "$FAST" trace import --source deepseek-v2-lite --data "$ROOT/data/moe" --ep 16 --gpus-per-server 4 \
	--layers 1 --domain intent --tokens --token-bytes 512 -o "$TMP/tok.json" >"$TMP/out" 2>&1; then
	for algo in fast hier; do
		check_tokens "tokens on the fly: $algo (DeepSeek-V2-Lite layer 1, EP16)" --algo $algo
		if "$FAST" plan "${TOPO[@]}" --traffic "$TMP/tok.json" --algo $algo -o "$TMP/tplan.json" >"$TMP/out" 2>&1; then
			check_tokens "tokens replayed: $algo plan file" --plan "$TMP/tplan.json"
		else
			bad "fast plan --algo $algo on token traffic"
		fi
	done
else
	bad "trace import --tokens"
fi

# --- a rank killed mid-run ---------------------------------------------------
t0=$(date +%s)
FAST_TESTBED_TIMEOUT=60 "$TB" mpirun -np 16 "$FAST" run "${TOPO[@]}" --traffic "$TMP/mix.json" \
	--algo fast -n 1000 -w 1 -c 1 >"$TMP/out" 2>&1 &
job=$!
victim=""
for _ in $(seq 1 100); do # the ranks of server 1, through its namespace
	for pid in $(ip netns pids "$P-s1" 2>/dev/null); do
		[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$FAST" ] && victim=$pid
	done
	[ -n "$victim" ] && break
	sleep 0.1
done
if [ -n "$victim" ]; then
	sleep 2 # into the timed iterations
	kill -KILL "$victim"
fi
wait $job
got=$?
took=$(($(date +%s) - t0))
if [ -z "$victim" ]; then
	bad "a killed rank: no rank process found in $P-s1"
elif [ $got = 0 ] || [ $got = 124 ] || [ $took -gt 45 ] || grep -q "passed its" "$TMP/out"; then
	echo "    (exit $got after $took s)" >>"$TMP/out"
	bad "a killed rank ends the job"
elif ! grep -q "process rank [0-9]* with PID $victim .* exited on signal 9" "$TMP/out"; then
	bad "a killed rank ends the job, but without saying so"
else
	ok "a killed rank (pid $victim in $P-s1) ends the job in $took s, exit $got, named by mpirun"
fi
left=0
for ns in $(netns_of "$P"); do left=$((left + $(ip netns pids "$ns" | wc -l))); done
[ $left = 0 ] && ok "no process left in the namespaces after the killed job" ||
	{ echo "    ($left processes)" >"$TMP/out"; bad "processes left after the killed job"; }

# --- memory per machine (issue 23) ------------------------------------------
# The 4 server namespaces are one machine (one kernel, one boot id), each
# with a hostname of its own: what the 16 ranks need together (4 x 16 x
# 2 MiB of buffers and host copies: 128 MiB) is held against the machine's
# memory (FAST_MEM_AVAILABLE: 64M), not each namespace's 4 ranks (about
# 10 MiB each at most) against a quarter of it, which let the row run
FAST_MEM_AVAILABLE=64M "$TB" mpirun -x FAST_MEM_AVAILABLE -np 16 "$FAST" run "${TOPO[@]}" \
	--traffic "$TMP/mix.json" --matrix 0 --algo fanout -n 1 -w 0 >"$TMP/out" 2>&1
got=$?
if [ $got = 3 ] && [ "$(grep -c 'not enough memory on host [^ ]* (one machine under 4 host names): its 16 ranks need 1[0-9][0-9][.0-9]* MiB in total' "$TMP/out")" = 1 ]; then
	ok "memory per machine: 16 ranks in 4 namespaces counted together ($(grep -o 'its 16 ranks need [^(]*' "$TMP/out")against 64M: exit 3)"
else
	echo "    (exit $got, expected 3)" >>"$TMP/out"
	bad "memory per machine: the 4 namespaces' ranks counted together"
fi

# --- an interrupted job (issue 23) -------------------------------------------
# INT to the process group of `testbed.sh mpirun` (a terminal's Ctrl-C),
# TERM and HUP to the script alone, once all 16 ranks run: the script ends
# within 10 s with 128 + the signal, and nothing of the job is left (no
# process in the namespaces, none of Open MPI's files named after them);
# the instance stays up.  The job starts as from a terminal: its own
# process group, INT not ignored (as it is for `&` in a script).
ranks_of() { # prefix: how many fast processes run in its namespaces
	local ns pid n=0
	for ns in $(netns_of "$1"); do
		for pid in $(ip netns pids "$ns" 2>/dev/null); do
			[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$FAST" ] && n=$((n + 1))
		done
	done
	echo $n
}
procs_of() { # prefix: how many processes run in its namespaces
	local ns n=0
	for ns in $(netns_of "$1"); do n=$((n + $(ip netns pids "$ns" | wc -l))); done
	echo $n
}
files_of() { # prefix: Open MPI's session directories and segments of its hosts
	ls -d /tmp/ompi."$1"-* /dev/shm/vader_segment."$1"-* 2>/dev/null | wc -l
}
interrupt() { # SIGNAL NUMBER group|script
	local sig=$1 num=$2 to=$3 job t0 took got ns
	setsid env --default-signal=INT,TERM,HUP "$TB" mpirun -np 16 "$FAST" run "${TOPO[@]}" \
		--traffic "$TMP/mix.json" --algo fast -n 1000 -w 1 >"$TMP/out" 2>&1 &
	job=$!
	for _ in $(seq 1 150); do
		[ "$(ranks_of "$P")" = 16 ] && break
		sleep 0.1
	done
	sleep 1
	t0=$(date +%s.%N)
	if [ "$to" = group ]; then kill -"$sig" -- -"$job"; else kill -"$sig" "$job"; fi
	for _ in $(seq 1 100); do
		kill -0 "$job" 2>/dev/null || break
		sleep 0.1
	done
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	if kill -0 "$job" 2>/dev/null; then
		# what keeps running, then ended here: the job's processes by pid
		echo "    (still running 10 s after SIG$sig: $(procs_of "$P") processes in $P's namespaces)" >>"$TMP/out"
		for ns in $(netns_of "$P"); do
			# shellcheck disable=SC2046
			kill -KILL $(ip netns pids "$ns") 2>/dev/null
		done
		kill -KILL "$job" 2>/dev/null
		wait "$job" 2>/dev/null
		bad "SIG$sig to the $to of testbed.sh mpirun ends the job"
		return
	fi
	wait "$job"
	got=$?
	if [ $got = $((128 + num)) ] && [ "$(procs_of "$P")" = 0 ] && [ "$(files_of "$P")" = 0 ] &&
		[ "$(netns_of "$P" | wc -l)" = 6 ]; then
		ok "SIG$sig to the $to of testbed.sh mpirun: the job ended in $took s (exit $got), nothing of it left, the instance up"
	else
		echo "    (exit $got; $(procs_of "$P") processes, $(files_of "$P") Open MPI files, $(netns_of "$P" | wc -l) namespaces of $P)" >>"$TMP/out"
		bad "SIG$sig to the $to of testbed.sh mpirun leaves nothing"
	fi
}
interrupt INT 2 group
interrupt TERM 15 script
interrupt HUP 1 script

# an up interrupted in its calibration (INT to its process group): the
# job stopped, the instance torn down as by down (no namespace, registry
# entry, process or file of it; host links unchanged)
FAST_TESTBED_DIR=$TMP/tb4 setsid env --default-signal=INT,TERM,HUP "$TB" up --servers 2 --gpus 2 \
	--rate 200mbit >"$TMP/out" 2>&1 &
job=$!
p4=""
for _ in $(seq 1 150); do
	p4=$(instance_of "$TMP/tb4")
	[ -n "$p4" ] && [ "$(ranks_of "$p4")" -gt 0 ] && break
	sleep 0.1
done
t0=$(date +%s.%N)
kill -INT -- -"$job"
wait "$job"
got=$?
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
if [ -n "$p4" ] && [ $got = 130 ] && [ -z "$(netns_of "$p4")" ] && [ ! -e "/run/fast-testbed/$p4" ] &&
	[ "$(files_of "$p4")" = 0 ] && [ "$links_before" = "$(ip -o link show | awk -F': ' '{ print $2 }' | sort)" ]; then
	ok "SIGINT to an up in calibration: torn down in $took s (exit $got), nothing of $p4 left"
else
	echo "    (exit $got after $took s; instance '$p4': $(netns_of "$p4" | wc -l) namespaces)" >>"$TMP/out"
	bad "SIGINT to an up in calibration leaves nothing"
fi

# --- a slow NIC (issue 25) ----------------------------------------------------
# up --nic 1:2=0.25: rail 2 of server 1 (nic6) at 50 Mbit/s both ways, the
# other rails at 200; topo.json carries the override, topo-healthy.json
# not; a FAST plan for the degraded topology runs with 0 wrong bytes; down
# leaves nothing of it.  Not calibrated: the rates are what is checked.
rates_of() { # prefix: "dev rate" of every tbf in its server and switch namespaces
	local ns
	for ns in $(netns_of "$1" | sort); do
		tc -n "$ns" qdisc show | awk -v ns="${ns#"$1"-}" '$2 == "tbf" { for (i = 1; i < NF; i++) if ($i == "rate") print ns "/" $5, $(i + 1) }'
	done
}
t5=$(date +%s.%N)
if FAST_TESTBED_DIR=$TMP/tb5 "$TB" up --servers 4 --gpus 4 --rate 200mbit --nic 1:2=0.25 --no-calibrate \
	>"$TMP/out" 2>&1; then
	p5=$(instance_of "$TMP/tb5")
	rates_of "$p5" >"$TMP/rates"
	slow=$(awk '$2 != "200Mbit" { print $1 "=" $2 }' "$TMP/rates" | sort | paste -sd ' ' -)
	if [ "$slow" = "s1/nic6=50Mbit sw/p6=50Mbit" ] && [ "$(wc -l <"$TMP/rates")" = 32 ] &&
		grep -q '"nic_overrides"' "$TMP/tb5/topo.json" && ! grep -q nic_overrides "$TMP/tb5/topo-healthy.json"; then
		ok "up --nic 1:2=0.25: $slow, the other 30 rail ends at 200Mbit; topo.json carries the override"
	else
		cat "$TMP/rates" >>"$TMP/out"
		bad "up --nic 1:2=0.25 sets that rail's rate only (slow: '$slow')"
	fi
	if "$FAST" plan --topo "$TMP/tb5/topo.json" --traffic "$TMP/mix.json" --matrix 1 -o "$TMP/plan5.json" >"$TMP/out" 2>&1 &&
		FAST_TESTBED_DIR=$TMP/tb5 "$TB" mpirun -np 16 "$FAST" run --topo "$TMP/tb5/topo.json" --plan "$TMP/plan5.json" \
			--traffic "$TMP/mix.json" --matrix 1 -n 1 -w 0 -c 1 --json >"$TMP/out" 2>&1 &&
		grep -q '"wrong": 0' "$TMP/out" && ! grep -q '"wrong": [1-9]' "$TMP/out"; then
		ok "a FAST plan for the degraded topology (Zipf matrix) runs with 0 wrong bytes"
	else
		bad "a FAST plan for the degraded topology runs"
	fi
	FAST_TESTBED_DIR=$TMP/tb5 "$TB" down >"$TMP/out" 2>&1
	if [ -z "$(netns_of "$p5")" ] && [ ! -e "/run/fast-testbed/$p5" ]; then
		ok "down of the degraded instance $p5 leaves no namespace or registry entry ($(awk -v a="$t5" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s from its up)"
	else
		bad "down of the degraded instance leaves nothing"
	fi
else
	bad "up --nic 1:2=0.25"
fi

# --- failures and leftovers ------------------------------------------------------
# calibration that fails (the fast binary exits 1): up tears down what it made
ns_before=$(ip netns list | awk '{ print $1 }' | sort)
FAST=/bin/false FAST_TESTBED_DIR=$TMP/tb2 "$TB" up --servers 2 --gpus 2 --rate 100mbit >"$TMP/out" 2>&1
got=$?
if [ $got != 0 ] && grep -q "up failed: tearing down" "$TMP/out" && [ ! -e "$TMP/tb2/instance" ] &&
	[ "$(ip netns list | awk '{ print $1 }' | sort)" = "$ns_before" ]; then
	ok "an up that fails in calibration leaves nothing (exit $got: $(grep -m1 'calibration run' "$TMP/out" | cut -c1-60))"
else
	echo "    (exit $got)" >>"$TMP/out"
	bad "an up that fails in calibration"
fi
# an instance whose owner died: removed by the next up (of another tree),
# which may then take its free name
sleep 300 &
owner=$!
FAST_TESTBED_DIR=$TMP/tb2 "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate --owner $owner >"$TMP/out" 2>&1
stale=$(instance_of "$TMP/tb2")
kill $owner
wait $owner 2>/dev/null
FAST_TESTBED_DIR=$TMP/tb3 "$TB" up --servers 2 --gpus 2 --rate 100mbit --no-calibrate >"$TMP/out" 2>&1
got=$?
if [ -n "$stale" ] && [ $got = 0 ] && grep -q "removing stale instance $stale" "$TMP/out" &&
	{ [ -z "$(netns_of "$stale")" ] || [ "$(instance_of "$TMP/tb3")" = "$stale" ]; } &&
	[ "$(cat "/run/fast-testbed/$stale/dir" 2>/dev/null)" != "$TMP/tb2" ] && [ "$(netns_of "$P" | wc -l)" = 6 ]; then
	ok "a stale instance ($stale, owner dead) is removed by the next up; the live one stays"
else
	echo "    (exit $got, stale '$stale': $(netns_of "$stale" | wc -l) namespaces left)" >>"$TMP/out"
	bad "a stale instance is removed by the next up"
fi
p3=$(instance_of "$TMP/tb3")

# --- down ------------------------------------------------------------------------
t0=$(date +%s.%N)
"$TB" down >"$TMP/out" 2>&1 && FAST_TESTBED_DIR=$TMP/tb3 "$TB" down >>"$TMP/out" 2>&1
td=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
links_after=$(ip -o link show | awk -F': ' '{ print $2 }' | sort)
if [ -z "$(netns_of "$P")" ] && [ -z "$(netns_of "$p3")" ] && [ ! -e "/run/fast-testbed/$P" ] &&
	[ "$links_before" = "$links_after" ]; then
	ok "down (two instances in $td s): no namespace of $P or $p3, no registry entry, host links unchanged"
else
	{ ip netns list; diff <(echo "$links_before") <(echo "$links_after"); } >>"$TMP/out"
	bad "down leaves nothing behind"
fi

echo "# testbed stage: $(($(date +%s) - start)) s"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
