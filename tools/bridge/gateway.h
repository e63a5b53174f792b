// tools/bridge/gateway.h - the HTTP gateway's inside (emcp-bridge --http; the entry point is
// http_gateway.h, what it does for a client is docs/gateway.md): the Gateway class, its
// connection and request records, and its bounds. One class, its members in five files and JSON
// text in a sixth, each about one thing:
//
//   http_gateway.cpp     the listener: the listening socket and the options, accepting (the
//                        connection limit), reading, writing, dropping a connection, the poll()
//                        loop, and the timeouts of connections (slow heads and bodies, idle
//                        keep-alive, a peer that stops reading, heartbeats)
//   gateway_routes.cpp   a request from its head to the board: admission (the core's
//                        http_security.h), the routing rules of GET/POST/DELETE, the checks of a
//                        2026-07-28 request (the core's, on a server of the gateway's own), a
//                        POST's messages forwarded under wire ids
//   gateway_output.cpp   what goes back to a client: the response head (the core's writers),
//                        one JSON answer, or an event stream (chunked), and the end of a request
//   gateway_session.cpp  the one HTTP session: opening (its random id), its end (DELETE, idle,
//                        a reset), the board's UART session started afresh, Retry-After
//   gateway_streams.cpp  a session's resumable event streams (2025-11-25 on): priming events,
//                        event ids, the replay buffer, GET with Last-Event-ID
//   gateway_board.cpp    the board's side: its answers and progress mapped back to their
//                        requests, what it sends on its own routed (or dropped), resets, lost
//                        input, request timeouts
//   gateway_json.cpp     JSON text: messages re-written with the core's writer, ids as text,
//                        the spans of values in a board line (gateway_json.h)
//
// The HTTP side is the core's: its request parser (emcp/http/http.h), its status and header
// writers, its admission of a request (emcp/transport/http_security.h) with the engine's options
// (transport::HttpOptions) and defaults, the core's JSON-RPC decoder, and the core's checks of a
// 2026-07-28 request (mcp::Server::handle on Gateway::local_, whose tables are empty:
// `_meta`, emcp::mcp::check_routing_headers, the revision). The clock, random bytes, reads and
// blocking writes are the posix port's (emcp/posix/platform.h, fd.h). What the gateway still
// does itself, beside the engine: the connection slots and their timeouts, the session table
// (one session), SSE framing, and the routing of a POST; docs/gateway.md ("Inside") says why:
// it forwards raw JSON-RPC to a board whose answers come later, on another fd, where the engine
// answers from an mcp::Server within the call.
//
// Context: one thread (the poll() loop in Gateway::run()). Host code: the standard library is
// fine here; every buffer is bounded (the constants below, HttpOptions, GatewayOptions).
#ifndef EMCP_TOOLS_BRIDGE_GATEWAY_H
#define EMCP_TOOLS_BRIDGE_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "board_link.h"
#include "emcp/auth/resource_server.h"
#include "emcp/http/http.h"
#include "emcp/json/reader.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "emcp/util/arena.h"
#include "gateway_json.h"
#include "http_gateway.h"

namespace bridge {
namespace gateway {

constexpr const char kModern[] = "2026-07-28";
constexpr const char kDiscoverId[] = "emcp-gw-discover-";  // the gateway's server/discover
constexpr const char kResetId[] = "emcp-gw-reset-";        // the gateway's own initialize
constexpr size_t kMaxOut = 8u << 20;           // a client that reads nothing is dropped beyond this
constexpr size_t kMaxInFlight = 256;           // requests forwarded and not answered yet: 503 beyond
constexpr size_t kMaxQueue = 1u << 20;         // bytes waiting for the board: 503 beyond
constexpr size_t kMaxBoardRequests = 64;       // the board's requests to the session's client kept
constexpr uint32_t kMaxRetryAfterS = 60;
constexpr size_t kMaxReplay = 1u << 20;        // a session's kept events (gateway_streams.cpp), bytes
constexpr size_t kMaxStreams = 1024;           // a session's streams remembered for resuming

/// `bytes` random bytes (the posix port's getrandom()) as 2 * bytes hex digits and a NUL.
bool random_hex(char* out, size_t bytes);

/// One HTTP connection, and the request it serves.
struct Conn {
  enum class St { kIdle, kRequest, kWaiting, kStream, kClosing };
  int fd = -1;
  uint64_t serial = 0;
  uint64_t gen = 0;          // the request being served (Pending::gen)
  St st = St::kIdle;
  emcp::http::RequestParser parser;
  std::string in;            // bytes read, not parsed yet
  std::string body;
  std::string out;           // bytes for the client, not written yet
  uint64_t started_ms = 0, last_ms = 0, out_ms = 0;
  // The request being served.
  int refuse = 0;            // a refusal decided from the head, answered after the body
  const char* refuse_text = nullptr;
  std::string refuse_header;
  bool cors = false, preflight = false;
  std::string document;      // the metadata document to answer
  bool keep_alive = true;
  bool head_sent = false, sse = false, chunked = false;
  bool session_req = false;  // names (or opens) the session
  uint64_t session_gen = 0;  // ... the one of Gateway::session_gen_ when its head named it
  bool modern = false;       // a 2026-07-28 request
  bool bad_version = false;
  bool batch = false;
  int awaiting = 0;          // its requests the board has not answered
  std::string extra;         // header lines for its answer (Mcp-Session-Id)
  uint32_t stream = 0;       // the resumable stream it carries (gateway_streams.cpp), 0: none
};

/// A request forwarded to the board, by its wire id.
struct Pending {
  std::string orig_id;       // the client's id (JSON text)
  std::string orig_token;    // its progressToken (JSON text), "" when none
  size_t conn = 0;
  uint64_t serial = 0;
  uint64_t gen = 0;          // the HTTP request on that connection
  uint64_t seq = 0;
  uint64_t deadline = 0;     // --request-timeout-ms
  bool session = false;
  bool initialize = false;
  bool opening = false;      // the initialize that opens the session
  uint32_t stream = 0;       // its resumable stream: what comes for it goes there (kept when the
                             // connection is gone), not to `conn`
};

class Gateway final : public Link::Listener {
 public:
  Gateway(const LinkOptions& lo, const GatewayOptions& o);
  int run();

  // ---- The board (gateway_board.cpp)
  void on_board_line(const std::string& line) override;
  void on_board_reset(const char* why) override;
  void on_board_ready() override;
  void on_board_lost_input(const std::vector<std::string>& ids) override;

 private:
  enum class SessionState { kNone, kOpening, kOpen };
  enum class Modern { kUnknown, kYes, kNo };

  // ---- The listener and connections (http_gateway.cpp)
  bool setup();
  void accept_all();
  void on_input(size_t i);
  void process(size_t i);
  void flush(Conn& c);
  void drop(size_t i, const char* why);
  void tick();
  void tick_conns(uint64_t now);
  size_t slot_of(const Conn& c) const;
  bool conn_live(const Pending& p) const {
    return p.conn < conns_.size() && conns_[p.conn] && conns_[p.conn]->serial == p.serial &&
           conns_[p.conn]->gen == p.gen;
  }

  // ---- Requests (gateway_routes.cpp)
  void on_head(Conn& c);
  void on_done(Conn& c);
  void on_post(Conn& c);
  void post_body(Conn& c);
  void post_stateless(Conn& c, const emcp::jsonrpc::Decoded& d);
  void post_session(Conn& c, const emcp::jsonrpc::Decoded& d);
  void forward(Conn& c, const emcp::jsonrpc::Message& m, bool session, bool initialize, bool opening);
  bool cancel_for(Conn& c, const emcp::jsonrpc::Message& m, bool session);
  bool refuse_busy(Conn& c, size_t requests);
  bool refused_here(Conn& c, const emcp::jsonrpc::Decoded& d);

  // ---- Answers (gateway_output.cpp)
  std::string head(Conn& c, int status, const char* type, int64_t length);
  void answer(Conn& c, int status, const std::string& body, const char* type);
  void answer_text(Conn& c, int status, const char* text) {
    answer(c, status, text ? std::string(text) + "\n" : std::string(), text ? "text/plain; charset=utf-8" : nullptr);
  }
  // A JSON-RPC error with HTTP `status`; `id` JSON text ("": none; 2026-07-28 leaves null out).
  void answer_rpc(Conn& c, int status, int code, const std::string& message, const std::string& id = "null") {
    answer(c, status, rpc_error(c.modern && id == "null" ? "" : id, code, message), "application/json");
  }
  void start_sse(Conn& c);
  void event(Conn& c, const std::string& json);
  void end_response(Conn& c);
  void end_request(Conn& c);
  void deliver(size_t conn, const std::string& json, bool answer, int error_code);

  // ---- Resumable streams (gateway_streams.cpp)
  struct Stream {
    size_t conn = 0;
    uint64_t serial = 0;      // 0: no connection carries it now
    uint64_t gen = 0;
    int awaiting = 0;         // its requests not answered yet
    uint64_t n = 0;           // its last event's number
    bool ended = false;       // every answer sent: a GET resuming it ends after the replay
  };
  struct Replayed {
    uint32_t stream;
    uint64_t n;
    std::string text;         // the whole event, as written
  };
  bool resumable(const Conn& c) const;
  void write_events(Conn& c, const std::string& text);
  void open_stream(Conn& c);
  Conn* stream_conn(uint32_t sid, const Stream& s);
  void stream_event(uint32_t sid, const std::string& json, bool answer);
  void stream_request_gone(uint32_t sid, const Conn* handling);
  /// A connection carries what comes for `pd` now (its own, or its stream's).
  bool carried(const Pending& pd);
  void detach_stream(size_t conn, uint64_t serial);
  bool resume_stream(Conn& c);
  void forget_streams();
  void to_request(const Pending& pd, const std::string& json, bool answer, int error_code);

  // ---- The session (gateway_session.cpp)
  bool session_open() const { return session_ == SessionState::kOpen; }
  /// The request `c` named the session when its head came, and that session is still open.
  bool session_still(const Conn& c) const { return session_open() && c.session_gen == session_gen_; }
  void initialize_answered(const Pending& pd, const emcp::jsonrpc::Message& answer);
  void end_session(const char* why, const std::string& message);
  void expire_idle_session(uint64_t now);
  void reset_board_session();
  uint32_t retry_after_s() const;
  /// A request of the session in flight, or its GET stream open.
  bool session_busy() const;
  std::string session_header() const { return std::string("Mcp-Session-Id: ") + session_id_ + "\r\n"; }

  // ---- The board's side (gateway_board.cpp)
  void route_unrelated(const std::string& line, const emcp::jsonrpc::Message& m);
  void fail_pending(bool session_only_requests, const std::string& message);
  void expire_requests(uint64_t now);
  void cancel_on_board(const std::string& wire, const char* reason);

  void log(const std::string& s) { bridge::log(lo_.quiet, s); }

  const LinkOptions& lo_;
  const GatewayOptions& o_;
  std::unique_ptr<Link> link_;
  emcp::transport::HttpOptions http_;
  std::vector<const char*> hosts_, origins_, cors_;
  std::vector<emcp::auth::StaticToken> tokens_;
  std::string resource_;                              // the canonical URI (--resource)
  emcp::auth::ResourceServerConfig auth_config_;
  // The gateway's own mcp::Server, its tables empty: the owner of the tokens' scopes (auth_),
  // and the core's checks of a 2026-07-28 request before it goes to the board (refused_here()).
  emcp::mcp::Server local_;
  emcp::auth::ResourceServer auth_;                   // --bearer-token (started by setup())
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::unique_ptr<Conn>> conns_;
  uint64_t serial_ = 0;
  uint64_t gen_ = 0;
  uint64_t next_id_ = 0;
  std::string wire_prefix_;                 // "gw-<random>-": wire ids nobody can guess
  std::vector<std::string> board_reqs_;     // ids (JSON) of the board's requests to the session's client
  bool reset_due_ = false;                  // the board's session is to be started afresh
  int board_resets_sent_ = 0;
  uint64_t accept_pause_until_ = 0;         // accept4 failed for want of fds
  std::map<std::string, Pending> pending_;  // by wire id (JSON text)
  bool posting_ = false;                    // in on_post(): the link's lines wait in held_lines_
  std::deque<std::string> held_lines_;
  // A request body, or a board line (at most 1 MiB), read with the core's decoder.
  emcp::json::StaticReader<> reader_;
  emcp::StaticArena<(8u << 20)> arena_;
  emcp::jsonrpc::Decoder decoder_{reader_, arena_};
  // The session.
  SessionState session_ = SessionState::kNone;
  uint64_t session_gen_ = 0;                // counts the sessions opened
  char session_id_[33] = {};
  emcp::mcp::Version session_version_ = emcp::mcp::kLatestVersion;
  uint64_t session_last_ = 0;
  int get_conn_ = -1;
  uint64_t get_serial_ = 0;
  Modern board_modern_ = Modern::kUnknown;
  int discovers_ = 0;
  // The session's resumable streams (gateway_streams.cpp).
  std::map<uint32_t, Stream> streams_;
  std::deque<Replayed> replay_;
  size_t replay_bytes_ = 0;
  uint32_t next_stream_ = 0;
};

}  // namespace gateway
}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_GATEWAY_H
