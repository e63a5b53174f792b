// emcp/http/http.h - incremental HTTP/1.1 request parser and response helpers.
//
// The parser is fed bytes as they arrive (any split: a TCP segment, an lwIP pbuf) and never
// buffers a body: body bytes come back as views into the input, to go straight into the JSON
// reader. Only the headers MCP transports need are kept, in fixed buffers; every other header
// is counted and skipped. Each limit answers with its own status:
//
//   400  malformed request line, header, chunk size; conflicting Content-Length / Transfer-Encoding
//   411  POST/PUT without Content-Length or chunked body
//   413  body longer than the configured maximum
//   414  request target longer than EMCP_HTTP_MAX_TARGET
//   431  more than EMCP_HTTP_MAX_HEADERS headers, more than EMCP_HTTP_MAX_HEAD bytes of head,
//        or a kept header longer than its buffer
//   501  a Transfer-Encoding other than chunked
//   505  an HTTP version other than 1.0 / 1.1
//
// Context: the loop that owns the connection. No heap, no recursion; about 1.2 KiB of state
// with the default options (mostly the kept header values).
//
// Example:
//   emcp::http::RequestParser p;  p.set_max_body(65536);
//   for (;;) {
//     size_t used; auto e = p.push(data, n, &used); data += used; n -= used;
//     if (e == Event::kHead) route(p.request());          // method, target, headers
//     else if (e == Event::kBody) decoder.feed(p.body());  // a piece of the body
//     else if (e == Event::kDone) answer();                // the whole request is in
//     else if (e == Event::kError) reply_status(p.error_status());
//     else break;                                          // kNeedInput
//   }
#ifndef EMCP_HTTP_HTTP_H
#define EMCP_HTTP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/sink.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace http {

enum class Method : uint8_t { kGet, kPost, kDelete, kHead, kPut, kOptions, kOther };

/// A kept header value. `present` tells whether the header came at all, `repeated` whether it
/// came more than once (the values then follow each other in `data`, Accept's joined by ", ").
template <size_t N>
struct HeaderBuf {
  char data[N];
  uint16_t len = 0;
  bool present = false;
  bool repeated = false;
  StrView view() const { return StrView(data, len); }
};

/// What the parser keeps of a request.
struct Request {
  Method method = Method::kOther;
  uint8_t version_minor = 1;      ///< HTTP/1.<minor>
  HeaderBuf<EMCP_HTTP_MAX_TARGET> target;  ///< path and query, as sent
  int64_t content_length = -1;   ///< -1: none
  bool chunked = false;
  bool keep_alive = true;        ///< HTTP/1.1 default, "Connection: close" turns it off
  bool connection_upgrade = false;
  bool expect_continue = false;  ///< "Expect: 100-continue"
  HeaderBuf<128> host;
  HeaderBuf<128> origin;
  HeaderBuf<96> content_type;
  HeaderBuf<256> accept;
  HeaderBuf<72> session_id;      ///< Mcp-Session-Id
  HeaderBuf<24> protocol_version;  ///< MCP-Protocol-Version
  HeaderBuf<48> mcp_method;      ///< Mcp-Method (2026-07-28)
  HeaderBuf<EMCP_HTTP_MAX_MCP_NAME> mcp_name;  ///< Mcp-Name (2026-07-28)
  /// Mcp-Param-{Name} headers (2026-07-28), each as "name:value\n", the name in lower case
  /// (header names are case-insensitive) and the value trimmed (mcp::RequestHeaders::params).
  HeaderBuf<EMCP_HTTP_MAX_MCP_PARAMS> mcp_params;
  HeaderBuf<72> last_event_id;   ///< Last-Event-ID
  HeaderBuf<EMCP_HTTP_MAX_AUTH> authorization;
  HeaderBuf<16> upgrade;         ///< Upgrade (websocket)
  HeaderBuf<32> ws_key;          ///< Sec-WebSocket-Key
  HeaderBuf<8> ws_version;       ///< Sec-WebSocket-Version
  HeaderBuf<64> ws_protocol;     ///< Sec-WebSocket-Protocol (subprotocols offered)

  /// The target's path (up to '?') and query (after it, "" when none).
  StrView path() const;
  StrView query() const;
  /// The value of a query parameter ("" when absent), not percent-decoded.
  StrView query_param(StrView name) const;
  /// True when Accept lists `type` (e.g. "text/event-stream") or a wildcard that covers it.
  bool accepts(StrView type) const;
  /// True when Content-Type's media type is `type` (parameters such as charset ignored).
  bool content_type_is(StrView type) const;
};

/// True for the token characters of RFC 9110 5.6.2 (methods, header names, auth-schemes).
bool is_tchar(uint8_t c);
/// Case-insensitive equality of ASCII strings (header names, tokens).
bool ascii_iequal(StrView a, StrView b);
/// True when the comma-separated header value `list` holds `token` (case-insensitive).
bool has_token(StrView list, StrView token);

class RequestParser {
 public:
  enum class Event : uint8_t {
    kNeedInput,  ///< every byte given is used
    kHead,       ///< request line and headers are in: request() is complete
    kBody,       ///< body() holds the next piece of the body (a view into the input)
    kDone,       ///< the request is complete (after its body, if any)
    kError,      ///< error_status() says which HTTP status to answer; close afterwards
  };

  RequestParser() { reset(); }
  /// Starts the next request (keep-alive). The Request is cleared.
  void reset();
  /// Largest body accepted (413 beyond). Default EMCP_MAX_MESSAGE_LEN.
  void set_max_body(uint32_t n) { max_body_ = n; }

  /// Consumes bytes up to the next event; `*used` tells how many. Bytes after kDone belong to
  /// the next request: feed them after reset().
  Event push(const void* data, size_t n, size_t* used);

  const Request& request() const { return req_; }
  StrView body() const { return body_; }
  int error_status() const { return error_; }
  /// Why (a short static text for the error body).
  const char* error_reason() const { return reason_; }
  /// Body bytes seen so far.
  uint64_t body_bytes() const { return body_seen_; }
  /// True between kHead and kDone (the body is being read).
  bool in_body() const { return state_ >= kBodyLength && state_ < kFinished; }
  /// True after kDone (until reset()).
  bool done() const { return state_ == kEnded; }

 private:
  enum State : uint8_t {
    kMethod, kTarget, kVersion, kRequestLineLf,
    kHeaderStart, kHeaderName, kHeaderValueSkipWs, kHeaderValue, kHeaderLf, kHeadLf,
    kBodyLength, kChunkSize, kChunkExt, kChunkSizeLf, kChunkData, kChunkDataCr, kChunkDataLf,
    kTrailerStart, kTrailerLine, kTrailerLf, kFinished, kEnded, kFailed,
  };
  // push()'s three phases, each advancing `p` over what it used.
  Event parse_head(const uint8_t*& p, const uint8_t* end);
  Event take_body(const uint8_t*& p, const uint8_t* end);
  Event parse_chunked(const uint8_t*& p, const uint8_t* end);
  Event fail(int status, const char* reason);
  Event finish();
  Event head_done();
  bool end_header();
  void store_value(const uint8_t* bytes, size_t n);  // into the kept header's buffer (which_)

  Request req_;
  State state_ = kMethod;
  int error_ = 0;
  const char* reason_ = "";
  uint32_t max_body_ = EMCP_MAX_MESSAGE_LEN;
  uint32_t head_bytes_ = 0;
  uint16_t headers_ = 0;
  char token_[48];        // method or the start of a header name (Mcp-Param-* names: 38 bytes)
  uint8_t token_len_ = 0;
  bool token_long_ = false;
  char version_[9];
  uint8_t version_len_ = 0;
  uint8_t which_ = 0;     // the kept header being read (0: none)
  bool value_overflow_ = false;
  bool seen_length_ = false;
  bool seen_te_ = false;
  char value_[24];        // small values parsed here (Content-Length, Transfer-Encoding, Connection, Expect)
  uint16_t value_len_ = 0;
  uint64_t remaining_ = 0;    // bytes left in the body or the current chunk
  uint64_t body_seen_ = 0;
  uint8_t chunk_digits_ = 0;
  StrView body_;
};

/// The standard reason phrase of a status ("Not Found").
const char* status_reason(int status);

/// Writes "HTTP/1.1 <status> <reason>\r\n". Headers follow with header(), then end_head().
void write_status_line(json::Sink& out, int status);
void write_header(json::Sink& out, StrView name, StrView value);
void write_header(json::Sink& out, StrView name, uint64_t value);
/// The blank line that ends the head.
void write_end_head(json::Sink& out);

}  // namespace http
EMCP_NS_END

#endif  // EMCP_HTTP_HTTP_H
