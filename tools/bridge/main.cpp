// emcp-bridge: connects a desktop MCP client (stdio) to an emcp board over a serial device or
// a TCP socket (QEMU's serial port), or to a device through an MQTT broker (--mqtt:
// mqtt_link.h, docs/mqtt.md); with --http PORT it serves the board to network clients as
// Streamable HTTP instead (http_gateway.cpp, docs/gateway.md).
//
//   emcp-bridge (--serial DEVICE [--baud N] [--rtscts] | --tcp HOST:PORT) [--banner TEXT]
//               [--wait-ms N] [--ping-after-ms N] [--window N] [--no-reinit] [--quiet]
//               [--http PORT [--listen ADDR] [--allow-host NAME]... [--allow-origin NAME]...
//                [--cors-origin NAME]... [--no-cors] [--bearer-token TOKEN]... [--resource URL]
//                [--session-idle-ms N] [--max-connections N] [--max-body N]]
//
// The board's side (board_link.cpp) is shared by both modes:
// - Waits until the board is ready before it passes the client's messages on; what the client
//   sends meanwhile waits, in order. Ready is the board's banner line (default: a line
//   containing "MCP on this UART"), which it prints once, at boot. A board that booted before
//   the bridge connected (a second bridge, a client that reconnects) prints none: after a quiet
//   second with no banner the bridge sends a ping of its own (id "emcp-bridge-probe-N"), again
//   each second up to 5 times, and the board's answer is ready; that answer never reaches the
//   client. Pinging only after a quiet time matters for boards whose UART drops what arrives
//   before the firmware enabled it (QEMU's netduinoplus2): a ping sent into a board that is
//   still booting is lost, and when the banner follows an unanswered ping, the bridge pings once
//   more and waits for that answer, so that nothing the lost ping's remains may draw from the
//   board (an error for a torn line) reaches the client. Whatever JSON the board sends before
//   it is ready (answers for a previous client) is dropped, reported on stderr. No banner and
//   no answer within --wait-ms: exit status 1.
// - Lines from the board that are not JSON (boot logs, the banner) go to stderr, never to the
//   client.
// - Never more bytes on the way than the board's receive buffer holds (the banner states it;
//   --window overrides): board_link.h, "Flow control".
// - When the board resets (its banner again, or the connection drops and comes back), the stdio
//   client's requests still in flight are answered with an error (-32603), and, unless
//   --no-reinit, the bridge initializes the new session on the client's behalf: it replays the
//   client's initialize, notifications/initialized, logging/setLevel and resource
//   subscriptions, and drops their answers. The client keeps its session.
// - Ends when the client closes stdin (stdio), and on SIGINT/SIGTERM (both modes), with exit
//   status 0. Exit status 1 when the board cannot be reached.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include "board_link.h"
#include "http_gateway.h"
#include "stdio_bridge.h"

namespace {

// A whole decimal number within [lo, hi] (not atoi: "abc" is not 0).
bool number(const char* text, long long lo, long long hi, long long* out) {
  if (text == nullptr || *text == '\0') return false;
  char* end = nullptr;
  errno = 0;
  const long long v = strtoll(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < lo || v > hi) return false;
  *out = v;
  return true;
}

void usage() {
  fprintf(stderr,
          "usage: emcp-bridge (--serial DEVICE [--baud N] | --tcp HOST:PORT |\n"
          "                    --mqtt mqtt://HOST[:PORT] [--mqtt-name NAME] [--fleet]) [--banner TEXT]\n"
          "                   [--wait-ms N] [--ping-after-ms N] [--window N] [--rtscts]\n"
          "                   [--no-reinit] [--quiet] [--http PORT [gateway options]]\n"
          "  Connects an MCP client on stdin/stdout to an emcp board's UART.\n"
          "  --serial DEVICE  a serial device (raw, 8N1), --baud (default 115200)\n"
          "  --rtscts         hardware flow control on the serial device (a board that wires RTS/CTS)\n"
          "  --tcp HOST:PORT  a TCP socket (QEMU: -serial tcp:127.0.0.1:PORT,server=on)\n"
          "  --mqtt URL       a device reached through the MQTT broker at mqtt://HOST[:PORT]\n"
          "                   (MCP over MQTT, docs/mqtt.md): the first one announcing itself on\n"
          "  --mqtt-name NAME $mcp-server/presence/+/NAME (a server-name, or a filter with + and #;\n"
          "                   default: any)\n"
          "  --fleet          with --mqtt: every device under --mqtt-name as one server, its tools\n"
          "                   named DEVICE-ID.TOOL (docs/mqtt.md)\n"
          "  --mqtt-ca FILE   mqtts://: the CAs (PEM) the broker's certificate must lead to; its\n"
          "                   name must be HOST (--mqtt-cert FILE --mqtt-key FILE: a client certificate)\n"
          "  --banner TEXT    the board's ready line, printed at boot (default \"MCP on this UART\";\n"
          "                   \"\" to not wait for the board at all)\n"
          "  --wait-ms N      how long to wait for the board and for it to be ready (default 15000)\n"
          "  --ping-after-ms N  no banner after N quiet ms (a board that booted before the bridge\n"
          "                   connected): ping it, up to 5 times a second apart, and its answer is\n"
          "                   ready; the answer is not passed on (default 1000; 0: banner only)\n"
          "  --window N       bytes of lines the board has not surely read, at most (default: the\n"
          "                   receive buffer its banner states; 256 until one does)\n"
          "  --no-reinit      after a board reset, do not initialize the new session for the client\n"
          "  --quiet          no diagnostics on stderr\n"
          "  --http PORT      serve the board to network clients as Streamable HTTP on PORT (0: any\n"
          "                   free port; the line \"serving MCP on http://ADDR:PORT/mcp\" tells which)\n"
          "                   instead of stdio (docs/gateway.md). Gateway options:\n"
          "    --listen ADDR        the address to listen on (default 127.0.0.1; name another to\n"
          "                         serve the network)\n"
          "    --allow-host NAME    a Host header name accepted (repeatable; default the localhost names)\n"
          "    --allow-origin NAME  an Origin host accepted (repeatable; default the localhost names)\n"
          "    --cors-origin NAME   a page origin host CORS admits (repeatable; default every allowed one)\n"
          "    --no-cors            no CORS at all\n"
          "    --bearer-token TOKEN a static bearer token every request must carry (repeatable)\n"
          "    --resource URL       the canonical URI for the token metadata (default http://ADDR:PORT/mcp)\n"
          "    --session-idle-ms N  end the session after N ms without requests (default 1800000)\n"
          "    --session-takeover   a new initialize ends the session when it is idle (no request in\n"
          "                         flight, no GET stream) instead of being refused with 503\n"
          "    --max-connections N  HTTP connections at once (default 16)\n"
          "    --max-body N         longest request body (default the engine's; at most 1 MiB,\n"
          "                         what the gateway queues for the board)\n"
          "    --request-timeout-ms N  a request the board has not answered after N ms: -32603 to\n"
          "                         its client and cancelled on the board (default 60000)\n");
}

}  // namespace

int main(int argc, char** argv) {
  bridge::LinkOptions o;
  bridge::GatewayOptions g;
  bool reinit = true;
  bool gateway_option = false;
  bool bad_number = false;
  long long n = 0;
  // The next argument as a number in [lo, hi] (a bad one: usage, exit status 2).
  auto num = [&](int& i, long long lo, long long hi) -> long long {
    if (!number(argv[++i], lo, hi, &n)) {
      fprintf(stderr, "emcp-bridge: %s: not a number in %lld..%lld: %s\n", argv[i - 1], lo, hi, argv[i]);
      bad_number = true;
      return lo;
    }
    return n;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--serial" && v) o.serial = argv[++i];
    else if (a == "--baud" && v) o.baud = static_cast<int>(num(i, 1, 10000000));
    else if (a == "--tcp" && v) {
      const std::string hp = argv[++i];
      const size_t colon = hp.rfind(':');
      if (colon == std::string::npos) {
        usage();
        return 2;
      }
      o.host = hp.substr(0, colon);
      if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') o.host = o.host.substr(1, o.host.size() - 2);
      if (!number(hp.c_str() + colon + 1, 1, 65535, &n)) {
        fprintf(stderr, "emcp-bridge: --tcp %s: not HOST:PORT\n", hp.c_str());
        return 2;
      }
      o.port = static_cast<int>(n);
    } else if (a == "--mqtt" && v) {
      // mqtt://HOST[:PORT], HOST a name, an IPv4 address or [IPv6].
      std::string url = argv[++i];
      if (url.compare(0, 7, "mqtt://") == 0) {
        url = url.substr(7);
      } else if (url.compare(0, 8, "mqtts://") == 0) {
        url = url.substr(8);
        o.mqtt_tls = true;
        o.mqtt_port = 8883;
      } else {
        fprintf(stderr, "emcp-bridge: --mqtt %s: not mqtt://HOST[:PORT] or mqtts://HOST[:PORT]\n", url.c_str());
        return 2;
      }
      if (!url.empty() && url.back() == '/') url.pop_back();
      const size_t close = url.rfind(']');
      const size_t colon = url.rfind(':');
      o.mqtt_host = url;
      if (colon != std::string::npos && (close == std::string::npos || colon > close)) {
        o.mqtt_host = url.substr(0, colon);
        if (!number(url.c_str() + colon + 1, 1, 65535, &n)) {
          fprintf(stderr, "emcp-bridge: --mqtt %s: not a port\n", argv[i]);
          return 2;
        }
        o.mqtt_port = static_cast<int>(n);
      }
      if (o.mqtt_host.size() > 2 && o.mqtt_host.front() == '[' && o.mqtt_host.back() == ']')
        o.mqtt_host = o.mqtt_host.substr(1, o.mqtt_host.size() - 2);
      if (o.mqtt_host.empty()) {
        fprintf(stderr, "emcp-bridge: --mqtt %s: no host\n", argv[i]);
        return 2;
      }
    } else if (a == "--mqtt-name" && v) o.mqtt_name = argv[++i];
    else if (a == "--fleet") o.mqtt_fleet = true;
    else if (a == "--mqtt-ca" && v) o.mqtt_ca = argv[++i];
    else if (a == "--mqtt-cert" && v) o.mqtt_cert = argv[++i];
    else if (a == "--mqtt-key" && v) o.mqtt_key = argv[++i];
    else if (a == "--banner" && v) o.banner = argv[++i];
    else if (a == "--wait-ms" && v) o.wait_ms = static_cast<int>(num(i, 0, 86400000));
    else if (a == "--ping-after-ms" && v) o.ping_after_ms = static_cast<int>(num(i, 0, 86400000));
    else if (a == "--window" && v) o.window = static_cast<size_t>(num(i, 64, 1LL << 30));
    else if (a == "--rtscts") o.rtscts = true;
    else if (a == "--no-reinit") reinit = false;
    else if (a == "--quiet") o.quiet = true;
    else if (a == "--http" && v) g.port = static_cast<int>(num(i, 0, 65535));
    else if (a == "--listen" && v) g.listen = argv[++i], gateway_option = true;
    else if (a == "--allow-host" && v) g.allow_hosts.push_back(argv[++i]), gateway_option = true;
    else if (a == "--allow-origin" && v) g.allow_origins.push_back(argv[++i]), gateway_option = true;
    else if (a == "--cors-origin" && v) g.cors_origins.push_back(argv[++i]), gateway_option = true;
    else if (a == "--no-cors") g.cors = false, gateway_option = true;
    else if (a == "--bearer-token" && v) g.bearer_tokens.push_back(argv[++i]), gateway_option = true;
    else if (a == "--resource" && v) g.resource = argv[++i], gateway_option = true;
    else if (a == "--session-takeover") g.session_takeover = true, gateway_option = true;
    else if (a == "--session-idle-ms" && v) g.session_idle_ms = static_cast<uint32_t>(num(i, 1, 0xffffffffLL)), gateway_option = true;
    else if (a == "--max-connections" && v) g.max_connections = static_cast<int>(num(i, 1, 4096)), gateway_option = true;
    else if (a == "--max-body" && v) g.max_body = static_cast<uint32_t>(num(i, 1, 1LL << 20)), gateway_option = true;
    else if (a == "--request-timeout-ms" && v) g.request_timeout_ms = static_cast<uint32_t>(num(i, 1, 0xffffffffLL)), gateway_option = true;
    else {
      usage();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (bad_number) return 2;
  const int links = !o.serial.empty() + !o.host.empty() + !o.mqtt_host.empty();
  if (o.mqtt_tls != !o.mqtt_ca.empty() || o.mqtt_cert.empty() != o.mqtt_key.empty() ||
      (!o.mqtt_cert.empty() && !o.mqtt_tls)) {
    fprintf(stderr, "emcp-bridge: mqtts:// needs --mqtt-ca FILE (and --mqtt-ca an mqtts:// URL); --mqtt-cert and "
                    "--mqtt-key go together, with mqtts://\n");
    return 2;
  }
  if (links != 1 || ((!o.mqtt_name.empty() || o.mqtt_fleet) && o.mqtt_host.empty()) || (!o.serial.empty() && !bridge::baud_supported(o.baud)) ||
      (gateway_option && g.port < 0) || g.port > 65535 || (g.port >= 0 && (g.max_connections < 1 || g.session_idle_ms == 0))) {
    usage();
    return 2;
  }
  return g.port >= 0 ? bridge::run_gateway(o, g) : bridge::run_stdio(o, reinit);
}
