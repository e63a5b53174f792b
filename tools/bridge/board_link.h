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
#ifndef EMCP_TOOLS_BRIDGE_BOARD_LINK_H
#define EMCP_TOOLS_BRIDGE_BOARD_LINK_H

#include <stdint.h>

#include <string>
#include <vector>

namespace bridge {

struct LinkOptions {
  std::string serial;  // a serial device, or
  int baud = 115200;
  std::string host;    // a TCP host and port (QEMU: -serial tcp:HOST:PORT,server=on)
  int port = 0;
  std::string banner = "MCP on this UART";
  int wait_ms = 15000;
  int ping_after_ms = 1000;  // quiet time before a ping when no banner came; 0: never ping
  bool quiet = false;
};

uint64_t now_ms();
/// "[emcp-bridge] <text>" on stderr (unless quiet).
void log(bool quiet, const std::string& text);
/// Writes all of `s` to `fd` (waits up to a second at a time for a full non-blocking fd).
bool write_all(int fd, const std::string& s);
/// A supported --baud value.
bool baud_supported(int baud);
/// SIGINT and SIGTERM end the bridge cleanly (exit status 0): they only set the flag
/// stop_requested() reads, and interrupt a poll() (no SA_RESTART). SIGPIPE is ignored.
void catch_stop_signals();
bool stop_requested();

/// What the bridge keeps of one JSON-RPC line: its kind, id (as JSON text) and method. Read
/// with the core's JSON-RPC decoder.
struct Parsed {
  bool valid = false;
  bool request = false, notification = false, response = false;
  bool batch = false;
  std::string id;      // the id's JSON text ("1", "\"a\""), "" when none
  std::string method;
};
Parsed parse(const std::string& line);
bool looks_like_json(const std::string& line);

class BoardLink {
 public:
  /// What the link reports. Every call comes from on_readable() or tick().
  struct Listener {
    virtual ~Listener() = default;
    /// A JSON line from the ready board (never the answer to one of the link's pings).
    virtual void on_board_line(const std::string& line) = 0;
    /// The board restarted while it was ready (its banner again, or the connection was lost and
    /// is back, ready again). Called when it is ready again, before what waited is sent.
    virtual void on_board_reset(const char* why) = 0;
    /// The board is ready (the first time, and after each reset, after on_board_reset).
    virtual void on_board_ready() {}
  };

  BoardLink(const LinkOptions& o, Listener& l) : o_(o), l_(l) {}
  BoardLink(const BoardLink&) = delete;
  BoardLink& operator=(const BoardLink&) = delete;
  ~BoardLink();

  /// Reaches the board (a QEMU still starting may refuse for a moment): false after --wait-ms.
  bool start();
  /// The board's fd (-1 while a lost connection is being dialled again). Non-blocking.
  int fd() const { return fd_; }
  bool ready() const { return ready_; }
  /// A lost connection is being dialled again, or was and the board is not ready yet: what the
  /// client sends meanwhile should wait (it must not be failed with what was in flight).
  bool resetting() const { return give_back_; }
  /// One line to the board (without its newline): queued, written as the board takes it
  /// (flush()); held until the board is ready. Lines queued for a connection that is lost are
  /// dropped (their requests are failed by on_board_reset()).
  void send(const std::string& line);
  /// Bytes waiting to be written (queued and held): callers refuse new input beyond a bound.
  size_t queued() const { return out_.size() + waiting_bytes_; }
  /// Something waits to be written to the board (poll for POLLOUT).
  bool wants_write() const { return fd_ >= 0 && !out_.empty(); }
  /// Writes what the board takes now (never blocks). False when the board is lost for good.
  bool flush();
  /// The board's fd is readable: reads, reports lines. False when the board is lost for good.
  bool on_readable();
  /// Pings while not ready; dials a lost connection again. False when the board was not ready
  /// (or not reachable again) within --wait-ms.
  bool tick();
  int resets() const { return resets_; }
  /// Why the link gave up (for the exit message).
  const std::string& failure() const { return failure_; }

 private:
  bool connect_dev();
  void send_probe();
  void become_ready(const char* how);
  void on_line(std::string line);
  bool lose();

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
  std::vector<std::string> waiting_;  // lines held until the board is ready
  size_t waiting_bytes_ = 0;
  std::string failure_;
};

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_BOARD_LINK_H
