#!/bin/sh
# server_end.sh NAME STATUS STDERR_FILE
# How a server a shell test ran ended (as tests/mcp/lib/server_exit.mjs judges the Node tests'):
# passes only when its exit status STATUS is 0 and its stderr, saved in STDERR_FILE, holds no
# sanitizer report (a line matching tests/sanitizer_patterns.txt); otherwise says which, with
# the tail of that stderr, and exits with status 1.
set -u
name=$1
status=$2
stderr=$3
report=$(sed -e '/^#/d' -e '/^$/d' "$(dirname "$0")/sanitizer_patterns.txt" | grep -E -m 1 -f - "$stderr")
[ "$status" -eq 0 ] && [ -z "$report" ] && exit 0
[ "$status" -eq 0 ] || echo "FAILED: $name exited with status $status"
[ -z "$report" ] || echo "FAILED: $name left a sanitizer report on stderr ($report)"
echo "its stderr ends:"
tail -n 40 "$stderr"
exit 1
