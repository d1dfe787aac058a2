# testbed-calib.sh - the calibration of `scripts/testbed.sh up`, sourced by
# it (not run alone): point-to-point sweeps fitted by `fast calibrate` for
# each tier's latency and efficiency, then fast and fanout collectives
# fitted for the scale-out per-step cost and the core's oversubscription.
# Uses testbed.sh's DIR, FAST, SERVERS, GPUS, P, FABRIC_DESC, run_mpi,
# topo_json, now and elapsed.  docs/testbed.md says what each step measures.

# a 2-rank exchange a <-> b of every size from -b to -e (a traffic of one
# pair, scaled by fast run): its rows as nccl-tests sendrecv_perf rows
# (size count type redop root time(median) algbw busbw #wrong) for calibrate
pair_sweep() { # name a b min max out
	local name=$1 a=$2 b=$3 min=$4 max=$5 out=$6 ng=$((SERVERS * GPUS))
	python3 - "$ng" "$a" "$b" >"$DIR/calib/$name.traffic.json" <<'EOF' || return 1
import json, sys
n, a, b = (int(x) for x in sys.argv[1:])
rows = [[0] * n for _ in range(n)]
rows[a][b] = rows[b][a] = 1 << 20
json.dump({"version": 2, "gpus_total": n, "matrices": [{"label": "pair", "rows": rows}]}, sys.stdout)
EOF
	run_mpi "$P" 120 -np "$ng" "$FAST" run --topo "$DIR/calib/nominal.json" \
		--traffic "$DIR/calib/$name.traffic.json" --algo fanout -n 9 -w 2 -c 1 \
		-b "$min" -e "$max" -f 2 --json >"$DIR/calib/$name.run.json" 2>"$DIR/calib/$name.err" || {
		echo "testbed: calibration run $name failed: $(tail -3 "$DIR/calib/$name.err" | tr '\n' ' ')" >&2
		return 1
	}
	python3 - "$DIR/calib/$name.run.json" >"$out" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
print("# from fast run --json (%s): size count type redop root time(median us) algbw busbw #wrong" % sys.argv[1])
for r in d["rows"]:
    if r["wrong"]:
        sys.exit("wrong bytes in a calibration run")
    print(r["size_bytes"], r["count"], "uint8 none -1", "%.3f" % (r["median_s"] * 1e6), r["algbw_GBps"], r["algbw_GBps"], r["wrong"])
EOF
}

# The shared-memory rate the scale-up sweep measured (GB/s), or a failure
# with fast calibrate's reason in calib/up.fit.err.
up_rate() {
	"$FAST" calibrate --topo "$DIR/calib/nominal.json" --up-sendrecv "$DIR/calib/up.sendrecv" --json \
		2>"$DIR/calib/up.fit.err" >"$DIR/calib/up.fit.json" || return 1
	python3 -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["tiers"][0]["achieved_GBps"])' \
		"$DIR/calib/up.fit.json" 2>>"$DIR/calib/up.fit.err"
}

calibrate() {
	local t0 up_bw
	t0=$(now)
	mkdir -p "$DIR/calib"
	# scale-up line rate: unknown for shared memory; measured first, then
	# stated as the line rate (efficiency 1) so the fit gives its alpha
	topo_json 10 0.5 1 50 1 "nominal" >"$DIR/calib/nominal.json"
	pair_sweep up 0 1 4K 4M "$DIR/calib/up.sendrecv" || return 1
	if [ "$SERVERS" -gt 1 ]; then
		pair_sweep out 0 "$GPUS" 64K 2M "$DIR/calib/out.sendrecv" || return 1
	fi
	# a sweep disturbed by other work on the host (times that do not grow
	# with size) is measured once more before up gives up
	if ! up_bw=$(up_rate); then
		echo "testbed: scale-up sweep unusable ($(head -1 "$DIR/calib/up.fit.err")); measuring it again" >&2
		pair_sweep up 0 1 4K 4M "$DIR/calib/up.sendrecv" || return 1
		up_bw=$(up_rate) || {
			echo "testbed: fast calibrate failed on $DIR/calib/up.sendrecv: $(head -1 "$DIR/calib/up.fit.err")" >&2
			return 1
		}
	fi
	topo_json "$up_bw" 0.5 1 50 1 "$FABRIC_DESC; scale-up line rate = measured shared-memory rate" >"$DIR/calib/line.json"
	local args=(--topo "$DIR/calib/line.json" --up-sendrecv "$DIR/calib/up.sendrecv")
	[ "$SERVERS" -gt 1 ] && args+=(--out-sendrecv "$DIR/calib/out.sendrecv")
	"$FAST" calibrate "${args[@]}" -o "$DIR/topo.json" >"$DIR/calib/fit.txt" 2>"$DIR/calib/fit.err" ||
		{ echo "testbed: fast calibrate failed: $(head -1 "$DIR/calib/fit.err")" >&2; return 1; }
	"$FAST" calibrate "${args[@]}" --json >"$DIR/calib/fit.json" 2>/dev/null
	sed 's/^/testbed: /' "$DIR/calib/fit.txt" >&2
	echo "testbed: sweeps measured and fitted in $(elapsed "$t0") s" >&2
	if [ "$SERVERS" -gt 1 ]; then
		collectives || return 1
	fi
	echo "testbed: calibrated in $(elapsed "$t0") s (measurements in $DIR/calib)" >&2
}

# What a sweep cannot show: the scale-out per-step cost and the share of
# the fabric all rails get at once (the core's oversubscription), fitted
# by `fast calibrate --fit-run` to fast and fanout on one uniform and one
# Zipf (skew 0.8) matrix of COLL_MEAN per GPU (default 1M;
# FAST_TESTBED_FIT_MEAN=4M fits at the size tests/testbed/degraded.sh
# measures, docs/testbed-degraded.md) (one job per algorithm over both
# matrices, 3 timed iterations each, bytes verified).  Fitted both ways the
# simulator can run a plan, calib/coll-step.json and calib/coll-rank.json;
# topo.json is the --sync $COLL_SYNC fit, which plain `fast sim` (--sync
# step, its default) reproduces: it predicted FAST's measured median on
# other matrices and sizes better in the validation docs/testbed.md reports.
COLL_SYNC=step
COLL_MEAN=${FAST_TESTBED_FIT_MEAN:-1M}
collectives() {
	local pat algo sync fits=() t0
	t0=$(now)
	for pat in uniform zipf; do
		"$FAST" gen --topo "$DIR/topo.json" --pattern $pat --mean-bytes "$COLL_MEAN" --seed 11 \
			-o "$DIR/calib/coll-$pat.traffic.json" >/dev/null 2>"$DIR/calib/coll.err" || {
			echo "testbed: fast gen failed: $(head -1 "$DIR/calib/coll.err")" >&2
			return 1
		}
	done
	python3 - "$DIR/calib/coll-uniform.traffic.json" "$DIR/calib/coll-zipf.traffic.json" \
		>"$DIR/calib/coll.traffic.json" <<'EOF' || return 1
import json, sys
u, z = (json.load(open(p)) for p in sys.argv[1:])
u["matrices"] = [dict(u["matrices"][0], label="uniform"), dict(z["matrices"][0], label="zipf")]
json.dump(u, sys.stdout)
EOF
	for algo in fast fanout; do
		run_mpi "$P" 120 -np $((SERVERS * GPUS)) "$FAST" run --topo "$DIR/topo.json" \
			--traffic "$DIR/calib/coll.traffic.json" --algo $algo -n 3 -w 1 -c 1 --json \
			>"$DIR/calib/coll-$algo.run.json" 2>"$DIR/calib/coll.err" || {
			echo "testbed: calibration run $algo failed: $(tail -3 "$DIR/calib/coll.err" | tr '\n' ' ')" >&2
			return 1
		}
		grep -q '"wrong": [1-9]' "$DIR/calib/coll-$algo.run.json" && {
			echo "testbed: wrong bytes in the calibration run $algo" >&2
			return 1
		}
		fits+=(--fit-run "$DIR/calib/coll-$algo.run.json")
	done
	for sync in step rank; do
		"$FAST" calibrate --topo "$DIR/topo.json" "${fits[@]}" --sync $sync -o "$DIR/calib/coll-$sync.json" \
			>"$DIR/calib/coll-$sync.txt" 2>"$DIR/calib/coll.err" ||
			{ echo "testbed: fast calibrate failed: $(head -1 "$DIR/calib/coll.err")" >&2; return 1; }
	done
	cp "$DIR/topo.json" "$DIR/calib/sweeps.json" # fitted on the sweeps only
	python3 - "$DIR/calib/coll-$COLL_SYNC.json" "$COLL_SYNC" "$COLL_MEAN" >"$DIR/topo.json.tmp" <<'EOF' || return 1
import json, sys
t = json.load(open(sys.argv[1]))
mean = "1 MiB" if sys.argv[3] == "1M" else sys.argv[3]
t["source"] += " (fast, fanout; uniform, Zipf 0.8; %s per GPU; --sync %s)" % (mean, sys.argv[2])
json.dump(t, sys.stdout, indent=2)
print()
EOF
	mv "$DIR/topo.json.tmp" "$DIR/topo.json"
	echo "testbed: fitted on collectives (--sync $COLL_SYNC; calib/coll-step.txt and coll-rank.txt have both fits):" >&2
	sed -e 's/^/testbed:   /' -e 's| [^ ]*/calib/| calib/|' "$DIR/calib/coll-$COLL_SYNC.txt" >&2
	echo "testbed: collectives measured and fitted in $(elapsed "$t0") s" >&2
}
