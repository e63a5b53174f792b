// emcp/transport/detail/http_output.h - a connection's response output, as the HTTP engine
// writes it: the response head (status line and headers), the body's framing (Content-Length
// when the answer fits the buffer, chunked once it outgrows it or when it is an event stream,
// until close for HTTP/1.0, WebSocket frames), and the bytes the peer has not taken yet, all in
// the connection's one output buffer. The engine's connection slot (HttpConnection,
// detail/http_slots.h) is one; what it needs from its owner (the port's write, the clock, the
// head's other lines) comes through a Link, so it runs on its own in the unit tests too.
// Internals of emcp/transport/http_server.h; nothing here is meant to be used directly.
//
// Context: the loop that owns the HttpServer.
#ifndef EMCP_TRANSPORT_DETAIL_HTTP_OUTPUT_H
#define EMCP_TRANSPORT_DETAIL_HTTP_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/sink.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace transport {

class HttpServer;

class HttpOutput {
 public:
  /// The first kHeadroom bytes of the buffer (and 2 at its end) are kept for HTTP heads and
  /// chunk / frame framing around the output.
  static constexpr size_t kHeadroom = 320;
  /// The longest response head (status line and headers: a bearer challenge and the CORS
  /// headers of a long Origin together); one longer than the room in front of its body goes out
  /// in two writes.
  static constexpr size_t kMaxHead = 600;
  static_assert(kMaxHead <= 2 * (kHeadroom - 16), "a head splits in two parts at most");

  /// The body's form: none yet, Content-Length (the sink holds it all), chunked, until the
  /// connection closes (HTTP/1.0), WebSocket frames.
  enum class Body : uint8_t { kNone, kBuffered, kChunked, kUntilClose, kWs };

  /// What the output asks of the connection it belongs to. Each call gets `ctx` and the output.
  struct Link {
    struct Ops {
      /// Offers data[0, n) to the peer: *taken is how many bytes it took (0: its window is
      /// full). Not kOk: the connection failed.
      Status (*write)(void* ctx, HttpOutput& o, const char* data, size_t n, size_t* taken);
      /// Waits at most `timeout_ms` for the peer's window to open (only when `can_wait`): kOk
      /// when it may have.
      Status (*wait_writable)(void* ctx, HttpOutput& o, uint32_t timeout_ms);
      /// The peer took nothing for `send_timeout_ms` while the output waited for it.
      void (*timed_out)(void* ctx, HttpOutput& o);
      /// The head's lines the output does not know (session, extra header lines, CORS), written
      /// after its own; false when the connection closes after this response (the head then
      /// says "Connection: close").
      bool (*head_lines)(void* ctx, HttpOutput& o, json::Sink& head);
      /// True when the peer reads chunked bodies (HTTP/1.1); otherwise a body of unknown
      /// length goes until the connection closes.
      bool (*chunked)(void* ctx, HttpOutput& o);
      /// The bytes of an event written while `tee` is on (the replay buffer).
      void (*tee)(void* ctx, HttpOutput& o, const char* data, size_t n);
      uint64_t (*now)(void* ctx);  ///< milliseconds
    };
    const Ops* ops;
    void* ctx;
    uint32_t send_timeout_ms;  ///< the longest wait for the peer to take output
    bool can_wait;             ///< ops->wait_writable may be called
  };

  /// `out` holds `cap` bytes (at least kHeadroom + 64). `flush` is called with `ctx` and each
  /// full buffer of the sink (and n == 0 when the sink was held and is written again); it must
  /// return flushed() with the output's Link.
  HttpOutput(char* out, size_t cap, json::FlushingSink::FlushFn flush, void* ctx);
  HttpOutput(const HttpOutput&) = delete;
  HttpOutput& operator=(const HttpOutput&) = delete;

  /// Where the body is written.
  json::Sink& sink() { return sink_; }
  /// A send failed (or timed out): the connection is to be closed.
  bool dead() const { return output_.dead; }
  /// Bytes written that the peer has not taken yet.
  size_t pending() const { return output_.pend_len; }
  Body body() const { return body_; }

  /// A response whose length is known once it is written: `status`, the sink empty.
  void begin_buffered(int status, const char* content_type);
  /// A response whose length is unknown (an event stream when `sse`): chunked, or until
  /// close when the peer does not read chunks. The head goes out with the first bytes.
  void start_stream(const Link& l, const char* content_type, bool sse);
  /// `status` with `text` and a newline as its body (no body when nullptr), whole.
  void answer_text(const Link& l, int status, const char* text, const char* content_type = nullptr);
  /// Sends what the sink holds (with a pending head); the head alone when the sink is empty.
  /// It ends a piece of output: what the peer cannot take now waits in the buffer.
  void push_out(const Link& l);
  /// Ends the body: the Content-Length answer, the last chunk, or nothing (until close).
  void finish_body(const Link& l);
  /// A few bytes that end a piece of output (a last chunk, a WebSocket control frame, an
  /// interim response): after what is pending. The sink must be empty.
  void send_tail(const Link& l, const char* data, size_t n);
  /// Offers the pending bytes to the peer; with `wait`, until all are taken (or the
  /// connection failed or timed out: then it is dead). True when nothing is pending any more.
  bool drain(const Link& l, bool wait);
  /// The sink's flush (see the constructor).
  Status flushed(const Link& l, const char* data, size_t n);

 protected:
  friend class HttpServer;
  // What goes out: the output waiting for the port, the response's head and form.
  struct Output {
    uint32_t cap = 0;
    uint32_t pend_off = 0;      // out_[pend_off, +pend_len): written, not yet taken by the port
    uint32_t pend_len = 0;
    bool head_pending = false;  // the response head goes out with the next bytes
    bool head_sent = false;     // the response head is out
    bool dead = false;          // a send failed: close at the next chance
    bool defer = false;         // output that ends a message: what the port cannot take waits
    bool sse = false;           // the response is an event stream
    bool force_sse = false;     // answer as an event stream even if JSON would do (batches)
    bool tee = false;           // output between open and close also goes to the replay buffer
    bool cors = false;          // the answer carries the CORS headers for the request's Origin
  };
  // WebSocket framing of the messages going out.
  struct WsOut {
    bool first = true;          // the next frame starts a message
    bool final = false;         // the next frame ends a message
  };

  size_t write_head(const Link& l, char* dst, size_t cap, int64_t length);

  json::FlushingSink sink_;
  char* out_;
  Body body_ = Body::kNone;
  Output output_;
  WsOut ws_;
  int status_ = 200;           // status of the response being prepared
  const char* content_type_ = nullptr;

 private:
  Status send(const Link& l, const char* data, size_t n, bool may_defer);
  void lend();
  void send_head(const Link& l, const char* head, size_t k);
  char* place_head(const Link& l, const char* head, size_t k, char* start);
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_DETAIL_HTTP_OUTPUT_H
