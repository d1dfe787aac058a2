# results/study_lib.sh - what the studies run by hand (auto_study.sh,
# nic_study.sh) share; sourced from the repository root.

# trace_of SERVERS: the bundled trace of SERVERS x 8 GPUs that the studies'
# "trace" traffic scales (results/scale_trace.py), or nothing.
trace_of() {
	case $1 in
	4) echo traces/deepseek-v2-lite-intent-ep32.json ;;
	16) echo traces/switch128-pooled-ep128.json ;;
	esac
}
