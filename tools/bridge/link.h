// tools/bridge/link.h - what emcp-bridge's two modes (stdio_bridge.cpp, the HTTP gateway) talk
// to: a line link to one MCP server. BoardLink (board_link.h) is a board's UART or QEMU's serial
// port on TCP; MqttLink (mqtt_link.h) a device reached through an MQTT broker (MCP over MQTT,
// docs/mqtt.md). Both pass JSON-RPC lines each way, say when the server is ready, and report
// when it restarted (a board's reset; a device that left the broker and came back).
#ifndef EMCP_TOOLS_BRIDGE_LINK_H
#define EMCP_TOOLS_BRIDGE_LINK_H

#include <stddef.h>

#include <memory>
#include <string>
#include <vector>

namespace bridge {

struct LinkOptions;

class Link {
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
    /// The board lost input (its answer with "data":{"inputLost":true} was passed on first):
    /// the ids (JSON text) of the requests that were on the way and are not answered yet; they
    /// may never be. Each is reported once; an answer that comes for one later is still passed
    /// to on_board_line().
    virtual void on_board_lost_input(const std::vector<std::string>& ids) = 0;
  };

  virtual ~Link() = default;
  /// Reaches the server: false after --wait-ms.
  virtual bool start() = 0;
  /// The descriptor to poll (-1 while a lost connection is being dialled again). Non-blocking.
  virtual int fd() const = 0;
  virtual bool ready() const = 0;
  /// The server restarted and is not ready again: what the client sends meanwhile waits.
  virtual bool resetting() const = 0;
  /// One line to the server (without its newline); held until it is ready.
  virtual void send(const std::string& line) = 0;
  /// Bytes waiting to be written (callers refuse new input beyond a bound).
  virtual size_t queued() const = 0;
  virtual bool wants_write() const = 0;
  /// POLLOUT on fd(): writes what it takes now. False when the server is lost for good.
  virtual bool flush() = 0;
  /// POLLIN on fd(). False when the server is lost for good.
  virtual bool on_readable() = 0;
  /// Timers (call every 100 ms or so). False when the server was not ready within --wait-ms.
  virtual bool tick() = 0;
  virtual int resets() const = 0;
  /// Why the link gave up (for the exit message).
  virtual const std::string& failure() const = 0;
  /// For the exit summary.
  virtual std::string summary() const = 0;
};

/// The link `o` names: MqttLink with --mqtt, else BoardLink.
std::unique_ptr<Link> make_link(const LinkOptions& o, Link::Listener& l);

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_LINK_H
