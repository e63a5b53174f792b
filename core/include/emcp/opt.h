// emcp/opt.h - compile-time configuration of emcp, with documented defaults.
//
// The application writes `emcp_config.h` (found on the include path) or names another file with
// -DEMCP_CONFIG_FILE="\"my_config.h\"". That file is included first; every option it does not
// set gets the default below. All options are plain integer macros.
//
// Every option is folded into an inline namespace (see EMCP_ABI_NS), so an application built
// with one configuration and a core library built with another fail to link instead of
// running with values the other side does not know about (a layout that differs, or a page
// size the core would not apply).
//
// Context: header only, no code.
#ifndef EMCP_OPT_H
#define EMCP_OPT_H

#if defined(EMCP_CONFIG_FILE)
#include EMCP_CONFIG_FILE
#elif defined(__has_include)
#if __has_include("emcp_config.h")
#include "emcp_config.h"
#endif
#endif

// ---- JSON reader -------------------------------------------------------------------------------

/// Maximum nesting depth of arrays and objects in one JSON document. Deeper input stops with
/// Status::kDepthLimit. Costs one bit per level in each reader (rounded up to 32 bits) and one
/// pointer pair per level in the JSON-RPC decoder.
#ifndef EMCP_JSON_MAX_DEPTH
#define EMCP_JSON_MAX_DEPTH 32
#endif

/// Maximum length in bytes (after unescaping) of an object key. Longer keys stop with
/// Status::kKeyTooLong. Each reader holds a key buffer of this size.
#ifndef EMCP_JSON_MAX_KEY_LEN
#define EMCP_JSON_MAX_KEY_LEN 64
#endif

/// Maximum number of significant decimal digits in a number (leading zeros and trailing zeros
/// of the fraction do not count, so 0.000001 has one). Longer numbers stop with
/// Status::kNumberTooLong. A double needs 17; each reader holds a digit buffer of this size.
#ifndef EMCP_JSON_MAX_NUMBER_DIGITS
#define EMCP_JSON_MAX_NUMBER_DIGITS 40
#endif

// ---- JSON writer -------------------------------------------------------------------------------

/// Maximum nesting depth the JSON writer tracks (one bit per level).
#ifndef EMCP_JSON_WRITER_MAX_DEPTH
#define EMCP_JSON_WRITER_MAX_DEPTH 32
#endif

// ---- JSON-RPC ----------------------------------------------------------------------------------

/// Maximum length in bytes of a string request id (and of the decimal text of a numeric one).
/// Longer ids make the message invalid (-32600) and are answered with id null.
#ifndef EMCP_JSONRPC_MAX_ID_LEN
#define EMCP_JSONRPC_MAX_ID_LEN 64
#endif

/// Size in bytes of the message arena a server declares for decoding one message (ids, method,
/// params tree). Messages that do not fit are answered with -32600 "message too large".
#ifndef EMCP_ARENA_SIZE
#define EMCP_ARENA_SIZE 4096
#endif

// ---- Transports --------------------------------------------------------------------------------

/// Longest message (one line on stdio/UART) in bytes, newline excluded. Longer lines are
/// answered with -32600 and skipped to the next newline. This bounds time per message; memory
/// is bounded by the arena whatever this is.
#ifndef EMCP_MAX_MESSAGE_LEN
#define EMCP_MAX_MESSAGE_LEN 65536
#endif

// ---- HTTP ---------------------------------------------------------------------------------------

/// Longest request target (path and query) in bytes; longer: 414.
#ifndef EMCP_HTTP_MAX_TARGET
#define EMCP_HTTP_MAX_TARGET 256
#endif

/// Most bytes of a request's head (request line and headers); more: 431.
#ifndef EMCP_HTTP_MAX_HEAD
#define EMCP_HTTP_MAX_HEAD 8192
#endif

/// Most headers in a request; more: 431.
#ifndef EMCP_HTTP_MAX_HEADERS
#define EMCP_HTTP_MAX_HEADERS 64
#endif

/// Longest Authorization header kept (bearer tokens, JWTs); longer: 431.
#ifndef EMCP_HTTP_MAX_AUTH
#define EMCP_HTTP_MAX_AUTH 1024
#endif

/// Longest `Mcp-Name` header kept (MCP 2026-07-28: the tool or prompt name, or the resource
/// URI, of a request, possibly base64-encoded); longer: 431.
#ifndef EMCP_HTTP_MAX_MCP_NAME
#define EMCP_HTTP_MAX_MCP_NAME 192
#endif

/// Bytes kept of a request's `Mcp-Param-{Name}` headers (MCP 2026-07-28: tool arguments
/// mirrored into headers by `x-mcp-header`), each taking its name, its value and 2 bytes;
/// more: 431.
#ifndef EMCP_HTTP_MAX_MCP_PARAMS
#define EMCP_HTTP_MAX_MCP_PARAMS 160
#endif

/// Event streams per HTTP session (POST answers in flight, the GET stream, streams waiting
/// for a client to resume). More concurrent POSTs of one session get 503.
#ifndef EMCP_HTTP_STREAMS
#define EMCP_HTTP_STREAMS 4
#endif

// ---- Protocol eras -----------------------------------------------------------------------------
// (Before the server's options: some of their defaults follow the eras served.)

/// 1: requests of the stateless revision 2026-07-28 (`_meta` on each request, server/discover)
/// are served beside the legacy sessions of 2024-11-05 to 2025-11-25 (docs/mcp.md); 0: legacy
/// sessions only, and none of the modern era's code is linked (a modern request is then
/// answered as an unknown one: -32600 before initialize). Changes no public type's layout.
#ifndef EMCP_MODERN_ERA
#define EMCP_MODERN_ERA 1
#endif

/// 1: clients of 2024-11-05 to 2025-11-25 open sessions with `initialize` (the legacy era);
/// 0: the server answers 2026-07-28 requests only, and none of the legacy era's code is linked:
/// no `initialize`, `ping`, `logging/setLevel`, resources/subscribe, batches, requests to the
/// client (Server::request(), sample(), elicit(), list_roots(), ping() fail: kInvalidState or
/// kNotFound; an InputBridge and on_roots_changed() are ignored), no held notifications but a
/// listen's, and in the HTTP engine no session table use, GET stream, resumption, HTTP+SSE or
/// WebSocket (docs/mcp.md, docs/http.md). A request without the 2026-07-28 `_meta` is refused: -32602
/// (basic/index.mdx), `initialize` -32022 naming the revision served (basic/versioning.mdx).
/// Changes no public type's layout itself; the defaults of EMCP_MAX_OUTGOING and
/// EMCP_NOTIFY_QUEUE follow it. EMCP_MODERN_ERA and EMCP_LEGACY_ERA cannot both be 0.
#ifndef EMCP_LEGACY_ERA
#define EMCP_LEGACY_ERA 1
#endif

// ---- MCP server ------------------------------------------------------------------------------

/// Entries per page of tools/list, resources/list, resources/templates/list and prompts/list
/// (Server::set_page_size() changes it at run time).
#ifndef EMCP_PAGE_SIZE
#define EMCP_PAGE_SIZE 16
#endif

/// Tool calls that may be pending at once after ToolCall::defer() (each holds a copy of the
/// request id and progress token, about 150 bytes). More are answered with an error.
#ifndef EMCP_MAX_DEFERRED
#define EMCP_MAX_DEFERRED 4
#endif

/// Bytes of application state a request handler may carry from one round of input to the next
/// (Inputs::keep(), MCP 2026-07-28 multi round-trip requests): they travel to the client and
/// back in `requestState`, authenticated. The handler object holds twice this on the stack.
#ifndef EMCP_REQUEST_STATE_MAX
#define EMCP_REQUEST_STATE_MAX 48
#endif

/// Rounds of input one request may take (each retry is a round); a handler asking for more is
/// refused (Inputs::elicit() and the others return false).
#ifndef EMCP_MAX_INPUT_ROUNDS
#define EMCP_MAX_INPUT_ROUNDS 8
#endif

/// Seconds a `requestState` stays valid; an older one is refused (-32602).
#ifndef EMCP_REQUEST_STATE_TTL_S
#define EMCP_REQUEST_STATE_TTL_S 600
#endif

/// Questions one round of a request may ask a client of 2024-11-05 to 2025-11-25 through an
/// InputBridge (emcp/mcp/input_bridge.h): one more makes the ask return false.
#ifndef EMCP_INPUT_ASKS
#define EMCP_INPUT_ASKS 4
#endif

/// Longest key of an ask (Inputs::elicit(key...)) an InputBridge holds; a longer one makes the
/// ask return false for such a client (a 2026-07-28 client takes any key).
#ifndef EMCP_INPUT_KEY_MAX
#define EMCP_INPUT_KEY_MAX 24
#endif

/// Requests to clients (sampling, elicitation, roots, ping) in flight at once, server-wide
/// (about 40 bytes each). Only legacy sessions take such requests: 0 by default with
/// EMCP_LEGACY_ERA=0 (and only then may it be 0).
#ifndef EMCP_MAX_OUTGOING
#if EMCP_LEGACY_ERA
#define EMCP_MAX_OUTGOING 4
#else
#define EMCP_MAX_OUTGOING 0
#endif
#endif

/// Resource subscriptions per session (4 bytes each). More are refused with an error.
#ifndef EMCP_MAX_SUBSCRIPTIONS
#define EMCP_MAX_SUBSCRIPTIONS 8
#endif

/// Open `subscriptions/listen` streams (MCP 2026-07-28) per server, each holding its request id,
/// the list changes it wants and up to EMCP_MAX_SUBSCRIPTIONS resource URIs (as hashes): about
/// 128 bytes each with the default id length. One more is refused (-32603) and the server
/// keeps serving. 0: no listens (-32601, and server/discover offers no change notifications).
#ifndef EMCP_MAX_LISTENS
#define EMCP_MAX_LISTENS 4
#endif

/// Bytes of the server's queue of held notifications: list changes, resource updates and log
/// messages sent while their session's channel is busy with another message (from inside a
/// tool handler after its result started, say) wait there and go out once the channel is free
/// (at the end of Server::handle() and complete(), and from poll()). Each takes its texts
/// plus 16 bytes on 32-bit targets (24 on 64-bit), rounded up to 4 (8); one that does not fit
/// is dropped and counted
/// (Server::notifications_dropped()). 0: no queue, every such notification is dropped. Only
/// sessions and listen streams hold notifications: 0 by default with EMCP_LEGACY_ERA=0 and
/// EMCP_MAX_LISTENS=0.
#ifndef EMCP_NOTIFY_QUEUE
#if EMCP_LEGACY_ERA || EMCP_MAX_LISTENS > 0
#define EMCP_NOTIFY_QUEUE 256
#else
#define EMCP_NOTIFY_QUEUE 0
#endif
#endif

/// The default size of a StaticInbox (emcp/mcp/inbox.h): work posted to the server's loop from
/// other threads, tasks and interrupts. Slots (a power of two) and the bytes each carries (a
/// resource URI, a log line, a deferred call's answer text); on a 32-bit target a slot takes
/// EMCP_INBOX_PAYLOAD rounded up to 8, plus 16 bytes. A post to a full inbox is refused with
/// kNoSpace, one longer than a slot with kInvalidArgument. Only an application that declares
/// an inbox pays for one.
#ifndef EMCP_INBOX_SLOTS
#define EMCP_INBOX_SLOTS 8
#endif
#ifndef EMCP_INBOX_PAYLOAD
#define EMCP_INBOX_PAYLOAD 64
#endif

/// Nesting of parameter schemas (objects in objects, arrays of objects...): a Param table
/// deeper than this does not compile. Bounds the stack of writing and checking schemas.
#ifndef EMCP_SCHEMA_MAX_DEPTH
#define EMCP_SCHEMA_MAX_DEPTH 4
#endif

/// Variables of one resource template match ({a}/{b}...).
#ifndef EMCP_MAX_TEMPLATE_VARS
#define EMCP_MAX_TEMPLATE_VARS 4
#endif

// ---- Diagnostics -------------------------------------------------------------------------------

/// 1: error messages carry human-readable text; 0: only codes (saves flash).
#ifndef EMCP_ERROR_STRINGS
#define EMCP_ERROR_STRINGS 1
#endif

/// 1: EMCP_ASSERT checks programmer errors and calls emcp_assert_failed(); 0: compiled out.
#ifndef EMCP_ENABLE_ASSERT
#define EMCP_ENABLE_ASSERT 1
#endif

// ---- Checks ------------------------------------------------------------------------------------

#if EMCP_JSON_MAX_DEPTH < 4 || EMCP_JSON_MAX_DEPTH > 1024
#error "EMCP_JSON_MAX_DEPTH must be between 4 and 1024 (a JSON-RPC request with params needs 3)"
#endif
#if EMCP_JSON_MAX_KEY_LEN < 16 || EMCP_JSON_MAX_KEY_LEN > 65535
#error "EMCP_JSON_MAX_KEY_LEN must be between 16 (longest MCP key) and 65535"
#endif
#if EMCP_JSON_MAX_NUMBER_DIGITS < 20 || EMCP_JSON_MAX_NUMBER_DIGITS > 64
#error "EMCP_JSON_MAX_NUMBER_DIGITS must be between 20 (every int64) and 64"
#endif
#if EMCP_JSON_WRITER_MAX_DEPTH < 4 || EMCP_JSON_WRITER_MAX_DEPTH > 1024
#error "EMCP_JSON_WRITER_MAX_DEPTH must be between 4 and 1024"
#endif
#if EMCP_MAX_DEFERRED < 1 || EMCP_MAX_DEFERRED > 1000 || EMCP_MAX_OUTGOING < !!EMCP_LEGACY_ERA || EMCP_MAX_OUTGOING > 1000
#error "EMCP_MAX_DEFERRED and EMCP_MAX_OUTGOING must be between 1 and 1000 (EMCP_MAX_OUTGOING 0 with EMCP_LEGACY_ERA=0)"
#endif
#if (EMCP_MODERN_ERA != 0 && EMCP_MODERN_ERA != 1) || (EMCP_LEGACY_ERA != 0 && EMCP_LEGACY_ERA != 1)
#error "EMCP_MODERN_ERA and EMCP_LEGACY_ERA must be 0 or 1"
#endif
#if !EMCP_MODERN_ERA && !EMCP_LEGACY_ERA
#error "EMCP_MODERN_ERA=0 and EMCP_LEGACY_ERA=0: the server would serve no protocol revision; leave one of them 1"
#endif
#if EMCP_SCHEMA_MAX_DEPTH < 1 || EMCP_SCHEMA_MAX_DEPTH > 16
#error "EMCP_SCHEMA_MAX_DEPTH must be between 1 and 16"
#endif
#if EMCP_MAX_SUBSCRIPTIONS < 1 || EMCP_MAX_TEMPLATE_VARS < 1
#error "EMCP_MAX_SUBSCRIPTIONS and EMCP_MAX_TEMPLATE_VARS must be at least 1"
#endif
#if EMCP_MAX_LISTENS < 0 || EMCP_MAX_LISTENS > 255
#error "EMCP_MAX_LISTENS must be between 0 (no subscriptions/listen) and 255"
#endif
#if EMCP_NOTIFY_QUEUE < 0 || EMCP_NOTIFY_QUEUE > 65535
#error "EMCP_NOTIFY_QUEUE must be between 0 (no queue) and 65535 bytes"
#endif
#if EMCP_HTTP_STREAMS < 2 || EMCP_HTTP_STREAMS > 64
#error "EMCP_HTTP_STREAMS must be between 2 (a POST and the GET stream) and 64"
#endif
#if EMCP_REQUEST_STATE_MAX < 0 || EMCP_REQUEST_STATE_MAX > 200 || EMCP_MAX_INPUT_ROUNDS < 1 || EMCP_MAX_INPUT_ROUNDS > 255
#error "EMCP_REQUEST_STATE_MAX must be between 0 and 200, EMCP_MAX_INPUT_ROUNDS between 1 and 255"
#endif
#if EMCP_INPUT_ASKS < 1 || EMCP_INPUT_ASKS > 64 || EMCP_INPUT_KEY_MAX < 1 || EMCP_INPUT_KEY_MAX > 255
#error "EMCP_INPUT_ASKS must be between 1 and 64, EMCP_INPUT_KEY_MAX between 1 and 255"
#endif
#if EMCP_JSONRPC_MAX_ID_LEN < 20 || EMCP_JSONRPC_MAX_ID_LEN > 1024
#error "EMCP_JSONRPC_MAX_ID_LEN must be between 20 (every int64) and 1024"
#endif

// ---- Authorization ------------------------------------------------------------------------------

/// Longest bearer token checked (bytes); a longer one is refused like a bad one. The header
/// itself is kept up to EMCP_HTTP_MAX_AUTH bytes (longer: 431).
#ifndef EMCP_AUTH_MAX_TOKEN
#define EMCP_AUTH_MAX_TOKEN EMCP_HTTP_MAX_AUTH
#endif

// ---- ABI namespace -----------------------------------------------------------------------------

#define EMCP_CAT16_(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
  a##_##b##_##c##_##d##_##e##_##f##_##g##_##h##_##i##_##j##_##k##_##l##_##m##_##n##_##o##_##p
#define EMCP_CAT16(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p) \
  EMCP_CAT16_(a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p)
#define EMCP_CAT3_(a, b, c) a##_##b##_##c
#define EMCP_CAT3(a, b, c) EMCP_CAT3_(a, b, c)
/// Inline namespace whose name encodes every option, in the order of this file's first
/// version (layout options) and then the others: a program whose parts were compiled with
/// different configurations fails to link (undefined references into the other namespace)
/// instead of running with, say, an arena size the core does not know about.
#define EMCP_ABI_NS                                                                                 \
  EMCP_CAT3(EMCP_CAT16(v0, EMCP_JSON_MAX_DEPTH, EMCP_JSON_MAX_KEY_LEN, EMCP_JSON_MAX_NUMBER_DIGITS,     \
                       EMCP_JSONRPC_MAX_ID_LEN, EMCP_JSON_WRITER_MAX_DEPTH, EMCP_MAX_DEFERRED,           \
                       EMCP_MAX_OUTGOING, EMCP_MAX_SUBSCRIPTIONS, EMCP_MAX_TEMPLATE_VARS,                \
                       EMCP_HTTP_MAX_TARGET, EMCP_HTTP_MAX_AUTH, EMCP_HTTP_STREAMS, EMCP_NOTIFY_QUEUE,   \
                       EMCP_HTTP_MAX_MCP_NAME, EMCP_HTTP_MAX_MCP_PARAMS),                                \
            EMCP_CAT16(EMCP_REQUEST_STATE_MAX, EMCP_MAX_LISTENS, EMCP_INPUT_ASKS, EMCP_INPUT_KEY_MAX,    \
                       EMCP_ARENA_SIZE, EMCP_MAX_MESSAGE_LEN, EMCP_HTTP_MAX_HEAD, EMCP_HTTP_MAX_HEADERS, \
                       EMCP_MODERN_ERA, EMCP_LEGACY_ERA, EMCP_PAGE_SIZE, EMCP_MAX_INPUT_ROUNDS,          \
                       EMCP_REQUEST_STATE_TTL_S, EMCP_SCHEMA_MAX_DEPTH, EMCP_ERROR_STRINGS,              \
                       EMCP_ENABLE_ASSERT),                                                              \
            EMCP_AUTH_MAX_TOKEN)
#define EMCP_NS_BEGIN namespace emcp { inline namespace EMCP_ABI_NS {
#define EMCP_NS_END } }

#endif  // EMCP_OPT_H
