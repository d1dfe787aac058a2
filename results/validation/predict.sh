#!/usr/bin/env bash
# The validation table (docs/validation.md): builds nothing, runs
# predict.py with Debian's python3 (numpy) against build/bin/fast.
#   bash results/validation/predict.sh            # whole set: writes table.md,
#                                                 # predictions.csv, commands.txt
#   bash results/validation/predict.sh --only ID  # one row, stdout only
# Options are predict.py's (--help).  Build first: make -s -j2 all
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec /usr/bin/python3 "$here/predict.py" "$@"
