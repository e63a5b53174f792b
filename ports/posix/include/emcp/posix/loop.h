// emcp/posix/loop.h - the stdio serving loop on Linux: an mcp::Server's line transport fed from
// stdin (answers leave through the transport's flush, stdout for fd_flush), with the
// application's periodic work (emcp::Loop) and the server's inbox (the eventfd other threads
// wake it with). What posix::StdioMcp (emcp/posix/mcp.h) runs, and serve::stdio() with its own
// transport; in emcp::posix, which links neither sockets nor TLS.
//
// Context: the program's main thread; the loop runs until the end of stdin or SIGINT/SIGTERM.
#ifndef EMCP_POSIX_LOOP_H
#define EMCP_POSIX_LOOP_H

#include <stdint.h>

#include <initializer_list>

#include "emcp/loop.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace posix {

/// Serves stdin through `link` until the end of stdin or SIGINT/SIGTERM, then writes a summary
/// line to stderr ("<program>: end of input after N messages ..."). Returns the process exit
/// code: 0 for either end, 1 when the output failed (the reason on stderr).
int serve_stdio(mcp::Server& server, transport::LineTransport& link, const char* program, const Loop& loop);

/// The transport serve_stdio() is serving, or nullptr (for diagnostics: messages, arena).
transport::LineTransport* served_stdio();

/// From now on SIGINT and SIGTERM end the serving loops (no SA_RESTART: a signal interrupts their
/// poll()); stop_requested() then says true.
void catch_stop_signals();
bool stop_requested();

/// Writes pieces of text to stderr (no stdio: it allocates).
void say(std::initializer_list<StrView> parts);

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_LOOP_H
