// board/net.h on the MPS2 AN385: lwIP over the LAN9118 driver (lan9118.h), one netif, DHCP
// with a static fallback, and the platform functions ports/lwip's arch/cc.h and NO_SYS lwIP
// need from the board: sys_now (the SysTick clock), emcp_lwip_assert (a line on the UART, then
// abort) and emcp_lwip_rand (xorshift32 stirred with the NIC's free-running counter).
//
// lwIP's state lives in its static pools and in this file's statics (the netif and its DHCP
// client record, set with dhcp_set_struct so DHCP takes nothing from lwIP's heap).
//
// Under FreeRTOS (lwIP built with NO_SYS 0: ports/freertos/lwip), lwIP runs in its own thread
// (tcpip_thread: its timers, the frames it is handed) and this file's functions run in the task
// that owns the server, which holds lwIP's core lock all the time except while it waits in
// emcp::board::idle() (emcp::board::set_idle_lock): the raw/altcp API the HTTP listener calls, netif and
// DHCP calls here, all under the lock (lwIP checks it: LWIP_ASSERT_CORE_LOCKED). The NIC's
// interrupt calls no lwIP: it wakes a receive task (nic_rx_task) with a task notification, which
// drains the chip's FIFO into pool pbufs and hands them to tcpip_thread through its mailbox
// (netif->input = tcpip_input), as ESP-IDF's and STM32Cube's Ethernet drivers do.
#include <stdlib.h>
#include <string.h>

#include "board/board.h"
#include "board/net.h"
#include "emcp/json/number.h"
#include "lan9118.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "lwip/timeouts.h"
#include "netif/ethernet.h"
#if !NO_SYS
#include "FreeRTOS.h"
#include "board/freertos.h"
#include "lwip/tcpip.h"
#include "task.h"
#endif

namespace {

constexpr uint64_t kLinkPollMs = 500;

emcp::board::NetConfig g_config;
emcp::board::lan9118::Config g_nic_config;
struct netif g_netif;
struct dhcp g_dhcp;
bool g_ready = false;
bool g_static = false;            // the static address is in use (DHCP off, or given up)
bool g_address_changed = false;  // set by lwIP's status callback, reported by net_poll()
emcp::board::Ipv4 g_reported{};         // the address on_address was last told (0.0.0.0: none)
uint64_t g_started_ms = 0;
uint64_t g_link_checked_ms = 0;
uint32_t g_rand_state = 0;  // emcp_lwip_rand's xorshift32 state (0: not seeded yet)

ip4_addr_t to_lwip(const emcp::board::Ipv4& a) {
  ip4_addr_t r;
  memcpy(&r.addr, a.octets, 4);  // network order: the first octet first in memory
  return r;
}

emcp::board::Ipv4 from_lwip(const ip4_addr_t* a) {
  emcp::board::Ipv4 r;
  memcpy(r.octets, &a->addr, 4);
  return r;
}

// lwIP's netif status callback: runs inside lwIP (DHCP's timers or input), so it only notes
// the change; net_poll() tells the application once lwIP has returned.
void on_netif_status(struct netif*) { g_address_changed = true; }

void use_static_address() {
  dhcp_release_and_stop(&g_netif);  // nothing to release when DHCP never started
  const ip4_addr_t ip = to_lwip(g_config.static_address), mask = to_lwip(g_config.static_netmask),
                   gw = to_lwip(g_config.static_gateway);
  netif_set_addr(&g_netif, &ip, &mask, &gw);
  g_static = true;
}

void follow_link() {
  const bool up = emcp::board::lan9118::link_up();
  if (up && !netif_is_link_up(&g_netif)) netif_set_link_up(&g_netif);
  if (!up && netif_is_link_up(&g_netif)) netif_set_link_down(&g_netif);
}

void say(const char* s) { emcp::board::uart_write(s, strlen(s)); }

#if !NO_SYS
// The receive task: the NIC's interrupt gives its notification; it moves the frames waiting in
// the chip into lwIP's mailbox (tcpip_input), then wakes the owner, which tcpip_thread (above
// it) will have served first. A frame lwIP has no pbuf for waits in the chip's FIFO, as on bare
// metal (lan9118::Config::hold_when_full): the pool is 8 pbufs, the chip holds about 10 KiB. Its priority is tcpip_thread's; its stack is checked by the
// footprint report (the task "nic_rx").
#ifndef EMCP_NET_RX_STACK
#define EMCP_NET_RX_STACK 768
#endif
TaskHandle_t g_rx_task = nullptr;
StaticTask_t g_nic_rx_tcb;

void unlock_core() { UNLOCK_TCPIP_CORE(); }
void lock_core() { LOCK_TCPIP_CORE(); }
#endif


}  // namespace

#if !NO_SYS
StackType_t g_nic_rx_stack[EMCP_NET_RX_STACK / sizeof(StackType_t)];

// The NIC's interrupt (lan9118.h): the receive task's notification, nothing of lwIP.
void emcp::board::lan9118::on_rx_interrupt() {
  BaseType_t woken = pdFALSE;
  if (g_rx_task != nullptr) vTaskNotifyGiveFromISR(g_rx_task, &woken);
  portYIELD_FROM_ISR(woken);
}

// With the pool empty the frames wait in the chip (lan9118::holding()): the task looks again
// every tick until lwIP has freed pbufs, the interrupt masked meanwhile.
extern "C" void nic_rx_task(void*) {
  for (;;) {
    (void)ulTaskNotifyTake(pdTRUE, emcp::board::lan9118::holding() ? 1 : portMAX_DELAY);
    (void)emcp::board::lan9118::poll(&g_netif);
    emcp::board::wake();
  }
}
#endif

namespace emcp {
namespace board {

bool net_init(const NetConfig& config) {
  g_config = config;
  memcpy(g_nic_config.fallback_mac, config.fallback_mac, sizeof g_nic_config.fallback_mac);
  const ip4_addr_t any = {0};
#if NO_SYS
  lwip_init();
  // A frame lwIP has no pool pbuf for waits in the chip's FIFO (about 10 KiB) for the next poll()
  // too: the pbufs of the frames a poll() hands lwIP stay taken until the loop's engines read
  // them (the listener queues each segment's chain), and every frame takes one, whatever its
  // size, so a peer's burst of small segments (an MQTT broker's messages) empties the pool within
  // one poll() while its window still allows more.
  g_nic_config.hold_when_full = true;
  if (netif_add(&g_netif, &any, &any, &any, &g_nic_config, &lan9118::netif_init, &ethernet_input) == nullptr)
    return false;
#else
  // lwIP's thread (tcpip_init runs lwip_init here, then starts tcpip_thread), then the core
  // lock, which this task keeps but in idle(). The receive task exists before the NIC's
  // interrupt is enabled (netif_init), and that interrupt has a priority the kernel masks.
  tcpip_init(nullptr, nullptr);
  LOCK_TCPIP_CORE();
  emcp::board::set_idle_lock(&unlock_core, &lock_core);
  g_nic_config.irq_priority = configMAX_SYSCALL_INTERRUPT_PRIORITY;
  g_nic_config.hold_when_full = true;
  g_rx_task = xTaskCreateStatic(&nic_rx_task, "nic_rx", sizeof g_nic_rx_stack / sizeof(StackType_t), nullptr,
                                TCPIP_THREAD_PRIO, g_nic_rx_stack, &g_nic_rx_tcb);
  (void)emcp::board::watch_stack(g_rx_task, sizeof g_nic_rx_stack);
  if (netif_add(&g_netif, &any, &any, &any, &g_nic_config, &lan9118::netif_init, &tcpip_input) == nullptr)
    return false;
#endif
  // Two boards on one network start alike; their MAC addresses differ.
  for (unsigned i = 0; i < 6; ++i) g_rand_state ^= static_cast<uint32_t>(g_netif.hwaddr[i]) << (8 * (i % 4));
  netif_set_default(&g_netif);
  netif_set_status_callback(&g_netif, &on_netif_status);
  netif_set_up(&g_netif);
  follow_link();
  g_started_ms = g_link_checked_ms = now_ms();
  if (g_config.dhcp) {
    dhcp_set_struct(&g_netif, &g_dhcp);
    if (dhcp_start(&g_netif) != ERR_OK) use_static_address();
  } else {
    use_static_address();
  }
  g_ready = true;
  return true;
}

void net_poll() {
  if (!g_ready) return;
#if NO_SYS  // else the receive task and tcpip_thread do this
  (void)lan9118::poll(&g_netif);
  sys_check_timeouts();
#endif
  const uint64_t now = now_ms();
  if (now - g_link_checked_ms >= kLinkPollMs) {
    g_link_checked_ms = now;
    follow_link();
  }
  if (g_config.dhcp && !g_static && g_config.dhcp_timeout_ms != 0 && !dhcp_supplied_address(&g_netif) &&
      now - g_started_ms >= g_config.dhcp_timeout_ms)
    use_static_address();
  if (g_address_changed) {  // lwIP also calls back when only the interface went up
    g_address_changed = false;
    const NetState state = net_state();
    if (memcmp(&state.address, &g_reported, sizeof g_reported) != 0) {
      g_reported = state.address;
      // Resolve the gateway now: every connection through it (QEMU's port forwards come from
      // 10.0.2.2) needs its MAC address, and lwIP keeps only one packet per unresolved address
      // (ARP_QUEUEING 0), so several SYN-ACKs at once would otherwise all but one wait for
      // TCP's retransmission (3 s).
      const ip4_addr_t* gw = netif_ip4_gw(&g_netif);
      if (state.bound && !ip4_addr_isany(gw)) (void)etharp_request(&g_netif, gw);
      if (g_config.on_address != nullptr) g_config.on_address(state);
    }
  }
}

NetState net_state() {
  NetState s{};
  if (!g_ready) return s;
  s.link_up = netif_is_link_up(&g_netif) != 0;
  s.bound = !ip4_addr_isany_val(*netif_ip4_addr(&g_netif));
  if (s.bound) s.source = dhcp_supplied_address(&g_netif) ? NetSource::kDhcp : NetSource::kStatic;
  s.address = from_lwip(netif_ip4_addr(&g_netif));
  s.netmask = from_lwip(netif_ip4_netmask(&g_netif));
  s.gateway = from_lwip(netif_ip4_gw(&g_netif));
  memcpy(s.mac, g_netif.hwaddr, sizeof s.mac);
  return s;
}

NetCounters net_counters() {
  const lan9118::Counters c = lan9118::counters();
  return NetCounters{c.rx_frames, c.rx_dropped, c.rx_errors, c.rx_overrun, c.tx_frames, c.tx_dropped, c.tx_errors};
}

struct netif* net_netif() { return g_ready ? &g_netif : nullptr; }

// Session ids (emcp::Platform::random): the MPS2 (and QEMU's model of it) has no true random
// generator, so this is splitmix64 over a state stirred, at every call, with SysTick's count,
// the NIC's free-running counter and the clock, and seeded with the MAC address. It keeps two
// boards and two boots apart; it is NOT cryptographic (README.md says so): a board with a TRNG
// reads that instead.
bool net_random_is_cryptographic() { return false; }

bool net_random(void* out, size_t n) {
  static uint64_t state = 0;
  auto* p = static_cast<uint8_t*>(out);
  const uint32_t systick_val = *reinterpret_cast<volatile uint32_t*>(0xE000E018u);
  state ^= (static_cast<uint64_t>(emcp::board::lan9118::free_run()) << 32) ^ systick_val ^ (now_ms() << 17);
  for (unsigned i = 0; i < 6; ++i) state ^= static_cast<uint64_t>(g_netif.hwaddr[i]) << (8 * i + 3);
  while (n != 0) {
    state += 0x9E3779B97F4A7C15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    for (unsigned k = 0; k < 8 && n != 0; ++k, --n) *p++ = static_cast<uint8_t>(z >> (8 * k));
  }
  return true;
}


}  // namespace board
}  // namespace emcp

// ---- what lwIP needs from the platform (ports/lwip/include/arch/cc.h, NO_SYS) ----------------
extern "C" {

#if NO_SYS  // else ports/freertos/lwip's sys_arch: the kernel's tick
u32_t sys_now(void) { return static_cast<u32_t>(emcp::board::now_ms()); }
#endif

// LWIP_ASSERT: a programmer error inside lwIP (or a pool misconfiguration); the message (empty
// where the image leaves lwIP's texts out: EMCP_LWIP_ASSERT_TEXT) goes to the UART and the board
// stops (abort: a breakpoint loop, where a debugger finds it).
void emcp_lwip_assert(const char* message, const char* file, int line) {
  char num[12];
  say("lwip assert: ");
  say(message);
  say(" (");
  say(file);
  say(":");
  emcp::board::uart_write(num, emcp::json::format_uint64(static_cast<uint64_t>(line), num));
  say(")\n");
  abort();
}

// LWIP_RAND (TCP's initial sequence numbers and local ports, DHCP's transaction ids):
// xorshift32, seeded from the clock, SysTick's current count and the NIC's free-running
// counter, then the MAC address (net_init), and stirred with that counter on every call (the
// timing of calls varies with the traffic). Good enough to keep sequence numbers from repeating across resets; NOT
// cryptographic: anything secret (TLS keys, session ids) needs a real entropy source.
uint32_t emcp_lwip_rand(void) {
  uint32_t s = g_rand_state;
  if (s == 0) {
    const uint32_t systick_val = *reinterpret_cast<volatile uint32_t*>(0xE000E018u);
    s = 0x9E3779B9u ^ static_cast<uint32_t>(emcp::board::now_ms()) ^ (systick_val << 8);
  }
  s ^= emcp::board::lan9118::free_run();
  if (s == 0) s = 0x6D2B79F5u;  // xorshift's one fixed point
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  g_rand_state = s;
  return s;
}

}  // extern "C"
