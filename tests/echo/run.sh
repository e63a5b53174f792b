#!/bin/sh
# Golden test of emcp-echo over stdio: the session in session.jsonl, then a line longer than
# EMCP_MAX_MESSAGE_LEN (65536) that carries its id before the limit, then a normal request that
# must still be answered. The answers must equal expected.jsonl byte for byte, and the program
# must end with status 0 and no sanitizer report on stderr (../server_end.sh).
set -eu
bin=$1
here=$(dirname "$0")
status=0
{
  cat "$here/session.jsonl"
  printf '{"jsonrpc":"2.0","id":10,"method":"long","params":{"t":"'
  head -c 70000 /dev/zero | tr '\0' 'x'
  printf '"}}\n'
  printf '{"jsonrpc":"2.0","id":11,"method":"after"}\n'
} | "$bin" 2>echo-stderr.txt > answers.jsonl || status=$?
"$here/../server_end.sh" emcp-echo "$status" echo-stderr.txt
if ! cmp -s answers.jsonl "$here/expected.jsonl"; then
  echo "emcp-echo answers differ from expected.jsonl:" >&2
  diff "$here/expected.jsonl" answers.jsonl >&2 || true
  exit 1
fi
echo "emcp-echo: $(wc -l < answers.jsonl) answers as expected"
