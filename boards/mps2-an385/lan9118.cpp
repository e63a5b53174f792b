// SMSC LAN9118 / LAN9220 Ethernet controller on the MPS2 (AN385: 0x40200000, IRQ 13), as an
// lwIP netif: register-level, polled, with an optional wake-up interrupt (lan9118.h).
//
// Registers (32-bit, at the base): the RX data FIFO port at 0x00 and the TX data FIFO port at
// 0x20 (each aliased over 8 words; the driver uses the first), the RX and TX status FIFOs at
// 0x40 and 0x48, then the control and status registers from ID_REV (0x50) to E2P_DATA (0xb4).
// The MAC's own registers (MAC_CR, ADDRH/ADDRL, MII_ACC/MII_DATA, ...) sit behind an indirect
// port (MAC_CSR_CMD/MAC_CSR_DATA), and the PHY's behind the MAC's MII port (internal PHY at
// address 1). Data words are little-endian: the first byte of a frame is a word's low byte.
//
// What QEMU's model (hw/net/lan9118.c) does and does not do, which the driver relies on or
// avoids:
//   - a frame is transmitted the moment its last segment's last word is written, so the TX
//     FIFO never holds more than one frame; the driver still waits for room (TX_FIFO_INF) as the
//     chip requires.
//   - a received frame that does not fit the RX FIFO (about 10 KiB) is dropped by QEMU without
//     a count (RX_DROP reads 0; the chip counts it there, Counters::rx_overrun): poll often, or
//     TCP retransmits. QEMU says so on its stderr instead, once per frame ("Slirp: Failed to
//     send packet" with its user network), which is where the board tests count them.
//   - RX_DP_CTRL's fast-forward moves the read position without freeing the FIFO space, so a
//     dropped frame is read out word by word instead (on the chip this is merely slower).
//   - a read or write of an address the model does not implement (0x60, 0x94, PHY registers
//     other than 0, 1, 4, 5, 29, 30) is logged as a guest error: none is touched.
//   - with IRQ_CFG at its reset value the interrupt line is active-low and so asserted while
//     disabled: the driver configures it active-high push-pull before it enables the NVIC line,
//     and clears the line's pending bit first.
#include "lan9118.h"

#include <stddef.h>
#include <stdint.h>

#include "board/board.h"
#include "lwip/etharp.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "netif/ethernet.h"

namespace {

// ---- the register map -------------------------------------------------------------------------
struct Regs {
  volatile uint32_t rx_data[8];      // 0x00 RX data FIFO port
  volatile uint32_t tx_data[8];      // 0x20 TX data FIFO port
  volatile uint32_t rx_status;       // 0x40 RX status FIFO port (a read pops)
  volatile uint32_t rx_status_peek;  // 0x44
  volatile uint32_t tx_status;       // 0x48 TX status FIFO port (a read pops)
  volatile uint32_t tx_status_peek;  // 0x4c
  volatile uint32_t id_rev;          // 0x50 chip ID (high half) and revision
  volatile uint32_t irq_cfg;         // 0x54
  volatile uint32_t int_sts;         // 0x58 write 1 to clear
  volatile uint32_t int_en;          // 0x5c
  uint32_t reserved0;                // 0x60
  volatile uint32_t byte_test;       // 0x64 reads 0x87654321
  volatile uint32_t fifo_int;        // 0x68
  volatile uint32_t rx_cfg;          // 0x6c
  volatile uint32_t tx_cfg;          // 0x70
  volatile uint32_t hw_cfg;          // 0x74
  volatile uint32_t rx_dp_ctrl;      // 0x78
  volatile uint32_t rx_fifo_inf;     // 0x7c RX status words used (23:16), RX data bytes used (15:0)
  volatile uint32_t tx_fifo_inf;     // 0x80 TX status words used (23:16), TX data bytes free (15:0)
  volatile uint32_t pmt_ctrl;        // 0x84 bit 0: READY
  volatile uint32_t gpio_cfg;        // 0x88
  volatile uint32_t gpt_cfg;         // 0x8c
  volatile uint32_t gpt_cnt;         // 0x90
  uint32_t reserved1;                // 0x94
  volatile uint32_t word_swap;       // 0x98
  volatile uint32_t free_run;        // 0x9c 25 MHz free-running counter
  volatile uint32_t rx_drop;         // 0xa0
  volatile uint32_t mac_csr_cmd;     // 0xa4
  volatile uint32_t mac_csr_data;    // 0xa8
  volatile uint32_t afc_cfg;         // 0xac
  volatile uint32_t e2p_cmd;         // 0xb0
  volatile uint32_t e2p_data;        // 0xb4
};
static_assert(offsetof(Regs, rx_status) == 0x40 && offsetof(Regs, id_rev) == 0x50 &&
                  offsetof(Regs, byte_test) == 0x64 && offsetof(Regs, free_run) == 0x9c &&
                  offsetof(Regs, e2p_data) == 0xb4,
              "LAN9118 register layout");
Regs& regs() { return *reinterpret_cast<Regs*>(0x40200000u); }

constexpr unsigned kIrqLine = 13;  // AN385's NVIC line for the Ethernet controller
volatile uint32_t& nvic_iser0() { return *reinterpret_cast<volatile uint32_t*>(0xE000E100u); }
volatile uint32_t& nvic_icpr0() { return *reinterpret_cast<volatile uint32_t*>(0xE000E280u); }
volatile uint8_t& nvic_ipr(unsigned line) { return *reinterpret_cast<volatile uint8_t*>(0xE000E400u + line); }

constexpr uint32_t kByteTest = 0x87654321u;
constexpr uint32_t kPmtReady = 1u << 0;
constexpr uint32_t kHwCfgSoftReset = 1u << 0;
constexpr uint32_t kIrqCfgEnable = 1u << 8, kIrqCfgActiveHigh = 1u << 4, kIrqCfgPushPull = 1u << 0;
constexpr uint32_t kIntRxStatusLevel = 1u << 3;  // RSFL: RX status FIFO above its level (0: any frame)
constexpr uint32_t kTxCfgOn = 1u << 1, kTxCfgStatusOverrun = 1u << 2;  // TX_ON, TXSAO
constexpr uint32_t kE2pMacLoaded = 1u << 8;  // MAC_ADDR_LOADED
// AFC_CFG as the datasheet recommends (flow-control thresholds); GPIO_CFG: GPIO 0-2 as LEDs.
constexpr uint32_t kAfcCfg = 0x006E3740u, kGpioLeds = 0x70070000u;

// RX status word: frame length with its 4-byte FCS (29:16), error summary (15).
constexpr uint32_t kRxStatusError = 1u << 15;
constexpr uint32_t rx_status_length(uint32_t s) { return (s >> 16) & 0x3FFFu; }
// TX command A: buffer size (10:0), first (13) and last (12) segment; command B: frame length
// (10:0) and a tag (31:16) the TX status word echoes. TX status: error summary (15).
constexpr uint32_t kTxFirstSegment = 1u << 13, kTxLastSegment = 1u << 12;
constexpr uint32_t kTxStatusError = 1u << 15;
constexpr uint32_t kEthFcs = 4;
constexpr uint32_t kMinFrame = 14, kMaxFrame = 1518;  // without the FCS; 1518: with a VLAN tag
constexpr uint32_t kMaxTxFrame = 1514;

// The MAC's registers (MAC_CSR_CMD: busy 31, read 30, register 7:0).
constexpr uint32_t kCsrBusy = 1u << 31, kCsrRead = 1u << 30;
enum MacReg : uint32_t {
  kMacCr = 1, kMacAddrH = 2, kMacAddrL = 3, kMacHashH = 4, kMacHashL = 5, kMacMiiAcc = 6, kMacMiiData = 7
};
constexpr uint32_t kMacCrRxAll = 1u << 31, kMacCrFullDuplex = 1u << 20, kMacCrPromiscuous = 1u << 18;
constexpr uint32_t kMacCrHashFilter = 1u << 13;  // HPFILT: multicast through the hash table
constexpr uint32_t kMacCrTxEnable = 1u << 3, kMacCrRxEnable = 1u << 2;
// MII_ACC: PHY address (15:11), register (10:6), write (1), busy (0). The PHY's registers.
constexpr uint32_t kPhyAddress = 1, kMiiWrite = 1u << 1, kMiiBusy = 1u << 0;
enum PhyReg : uint32_t { kPhyControl = 0, kPhyStatus = 1, kPhyAdvertise = 4, kPhyPartner = 5 };
constexpr uint32_t kPhyReset = 1u << 15, kPhyAnEnable = 1u << 12, kPhyAnRestart = 1u << 9;
constexpr uint32_t kPhyLinkUp = 1u << 2, kPhyAnComplete = 1u << 5;
constexpr uint32_t kAbility100Full = 1u << 8, kAbility100Half = 1u << 7, kAbility10Full = 1u << 6;

// How long the chip may take: reset and READY (datasheet: well under 100 ms), a MAC or MII
// access (microseconds), room in the TX FIFO for one frame (it drains at line rate).
constexpr uint64_t kResetMs = 100, kAccessMs = 5, kTxRoomMs = 10;

// ---- driver state -------------------------------------------------------------------------------
struct State {
  emcp::board::lan9118::Counters counters;
  uint32_t mac_cr;  // MAC_CR as last written
  uint16_t tx_tag;
  bool wake_irq;
  bool link_was_up;
  bool hold_when_full;  // Config::hold_when_full
  bool holding;         // poll() left a frame in the FIFO for want of a pbuf
#if LWIP_IGMP
  uint8_t hash_users[64];  // multicast groups joined per bit of the hash table
#endif
};
State g;

/// Waits until `done()` or `ms` milliseconds have passed; true when done.
template <typename Done>
bool wait_for(Done done, uint64_t ms) {
  const uint64_t start = emcp::board::now_ms();
  for (;;) {
    if (done()) return true;
    // Checked once more after the deadline, so a tick that lands between the two reads cannot
    // fail a wait that succeeded.
    if (emcp::board::now_ms() - start > ms) return done();
  }
}

bool mac_idle() {
  return wait_for([] { return (regs().mac_csr_cmd & kCsrBusy) == 0; }, kAccessMs);
}

uint32_t mac_read(MacReg reg) {
  Regs& r = regs();
  (void)mac_idle();
  r.mac_csr_cmd = kCsrBusy | kCsrRead | reg;
  (void)mac_idle();
  return r.mac_csr_data;
}

void mac_write(MacReg reg, uint32_t value) {
  Regs& r = regs();
  (void)mac_idle();
  r.mac_csr_data = value;
  r.mac_csr_cmd = kCsrBusy | reg;
  (void)mac_idle();
}

bool mii_idle() {
  return wait_for([] { return (mac_read(kMacMiiAcc) & kMiiBusy) == 0; }, kAccessMs);
}

uint32_t phy_read(PhyReg reg) {
  (void)mii_idle();
  mac_write(kMacMiiAcc, (kPhyAddress << 11) | (static_cast<uint32_t>(reg) << 6) | kMiiBusy);
  (void)mii_idle();
  return mac_read(kMacMiiData) & 0xFFFFu;
}

void phy_write(PhyReg reg, uint32_t value) {
  (void)mii_idle();
  mac_write(kMacMiiData, value & 0xFFFFu);
  mac_write(kMacMiiAcc, (kPhyAddress << 11) | (static_cast<uint32_t>(reg) << 6) | kMiiWrite | kMiiBusy);
  (void)mii_idle();
}

/// The MAC's duplex from the auto-negotiation result: the best ability both ends advertise.
void apply_duplex() {
  if ((phy_read(kPhyStatus) & kPhyAnComplete) == 0) return;
  const uint32_t common = phy_read(kPhyAdvertise) & phy_read(kPhyPartner);
  const bool full =
      (common & kAbility100Full) != 0 || ((common & kAbility100Half) == 0 && (common & kAbility10Full) != 0);
  const uint32_t cr = full ? (g.mac_cr | kMacCrFullDuplex) : (g.mac_cr & ~kMacCrFullDuplex);
  if (cr != g.mac_cr) {
    g.mac_cr = cr;
    mac_write(kMacCr, cr);
  }
}

#if LWIP_IGMP
/// The bit of the multicast hash table a destination address selects: the top 6 bits of its
/// CRC-32 (the Ethernet FCS's polynomial, each byte least significant bit first, not inverted),
/// as the datasheet's "Multicast Hash Table" says and Linux's smsc911x computes it.
unsigned hash_bit(const uint8_t (&mac)[6]) {
  uint32_t crc = 0xFFFFFFFFu;
  for (uint8_t b : mac) {
    for (unsigned i = 0; i < 8; ++i, b = static_cast<uint8_t>(b >> 1)) {
      const bool carry = ((crc >> 31) ^ (b & 1u)) != 0;
      crc <<= 1;
      if (carry) crc ^= 0x04C11DB7u;
    }
  }
  return crc >> 26;
}

/// lwIP's igmp_mac_filter (from lwIP's context, when a group is joined or left): the group's
/// MAC address (01:00:5e and the group's low 23 bits) in or out of the chip's hash table
/// (HASHH:HASHL), multicast filtered through it (MAC_CR's HPFILT) while a group is joined. A
/// bit shared by two groups stays set until both are left; the IP layer drops the frames of
/// another group that shares a bit.
err_t igmp_filter(struct netif*, const ip4_addr_t* group, enum netif_mac_filter_action action) {
  const uint32_t ip = lwip_ntohl(ip4_addr_get_u32(group));
  const uint8_t mac[6] = {0x01, 0x00, 0x5e, static_cast<uint8_t>((ip >> 16) & 0x7Fu), static_cast<uint8_t>(ip >> 8),
                          static_cast<uint8_t>(ip)};
  const unsigned bit = hash_bit(mac);
  if (action == NETIF_ADD_MAC_FILTER) {
    if (g.hash_users[bit] == 0xFFu) return ERR_MEM;
    ++g.hash_users[bit];
  } else if (g.hash_users[bit] != 0) {
    --g.hash_users[bit];
  }
  uint32_t table[2] = {0, 0};  // HASHL: bits 0-31, HASHH: 32-63
  for (unsigned i = 0; i < 64; ++i)
    if (g.hash_users[i] != 0) table[i >> 5] |= 1u << (i & 31u);
  mac_write(kMacHashL, table[0]);
  mac_write(kMacHashH, table[1]);
  const uint32_t cr = (table[0] | table[1]) != 0 ? (g.mac_cr | kMacCrHashFilter) : (g.mac_cr & ~kMacCrHashFilter);
  if (cr != g.mac_cr) {
    g.mac_cr = cr;
    mac_write(kMacCr, cr);
  }
  return ERR_OK;
}
#endif

/// Reads `words` words of the current frame and throws them away.
void rx_discard(uint32_t words) {
  Regs& r = regs();
  while (words-- != 0) (void)r.rx_data[0];
}

/// Copies the current frame (`words` FIFO words, FCS included) into the chain `p`, whose
/// tot_len is the frame without its FCS, and reads the rest (the FCS) out of the FIFO.
void rx_copy(struct pbuf* p, uint32_t words) {
  Regs& r = regs();
  uint32_t word = 0;
  unsigned left = 0;  // bytes of `word` not stored yet
  for (struct pbuf* q = p; q != nullptr; q = q->next) {
    auto* dst = static_cast<uint8_t*>(q->payload);
    for (uint16_t i = 0; i < q->len; ++i) {
      if (left == 0) {
        word = r.rx_data[0];
        --words;
        left = 4;
      }
      dst[i] = static_cast<uint8_t>(word);
      word >>= 8;
      --left;
    }
  }
  rx_discard(words);
}

/// Writes `n` bytes into the TX data FIFO as little-endian words, the last one zero-padded.
void tx_words(const uint8_t* b, uint32_t n) {
  Regs& r = regs();
  for (; n >= 4; n -= 4, b += 4)
    r.tx_data[0] = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 |
                   static_cast<uint32_t>(b[2]) << 16 | static_cast<uint32_t>(b[3]) << 24;
  if (n != 0) {
    uint32_t w = 0;
    for (uint32_t i = 0; i < n; ++i) w |= static_cast<uint32_t>(b[i]) << (8 * i);
    r.tx_data[0] = w;
  }
}

/// lwIP's linkoutput: one frame (a pbuf chain without FCS; the MAC appends it). Each non-empty
/// pbuf is one TX buffer: command A (its size, first/last segment), command B (the frame's
/// length and tag, the same in every buffer), its data.
err_t link_output(struct netif*, struct pbuf* p) {
  Regs& r = regs();
  uint32_t need = 0;  // FIFO bytes: command words and data rounded up to words, per buffer
  const struct pbuf* last = nullptr;
  for (const struct pbuf* q = p; q != nullptr; q = q->next) {
    if (q->len == 0) continue;
    need += 8u + ((q->len + 3u) & ~3u);
    last = q;
  }
  if (last == nullptr || p->tot_len > kMaxTxFrame) {
    ++g.counters.tx_dropped;
    return ERR_IF;
  }
  if (!wait_for([&] { return (r.tx_fifo_inf & 0xFFFFu) >= need; }, kTxRoomMs)) {
    ++g.counters.tx_dropped;
    return ERR_MEM;
  }
  const uint32_t cmd_b = static_cast<uint32_t>(++g.tx_tag) << 16 | p->tot_len;
  uint32_t first = kTxFirstSegment;
  for (const struct pbuf* q = p; q != nullptr; q = q->next) {
    if (q->len == 0) continue;
    r.tx_data[0] = first | (q == last ? kTxLastSegment : 0u) | q->len;
    r.tx_data[0] = cmd_b;
    tx_words(static_cast<const uint8_t*>(q->payload), q->len);
    first = 0;
    if (q == last) break;
  }
  ++g.counters.tx_frames;
  LINK_STATS_INC(link.xmit);
  return ERR_OK;
}

}  // namespace

// The Ethernet controller's interrupt (RX status FIFO level), when Config::wake_irq: it only
// wakes whoever polls (bare metal: the loop's WFI; under an RTOS, lwIP with NO_SYS 0, the
// board's receive task: on_rx_interrupt()). Masking the chip's interrupt drops the line;
// poll() unmasks it. A direct call, not a pointer: the footprint check follows it.
extern "C" void IRQ13_Handler() {
  regs().int_en = 0;
#if !NO_SYS
  emcp::board::lan9118::on_rx_interrupt();
#else
  // The loop may be between its last look at the NIC and its WFI: without the wake flag
  // (emcp::board::idle() checks it with interrupts masked) the frame would wait for the next tick.
  emcp::board::wake();
#endif
}

namespace emcp {
namespace board {
namespace lan9118 {

static_assert(ETH_PAD_SIZE == 0, "the driver copies frames from a pbuf's first byte (ETH_PAD_SIZE 0)");

err_t netif_init(struct netif* netif) {
  const auto* config = static_cast<const Config*>(netif->state);
  Regs& r = regs();
  g = State{};
  // A chip coming out of power-down answers BYTE_TEST before anything else; then READY.
  if (!wait_for([&] { return r.byte_test == kByteTest; }, kResetMs)) return ERR_IF;
  r.hw_cfg = kHwCfgSoftReset;
  if (!wait_for([&] { return (r.hw_cfg & kHwCfgSoftReset) == 0 && (r.pmt_ctrl & kPmtReady) != 0; }, kResetMs))
    return ERR_IF;

  // Interrupts: all masked and cleared, the line push-pull active-high (asserted only when
  // enabled and pending).
  r.int_en = 0;
  r.int_sts = 0xFFFFFFFFu;
  r.irq_cfg = kIrqCfgActiveHigh | kIrqCfgPushPull;

  // The MAC address: the one the chip loaded from its EEPROM (QEMU: from -nic), else ours.
  uint8_t* mac = netif->hwaddr;
  if ((r.e2p_cmd & kE2pMacLoaded) != 0) {
    const uint32_t lo = mac_read(kMacAddrL), hi = mac_read(kMacAddrH);
    for (unsigned i = 0; i < 4; ++i) mac[i] = static_cast<uint8_t>(lo >> (8 * i));
    mac[4] = static_cast<uint8_t>(hi);
    mac[5] = static_cast<uint8_t>(hi >> 8);
  }
  if ((r.e2p_cmd & kE2pMacLoaded) == 0 || (mac[0] & 1u) != 0 ||
      (mac[0] | mac[1] | mac[2] | mac[3] | mac[4] | mac[5]) == 0) {
    for (unsigned i = 0; i < 6; ++i) mac[i] = config->fallback_mac[i];
    mac_write(kMacAddrL, static_cast<uint32_t>(mac[0]) | static_cast<uint32_t>(mac[1]) << 8 |
                             static_cast<uint32_t>(mac[2]) << 16 | static_cast<uint32_t>(mac[3]) << 24);
    mac_write(kMacAddrH, static_cast<uint32_t>(mac[4]) | static_cast<uint32_t>(mac[5]) << 8);
  }
  netif->hwaddr_len = 6;

  // The PHY: reset, then auto-negotiation with its default abilities (10/100, both duplexes).
  phy_write(kPhyControl, kPhyReset);
  (void)wait_for([] { return (phy_read(kPhyControl) & kPhyReset) == 0; }, kResetMs);
  phy_write(kPhyControl, kPhyAnEnable | kPhyAnRestart);

  r.afc_cfg = kAfcCfg;
  r.gpio_cfg = kGpioLeds;
  r.rx_cfg = 0;  // frames from a word's first byte, no end padding
  // TX on; a full TX status FIFO must not stop the transmitter (poll() reads it anyway).
  r.tx_cfg = kTxCfgOn | kTxCfgStatusOverrun;
  // Unicast to our address and broadcast (MAC_CR's broadcast bit is a disable); not
  // promiscuous (the reset value); full duplex until the PHY says otherwise (link_up()).
  g.mac_cr = (mac_read(kMacCr) & ~(kMacCrRxAll | kMacCrPromiscuous)) | kMacCrFullDuplex | kMacCrTxEnable |
             kMacCrRxEnable;
  mac_write(kMacCr, g.mac_cr);

  g.wake_irq = config->wake_irq;
  g.hold_when_full = config->hold_when_full;
  if (g.wake_irq) {
    r.int_en = kIntRxStatusLevel;
    r.irq_cfg = kIrqCfgEnable | kIrqCfgActiveHigh | kIrqCfgPushPull;
    nvic_icpr0() = 1u << kIrqLine;  // latched while the line was active-low after reset
    nvic_ipr(kIrqLine) = config->irq_priority;
    nvic_iser0() = 1u << kIrqLine;
  }

  netif->name[0] = 'e';
  netif->name[1] = 'n';
  netif->mtu = 1500;
  netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
  netif->output = etharp_output;
  netif->linkoutput = link_output;
#if LWIP_IGMP
  // IPv4 multicast (mDNS's group): the groups lwIP joins pass the chip's hash filter.
  netif->flags |= NETIF_FLAG_IGMP;
  netif_set_igmp_mac_filter(netif, &igmp_filter);
#endif
  return ERR_OK;
}

unsigned poll(struct netif* netif) {
  Regs& r = regs();
  // Clear the level interrupt before draining: a frame that arrives during the drain sets it
  // again, and the unmask at the end then wakes the loop once more.
  r.int_sts = kIntRxStatusLevel;
  unsigned frames = (r.rx_fifo_inf >> 16) & 0xFFu;
  const unsigned handled = frames;
  // Frames the chip dropped (its FIFO full) since the last read, which clears the count: a drop
  // leaves frames waiting, so reading it when there are some (and in counters()) misses none.
  if (frames != 0) g.counters.rx_overrun += r.rx_drop;
  g.holding = false;
  while (frames-- != 0) {
    // Holding frames when the pool is empty: the status is only peeked until the frame is taken.
    const uint32_t status = g.hold_when_full ? r.rx_status_peek : r.rx_status;
    const uint32_t length = rx_status_length(status);  // with the FCS
    const uint32_t words = (length + 3u) / 4u;
    if ((status & kRxStatusError) != 0 || length < kMinFrame + kEthFcs || length > kMaxFrame + kEthFcs) {
      if (g.hold_when_full) (void)r.rx_status;
      rx_discard(words);
      ++g.counters.rx_errors;
      LINK_STATS_INC(link.err);
      continue;
    }
    struct pbuf* p = pbuf_alloc(PBUF_RAW, static_cast<u16_t>(length - kEthFcs), PBUF_POOL);
    if (p == nullptr && g.hold_when_full) {  // it waits in the chip for the next poll()
      g.holding = true;
      break;
    }
    if (g.hold_when_full) (void)r.rx_status;
    if (p == nullptr) {
      rx_discard(words);  // the frame still leaves the FIFO, or the next one would not line up
      ++g.counters.rx_dropped;
      LINK_STATS_INC(link.memerr);
      continue;
    }
    rx_copy(p, words);
    LINK_STATS_INC(link.recv);
    if (netif->input(p, netif) != ERR_OK) {
      pbuf_free(p);
      ++g.counters.rx_dropped;
      continue;
    }
    ++g.counters.rx_frames;
  }
  // TX status words: one per frame sent; only errors are counted.
  for (unsigned n = (r.tx_fifo_inf >> 16) & 0xFFu; n != 0; --n)
    if ((r.tx_status & kTxStatusError) != 0) ++g.counters.tx_errors;
  // Frames left waiting keep the level interrupt asserted: unmasked, it would fire at once.
  if (g.wake_irq && !g.holding) r.int_en = kIntRxStatusLevel;
  return handled;
}

bool holding() { return g.holding; }

bool link_up() {
  // The link bit latches low (a drop since the last read stays visible once): read twice.
  (void)phy_read(kPhyStatus);
  const bool up = (phy_read(kPhyStatus) & kPhyLinkUp) != 0;
  if (up && !g.link_was_up) apply_duplex();
  g.link_was_up = up;
  return up;
}

Counters counters() {
  g.counters.rx_overrun += regs().rx_drop;
  return g.counters;
}

uint32_t chip_id() { return regs().id_rev; }

uint32_t free_run() { return regs().free_run; }

}  // namespace lan9118
}  // namespace board
}  // namespace emcp
