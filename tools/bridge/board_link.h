// tools/bridge/board_link.h - emcp-bridge's side of the board: the UART (a serial device) or
// QEMU's serial port on TCP, the board's readiness (its banner, or the bridge's own pings), and
// its resets (the banner again, or the connection lost and dialled again). Shared by the stdio
// mode (stdio_bridge.cpp) and the HTTP gateway (http_gateway.cpp). Host code: the standard
// library is fine here, every buffer is bounded by what the board sends in one line.
//
// Readiness: the board's banner line (default: a line containing "MCP on this UART"), which it
// prints once, at boot. A board that booted before the bridge connected prints none: after
// --ping-after-ms quiet ms the link sends a ping of its own (id "emcp-bridge-probe-N"), again
// each second up to 5 times, and the board's answer is ready; that answer is never passed on.
// When the banner follows an unanswered ping (a board whose UART dropped it while booting),
// the link pings once more and waits for that answer, so that nothing the lost ping's remains
// draw from the board reaches a client. JSON the board sends before it is ready (answers for a
// previous client) is dropped and reported on stderr; lines that are not JSON (boot logs, the
// banner) go to stderr. What is sent before the board is ready waits, in order.
//
// Flow control: a board reads its UART into a receive buffer (its banner states the size:
// "receive buffer 1024 B") and a UART without flow control loses what arrives beyond it. The
// link never has more bytes on the way than that (--window N overrides it; 256 until a banner
// says otherwise, the least any emcp board has). A line's bytes count until the board has
// surely read them: the board reads its input in order, so the answer to a request means it
// has read every line up to that one. Notifications, responses and lines the board answers
// with a null id are covered by a later request's answer; when lines wait and nothing on the
// way would be answered soon (none is a request, or the oldest has waited kSyncAfterMs, a
// deferred call), the link sends a ping of its own ("emcp-bridge-sync-N") whose answer covers
// them; the window always keeps room for one. A line longer than the window less that room
// (64 B) goes alone, when nothing else is on the way; once it has been on its way kSyncAfterMs,
// such a ping follows it if it gets no answer of its own or lines wait behind it. An error
// the board sends with "data":{"inputLost":true} says its buffer overflowed anyway (a wrong
// --window, a UART fault): reported on stderr, and the requests on the way are given to
// Listener::on_board_lost_input() to be answered with an error.
#ifndef EMCP_TOOLS_BRIDGE_BOARD_LINK_H
#define EMCP_TOOLS_BRIDGE_BOARD_LINK_H

#include <stdint.h>

#include <deque>
#include <string>
#include <vector>

#include "emcp/posix/loop.h"
#include "emcp/posix/platform.h"
#include "link.h"

namespace bridge {

struct LinkOptions {
  std::string serial;  // a serial device, or
  int baud = 115200;
  bool rtscts = false; // hardware flow control on the serial device
  std::string host;    // a TCP host and port (QEMU: -serial tcp:HOST:PORT,server=on), or
  int port = 0;
  std::string mqtt_host;  // a broker (--mqtt mqtt://HOST[:PORT]: mqtt_link.h) and
  int mqtt_port = 1883;
  std::string mqtt_name;  // the device's server-name, or a filter (+, #); "" for any
  bool mqtt_fleet = false;  // --fleet: every device under mqtt_name as one server (fleet_link.h)
  bool mqtt_tls = false;    // mqtts://: the broker's certificate verified against mqtt_ca
  std::string mqtt_ca, mqtt_cert, mqtt_key;
  std::string banner = "MCP on this UART";
  int wait_ms = 15000;
  int ping_after_ms = 1000;  // quiet time before a ping when no banner came; 0: never ping
  size_t window = 0;         // bytes on the way to the board at most; 0: as its banner says
  bool quiet = false;
};

/// The window when neither --window nor a banner says (the smallest receive buffer an emcp
/// board has: boards/common/include/board/rx.h).
constexpr size_t kDefaultWindow = 256;

/// The posix port's monotonic clock (emcp/posix/platform.h).
using emcp::posix::now_ms;
/// "[emcp-bridge] <text>" on stderr (unless quiet).
void log(bool quiet, const std::string& text);
/// A supported --baud value.
bool baud_supported(int baud);
/// SIGINT and SIGTERM end the bridge cleanly (exit status 0): the posix port's
/// catch_stop_signals() (they only set the flag stop_requested() reads, and interrupt a poll():
/// no SA_RESTART); SIGPIPE is ignored.
void catch_stop_signals();
using emcp::posix::stop_requested;

/// What the bridge keeps of one JSON-RPC line: its kind, id (as JSON text) and method. Read
/// with the core's JSON-RPC decoder.
struct Parsed {
  bool valid = false;
  bool request = false, notification = false, response = false;
  bool batch = false;
  std::string id;      // the id's JSON text ("1", "\"a\""), "" when none
  std::string method;
  bool input_lost = false;  // an error with "data":{"inputLost":true}: the board lost input
  std::string cancels;      // notifications/cancelled: its requestId's JSON text
};
Parsed parse(const std::string& line);
bool looks_like_json(const std::string& line);

class BoardLink final : public Link {
 public:
  using Listener = Link::Listener;

  BoardLink(const LinkOptions& o, Listener& l) : o_(o), l_(l), window_(o.window != 0 ? o.window : kDefaultWindow) {}
  BoardLink(const BoardLink&) = delete;
  BoardLink& operator=(const BoardLink&) = delete;
  ~BoardLink() override;

  /// Reaches the board (a QEMU still starting may refuse for a moment): false after --wait-ms.
  bool start() override;
  /// The board's fd (-1 while a lost connection is being dialled again). Non-blocking.
  int fd() const override { return fd_; }
  bool ready() const override { return ready_; }
  /// A lost connection is being dialled again, or was and the board is not ready yet: what the
  /// client sends meanwhile should wait (it must not be failed with what was in flight).
  bool resetting() const override { return give_back_; }
  /// One line to the board (without its newline): queued, written as the window and the board
  /// take it (flush()); held until the board is ready. Lines queued for a board that resets or
  /// a connection that is lost are dropped (their requests are failed by on_board_reset()).
  void send(const std::string& line) override;
  /// Bytes waiting to be written (queued and held): callers refuse new input beyond a bound.
  size_t queued() const override { return out_.size() + queue_bytes_; }
  /// Bytes on the way to the board that it may not have read yet, and the window they fit.
  size_t in_flight() const { return in_flight_; }
  size_t window() const { return window_; }
  /// The most bytes ever on the way at once, and the sync pings sent (for --quiet-less logs).
  size_t in_flight_peak() const { return in_flight_peak_; }
  int syncs() const { return syncs_; }
  /// Something waits to be written to the board (poll for POLLOUT).
  bool wants_write() const override { return fd_ >= 0 && !out_.empty(); }
  /// Writes what the board takes now (never blocks). False when the board is lost for good.
  bool flush() override;
  /// The board's fd is readable: reads, reports lines. False when the board is lost for good.
  bool on_readable() override;
  /// Pings while not ready; dials a lost connection again. False when the board was not ready
  /// (or not reachable again) within --wait-ms.
  bool tick() override;
  int resets() const override { return resets_; }
  /// Why the link gave up (for the exit message).
  const std::string& failure() const override { return failure_; }
  std::string summary() const override;

 private:
  struct Line {
    std::string text;     // without its newline
    std::string id;       // a request's id (JSON text), "" for anything else
  };
  struct Sent {
    size_t bytes;         // the line and its newline(s)
    std::string id;       // a request's id, "" for anything else
    uint64_t at;          // when it was written (queued to out_)
    bool reported = false;  // given to on_board_lost_input()
  };

  bool connect_dev();
  void send_probe();
  void become_ready(const char* how);
  void on_line(std::string line);
  bool lose();
  void forget_board();
  void write_line(const std::string& text, const std::string& id, bool lead_newline);
  void pump();
  void maybe_sync();
  void send_sync();
  void acknowledge(const std::string& id);
  void lost_input();

  const LinkOptions& o_;
  Listener& l_;
  int fd_ = -1;
  bool ready_ = false;        // the board is ready on this connection (banner or ping)
  bool redialed_ = false;     // this connection replaced a lost one, not yet ready
  bool give_back_ = false;    // once ready, report the reset
  bool dialing_ = false;      // the connection was lost: dialled again from tick()
  bool dead_ = false;         // lost for good
  uint64_t dial_until_ = 0, last_dial_ = 0;
  bool banner_seen_ = false;  // the banner came on this connection
  int probes_ = 0;            // pings sent on this connection
  bool probe_out_ = false;    // one of them is unanswered
  uint64_t deadline_ = 0;     // for the board to be ready
  uint64_t last_rx_ = 0;      // the last bytes from the board (or the connection)
  uint64_t last_probe_ = 0;
  int resets_ = 0;
  std::string from_dev_;      // a partial line
  std::string out_;           // bytes for the board on this connection, not written yet
  std::deque<Line> queue_;    // lines waiting for the board to be ready, or for the window
  size_t queue_bytes_ = 0;
  std::deque<Sent> flight_;   // lines written that the board may not have read, oldest first
  size_t in_flight_ = 0;      // their bytes
  size_t in_flight_peak_ = 0;
  size_t window_;
  int syncs_ = 0;             // sync pings sent (their ids count on)
  bool sync_out_ = false;     // one is on the way
  std::string failure_;
};

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_BOARD_LINK_H
