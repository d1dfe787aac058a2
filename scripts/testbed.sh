#!/usr/bin/env bash
# scripts/testbed.sh - an emulated two-tier GPU cluster on one machine, built
# from Linux network namespaces, for running `fast run` over a real network.
#
#   scripts/testbed.sh up --servers N --gpus G --rate RATE [--buffer BYTES]
#                         [--delay US] [--nics K] [--nic S:K=F ...]
#                         [--no-calibrate] [--owner PID]
#   scripts/testbed.sh mpirun ARGS...     an MPI job across it (-np N*G)
#   scripts/testbed.sh status
#   scripts/testbed.sh down
#
# The fabric: N namespaces "servers" (<prefix>-s0 ...), each with its own
# hostname, holding G ranks; ranks of one server talk over Open MPI's
# shared-memory BTL (vader), ranks of different servers over TCP, each
# through its own veth "rail NIC" (nic<r> in the server, p<r> in the switch)
# into one bridge: a non-blocking switch in its own namespace
# (<prefix>-sw).  Both directions of every rail are rate-limited by a tc
# tbf: the NIC side with a deep queue (TCP small queues overflow a shallow
# one), the switch side with --buffer bytes, the switch port's buffer
# (default 4M: no drops in a 4 x 4 all-to-all at 200 Mbit/s, where 1M
# dropped 274 packets in 6 iterations; a small one brings real incast:
# drops, retransmits, 200 ms RTO stalls), and under each tbf a control
# band that sends small packets first (ctl_band; FAST_TESTBED_CTL_BAND=off:
# without); MPI messages up to 8 MiB go without a rendezvous handshake
# (FAST_TESTBED_EAGER: bytes, 0 for Open MPI's own; see EAGER below).
# FAST_TESTBED_CORE_SHARING (maxmin, or demand) and FAST_TESTBED_FIT_MEAN
# (default 1M): the core's sharing in topo.json and the size of the
# collectives its fit runs (scripts/testbed-calib.sh).  mpirun
# runs in a head namespace (<prefix>-head) on a management port of the
# switch; each server gets its own orted through the launcher agent
# (build/testbed/agent), and each rank binds the TCP BTL to its own rail
# (build/testbed/rank, Open MPI's fork agent).  Rank r is GPU r: server
# r / G, rail r % G.  --nics K (K < G): K rails per server, the G ranks
# sharing them as topo.h maps GPUs onto NICs (rank r on rail
# floor((r % G) K / G)); --nic S:K=F: rail K of server S at F x RATE, or
# down for F = 0, applied after the calibration (the fit sees healthy rails).
#
# Outputs (build/testbed/, or $FAST_TESTBED_DIR):
#   hosts      the hostfile (one host per server namespace, G slots)
#   agent      the plm_rsh_agent: runs orted inside the server namespace
#   rank       the fork agent: pins a rank's TCP BTL to its rail
#   topo-healthy.json  the fitted fabric without the --nic overrides
#   topo.json  the topology of this fabric: scale-up = shared memory inside
#              a namespace, scale-out = the rail rate; latency and efficiency
#              of each tier fitted by `fast calibrate` to point-to-point
#              sweeps that `up` measures with `fast run`, then the
#              scale-out per-step cost and core oversubscription fitted to
#              fast and fanout collectives (calib/ keeps them;
#              --no-calibrate: nominal values, no measurement)
#   instance   the instance's name prefix (fasttb<K>)
#
# Safe on a shared machine: every object is named with a per-instance
# prefix allocated under a lock in /run/fast-testbed (one directory per
# instance, with its owner's pid and start time; the owner is the process
# that called `up`, seen through sudo, make, env and timeout, or --owner
# PID).  `up` refuses while this tree's instance is alive and cleans only
# instances whose owner is dead.  Nothing
# is created in the host's namespace: namespaces, links and the bridge are
# the instance's own, addresses come from 198.18.0.0/15 (RFC 2544, for
# benchmarks) inside them, and every setting changed is namespace-local (no
# host sysctl, module or qdisc).  Processes inside are ended through
# `ip netns pids`, never by name.  Every MPI job runs under `timeout`
# ($FAST_TESTBED_TIMEOUT seconds, default 600).  Interrupted (INT: Ctrl-C,
# TERM, HUP), `mpirun` and `up` end the job in flight, its daemons and
# ranks, and the files Open MPI names after the namespaces, then exit
# 128 + the signal; `up` also tears its instance down, and `down` ignores
# them until it is done (a few seconds).  Only KILL, which cannot be
# caught, leaves a job to its timeout; `down` ends it.
#
# Needs root, iproute2 (ip, tc with tbf) and Open MPI.  Exit: 0 ok, 1 a
# failed job or a busy instance, 2 usage, 4 the machine cannot host it
# (not root, no netns, no tc ...), with a one-line reason.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${FAST_TESTBED_DIR:-$ROOT/build/testbed}
REG=${FAST_TESTBED_REG:-/run/fast-testbed}
FAST=${FAST:-$ROOT/build/bin/fast}
JOB_TIMEOUT=${FAST_TESTBED_TIMEOUT:-600}
MTU=9000
NIC_QUEUE=8388608 # NIC-side tbf queue (bytes): deep, as a host NIC ring + qdisc
CTL_BAND=${FAST_TESTBED_CTL_BAND:-auto} # control band (ctl_band): auto = where the kernel has it, off
# How topo.json's oversubscribed core shares (scale_out.core_sharing), the
# collectives fitted under it: maxmin (a switch), or demand (in proportion
# to what each flow offers, a processor serving packets in their order of
# arrival).  A rail stage taken apart shows a slow rail keeping its rate
# beside saturated ones, as maxmin says, so it stays the default; demand
# predicts whole plans over a slow rail somewhat better
# (docs/testbed-degraded.md, "Sharing the core by demand").
CORE_SHARING=${FAST_TESTBED_CORE_SHARING:-maxmin}
# Messages up to EAGER bytes go eagerly, without MPI's rendezvous
# handshake (Open MPI's btl_tcp_eager_limit and btl_tcp_rndv_eager_limit;
# 0: Open MPI's own 64 KiB).  Open MPI carries both directions between two
# ranks in one TCP stream, so the receiver's go-ahead for its peer's
# message is queued in order behind the bulk it is itself sending that
# peer: no qdisc band can pass it.  Two ranks exchanging 1.1 MB both ways
# over a quarter-rate rail then took 357 ms where one way took 179 -- the
# two directions one after the other, every time -- and a plan of
# pairwise rail stages lost a third of the rail's rate.  An RDMA NIC keeps
# the directions apart (NCCL's net transport: a send and a receive
# connection per peer), so the testbed sends eagerly, as a NIC's
# transfers need no handshake in the other direction
# (docs/testbed-degraded.md, "Where it stands: the handshake behind the
# bulk, and eager sends").
EAGER=${FAST_TESTBED_EAGER:-8388608}

die() { echo "testbed: $*" >&2; exit 4; }
usage() {
	echo "testbed: $*" >&2
	echo "usage: scripts/testbed.sh up --servers N --gpus G --rate RATE [--buffer BYTES] [--delay US] [--nics K] [--nic S:K=F ...] [--no-calibrate] [--owner PID] | mpirun ARGS... | status | down" >&2
	exit 2
}
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# --- instances: the registry -------------------------------------------

# field N (N >= 3) of /proc/PID/stat, read past the command name
proc_field() {
	local stat n=$(($2 - 2))
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	set -- $stat
	echo "${!n}"
}
# the start time of a process (clock ticks since boot, field 22): with the
# pid it tells a live owner from a reused pid
proc_id() { proc_field "$1" 22; }
# the default owner: the caller, seen through sudo, make and the like (they
# exit before the instance is done with)
default_owner() {
	local pid=$PPID
	while :; do
		case $(cat "/proc/$pid/comm" 2>/dev/null) in
		sudo | su | doas | env | make | timeout) pid=$(proc_field "$pid" 4) || break ;;
		*) break ;;
		esac
	done
	echo "$pid"
}
owner_alive() { # instance prefix
	local pid start
	read -r pid start <"$REG/$1/owner" 2>/dev/null || return 1
	[ -n "$pid" ] && [ "$(proc_id "$pid")" = "$start" ]
}
netns_of() { ip netns list 2>/dev/null | awk -v p="$1-" 'index($1, p) == 1 { print $1 }'; }

# End every process inside the instance's namespaces (TERM, then KILL
# after a second), then remove what Open MPI leaves of a job it could not
# end itself: its session directories and shared-memory segments, named
# after the hosts, which are the instance's namespaces (<prefix>-s0 ...).
end_procs() { # prefix
	local p=$1 ns pids i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		pids=""
		for ns in $(netns_of "$p"); do
			pids="$pids $(ip netns pids "$ns" 2>/dev/null)"
		done
		[ -z "${pids// /}" ] && break
		# shellcheck disable=SC2086
		if [ "$i" -lt 6 ]; then kill -TERM $pids 2>/dev/null; else kill -KILL $pids 2>/dev/null; fi
		sleep 0.2
	done
	rm -rf "${TMPDIR:-/tmp}/ompi.$p-"* /dev/shm/vader_segment."$p-"*
}

# end every process inside the instance's namespaces, then delete them; a
# subshell that ignores INT, TERM and HUP, as its commands do: a signal
# meanwhile waits for it (the caller's trap runs when it is done), so an
# interrupted teardown never leaves half an instance
destroy() ( # prefix
	local p=$1 ns
	trap '' INT TERM HUP
	end_procs "$p"
	for ns in $(netns_of "$p"); do
		ip netns del "$ns" 2>/dev/null || echo "testbed: could not delete namespace $ns" >&2
	done
	rm -rf "${REG:?}/$p"
)

# --- signals: an interrupted command leaves nothing behind ------------------

# The MPI job in flight (run_mpi): the pid of its `timeout`, which puts
# itself in a process group of its own, so a terminal's Ctrl-C never
# reaches it, and the instance it runs on.
JOB="" JOB_P=""
# End the job in flight: TERM to its timeout, which passes it on to mpirun
# (which ends its daemons and ranks) and kills it 5 s later if need be;
# then whatever is left in the namespaces.
stop_job() {
	[ -n "$JOB" ] || return 0
	kill -TERM "$JOB" 2>/dev/null
	wait "$JOB" 2>/dev/null
	( trap '' INT TERM HUP; end_procs "$JOB_P" )
	JOB=""
}
# INT, TERM or HUP during up or mpirun: the job in flight ended, then exit
# 128 + N (up's EXIT trap tears its instance down); signals are ignored
# from here on, so the clean-up runs to its end
on_signal() { # NAME NUMBER
	trap '' INT TERM HUP
	[ -n "$JOB" ] && echo "testbed: SIG$1: ending the MPI job" >&7
	stop_job
	exit $((128 + $2))
}
# fd 7: the command's own stderr, for what the traps say (a trap runs under
# the redirections of the command it interrupts, a calibration run's log)
catch_signals() {
	exec 7>&2
	trap 'on_signal INT 2' INT
	trap 'on_signal TERM 15' TERM
	trap 'on_signal HUP 1' HUP
}

lock_registry() {
	mkdir -p "$REG" || die "cannot create $REG"
	exec 9>"$REG/lock"
	flock -w 30 9 || die "registry $REG/lock busy for 30 s"
}
unlock_registry() { exec 9>&-; }

# clean the instances whose owner is dead (under the lock)
reap_stale() {
	local d p
	for d in "$REG"/fasttb*; do
		[ -d "$d" ] || continue
		p=$(basename "$d")
		owner_alive "$p" && continue
		echo "testbed: removing stale instance $p (owner $(cat "$d/owner" 2>/dev/null | cut -d' ' -f1) is gone)" >&2
		destroy "$p"
	done
}

this_instance() { cat "$DIR/instance" 2>/dev/null; }

# --- checks -------------------------------------------------------------

preflight() {
	[ "$(id -u)" = 0 ] || die "not root: network namespaces, veths and tc need root (run as root or with sudo)"
	command -v ip >/dev/null || die "no ip command: install iproute2"
	command -v tc >/dev/null || die "no tc command: install iproute2"
	command -v unshare >/dev/null || die "no unshare command: install util-linux"
	command -v flock >/dev/null || die "no flock command: install util-linux"
	command -v timeout >/dev/null || die "no timeout command: install coreutils"
	command -v mpirun >/dev/null || die "no mpirun: install openmpi-bin"
	unshare --net true 2>/dev/null || die "no network namespaces: unshare --net fails (kernel without CONFIG_NET_NS, or a container without CAP_SYS_ADMIN)"
	unshare --uts true 2>/dev/null || die "no UTS namespaces: unshare --uts fails"
}

# rate: tc syntax NUMBER{bit,kbit,mbit,gbit}; prints bits per second
rate_bps() {
	awk -v r="$1" 'BEGIN {
		s = tolower(r); m = 1
		if (s ~ /gbit$/) { m = 1e9; sub(/gbit$/, "", s) }
		else if (s ~ /mbit$/) { m = 1e6; sub(/mbit$/, "", s) }
		else if (s ~ /kbit$/) { m = 1e3; sub(/kbit$/, "", s) }
		else if (s ~ /bit$/) { sub(/bit$/, "", s) }
		else exit 1
		if (s !~ /^[0-9]+(\.[0-9]+)?$/ || s * m < 1e6 || s * m > 1e11) exit 1
		printf "%.0f", s * m }'
}
# BYTES with K/M/G suffixes (1024^n)
parse_bytes() {
	awk -v r="$1" 'BEGIN {
		s = toupper(r); m = 1
		if (s ~ /G$/) m = 1073741824; else if (s ~ /M$/) m = 1048576; else if (s ~ /K$/) m = 1024
		sub(/[KMG]$/, "", s)
		if (s !~ /^[0-9]+$/ || s * m < 1) exit 1
		printf "%.0f", s * m }'
}

# address of rank r (198.18.1.1 ...) and of the head (198.18.0.1)
rank_addr() { echo "198.18.$((1 + $1 / 250)).$((1 + $1 % 250))"; }

# --- up -----------------------------------------------------------------

P="" # the prefix being built (the EXIT trap tears it down unless up finished)
UP_DONE=0
up_abort() {
	[ -n "$P" ] && [ "$UP_DONE" = 0 ] || return 0
	trap '' INT TERM HUP # a signal now would cut the teardown short
	echo "testbed: up failed: tearing down $P" >&7
	destroy "$P"
	rm -f "$DIR/instance" "$DIR/hosts" "$DIR/agent" "$DIR/rank"
}

nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
sysctl_ns() { nsx "$1" sysctl -qw "$2" >/dev/null || die "cannot set $2 in namespace $1"; }

# tbf on one device: rate, burst, queue limit in bytes.  The burst (bytes
# that may pass at once above the rate) is one frame, or 50 us at the rate
# when that is more: the first BURST bytes after an idle spell pass at once,
# which a fit of alpha + bytes / rate sees as BURST / rate less latency.
# Under the tbf, the control band (ctl_band).  With a fifth argument, the
# tbf goes under the netem at handle 1: (--delay).
tbf() { # ns dev limit bits-per-second [netem]
	local where="root handle 1:" h=1
	[ -n "${5:-}" ] && where="parent 1:1 handle 10:" h=10
	tc -n "$1" qdisc replace dev "$2" $where tbf rate "$4"bit burst "$BURST" limit "$3" 2>/dev/null ||
		die "tc tbf on $2 in $1 failed: the kernel lacks sch_tbf (or tc is too old)"
	ctl_band "$1" "$2" $h "$3" "$4"
}

# The control band: a NIC does not queue its transport's ACKs and a
# collective's control messages (MPI's rendezvous handshakes) behind the
# bulk data it is sending -- RDMA transports acknowledge in hardware, and
# a switch gives CNPs and control a class of their own.  A deep FIFO under
# tc would: a rank sending 3 MiB through a rail at 50 Mbit/s while receiving
# through it held its peers' handshakes up to 0.5 s, so that a transfer in
# both directions over several peers took 688 ms where one direction took
# 506 (docs/testbed-degraded.md, "The control band").  So under each tbf an HTB
# child serves packets under CTL_BYTES (pure TCP ACKs and MPI's control
# fragments) ahead of the bulk queue, which holds the tbf's byte limit; the
# tbf alone still sets the rate: HTB's classes get 10 Gbit/s (4x the rate
# above that) and a 256 KiB burst, for at 4x a 50 Mbit/s rail with HTB's
# default burst (1600 B, under one 9000-byte frame) a rail carrying both
# ways ran at half its rate.  Kernels
# without sch_htb or cls_u32 run without it, said once and in `status`.
CTL_BYTES=512 # IP packets shorter than this are control (u32: total length)
ctl_band() { # ns dev tbf-handle limit bits-per-second
	local ns=$1 dev=$2 h=$(($3 + 1)) fast
	[ "$CTL_BAND" = off ] && return 0
	fast=$(awk -v b="$5" 'BEGIN { x = 4 * b; if (x < 10e9) x = 10e9; printf "%.0f", x }')
	# HTB cannot be changed in place: a rail set again (--nic) keeps its band
	if { [[ $(tc -n "$ns" qdisc show dev "$dev") == *"qdisc htb $h: parent $3:1 "* ]] ||
		tc -n "$ns" qdisc add dev "$dev" parent "$3":1 handle $h: htb default 2 2>/dev/null; } &&
		tc -n "$ns" class replace dev "$dev" parent $h: classid $h:1 htb rate "$fast"bit burst 256k cburst 256k prio 0 quantum 60000 2>/dev/null &&
		tc -n "$ns" class replace dev "$dev" parent $h: classid $h:2 htb rate "$fast"bit burst 256k cburst 256k prio 1 quantum 60000 2>/dev/null &&
		tc -n "$ns" qdisc replace dev "$dev" parent $h:1 bfifo limit 1048576 2>/dev/null &&
		tc -n "$ns" qdisc replace dev "$dev" parent $h:2 bfifo limit "$4" 2>/dev/null &&
		{ tc -n "$ns" filter del dev "$dev" parent $h: 2>/dev/null
		  tc -n "$ns" filter add dev "$dev" parent $h: protocol ip prio 1 u32 \
			match u16 0 "$(printf 0x%x $((0xffff & ~(CTL_BYTES - 1))))" at 2 flowid $h:1 2>/dev/null; }; then
		CTL_BAND=on
		return 0
	fi
	# no band: the tbf's own byte-limited FIFO again
	tc -n "$ns" qdisc replace dev "$dev" parent "$3":1 bfifo limit "$4" 2>/dev/null ||
		die "cannot restore the bfifo under tbf on $dev in $ns"
	CTL_BAND=off
	echo "testbed: no control band (the kernel lacks sch_htb or cls_u32): control messages queue behind bulk data" >&2
}

build_fabric() {
	local s k i ns sw=$P-sw head=$P-head addr
	ip netns add "$sw" || die "cannot create network namespace $sw"
	ip netns add "$head" || die "cannot create network namespace $head"
	ip -n "$sw" link set lo up
	ip -n "$sw" link add br0 type bridge stp_state 0 forward_delay 0 2>/dev/null ||
		die "cannot create a bridge: the kernel lacks bridge support"
	ip -n "$sw" link set br0 mtu $MTU up
	# the management port: mpirun <-> orted, not rate-limited
	ip -n "$head" link add mgmt type veth peer name ph netns "$sw" 2>/dev/null ||
		die "cannot create a veth pair: the kernel lacks veth support"
	ip -n "$head" link set lo up
	ip -n "$head" link set mgmt mtu $MTU up
	ip -n "$head" addr add 198.18.0.1/15 dev mgmt
	ip -n "$sw" link set ph mtu $MTU master br0 up
	sysctl_ns "$head" net.ipv6.conf.all.disable_ipv6=1
	for ((s = 0; s < SERVERS; s++)); do
		ns=$P-s$s
		ip netns add "$ns" || die "cannot create network namespace $ns"
		ip -n "$ns" link set lo up
		sysctl_ns "$ns" net.ipv6.conf.all.disable_ipv6=1
		# each rail answers ARP only for its own address, so the switch
		# learns one port per rank; source-address rules send each rank's
		# packets out of its own rail
		sysctl_ns "$ns" net.ipv4.conf.all.arp_ignore=1
		sysctl_ns "$ns" net.ipv4.conf.all.arp_announce=2
		sysctl_ns "$ns" net.ipv4.conf.all.rp_filter=0
		for ((k = 0; k < NICS; k++)); do
			i=$((s * NICS + k)) # rail i: NIC k of server s
			addr=$(rank_addr $i)
			ip -n "$ns" link add nic$i type veth peer name p$i netns "$sw" ||
				die "cannot create veth nic$i"
			ip -n "$ns" link set nic$i mtu $MTU up
			ip -n "$sw" link set p$i mtu $MTU master br0 up
			ip -n "$ns" addr add "$addr/15" dev nic$i noprefixroute
			ip -n "$ns" route add 198.18.0.0/15 dev nic$i src "$addr" table $((100 + k))
			ip -n "$ns" rule add from "$addr" table $((100 + k)) pref $((100 + k))
			[ "$k" = 0 ] && ip -n "$ns" route add 198.18.0.0/15 dev nic$i src "$addr"
			tbf "$ns" nic$i $NIC_QUEUE "$RATE_BPS"
			tbf "$sw" p$i "$BUFFER" "$RATE_BPS"
		done
	done
}

write_launchers() {
	local s
	mkdir -p "$DIR"
	: >"$DIR/hosts.tmp"
	for ((s = 0; s < SERVERS; s++)); do
		echo "$P-s$s slots=$GPUS" >>"$DIR/hosts.tmp"
	done
	mv "$DIR/hosts.tmp" "$DIR/hosts"
	# plm_rsh_agent: called as `agent HOST COMMAND...` (a remote shell's
	# arguments); the server namespace gets its own hostname (vader names
	# its shared-memory segments after it)
	cat >"$DIR/agent.tmp" <<EOF
#!/bin/sh
# generated by scripts/testbed.sh for instance $P: orted into a server namespace
host=\$1
shift
case \$host in
$P-s[0-9]*) ;;
*) echo "testbed agent: \$host is not a server of $P" >&2; exit 1 ;;
esac
exec ip netns exec "\$host" unshare --uts /bin/sh -c "hostname \$host && \$*"
EOF
	chmod +x "$DIR/agent.tmp"
	mv "$DIR/agent.tmp" "$DIR/agent"
	write_rank ""
}

# orte_fork_agent: a rank's TCP BTL on its rail, nic<i> with i = s K + k
# for rank r on server s = r / G behind NIC k = floor((r % G) K / G), as
# topo.h maps GPUs onto NICs.  DOWN: "i:j ..." - rail i is down and its
# ranks' MPI traffic (the executor's gathers and barriers; a plan for the
# degraded topology sends no data there) takes rail j of their server.
write_rank() { # DOWN
	local d
	{
		cat <<EOF
#!/bin/sh
# generated by scripts/testbed.sh: a rank's TCP BTL on its rail
r=\${OMPI_COMM_WORLD_RANK:?not started by mpirun}
i=\$((r / $GPUS * $NICS + r % $GPUS * $NICS / $GPUS))
case \$i in
EOF
		for d in $1; do echo "${d%%:*}) i=${d#*:} ;; # rail ${d%%:*} down"; done
		cat <<'EOF'
esac
if ! [ -e "/sys/class/net/nic$i" ]; then
	echo "testbed: rank $r is on $(hostname), which has no rail nic$i: ranks must be mapped by slot (rank r on server r / G)" >&2
	exit 1
fi
OMPI_MCA_btl_tcp_if_include=nic$i
export OMPI_MCA_btl_tcp_if_include
exec "$@"
EOF
	} >"$DIR/rank.tmp"
	chmod +x "$DIR/rank.tmp"
	mv "$DIR/rank.tmp" "$DIR/rank"
}

# the topology before calibration: line rates of the fabric, nominal
# latencies; scale-up bandwidth (shared memory) given, scale-out the rail
topo_json() { # up_bw up_lat up_eff out_lat out_eff source
	local sharing=""
	[ "$CORE_SHARING" = maxmin ] || sharing=", \"core_sharing\": \"$CORE_SHARING\""
	cat <<EOF
{
  "version": 1,
  "name": "testbed",
  "servers": $SERVERS,
  "gpus_per_server": $GPUS,
  "scale_up": { "kind": "switch", "bw_GBps": $1, "latency_us": $2, "efficiency": $3 },
  "scale_out": { "nics_per_server": $NICS, "bw_GBps": $OUT_GBPS, "latency_us": $4, "efficiency": $5$sharing },
  "source": "$6"
}
EOF
}

FABRIC_DESC=""
TB_CC=""
MPI_MCA=(--mca btl self,vader,tcp --mca btl_tcp_links 2 --mca mpi_yield_when_idle 1
	--mca btl_vader_single_copy_mechanism none --mca oob_tcp_if_include 198.18.0.0/15
	--mca btl_tcp_if_include 198.18.0.0/15 --mca hwloc_base_binding_policy none
	--mca rmaps_base_mapping_policy slot --mca rmaps_base_oversubscribe 1)

# run_mpi PREFIX TIMEOUT ARGS...: mpirun in the head namespace.  In the
# background, waited for: a trapped signal interrupts `wait` (it would not
# interrupt a command in the foreground), and on_signal ends the job.
run_mpi() {
	local p=$1 t=$2 rc eager=()
	shift 2
	[ "$EAGER" != 0 ] && eager=(--mca btl_tcp_eager_limit "$EAGER" --mca btl_tcp_rndv_eager_limit "$EAGER")
	OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
		ip netns exec "$p-head" unshare --uts /bin/sh -c 'hostname "$0" && exec "$@"' \
		"$p-head" timeout -k 5 "$t" mpirun --hostfile "$DIR/hosts" \
		--mca plm_rsh_agent "$DIR/agent" --mca orte_fork_agent "$DIR/rank" \
		"${MPI_MCA[@]}" "${eager[@]}" "$@" <&0 &
	JOB=$! JOB_P=$p
	wait "$JOB"
	rc=$?
	JOB=""
	if [ $rc != 0 ]; then
		# a failed or timed-out job may leave orteds or ranks behind
		( trap '' INT TERM HUP; end_procs "$p" )
		[ $rc = 124 ] && echo "testbed: mpirun passed its ${t}s limit and was ended" >&2
	fi
	return $rc
}

# pair_sweep, up_rate, calibrate, collectives: the calibration
# shellcheck source=scripts/testbed-calib.sh
. "$ROOT/scripts/testbed-calib.sh"

# --nic S:K=F (NIC_OVR, space-separated): S and K in range, F in [0, 1],
# one entry per rail, and a live rail left on every server (F = 0 is a
# rail that is down); FRAC[S:K] = F.  The rates are applied by degrade.
declare -A FRAC=()
check_overrides() {
	local o s k f n
	for o in $NIC_OVR; do
		[[ $o =~ ^([0-9]+):([0-9]+)=([0-9]*\.?[0-9]+)$ ]] || usage "--nic: expected S:K=F (e.g. 1:2=0.25), got '$o'"
		s=${BASH_REMATCH[1]} k=${BASH_REMATCH[2]} f=${BASH_REMATCH[3]}
		[ "$s" -lt "$SERVERS" ] && [ "$k" -lt "$NICS" ] || usage "--nic $o: no NIC $k on server $s ($SERVERS servers x $NICS NICs)"
		awk -v f="$f" 'BEGIN { exit !(f <= 1) }' || usage "--nic $o: the fraction must be in [0, 1]"
		[ -z "${FRAC[$s:$k]:-}" ] || usage "--nic $o: a second entry for NIC $k of server $s"
		FRAC[$s:$k]=$f
	done
	for ((s = 0; s < SERVERS; s++)); do
		n=0
		for ((k = 0; k < NICS; k++)); do
			awk -v f="${FRAC[$s:$k]:-1}" 'BEGIN { exit !(f > 0) }' && n=$((n + 1))
		done
		[ $n -gt 0 ] || usage "--nic: every NIC of server $s is down"
	done
}

# The overrides, applied once the fabric is calibrated healthy (the fit
# sees every rail at RATE): rail K of server S at F x RATE both ways, or
# both ends set down when F = 0 (its ranks' MPI traffic and the server's
# own route then take the server's first live rail: write_rank).  topo-healthy.json is the fitted
# fabric as it was; topo.json the same with scale_out.nic_overrides.
degrade() {
	local o s k f i j bps down=""
	cp "$DIR/topo.json" "$DIR/topo-healthy.json"
	[ -n "$NIC_OVR" ] || return 0
	for o in $NIC_OVR; do
		s=${o%%:*} k=${o#*:} f=${o#*=}
		k=${k%%=*} i=$((s * NICS + k))
		bps=$(awk -v b="$RATE_BPS" -v f="$f" 'BEGIN { printf "%.0f", b * f }')
		if [ "$bps" = 0 ]; then
			ip -n "$P-s$s" link set nic$i down && ip -n "$P-sw" link set p$i down || die "cannot set rail nic$i down"
			for ((j = 0; j < NICS; j++)); do
				awk -v f="${FRAC[$s:$j]:-1}" 'BEGIN { exit !(f > 0) }' && break
			done
			j=$((s * NICS + j))
			down="$down $i:$j"
			# the server's own route (orted's, to mpirun) on a live rail
			ip -n "$P-s$s" route replace 198.18.0.0/15 dev nic$j src "$(rank_addr $j)" ||
				die "cannot route server $s through nic$j"
		else
			tbf "$P-s$s" nic$i $NIC_QUEUE "$bps"
			tbf "$P-sw" p$i "$BUFFER" "$bps" $([ "$DELAY" != 0 ] && echo netem)
		fi
		echo "testbed: rail nic$i (server $s, NIC $k) at $f x $RATE$([ "$bps" = 0 ] && echo ': down')" >&2
	done
	write_rank "$down"
	python3 - "$DIR/topo-healthy.json" $NIC_OVR >"$DIR/topo.json.tmp" <<'EOF' || die "cannot write $DIR/topo.json"
import json, re, sys
t = json.load(open(sys.argv[1]))
ovr = [re.match(r"(\d+):(\d+)=(.*)", o).groups() for o in sys.argv[2:]]
t["scale_out"]["nic_overrides"] = [{"server": int(s), "nic": int(k), "fraction": float(f)} for s, k, f in ovr]
note = "; then --nic %s (after calibration)" % ",".join(sys.argv[2:])
if len(t["source"]) + len(note) > 511: # the topology's source holds 511 characters
    note = "; then %d --nic overrides (after calibration)" % len(ovr)
t["source"] += note
json.dump(t, sys.stdout, indent=2)
print()
EOF
	mv "$DIR/topo.json.tmp" "$DIR/topo.json"
}

cmd_up() {
	local nocal=0 delay="" buffer=4M owner t0 nics=""
	owner=$(default_owner)
	SERVERS="" GPUS="" RATE="" NIC_OVR=""
	while [ $# -gt 0 ]; do
		case $1 in
		--servers) SERVERS=${2:-}; shift 2 || usage "--servers needs a value" ;;
		--gpus) GPUS=${2:-}; shift 2 || usage "--gpus needs a value" ;;
		--rate) RATE=${2:-}; shift 2 || usage "--rate needs a value" ;;
		--buffer) buffer=${2:-}; shift 2 || usage "--buffer needs a value" ;;
		--delay) delay=${2:-}; shift 2 || usage "--delay needs a value" ;;
		--nics) nics=${2:-}; shift 2 || usage "--nics needs a value" ;;
		--nic) NIC_OVR="$NIC_OVR ${2:-}"; shift 2 || usage "--nic needs a value" ;;
		--owner) owner=${2:-}; shift 2 || usage "--owner needs a value" ;;
		--no-calibrate) nocal=1; shift ;;
		*) usage "up: unknown option $1" ;;
		esac
	done
	[[ $SERVERS =~ ^[0-9]+$ ]] && [ "$SERVERS" -ge 1 ] && [ "$SERVERS" -le 64 ] ||
		usage "--servers must be 1..64 (got '${SERVERS}')"
	[[ $GPUS =~ ^[0-9]+$ ]] && [ "$GPUS" -ge 1 ] && [ "$GPUS" -le 64 ] ||
		usage "--gpus must be 1..64 (got '${GPUS}')"
	[ $((SERVERS * GPUS)) -le 1024 ] || usage "--servers x --gpus must be at most 1024"
	NICS=${nics:-$GPUS}
	[[ $NICS =~ ^[0-9]+$ ]] && [ "$NICS" -ge 1 ] && [ "$NICS" -le "$GPUS" ] ||
		usage "--nics must be 1..$GPUS, at most one rail per rank (got '$NICS')"
	check_overrides
	[ -n "$RATE" ] || usage "--rate is required (e.g. 200mbit)"
	RATE_BPS=$(rate_bps "$RATE") || usage "--rate: expected 1mbit..100gbit in tc syntax (e.g. 200mbit, 1gbit), got '$RATE'"
	case $CTL_BAND in auto | off) ;; *) usage "FAST_TESTBED_CTL_BAND: expected auto or off, got '$CTL_BAND'" ;; esac
	[ "$EAGER" = 0 ] || EAGER=$(parse_bytes "$EAGER") ||
		usage "FAST_TESTBED_EAGER: expected bytes (e.g. 8M, or 0 for Open MPI's own), got '${FAST_TESTBED_EAGER:-}'"
	case $CORE_SHARING in demand | maxmin) ;; *) usage "FAST_TESTBED_CORE_SHARING: expected demand or maxmin, got '$CORE_SHARING'" ;; esac
	parse_bytes "$COLL_MEAN" >/dev/null || usage "FAST_TESTBED_FIT_MEAN: expected bytes (e.g. 4M), got '$COLL_MEAN'"
	BUFFER=$(parse_bytes "$buffer") || usage "--buffer: expected bytes (e.g. 65536, 1M), got '$buffer'"
	[ "$BUFFER" -ge $((2 * MTU)) ] || usage "--buffer must hold two $MTU-byte frames (got $BUFFER)"
	[[ $owner =~ ^[0-9]+$ ]] && proc_id "$owner" >/dev/null || usage "--owner: no process $owner"
	if [ -n "$delay" ]; then
		[[ $delay =~ ^[0-9]+$ ]] || usage "--delay: expected microseconds, got '$delay'"
	fi
	preflight
	[ -x "$FAST" ] || [ "$nocal" = 1 ] || die "no $FAST: build it first (make), or give --no-calibrate"
	t0=$(now)
	# from here any exit (a failure, INT, TERM, HUP) tears down what up made
	trap up_abort EXIT

	lock_registry
	reap_stale
	local mine
	mine=$(this_instance)
	if [ -n "$mine" ] && owner_alive "$mine"; then
		unlock_registry
		echo "testbed: instance $mine of $DIR is up (owner pid $(cut -d' ' -f1 "$REG/$mine/owner")): run scripts/testbed.sh down first" >&2
		exit 1
	fi
	[ -n "$mine" ] && [ -d "$REG/$mine" ] && destroy "$mine"
	local k
	for ((k = 0; k < 1000; k++)); do
		[ -e "$REG/fasttb$k" ] || [ -n "$(netns_of "fasttb$k")" ] || break
	done
	P=fasttb$k
	mkdir -p "$REG/$P" "$DIR"
	echo "$owner $(proc_id "$owner")" >"$REG/$P/owner"
	echo "$DIR" >"$REG/$P/dir"
	echo "$P" >"$DIR/instance"
	unlock_registry

	DELAY=${delay:-0}
	BURST=$(awk -v b="$RATE_BPS" -v m=$MTU 'BEGIN { x = b / 8 * 50e-6; if (x < m + 3000) x = m + 3000; printf "%.0f", x }')
	OUT_GBPS=$(awk -v b="$RATE_BPS" 'BEGIN { printf "%.6g", b / 8e9 }')
	if [ -n "$delay" ]; then
		# a delay needs sch_netem; tbf alone cannot delay
		ip netns add "$P-probe" && tc -n "$P-probe" qdisc add dev lo root netem delay "${delay}us" 2>/dev/null ||
			die "--delay needs tc netem, which this kernel lacks (no sch_netem)"
		ip netns del "$P-probe"
	fi
	build_fabric
	if [ -n "$delay" ]; then
		local r
		for ((r = 0; r < SERVERS * NICS; r++)); do
			tc -n "$P-sw" qdisc replace dev p$r root handle 1: netem delay "${delay}us" limit 100000 ||
				die "tc netem on p$r failed"
			tbf "$P-sw" p$r "$BUFFER" "$RATE_BPS" netem
		done
	fi
	write_launchers
	TB_CC=$(nsx "$P-s0" sysctl -n net.ipv4.tcp_congestion_control 2>/dev/null)
	FABRIC_DESC="scripts/testbed.sh: $SERVERS namespaces x $GPUS ranks, Open MPI vader inside, TCP over $NICS veth rails per server at $RATE (tbf both ways, control band $CTL_BAND, MPI eager up to $EAGER B), switch buffer $BUFFER B/port, MTU $MTU, TCP $TB_CC${delay:+, delay ${delay} us}"
	local ovr=${NIC_OVR# }
	echo "$SERVERS $GPUS $RATE $BUFFER ${delay:-0} $NICS $EAGER ${ovr// /,}" >"$DIR/config"
	echo "testbed: $P up in $(elapsed "$t0") s: $SERVERS servers x $GPUS ranks, $NICS rails per server at $RATE, switch buffer $BUFFER B, TCP $TB_CC" >&2
	if [ "$nocal" = 1 ]; then
		topo_json 10 0.5 1 50 1 "$FABRIC_DESC; nominal latencies and efficiencies (not calibrated)" >"$DIR/topo.json.tmp"
		mv "$DIR/topo.json.tmp" "$DIR/topo.json"
	else
		calibrate || exit 1
	fi
	degrade
	UP_DONE=1
	echo "testbed: ready: scripts/testbed.sh mpirun -np $((SERVERS * GPUS)) $FAST run --topo $DIR/topo.json ..." >&2
}

# --- mpirun, status, down -------------------------------------------------

need_instance() {
	P=$(this_instance)
	[ -n "$P" ] && [ -n "$(netns_of "$P")" ] || { echo "testbed: no testbed up in $DIR (scripts/testbed.sh up ...)" >&2; exit 1; }
}

cmd_mpirun() {
	need_instance
	# the jobs of an instance send as its calibration did (EAGER from up)
	read -r SERVERS GPUS RATE BUFFER _ _ EAGER _ <"$DIR/config"
	[[ $EAGER =~ ^[0-9]+$ ]] ||
		die "instance $P was brought up by an older scripts/testbed.sh (no eager limit in $DIR/config): down, then up again"
	run_mpi "$P" "$JOB_TIMEOUT" "$@"
}

cmd_status() {
	P=$(this_instance)
	if [ -z "$P" ] || [ -z "$(netns_of "$P")" ]; then
		echo "testbed: down (no instance in $DIR)"
		return 0
	fi
	read -r SERVERS GPUS RATE BUFFER DELAY NICS EAGER OVR <"$DIR/config"
	local state="owner pid $(cut -d' ' -f1 "$REG/$P/owner" 2>/dev/null) alive"
	owner_alive "$P" || state="owner gone: the next up or down removes it"
	echo "testbed: $P up ($state): $SERVERS servers x $GPUS ranks, $NICS rails per server at $RATE${OVR:+ (--nic $OVR)}, switch buffer $BUFFER B, delay $DELAY us, MPI eager up to $EAGER B"
	echo "namespaces: $(netns_of "$P" | tr '\n' ' ')"
	local ns n=0
	for ns in $(netns_of "$P"); do
		n=$((n + $(ip netns pids "$ns" | wc -l)))
	done
	echo "processes inside: $n"
	# drops and overlimits at the switch ports (incast) since up
	tc -n "$P-sw" -s qdisc show 2>/dev/null | awk '/^qdisc/ { t = $2 == "tbf" } t && /dropped/ { gsub(",", ""); d += $7; o += $9 } END { printf "switch ports: %d dropped, %d overlimits\n", d, o }'
	echo "topology: $DIR/topo.json"
}

cmd_down() {
	local t0 p
	t0=$(now)
	[ "$(id -u)" = 0 ] || die "not root"
	# bounded (about 3 s) and better finished than half done: not interrupted
	trap '' INT TERM HUP
	lock_registry
	p=$(this_instance)
	if [ -n "$p" ]; then
		destroy "$p"
		echo "testbed: $p down in $(elapsed "$t0") s" >&2
	else
		echo "testbed: no instance in $DIR" >&2
	fi
	reap_stale
	unlock_registry
	rm -f "$DIR/instance" "$DIR/hosts" "$DIR/agent" "$DIR/rank" "$DIR/config"
}

case ${1:-} in
up) shift; catch_signals; cmd_up "$@" ;;
mpirun) shift; catch_signals; cmd_mpirun "$@" ;;
status) cmd_status ;;
down) cmd_down ;;
-h | --help | help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
"") usage "no command" ;;
*) usage "unknown command $1" ;;
esac
