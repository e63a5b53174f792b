# http_seed_lib.sh - what the fuzz seed scripts share (sourced, POSIX sh): an initialize body,
# a POST /mcp request around a body, the first session's id (the fuzz targets' random sources
# give 01 02 03 ...), the initialized notification and a tools/call body.
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}'
post() {  # post BODY [SESSION_ID [EXTRA_HEADER]]
  printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
  [ -n "${2:-}" ] && printf 'Mcp-Session-Id: %s\r\n' "$2"
  [ -n "${3:-}" ] && printf '%s\r\n' "$3"
  printf 'Content-Length: %s\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"
}
SID='0102030405060708090a0b0c0d0e0f10'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"; }
# The stateless revision 2026-07-28: a POST carries the request's metadata in headers as well
# (basic/transports/streamable-http.mdx, "Request Metadata"). mpost BODY [VERSION [METHOD [NAME
# [HEADER...]]]] writes POST /mcp of BODY (one line of JSON, as the wire fixtures hold them) with
# MCP-Protocol-Version, Mcp-Method and Mcp-Name; each of VERSION, METHOD and NAME is "=" (or
# empty) for what the body says (_meta's protocolVersion, method, params.name of tools/call and
# prompts/get or params.uri of resources/read), "-" to leave the header out, or the value to send;
# the HEADERs ("Name: value") follow them.
body_field() {  # body_field BODY SED_EXPRESSION
  printf '%s' "$1" | sed -n "$2"
}
mpost() {
  _b=$1
  _v=${2:-=}
  _m=${3:-=}
  _n=${4:-=}
  if [ $# -gt 4 ]; then shift 4; else shift $#; fi
  if [ "$_v" = "=" ]; then _v=$(body_field "$_b" 's/.*"io\.modelcontextprotocol\/protocolVersion":"\([^"]*\)".*/\1/p'); fi
  _bm=$(body_field "$_b" 's/^{[^{]*"method":"\([^"]*\)".*/\1/p')
  if [ "$_m" = "=" ]; then _m=$_bm; fi
  if [ "$_n" = "=" ]; then
    case $_bm in
      tools/call|prompts/get) _n=$(body_field "$_b" 's/.*"params":{"name":"\([^"]*\)".*/\1/p') ;;
      resources/read) _n=$(body_field "$_b" 's/.*"params":{"uri":"\([^"]*\)".*/\1/p') ;;
      *) _n= ;;
    esac
  fi
  printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
  if [ -n "$_v" ] && [ "$_v" != "-" ]; then printf 'MCP-Protocol-Version: %s\r\n' "$_v"; fi
  if [ -n "$_m" ] && [ "$_m" != "-" ]; then printf 'Mcp-Method: %s\r\n' "$_m"; fi
  if [ -n "$_n" ] && [ "$_n" != "-" ]; then printf 'Mcp-Name: %s\r\n' "$_n"; fi
  for _h in "$@"; do printf '%s\r\n' "$_h"; done
  printf 'Content-Length: %s\r\n\r\n%s' "$(printf '%s' "$_b" | wc -c)" "$_b"
}
