#!/bin/sh
# expect_failure.sh PATTERN COMMAND [ARG...]
# A test that something is refused, for the right reason: passes only when COMMAND exits with a
# failure status (not 0, and not a crash: a status above 125 is a signal or a command that could
# not run) and its output (stdout and stderr) matches the extended regular expression PATTERN.
# Replaces ctest's WILL_FAIL, which passes on any failure, a crash or a typo included.
set -u
pattern=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out" | tail -n 30
if [ "$status" -eq 0 ]; then
  echo "expect_failure: FAILED: the command succeeded; it must fail with output matching: $pattern"
  exit 1
fi
if [ "$status" -gt 125 ]; then
  echo "expect_failure: FAILED: the command crashed or could not run (status $status); it must fail with output matching: $pattern"
  exit 1
fi
if ! printf '%s\n' "$out" | grep -E -q -e "$pattern"; then
  echo "expect_failure: FAILED: the command failed (status $status) but not for the expected reason: no line matches: $pattern"
  exit 1
fi
echo "expect_failure: failed as expected (status $status, matched: $pattern)"
