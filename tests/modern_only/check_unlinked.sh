#!/bin/sh
# A program built with EMCP_LEGACY_ERA=0 and --gc-sections (tests/modern_only) links none of
# the legacy era's code: fails when its symbol table (nm -C) names a function or table that
# only the legacy era reaches (initialize, ping and logging/setLevel's dispatch, resources/
# subscribe, requests to the client, the InputBridge (BridgeCode), the roots notification; the HTTP
# engine's session table, GET stream, resumption and replay ring, HTTP+SSE, WebSocket), or
# when it does not name the stateless era's own entry point (so that an empty or stripped
# table cannot pass). Usage: check_unlinked.sh NM PROGRAM
set -u
if [ $# -ne 2 ]; then
  echo "usage: check_unlinked.sh NM PROGRAM" >&2
  exit 2
fi
symbols=$("$1" -C "$2") || { echo "check_unlinked: '$1' could not read $2" >&2; exit 1; }
if ! printf '%s\n' "$symbols" | grep -q -E 'mcp::ServerCode::serve_modern\('; then
  echo "check_unlinked FAILED: $2 does not even link ServerCode::serve_modern (stripped? not the modern-only build?)" >&2
  exit 1
fi
legacy='mcp::ServerCode::(on_request|on_initialize|on_set_level|on_subscribe|send_request|on_response|close_outgoing|expire_outgoing|send_cancelled)\b|mcp::FeatureOps::(kRoots|kOutgoing)\b|mcp::BridgeCode::|mcp::TaskCode::(call_2025|methods_2025|requests_2025|kOps2025)\b'
legacy="$legacy|transport::HttpServer::(session_by_id|session_gone|new_session|open_session|free_session|route_get|route_delete|handle_post|open_get_stream|resume_stream|continue_replay|find_stream|new_stream|finish_stream|detach_stream|write_priming|poll_sessions|channel_open|channel_close|channel_end_stream|open_legacy|route_legacy_post|legacy_message_begin|upgrade|receive_ws|ws_close|ws_message_begin|ws_message_end)\("
legacy="$legacy|transport::HttpSession::(open|close|end_stream|detached_flush)\(|transport::ReplayRing::"
found=$(printf '%s\n' "$symbols" | grep -E "$legacy")
if [ -n "$found" ]; then
  echo "check_unlinked FAILED: $2 links code of the legacy era:" >&2
  printf '%s\n' "$found" | sed 's/^/  /' >&2
  exit 1
fi
echo "check_unlinked: $2 links none of the legacy era's code"
