// Inside emcp::posix::serve: MCP over MQTT beside HTTP in the serving loop (serve.cpp's http()),
// for --mqtt URL (docs/mqtt.md). One broker connection through the listener's dialer, served by
// a static mqtt::StaticMcpTransport.
#ifndef EMCP_POSIX_SERVE_MQTT_SERVE_H
#define EMCP_POSIX_SERVE_MQTT_SERVE_H

#include "emcp/mcp/server.h"
#include "emcp/posix/serve.h"
#include "emcp/transport/connection.h"

EMCP_NS_BEGIN
namespace posix {
namespace serve {

/// Reads a PEM file whole into `buf` (NUL-terminated); its length with the NUL, or 0 with the
/// reason on stderr (serve.cpp).
size_t read_pem(const char* program, const char* path, uint8_t* buf, size_t cap);
/// --mqtt, --mqtt-name, --mqtt-id, --mqtt-keepalive, --mqtt-ca, --mqtt-cert, --mqtt-key: as
/// parse_http_option() (1 taken, 0 not one, -1 bad value).
int parse_mqtt_option(int argc, char** argv, int* i, HttpConfig* config);
/// After the command line: false (the reason on stderr) when --mqtt-name, --mqtt-id or
/// --mqtt-keepalive came without --mqtt.
bool check_mqtt_options(const HttpConfig& config);
/// Connects to the broker (the connection comes up in the loop); false with the reason on
/// stderr when the options cannot be served.
bool start_mqtt(mcp::Server& server, const HttpConfig& config, const transport::Dialer& dialer);
/// The loop's periodic work (after each run_once()), and a line on stderr when the connection
/// comes up or goes.
void poll_mqtt();
/// The most arena a message over MQTT used so far (0: not serving MQTT).
size_t mqtt_arena_high_water();
/// Ends every session, clears the presence, disconnects; a summary line on stderr.
void stop_mqtt(const char* program);

}  // namespace serve
}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_SERVE_MQTT_SERVE_H
