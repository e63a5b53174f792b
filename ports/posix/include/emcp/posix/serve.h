// emcp/posix/serve.h - the library's run loops on Linux: an mcp::Server over stdio, or over
// HTTP (Streamable HTTP on /mcp, HTTP+SSE on /sse, optionally WebSocket on /ws) on a port,
// with the application's periodic work. A program parses its command line and calls one
// (examples/*/main_posix.cpp). Boards have theirs in boards/common (board/serve.h).
//
// Context: the program's main thread; each loop runs until its end (EOF, SIGINT/SIGTERM).
#ifndef EMCP_POSIX_SERVE_H
#define EMCP_POSIX_SERVE_H

#include <stdint.h>

#include <initializer_list>

#include "emcp/mcp/server.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace posix {
namespace serve {

/// The application's periodic work (may be nullptr).
struct Loop {
  void (*tick)() = nullptr;
  uint32_t (*next_tick_ms)() = nullptr;  ///< how long the loop may sleep
};

struct HttpConfig {
  const char* program = "emcp";         ///< for messages on stderr
  const char* address = "127.0.0.1";
  uint16_t port = 0;                    ///< 0: any free port (printed on stderr)
  bool websocket = false;
  uint32_t timeout_ms = 0;              ///< request head/body timeouts (0: the defaults, 10 s)
  /// Extra Host/Origin names besides the localhost names ("*": any).
  emcp::Span<const char* const> allowed_hosts;
};

/// Serves stdin/stdout until the end of stdin. Returns the process exit code.
int stdio(emcp::mcp::Server& server, const char* program, const Loop& loop);

/// Serves HTTP until SIGINT/SIGTERM. Returns the process exit code.
int http(emcp::mcp::Server& server, const HttpConfig& config, const Loop& loop);

/// Figures of the transport being served (for diagnostics tools): messages handled (stdio
/// only), the most arena any message used, and the arena's size.
struct Figures {
  uint64_t messages = 0;
  uint64_t arena_high_water = 0;
  uint64_t arena_size = 0;
};
Figures figures();

/// Writes pieces of text to stderr (no stdio: it allocates).
void say(std::initializer_list<emcp::StrView> parts);

/// Parses a decimal port 0..65535; false when it is not one.
bool parse_port(const char* text, uint16_t* port);

}  // namespace serve
}  // namespace posix
EMCP_NS_END

#endif
