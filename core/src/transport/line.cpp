#include "emcp/transport/line.h"

#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace transport {

LineTransport::LineTransport(mcp::Server& server, json::FlushingSink::FlushFn write, void* ctx,
                               json::Reader& reader, Arena& arena, char* out_buf, size_t out_cap,
                               size_t max_line)
    : server_(server),
      arena_(arena),
      decoder_(reader, arena),
      framer_(decoder_, max_line),
      out_(out_buf, out_cap, write, ctx),
      session_(mcp::Channel{&LineTransport::open, &LineTransport::close, this}) {
  server_.attach(session_);
}

json::Sink* LineTransport::open(void* ctx, const mcp::OutMessage&) {
  auto* self = static_cast<LineTransport*>(ctx);
  return self->out_.status() == Status::kOk ? &self->out_ : nullptr;
}

Status LineTransport::close(void* ctx) {
  auto* self = static_cast<LineTransport*>(ctx);
  self->out_.put('\n');
  return self->out_.flush();
}

void LineTransport::dispatch(LineFramer::Event ev, bool lost) {
  if (ev == LineFramer::Event::kMessage) {
    server_.handle(session_, framer_.decoded());
  } else if (ev == LineFramer::Event::kTooLong) {
    // A line over the limit (answered when the limit is reached) or one that lost bytes
    // (answered where they went missing): -32600 with its id when it was read; the latter
    // says so in data.inputLost.
    json::Sink* sink = open(this, mcp::OutMessage{});
    if (sink == nullptr) return;
    json::Writer w(*sink);
    jsonrpc::write_error_with_raw_data(
        w, mcp::answer_id(session_, framer_.too_long_id()), jsonrpc::ErrorCode::kInvalidRequest,
        lost ? StrView(EMCP_ERRTEXT("Invalid Request: input lost (receive buffer overflow)"))
             : StrView(EMCP_ERRTEXT("Invalid Request: message longer than the line limit (EMCP_MAX_MESSAGE_LEN)")),
        lost ? StrView("{\"inputLost\":true}") : StrView());
    (void)close(this);
  }
}

Status LineTransport::feed(const void* data, size_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (n != 0) {
    size_t used = 0;
    const LineFramer::Event ev = framer_.push(p, n, &used);
    p += used;
    n -= used;
    if (ev == LineFramer::Event::kNeedInput) break;
    dispatch(ev, false);
  }
  return out_.status();
}

Status LineTransport::finish() {
  dispatch(framer_.finish(), false);
  server_.detach(session_);
  session_.reset();  // a new stream on this transport starts with initialize again
  return out_.status();
}

}  // namespace transport
EMCP_NS_END
