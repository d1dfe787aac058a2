#!/usr/bin/env bash
# tests/python/run.sh - the python stage of tests/run_all.sh: `import fast`
# (python/fast over build/lib/libfast.so.0) against the command line,
# under Debian's /usr/bin/python3 with python3-numpy and python3-pytest
# (scripts/deps.sh installs them).  Without them: a skip (exit 77) saying
# so, except in CI (CI=true, where deps.sh ran) or with FAST_PYTHON=require,
# where it is a failure.  pytest finding no tests (its exit 5) fails.
#
#   bash tests/python/run.sh [path/to/fast]
set -u
cd "$(dirname "$0")/../.." || exit 2
PY=${FAST_TEST_PYTHON:-/usr/bin/python3}
export FAST_BIN=${1:-build/bin/fast}
lib=build/lib/libfast.so.0

if ! missing=$("$PY" -c '
import importlib.util as u
print(" ".join(m for m in ("numpy", "pytest") if u.find_spec(m) is None))' 2>&1) || [ -n "$missing" ]; then
	why="$PY lacks ${missing:-python}: bash scripts/deps.sh installs python3-numpy python3-pytest"
	if [ "${CI:-}" = true ] || [ "${FAST_PYTHON:-}" = require ]; then
		echo "FAIL: $why"
		exit 1
	fi
	echo "skipped: $why"
	exit 77
fi
[ -f "$lib" ] || { echo "FAIL: $lib not built (make)"; exit 1; }
"$PY" -m pytest -q -p no:cacheprovider tests/python
rc=$?
[ $rc = 5 ] && echo "FAIL: pytest collected no tests in tests/python"
exit $rc
