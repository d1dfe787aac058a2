#!/usr/bin/env bash
# dist/man.sh - write the fast(1) man page (roff) to stdout, generated from
# the binary's own help text, so the page and `--help` cannot disagree:
# `fast --help` gives the synopsis and description, `fast help CMD` each
# command's section (the command list is the one `fast --help` prints).
#
#   bash dist/man.sh build/bin/fast PREFIX > fast.1
#
# PREFIX names where `make install` puts the shared files (FILES section).
set -eu
fast=${1:?usage: dist/man.sh FAST_BINARY PREFIX}
prefix=${2:?usage: dist/man.sh FAST_BINARY PREFIX}

# preformatted text as roff: backslashes and dashes escaped, a leading . or '
# made literal
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

version=$("$fast" --version)
help=$("$fast" --help)
commands=$(printf '%s\n' "$help" | sed -n '/^Commands:$/,/^$/s/^  \([a-z][a-z0-9-]*\)  *.*/\1/p')
[ -n "$commands" ] || { echo "dist/man.sh: no commands in '$fast --help'" >&2; exit 1; }

cat <<HEAD
.TH FAST 1 "" "$version" "User Commands"
.SH NAME
fast \\- compile, prove, bound, simulate and run all\\-to\\-all(v) schedules for two\\-tier GPU clusters
.SH SYNOPSIS
.nf
HEAD
printf '%s\n' "$help" | sed -n '1,/^$/p' | sed 's/^usage: //; s/^       //' | roff
echo '.fi'
echo '.SH DESCRIPTION'
echo '.nf'
printf '%s\n' "$help" | sed '1,/^$/d' | roff
echo '.fi'
echo '.SH COMMANDS'
for c in $commands; do
	summary=$(printf '%s\n' "$help" | sed -n "s/^  $c  *//p")
	printf '.SS "fast %s"\n' "$c"
	printf '%s\n' "$summary" | roff
	echo '.PP'
	echo '.nf'
	"$fast" help "$c" | roff
	echo '.fi'
done
cat <<TAIL
.SH ENVIRONMENT
.TP
.B FAST_DATA_DIR
the MoE routing data set read by \\fBfast trace import\\fR when \\fB\\-\\-data\\fR is
not given (the order of the places it looks is under \\fBfast trace\\fR above).
.SH FILES
.TP
.I $(printf '%s' "$prefix" | roff)/share/fast/data/moe
the bundled MoE routing data set, each source with its licence and README.md
.TP
.I $(printf '%s' "$prefix" | roff)/share/fast/traces
traffic files converted from it, and their README.md (method, skew, licences)
.TP
.I $(printf '%s' "$prefix" | roff)/share/fast/schemas
JSON Schemas of the topology, traffic and plan files
.TP
.I $(printf '%s' "$prefix" | roff)/share/doc/fast/README.md
where to start; the user guide, file formats, design, studies and
benchmarks are in docs/ beside it (docs/guide.md: every command)
.SH EXIT STATUS
0 ok, 1 a check failed (wrong plan, gate failed, wrong bytes), 2 usage,
3 bad input, 4 runtime failure (I/O, write failure).
.SH SEE ALSO
.BR mpirun (1),
.BR pkg\\-config (1)
(modules \\fBfast\\fR and \\fBfast\\-exec\\fR)
TAIL
