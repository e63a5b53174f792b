// One service announced with lwIP's mDNS responder (emcp/lwip/mdns.h).
#include "emcp/lwip/mdns.h"

#include "lwip/opt.h"

#if LWIP_MDNS_RESPONDER

#include <string.h>

#include "lwip/apps/mdns.h"
#include "lwip/apps/mdns_priv.h"
#include "lwip/netif.h"

namespace {

constexpr size_t kMaxTxtString = 255;  // RFC 6763 section 6.1
struct netif* g_netif = nullptr;       // the announcing netif (nullptr: not started)
struct emcp_lwip_mdns_service g_service{};
volatile int g_probe_result = 0;  // written in lwIP's context (the result callback)
bool g_txt_cut = false;

size_t length(const char* s, size_t most) {
  size_t n = 0;
  while (s != nullptr && n <= most && s[n] != '\0') ++n;
  return n;
}

bool label_ok(const char* s) {
  const size_t n = length(s, MDNS_LABEL_MAXLEN);
  return n >= 1 && n <= MDNS_LABEL_MAXLEN;
}

// lwIP's TXT callback, from lwIP's context each time it builds an answer or a probe: the record
// is built in the service's `txtdata` (cleared first). Strings of up to 63 bytes go through
// lwIP's API; a longer one is written behind them into that record, lwIP 2.1.3's first member
// of its (private) service struct, once the strings the API wrote are found there byte for
// byte: the first string's length and bytes, and the record's length.
void add_txt(struct mdns_service* service, void*) {
  auto* record = reinterpret_cast<struct mdns_domain*>(service);
  u16_t written = 0;
  for (size_t i = 0; i < g_service.txt_count; ++i) {
    const char* s = g_service.txt[i];
    const size_t n = length(s, kMaxTxtString);
    if (n <= MDNS_LABEL_MAXLEN) {
      if (mdns_resp_add_service_txtitem(service, s, static_cast<u8_t>(n)) != ERR_OK) {
        g_txt_cut = true;
        return;
      }
      written = static_cast<u16_t>(written + 1 + n);
      continue;
    }
    const char* first = g_service.txt[0];
    const size_t first_n = length(first, MDNS_LABEL_MAXLEN);
    const bool found = written != 0 && record->length == written && record->name[0] == first_n &&
                       memcmp(record->name + 1, first, first_n) == 0;
    if (!found || written + 1 + n >= MDNS_DOMAIN_MAXLEN) {
      g_txt_cut = true;
      continue;
    }
    record->name[written] = static_cast<u8_t>(n);
    memcpy(record->name + written + 1, s, n);
    written = static_cast<u16_t>(written + 1 + n);
    record->length = written;
  }
}

// From lwIP's probe timer: only recorded.
void on_probe_result(struct netif*, u8_t result) { g_probe_result = result == MDNS_PROBING_SUCCESSFUL ? 1 : -1; }

}  // namespace

extern "C" {

err_t emcp_lwip_mdns_start(struct netif* netif, const struct emcp_lwip_mdns_service* s) {
  if (g_netif != nullptr) return ERR_ALREADY;
  if (s == nullptr) return ERR_VAL;
  const struct emcp_lwip_mdns_service& service = *s;
  if (netif == nullptr || !label_ok(service.host) || !label_ok(service.instance) || !label_ok(service.type))
    return ERR_VAL;
  if (service.txt == nullptr || service.txt_count == 0) return ERR_VAL;
  size_t record = 0;  // the TXT record's bytes: each string with its length byte
  for (size_t i = 0; i < service.txt_count; ++i) {
    const size_t n = length(service.txt[i], kMaxTxtString);
    if (n == 0 || n > kMaxTxtString || (i == 0 && n > MDNS_LABEL_MAXLEN)) return ERR_VAL;
    record += 1 + n;
  }
  if (record >= MDNS_DOMAIN_MAXLEN) return ERR_VAL;
  static bool initialized = false;
  if (!initialized) {
    mdns_resp_init();
    mdns_resp_register_name_result_cb(&on_probe_result);
    initialized = true;
  }
  g_service = service;
  if (g_service.ttl_s == 0) g_service.ttl_s = 120;
  g_probe_result = 0;
  err_t err = mdns_resp_add_netif(netif, service.host, g_service.ttl_s);
  if (err != ERR_OK) return err;
  const s8_t slot = mdns_resp_add_service(netif, service.instance, service.type, DNSSD_PROTO_TCP, service.port,
                                          g_service.ttl_s, &add_txt, nullptr);
  if (slot < 0) {
    (void)mdns_resp_remove_netif(netif);
    return slot == ERR_VAL ? ERR_VAL : ERR_MEM;
  }
  g_netif = netif;
  return ERR_OK;
}

void emcp_lwip_mdns_restart(void) {
  if (g_netif == nullptr) return;
  g_probe_result = 0;
  mdns_resp_restart(g_netif);
}

int emcp_lwip_mdns_probe_result(void) { return g_probe_result; }

int emcp_lwip_mdns_txt_cut(void) { return g_txt_cut ? 1 : 0; }

}  // extern "C"

#endif  // LWIP_MDNS_RESPONDER
