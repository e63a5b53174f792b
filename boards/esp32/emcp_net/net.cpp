// board/net.h on ESP-IDF: lwIP is ESP-IDF's own, run in its tcpip thread, and the interface is
// whatever the application brought up with ESP-IDF's APIs (esp_netif_init, a Wi-Fi station or
// Ethernet, DHCP or a static address: boards/esp32/examples/sensors_net/main/main.cpp) before
// the firmware calls emcp::board::net_init(). This file configures nothing of it: it takes lwIP's core
// lock for the serving task, releases it while that task waits, and reads the default
// interface's state.
//
// The core-locking rule (boards/esp32/README.md). lwIP's raw API (LwipHttpListener, the engine's
// writes through it) may only be called with lwIP's core lock held (LOCK_TCPIP_CORE, ESP-IDF's
// CONFIG_LWIP_TCPIP_CORE_LOCKING). The engine writes from everywhere in the loop: run_once(),
// but also the server's poll(), the application's tick and a UART request whose tool notifies
// the HTTP sessions. So from net_init() on, the task that owns the server holds the lock all the
// time but while it waits in emcp::board::idle() (emcp::board::set_idle_lock(): the owner's wait of
// ports/freertos, the same as on the mps2-an385's FreeRTOS image with lwIP in its own thread),
// which is both the loop's wait and, after net_poll(), the listener's pump (a handler's output
// waiting for the TCP window: boards/common/serve_net.cpp). lwIP's callbacks run in the tcpip
// thread, which holds the same lock while it runs them, so the listener's slots they write are
// only ever read or written by either side under the lock (FreeRTOS's mutex orders the memory
// accesses of both cores).
//
// Consequences: a tool handler runs with the lock held, so it must not call what posts to the
// tcpip thread and waits for it (BSD sockets, netconn, esp_netif's setters, esp_http_client...):
// that waits for the lock its own task holds, forever. And while the tcpip thread waits for the
// lock, FreeRTOS's priority inheritance runs the serving task at the tcpip thread's priority.
//
// No heap here; ESP-IDF's lwIP itself allocates its pcbs and pbufs from ESP-IDF's heap
// (MEM_LIBC_MALLOC, MEMP_MEM_MALLOC), outside emcp.
#include <string.h>

#include "board/board.h"
#include "board/freertos.h"
#include "board/net.h"
#include "esp_netif.h"
#include "esp_netif_net_stack.h"
#include "esp_random.h"
#include "lwip/tcpip.h"

// The listener's pump waits in emcp::board::idle(), giving the lock back, only in a FreeRTOS build
// (boards/common/serve_net.cpp): the emcp component defines it for every component using it.
static_assert(EMCP_BOARD_RTOS, "EMCP_BOARD_RTOS=1: boards/esp32/emcp's CMakeLists.txt defines it");
static_assert(LWIP_TCPIP_CORE_LOCKING,
              "emcp's lwIP port on ESP-IDF needs lwIP's core lock: set CONFIG_LWIP_TCPIP_CORE_LOCKING=y "
              "(menuconfig: Component config > LWIP > Enable tcpip core locking)");

namespace {

emcp::board::NetConfig g_config;
bool g_ready = false;     // net_init() succeeded: this task holds the lock outside net_poll()
bool g_reported_bound = false;
emcp::board::Ipv4 g_reported{};  // the address on_address was last told

// What emcp::board::idle() gives back while it waits, and takes again.
void unlock_core() { UNLOCK_TCPIP_CORE(); }
void lock_core() { LOCK_TCPIP_CORE(); }

emcp::board::Ipv4 from_esp(const esp_ip4_addr_t& a) {
  emcp::board::Ipv4 r;
  memcpy(r.octets, &a.addr, 4);  // network order: the first octet first in memory
  return r;
}

// Tells the application when the address changed (bound, lost, another one), as the Cortex-M
// boards do from their netif's status callback; polled here, with the lock held.
void report_address() {
  const emcp::board::NetState s = emcp::board::net_state();
  const bool changed =
      s.bound != g_reported_bound || (s.bound && memcmp(&s.address, &g_reported, sizeof g_reported) != 0);
  if (!changed) return;
  g_reported_bound = s.bound;
  g_reported = s.address;
  if (g_config.on_address != nullptr) g_config.on_address(s);
}

}  // namespace

namespace emcp {
namespace board {

// Only `on_address` of `config` applies: the application configured the interface itself (DHCP
// or a static address, its MAC address) with ESP-IDF's APIs. False when it brought up none
// (no esp_netif: esp_netif_init() and a netif come first); then the lock is never taken.
// From the owner task (a FreeRTOS mutex belongs to the task that took it).
bool net_init(const NetConfig& config) {
  if (g_ready) return true;
  if (esp_netif_get_nr_of_ifs() == 0) return false;
  g_config = config;
  LOCK_TCPIP_CORE();
  emcp::board::set_idle_lock(&unlock_core, &lock_core);
  g_ready = true;
  return true;  // an address it already has is reported by the first net_poll()
}

// lwIP runs in its own thread, which has the core lock while the owner waits (emcp::board::idle()):
// this only reports an address change.
void net_poll() {
  if (g_ready) report_address();
}

// The default interface (ESP-IDF's choice: the highest route priority among those up), read
// without calling into the tcpip thread.
NetState net_state() {
  NetState s{};
  esp_netif_t* n = g_ready ? esp_netif_get_default_netif() : nullptr;
  if (n == nullptr) return s;
  s.link_up = esp_netif_is_netif_up(n);
  esp_netif_ip_info_t ip{};
  if (esp_netif_get_ip_info(n, &ip) == ESP_OK && ip.ip.addr != 0) {
    s.bound = true;
    esp_netif_dhcp_status_t dhcp = ESP_NETIF_DHCP_INIT;
    const bool by_dhcp = esp_netif_dhcpc_get_status(n, &dhcp) == ESP_OK && dhcp == ESP_NETIF_DHCP_STARTED;
    s.source = by_dhcp ? NetSource::kDhcp : NetSource::kStatic;
    s.address = from_esp(ip.ip);
    s.netmask = from_esp(ip.netmask);
    s.gateway = from_esp(ip.gw);
  }
  if (esp_netif_get_mac(n, s.mac) != ESP_OK) memset(s.mac, 0, sizeof s.mac);
  return s;
}

// ESP-IDF's Wi-Fi and Ethernet drivers keep no counters of this shape: all zero.
NetCounters net_counters() { return NetCounters{}; }

struct netif* net_netif() {
  esp_netif_t* n = g_ready ? esp_netif_get_default_netif() : nullptr;
  return n != nullptr ? static_cast<struct netif*>(esp_netif_get_netif_impl(n)) : nullptr;
}

// The hardware RNG: cryptographically secure while Wi-Fi or Bluetooth runs (ESP-IDF's
// esp_random documentation), which a network image's radio does.
bool net_random_is_cryptographic() { return true; }  // esp_fill_random: the hardware RNG

bool net_random(void* out, size_t n) {
  esp_fill_random(out, n);
  return true;
}


}  // namespace board
}  // namespace emcp
