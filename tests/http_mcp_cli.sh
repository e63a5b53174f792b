#!/bin/sh
# http_mcp_cli.sh PROGRAM
# The command line of emcp::posix::HttpMcp (emcp/posix/http_mcp.h), through a program built on
# it: each bad command line exits with status 2 and says why on stderr, without serving; --help
# exits with status 0 and prints the usage with the network options.
set -u
program=$1
err=$(mktemp)
trap 'rm -f "$err"' EXIT
failed=0
expect() {  # expect STATUS TEXT ARG...: the program given ARG... exits STATUS, stderr has TEXT
  want=$1
  text=$2
  shift 2
  "$program" "$@" </dev/null >/dev/null 2>"$err"
  got=$?
  if [ "$got" != "$want" ] || ! grep -q -F -e "$text" "$err"; then
    echo "FAILED: $program $* exited $got (wanted $want) and wrote:"
    cat "$err"
    echo "(wanted it to say: $text)"
    failed=1
  fi
}
expect 2 "unknown option --bogus" --bogus
expect 2 "usage: " --bogus
expect 2 "--stdio and --http exclude each other" --stdio --http 0
expect 2 "70000" --http 70000
expect 2 "--http" --http
expect 2 "--tls-key" --http 0 --tls-cert /dev/null
expect 2 "need --http" --ws
expect 0 "--http PORT" --help
expect 0 "--auth-token" -h
expect 2 "--mqtt-keepalive needs a number of seconds 1..65535" --mqtt mqtt://127.0.0.1 --mqtt-keepalive 0
expect 2 "need --mqtt URL" --mqtt-keepalive 5
expect 0 "--mqtt-keepalive S" --help
exit $failed
