// emcp/transport/line.h - LineTransport: MCP's stdio transport over any byte stream (a UART,
// stdin/stdout, a pipe, a serial device).
//
// One JSON-RPC message per line in and out (MCP "stdio" transport). Input bytes are handed to
// feed() as they arrive, in any split; answers and notifications leave through a small output
// buffer and a port callback. Over-long lines are answered with -32600 and skipped; invalid
// lines get their JSON-RPC error; the transport keeps serving. Nothing but JSON-RPC is written
// to the output (log through another channel).
//
// LineTransport works on storage the caller provides; StaticLineTransport<> carries its own.
//
// Context: the loop that owns the server.
//
// Example:
//   static emcp::transport::StaticLineTransport<> link(server, &uart_flush, nullptr);
//   link.feed(bytes, n);   // whenever input arrives
#ifndef EMCP_TRANSPORT_LINE_H
#define EMCP_TRANSPORT_LINE_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line_framer.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace transport {

class LineTransport {
 public:
  /// Serves `server` (not owned) on one session. `write(ctx, data, n)` must take all bytes or
  /// return an error; `out_buf` (at least 1 byte) is the output buffer; `reader` and `arena`
  /// decode input. All must outlive the transport.
  LineTransport(mcp::Server& server, json::FlushingSink::FlushFn write, void* ctx,
                 json::Reader& reader, Arena& arena, char* out_buf, size_t out_cap,
                 size_t max_line = EMCP_MAX_MESSAGE_LEN);
  LineTransport(const LineTransport&) = delete;
  LineTransport& operator=(const LineTransport&) = delete;

  /// Consumes input bytes; answers as messages complete. Returns the output's status (kOk,
  /// or the first error of `write`, after which output is dropped).
  Status feed(const void* data, size_t n);
  /// End of input: a last line without newline is answered. The session is detached.
  Status finish();
  /// Input bytes were lost between those fed so far and those fed next (a UART's receive
  /// buffer overflowed). The line they belong to is answered at once with -32600 and
  /// `"data":{"inputLost":true}` (with its id when it was read before the gap, else null) and
  /// skipped up to its newline, never parsed as something it was not. A damaged response ends
  /// the server's request it answers. More gaps before that newline are the same one.
  void input_lost() { dispatch(framer_.lose(), true); }

  mcp::Session& session() { return session_; }
  Status status() const { return out_.status(); }
  /// Messages handled and over-long lines rejected since construction.
  uint64_t messages() const { return framer_.messages(); }
  uint64_t too_long() const { return framer_.too_long(); }
  const Arena& arena() const { return arena_; }

 private:
  static json::Sink* open(void* ctx, const mcp::OutMessage& m);
  static Status close(void* ctx);
  void dispatch(LineFramer::Event ev, bool lost);

  mcp::Server& server_;
  Arena& arena_;
  jsonrpc::Decoder decoder_;
  LineFramer framer_;
  json::FlushingSink out_;
  mcp::Session session_;
};

namespace detail {
template <size_t ArenaSize, size_t OutSize>
struct LineStorage {
  json::StaticReader<> reader_storage;
  StaticArena<ArenaSize> arena_storage;
  char out_storage[OutSize];
};
}  // namespace detail

/// A LineTransport with its own reader, arena and output buffer.
template <size_t ArenaSize = EMCP_ARENA_SIZE, size_t OutSize = 256>
class StaticLineTransport : private detail::LineStorage<ArenaSize, OutSize>,
                             public LineTransport {
  using Storage = detail::LineStorage<ArenaSize, OutSize>;

 public:
  StaticLineTransport(mcp::Server& server, json::FlushingSink::FlushFn write, void* ctx)
      : LineTransport(server, write, ctx, Storage::reader_storage, Storage::arena_storage,
                       Storage::out_storage, OutSize) {}
};

/// An mcp::Server and its line transport in one object: what posix::StdioMcp (emcp/posix/mcp.h)
/// and emcp::board::UartMcp (board/mcp.h) add their run() to. `info` is kept by reference (the
/// server's): a constexpr static, never a temporary; the object is a static (its arena and
/// buffers are members), built before the loop runs.
template <size_t ArenaSize, size_t OutSize>
class StreamMcp {
 public:
  StreamMcp(const StreamMcp&) = delete;
  StreamMcp& operator=(const StreamMcp&) = delete;

  /// The server, for what the constructor does not set (resources, prompts, an inbox...).
  mcp::Server& server() { return server_; }
  LineTransport& link() { return link_; }

 protected:
  StreamMcp(const mcp::ServerInfo& info, const Platform& platform, json::FlushingSink::FlushFn write, void* ctx)
      : server_(info, platform), link_(server_, write, ctx) {}
  ~StreamMcp() = default;

 private:
  mcp::Server server_;
  StaticLineTransport<ArenaSize, OutSize> link_;
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_LINE_H
