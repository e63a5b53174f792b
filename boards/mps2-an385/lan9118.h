// SMSC LAN9118 / LAN9220 Ethernet controller, register level, as an lwIP netif: the MPS2
// board's NIC (a LAN9220 on the FPGA board, which QEMU's `-M mps2-an385` models as a LAN9118:
// the same registers without checksum offload) at 0x40200000, interrupt line 13 on AN385.
//
// The chip keeps frames in its own FIFOs (about 16 KiB shared between RX and TX); the driver
// moves them word by word through the data ports, so there is no DMA and no descriptor ring:
//   - transmit (lwIP's linkoutput): every pbuf of the chain becomes one TX buffer (command
//     words A and B, then its bytes packed into 32-bit words; first and last segment flags on
//     the chain's first and last non-empty pbuf).
//   - receive (poll()): each status word in the RX status FIFO announces one frame; its bytes
//     are copied into a PBUF_POOL chain and handed to netif->input. With a bad status, or the
//     pool empty, the frame is still read out of the FIFO (and counted), so the next one lines
//     up; or, with the pool empty and Config::hold_when_full, left there for the next poll().
// One NIC, one instance: the driver's state is static.
//
// Context: one caller of poll() (the main loop with NO_SYS lwIP; under FreeRTOS the board's
// receive task, netif->input being tcpip_input), lwIP's linkoutput from whoever holds lwIP's
// core. The optional interrupt (Config::wake_irq) does no driver work and calls no lwIP: it
// masks the chip's interrupt, calls on_rx_interrupt() with NO_SYS 0 lwIP (under FreeRTOS: a
// task notification to the receive task), and leaves the frames to the next poll(), which unmasks
// it; on bare metal it exists so the loop's WFI wakes for a frame instead of the next tick.
#ifndef EMCP_BOARDS_MPS2_AN385_LAN9118_H
#define EMCP_BOARDS_MPS2_AN385_LAN9118_H

#include <stdint.h>

#include "lwip/err.h"

struct netif;

namespace emcp {
namespace board {
namespace lan9118 {

/// What the driver needs before netif_add() calls netif_init(); read during that call only.
struct Config {
  /// The MAC address when the chip has none of its own (its EEPROM loaded none: E2P_CMD
  /// MAC_ADDR_LOADED clear). QEMU loads one (52:54:00:12:34:56 unless `-nic ...,mac=` says).
  uint8_t fallback_mac[6] = {0x02, 0x45, 0x4d, 0x43, 0x50, 0x01};  // locally administered
  /// Enable the chip's receive interrupt (NVIC line 13) to wake the loop; false: purely polled.
  bool wake_irq = true;
  /// The interrupt's NVIC priority (8-bit form; 0, the highest, on bare metal). Under FreeRTOS
  /// one the kernel masks (configMAX_SYSCALL_INTERRUPT_PRIORITY or lower), since
  /// on_rx_interrupt() calls the kernel's ...FromISR API.
  uint8_t irq_priority = 0;
  /// With the pbuf pool empty, leave a frame in the chip's FIFO for the next poll() (holding()
  /// says so; the interrupt stays masked meanwhile) instead of dropping it: the chip's 10 KiB
  /// FIFO is then a buffer before the pool, under an RTOS (whose receive task drains the chip
  /// into pbufs that wait in lwIP's mailbox) and on bare metal (where the pbufs of the frames
  /// one poll() handed lwIP wait for the loop's engines). net.cpp sets it in both.
  bool hold_when_full = false;
};

/// Frame counters since netif_init() (each wraps at 2^32).
struct Counters {
  uint32_t rx_frames;   ///< frames handed to lwIP
  uint32_t rx_dropped;  ///< good frames read out and dropped: the pbuf pool was empty, or lwIP refused them
  uint32_t rx_errors;   ///< frames the chip flagged (error summary) or of impossible length, read out and dropped
  uint32_t rx_overrun;  ///< frames the chip itself dropped, its RX FIFO full (RX_DROP; QEMU's model counts none)
  uint32_t tx_frames;   ///< frames written to the TX FIFO
  uint32_t tx_dropped;  ///< frames not sent: no room in the TX FIFO in time, or too long
  uint32_t tx_errors;   ///< TX status words with the error summary bit (collisions, carrier loss)
};

/// netif_add()'s init function. `netif->state` must point to a Config. Resets the chip (soft
/// reset, then waits for READY; ERR_IF when no LAN9118 answers the byte-order test), sets the
/// MAC address (the chip's, else Config::fallback_mac), restarts auto-negotiation, enables the
/// transmitter and receiver (unicast to us and broadcast; multicast only for the groups lwIP
/// joins, through the chip's hash filter), and fills in the netif: hwaddr, MTU 1500, ETHARP |
/// ETHERNET | BROADCAST (and IGMP with its igmp_mac_filter, with LWIP_IGMP: mDNS's group),
/// output = etharp_output, linkoutput.
/// The link flag is left to the caller (link_up()).
err_t netif_init(struct netif* netif);

/// Moves the frames waiting in the RX FIFO when called into lwIP through netif->input (frames
/// that arrive meanwhile wait for the next call), reads the TX status FIFO for error counts,
/// and unmasks the wake-up interrupt. Returns the number of frames read (dropped ones too).
unsigned poll(struct netif* netif);

/// With lwIP in its own thread (NO_SYS 0), what the interrupt calls after it masked the chip's:
/// the board defines it (boards/mps2-an385/net.cpp: a task notification to its receive task).
/// Context: the interrupt.
void on_rx_interrupt();

/// Whether the last poll() left frames in the FIFO for want of a pbuf (Config::hold_when_full):
/// poll again once lwIP has freed some (the interrupt stays masked until then).
bool holding();

/// The PHY's link status (basic status register), read through the MAC's MII port. On the
/// first call after the link comes up the MAC's duplex is set from the auto-negotiation
/// result.
bool link_up();

/// The counters (a snapshot; reads the chip's drop counter first).
Counters counters();

/// The chip's ID_REV register (0x01180001 in QEMU: LAN9118 rev 1; 0x9220xxxx on the board).
uint32_t chip_id();

/// The chip's free-running 25 MHz counter (FREE_RUN): a cheap source of timing jitter.
uint32_t free_run();

}  // namespace lan9118
}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARDS_MPS2_AN385_LAN9118_H
