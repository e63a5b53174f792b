// board/mdns.h: the board's HTTP service announced with lwIP's responder (emcp/lwip/mdns.h).
#include "board/mdns.h"

#if LWIP_MDNS_RESPONDER

#include <string.h>

#include "board/board.h"
#include "emcp/json/sink.h"
#include "emcp/lwip/mdns.h"
#include "emcp/mcp/revision.h"
#include "emcp/mcp/types.h"

namespace emcp {
namespace board {

namespace {

HttpService g_net;
MdnsOptions g_options;
void (*g_next)(const NetState&) = nullptr;  // the application's own on_address
MdnsState g_state = MdnsState::kOff;
char g_host[64];
// The TXT strings, NUL-terminated one after the other (the record holds 255 bytes at most).
char g_txt_text[256];
const char* g_txt[5];
size_t g_txt_count = 0;

// Adds "key=value" to the TXT strings; false when it does not fit.
bool add_txt(emcp::json::BufferSink& text, const char* key, const char* value, const char* value2 = nullptr) {
  const size_t start = text.view().size();
  text.write(key);
  text.write("=");
  text.write(value);
  if (value2 != nullptr) text.write(value2);
  text.write("", 1);  // the NUL
  if (text.status() != emcp::Status::kOk) return false;
  g_txt[g_txt_count++] = g_txt_text + start;
  return true;
}

// The records of docs/discovery.md from what the image serves.
bool build_txt() {
  const emcp::transport::HttpOptions& o = *g_net.options;
  emcp::json::BufferSink text(g_txt_text, sizeof g_txt_text);
  g_txt_count = 0;
  bool ok = add_txt(text, "path", o.path);
  if (EMCP_LEGACY_ERA && o.sse_path != nullptr) ok = ok && add_txt(text, "sse", o.sse_path);
  if (EMCP_LEGACY_ERA && o.ws_path != nullptr && o.sha1 != nullptr) ok = ok && add_txt(text, "ws", o.ws_path);
  // revisions=A,B,...: each revision the build serves, oldest first.
  const size_t start = text.view().size();
  text.write("revisions=");
  const char* sep = "";
  for (uint8_t v = 0; v < emcp::mcp::kVersionCount; ++v) {
    const auto version = static_cast<emcp::mcp::Version>(v);
    if (!emcp::mcp::served(version)) continue;
    text.write(sep);
    text.write(emcp::mcp::version_str(version));
    sep = ",";
  }
  text.write("", 1);
  if (text.status() != emcp::Status::kOk) return false;
  g_txt[g_txt_count++] = g_txt_text + start;
  return ok && add_txt(text, "tls", g_options.tls ? "1" : "0");
}

// The default host name: the board's name and the MAC address's last three bytes in hex.
void default_host(const NetState& state) {
  static const char kHex[] = "0123456789abcdef";
  emcp::json::BufferSink text(g_host, sizeof g_host - 1);
  text.write(name());
  text.write("-");
  for (unsigned i = 3; i < 6; ++i) {
    const char digits[2] = {kHex[state.mac[i] >> 4], kHex[state.mac[i] & 15]};
    text.write(digits, 2);
  }
  g_host[text.view().size()] = '\0';
}

void start(const NetState& state) {
  g_state = MdnsState::kFailed;
  struct netif* netif = net_netif();
  if (netif == nullptr || !build_txt()) return;
  const char* host = g_options.host;
  if (host == nullptr) {
    default_host(state);
    host = g_host;
  }
  const struct emcp_lwip_mdns_service service = {
      host, g_options.instance != nullptr ? g_options.instance : name(), "_mcp", g_net.port, g_txt, g_txt_count, 0};
  if (emcp_lwip_mdns_start(netif, &service) == ERR_OK) g_state = MdnsState::kProbing;
}

// From net_poll(), outside lwIP's processing (board/net.h): the address changed.
void on_address(const NetState& state) {
  if (state.bound) {
    if (g_state == MdnsState::kWaiting) {
      start(state);
    } else if (g_state != MdnsState::kFailed) {
      emcp_lwip_mdns_restart();  // RFC 6762 section 8: probe and announce at the new address
    }
  }
  if (g_next != nullptr) g_next(state);
}

}  // namespace

NetConfig announce_over_mdns(const NetConfig& config, const HttpService& net, const MdnsOptions& options) {
  if (!options.enabled || net.http == nullptr || net.options == nullptr) return config;
  g_net = net;
  g_options = options;
  g_next = config.on_address;
  g_state = MdnsState::kWaiting;
  NetConfig wrapped = config;
  wrapped.on_address = &on_address;
  return wrapped;
}

MdnsState mdns_state() {
  if (g_state != MdnsState::kProbing && g_state != MdnsState::kAnnounced && g_state != MdnsState::kConflict)
    return g_state;
  const int result = emcp_lwip_mdns_probe_result();
  return result > 0 ? MdnsState::kAnnounced : result < 0 ? MdnsState::kConflict : MdnsState::kProbing;
}

}  // namespace board
}  // namespace emcp

#endif  // LWIP_MDNS_RESPONDER
