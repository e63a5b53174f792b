#!/bin/sh
# http_mcp_cli.sh PROGRAM
# The command line of emcp::posix::HttpMcp (emcp/posix/http_mcp.h), through a program built on
# it: each bad command line exits with status 2 and says why on stderr, without serving (a key
# file too short to be a key: status 1, before listening); --help exits with status 0 and
# prints the usage with the network options.
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
expect 2 "need --http" --session-prefix b1-
expect 2 "need --http" --state-key-file /dev/null
expect 2 "up to 16 characters" --http 0 --session-prefix "b 1"
expect 2 "up to 16 characters" --http 0 --session-prefix 0123456789abcdefg
expect 2 "up to 16 characters" --http 0 --session-prefix ""
expect 1 "holds fewer than 32 bytes" --http 0 --state-key-file /dev/null
expect 2 "--stdio and --mqtt exclude each other" --stdio --mqtt mqtt://127.0.0.1
expect 2 "mqtt://HOST[:PORT] or mqtts://" --mqtt http://127.0.0.1
expect 2 "mqtt://HOST[:PORT] or mqtts://" --mqtt mqtt://127.0.0.1:0
expect 2 "mqtt://HOST[:PORT] or mqtts://" --mqtt mqtt://
expect 2 "need --mqtt URL" --mqtt-name a/b
expect 2 "need --mqtt URL" --mqtt-ca /dev/null
expect 2 "without + or #" --mqtt mqtt://127.0.0.1 --mqtt-name "a/+"
expect 2 "without /, + or #" --mqtt mqtt://127.0.0.1 --mqtt-id a/b
expect 2 "mqtts:// needs --mqtt-ca" --mqtt mqtts://localhost
expect 2 "--mqtt-ca goes with an mqtts:// URL" --mqtt mqtt://localhost --mqtt-ca /dev/null
expect 2 "--mqtt-cert and --mqtt-key go together" --mqtt mqtts://localhost --mqtt-ca /dev/null --mqtt-cert /dev/null
expect 1 "the MQTT TLS settings do not load" --mqtt mqtts://localhost:1 --mqtt-ca /dev/null
expect 0 "--mqtt URL" --help
expect 0 "--http PORT" --help
expect 0 "--auth-token" -h
expect 2 "--mqtt-keepalive needs a number of seconds 1..65535" --mqtt mqtt://127.0.0.1 --mqtt-keepalive 0
expect 2 "need --mqtt URL" --mqtt-keepalive 5
expect 0 "--mqtt-keepalive S" --help
exit $failed
