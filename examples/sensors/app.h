// The sensors example's MCP application: tools, resources, prompts and their handlers. The
// same code runs on Linux (main_posix.cpp) and, unchanged, on the boards.
#ifndef EMCP_EXAMPLES_SENSORS_APP_H
#define EMCP_EXAMPLES_SENSORS_APP_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/writer.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"

// A network image's transports (main_board_net.cpp; app.cpp's device_stats follows them):
// EMCP_SENSORS_HTTP (default 1) serves HTTP through lwIP; EMCP_SENSORS_MQTT (default 0) serves
// MCP over MQTT through a broker the firmware dials (docs/mqtt.md), and device_stats gets its
// "mqtt" object.
#ifndef EMCP_SENSORS_HTTP
#define EMCP_SENSORS_HTTP 1
#endif
#ifndef EMCP_SENSORS_MQTT
#define EMCP_SENSORS_MQTT 0
#endif

namespace app {

/// The server's name, version, title, description and instructions (one for every platform).
extern const emcp::mcp::ServerInfo kServerInfo;

/// The scopes a bearer token may grant, when the network transports require one (RFC 9728
/// scopes_supported): "sensors:read" for everything that reads, "device:control" for the
/// tools that switch or change the device (set_led, set_relay, calibrate_temperature).
extern const char* const kScopes[2];
/// Every request needs it.
constexpr const char* kRequiredScope = "sensors:read";

/// Registers the tables with `server`; `now_ms` is the platform clock.
void init(emcp::mcp::Server& server, uint64_t (*now_ms)());

/// Periodic work: sampling jobs (progress, completion, cancellation), sensor history, and
/// notifications/resources/updated when a reading changes. Call it every few tens of ms.
void tick();

/// Milliseconds until tick() has something to do (for the loop's wait).
uint32_t next_tick_ms();

/// Appends a line to the device log (resource device://log) and sends it as a log message.
void log(emcp::mcp::LogLevel level, emcp::StrView line);

/// A reading of sensor `sensor` (sensors::Id) taken elsewhere - a sensor task, an interrupt -
/// and handed to the owner through the server's inbox (main_rtos.cpp): announces the change
/// (notifications/resources/updated) when the value the resource shows differs from the last
/// announced; from then on tick() leaves that sensor's announcements to these samples. The
/// owner only (it runs in the inbox's work on the owner's poll()).
void sampled(int sensor, double value);

/// Says that sensor `sensor`'s changes are announced by sampled() alone from the start (tick()
/// announces none of them, even before the first sample arrives): what a firmware whose task
/// or interrupt samples that sensor calls before starting them, so that a change a client sees
/// is one that came through the inbox.
void sampled_elsewhere(int sensor);

/// What the platform reports through the device_stats tool (each main provides it; 0 when
/// the platform does not know).
struct PlatformStats {
  const char* platform = "";
  uint64_t messages = 0;          ///< messages the transport handled
  uint64_t arena_high_water = 0;  ///< most bytes of the message arena ever used
  uint64_t arena_size = 0;
  uint64_t stack_high_water = 0;  ///< most bytes of the main stack ever used (boards: painted)
  uint64_t stack_size = 0;
  uint64_t input_dropped = 0;     ///< received bytes lost (UART ring full or overrun)
  uint64_t input_held = 0;        ///< times the UART ring was full and the UART held bytes back
  /// A network's figures, written as device_stats' "network" object (its members as
  /// kNetworkStats in app.cpp declares them), from what the stats source read when it was
  /// called (the object is written twice and must not change); nullptr: no network.
  void (*write_network)(emcp::json::Writer& w) = nullptr;
  /// The HTTP engine's slots and what it refused, reclaimed, timed out and evicted
  /// (docs/http.md, "Under attack"), written as device_stats' "http" object; nullptr: not
  /// served over HTTP.
  struct Http {
    uint64_t connections_in_use = 0, connections = 0, sessions_in_use = 0, sessions = 0;
    emcp::transport::HttpStats stats;
  };
  const Http* http = nullptr;
  /// MCP over MQTT (emcp/mqtt/mcp_transport.h): the broker connection, the client slots and the
  /// counters, written as device_stats' "mqtt" object; nullptr: not served over MQTT.
  struct Mqtt {
    bool connected = false;
    uint64_t sessions_in_use = 0, sessions = 0, arena_high_water = 0, arena_size = 0;
    uint32_t dials = 0, connects = 0, sessions_opened = 0, refused = 0, too_large = 0, qos0_fallbacks = 0, stray = 0;
  };
#if EMCP_SENSORS_MQTT
  const Mqtt* mqtt = nullptr;
#endif
};
void set_stats_source(void (*fn)(PlatformStats* out));

}  // namespace app

#endif
