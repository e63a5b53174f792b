// SiFive HiFive1 (FE310: one E31 core, RV32IMAC, machine mode; 16 KiB data RAM), as QEMU's
// `-M sifive_e` models it: UART0 at 0x10013000 (PLIC source 3) on the board's USB serial
// (GPIO 16 RX, 17 TX, I/O function 0); the PLIC at 0x0C000000; the CLINT at 0x02000000, whose
// machine timer gives the millisecond tick; the clock from the 16 MHz crystal (PRCI). The
// core's code runs here as on the Cortex-M boards, compiled for RV32IMAC; the trap entry is
// common/arch/riscv.cpp's, which calls MachineExternal_Handler and MachineTimer_Handler below.
// Under FreeRTOS (EMCP_BOARD_RTOS, ports/freertos) the trap entry and the machine timer are the
// kernel's (freertos/FreeRTOSConfig.h): no tick here, and MachineExternal_Handler is called
// from the kernel's trap entry on the interrupt stack.
#include <stdint.h>

#include "board/board.h"
#include "board/rx.h"

#if !EMCP_BOARD_RTOS
extern "C" volatile uint64_t g_board_ms;  // boards/common/startup.cpp
#endif

#ifndef EMCP_HIFIVE1_MTIME_HZ
#error "EMCP_HIFIVE1_MTIME_HZ: the CLINT's mtime rate (board.cmake)"
#endif

namespace {

struct Fe310Uart {
  volatile uint32_t txdata;  // 0x00: bit 31 full (read); a byte to send (write)
  volatile uint32_t rxdata;  // 0x04: bit 31 empty, else the received byte (a read takes it)
  volatile uint32_t txctrl;  // 0x08: bit 0 txen; bits 18:16 the TX watermark
  volatile uint32_t rxctrl;  // 0x0C: bit 0 rxen; bits 18:16 the RX watermark
  volatile uint32_t ie;      // 0x10: bit 0 TX watermark, bit 1 RX watermark
  volatile uint32_t ip;      // 0x14
  volatile uint32_t div;     // 0x18: baud = clock / (div + 1)
};
static_assert(__builtin_offsetof(Fe310Uart, rxctrl) == 0x0C, "UART layout");
static_assert(__builtin_offsetof(Fe310Uart, div) == 0x18, "UART layout");
Fe310Uart& uart0() { return *reinterpret_cast<Fe310Uart*>(0x10013000u); }

constexpr uint32_t kEmpty = 1u << 31, kFull = 1u << 31;
constexpr uint32_t kRxWatermark = 1u << 1;  // ie, ip: received bytes above the RX watermark

volatile uint32_t& reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }

// PRCI: the 16 MHz crystal oscillator (HFXOSC) through the PLL, bypassed, as the core clock.
constexpr uintptr_t kPrciHfxosccfg = 0x10008004u, kPrciPllcfg = 0x10008008u, kPrciPlloutdiv = 0x1000800Cu;
constexpr uint32_t kHfxoscEnable = 1u << 30, kHfxoscReady = 1u << 31;
constexpr uint32_t kPllSel = 1u << 16, kPllRefSel = 1u << 17, kPllBypass = 1u << 18;
constexpr uint32_t kClockHz = 16000000;
// GPIO: UART0's pins to their I/O function 0.
constexpr uintptr_t kGpioIofEn = 0x10012038u, kGpioIofSel = 0x1001203Cu;
constexpr uint32_t kUart0Pins = (1u << 16) | (1u << 17);
// PLIC: a priority per source, an enable bit per source for each context (context 0: hart 0 in
// machine mode), the context's priority threshold and its claim/complete register.
constexpr uintptr_t kPlicPriority = 0x0C000000u, kPlicEnable = 0x0C002000u;
constexpr uintptr_t kPlicThreshold = 0x0C200000u, kPlicClaim = 0x0C200004u;
constexpr uint32_t kIrqUart0 = 3;
#if !EMCP_BOARD_RTOS  // FreeRTOS: the kernel programs the machine timer for its tick
// CLINT: hart 0's timer compare (an interrupt while mtime >= mtimecmp) and the timer.
constexpr uintptr_t kMtimecmp = 0x02004000u, kMtime = 0x0200BFF8u;

// The tick: mtime counts EMCP_HIFIVE1_MTIME_HZ; each millisecond is kTicksPerMs of them and,
// when the rate is not a multiple of 1,000 (the chip's 32,768 Hz), one more every time the
// remainders add up to a millisecond: no drift.
constexpr uint32_t kTicksPerMs = EMCP_HIFIVE1_MTIME_HZ / 1000, kTickRest = EMCP_HIFIVE1_MTIME_HZ % 1000;
static_assert(kTicksPerMs >= 1, "mtime runs at 1 kHz or faster");
uint64_t g_next_tick = 0;
uint32_t g_tick_rest = 0;

uint64_t mtime() {
  uint32_t hi, lo;
  do {
    hi = reg(kMtime + 4);
    lo = reg(kMtime);
  } while (hi != reg(kMtime + 4));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

// The next compare: the low half at its maximum first, so that no mix of old and new halves
// fires early.
void set_mtimecmp(uint64_t when) {
  reg(kMtimecmp) = 0xFFFFFFFFu;
  reg(kMtimecmp + 4) = static_cast<uint32_t>(when >> 32);
  reg(kMtimecmp) = static_cast<uint32_t>(when);
}

void schedule_tick() {
  uint32_t step = kTicksPerMs;
  if (kTickRest != 0) {
    g_tick_rest += kTickRest;
    if (g_tick_rest >= 1000) {
      g_tick_rest -= 1000;
      ++step;
    }
  }
  g_next_tick += step;
  set_mtimecmp(g_next_tick);
}
#endif

}  // namespace

// PLIC (machine external interrupt): every pending source claimed and completed; UART0's
// received bytes go into the ring while it has room. Without room the bytes wait in the UART's
// FIFO, its receive interrupt off until rx_release(): QEMU then holds further input back (the
// bridge's socket waits), where taking them would lose them. The FE310's UART has no overrun
// flag: a byte that finds its 8-byte FIFO full is lost without a trace (emcp::board::rx_lost() is
// never called here).
extern "C" void MachineExternal_Handler() {
  for (;;) {
    const uint32_t id = reg(kPlicClaim);
    if (id == 0) return;
    if (id == kIrqUart0) {
      Fe310Uart& u = uart0();
      for (;;) {
        if (!emcp::board::rx_room()) {
          u.ie = 0;
          emcp::board::rx_hold();
          break;
        }
        const uint32_t d = u.rxdata;
        if (d & kEmpty) break;
        emcp::board::rx_byte(static_cast<uint8_t>(d));
      }
    }
    reg(kPlicClaim) = id;  // complete
  }
}

#if !EMCP_BOARD_RTOS
// CLINT timer: one millisecond, the next compare one millisecond on (a late interrupt finds
// the compare passed and comes again at once: no millisecond is lost).
extern "C" void MachineTimer_Handler() {
  schedule_tick();
  g_board_ms = g_board_ms + 1;
}
#endif

namespace emcp {
namespace board {

const char* name() { return "hifive1"; }

void init() {
  // The crystal; the wait is bounded so that a board without one still runs (on the internal
  // oscillator the boot code left, at another baud rate).
  reg(kPrciHfxosccfg) = kHfxoscEnable;
  uint32_t i = 0;
  for (; i < 100000 && (reg(kPrciHfxosccfg) & kHfxoscReady) == 0; ++i) {
  }
  if (i < 100000) {
    reg(kPrciPlloutdiv) = 1u << 8;  // divide by 1
    reg(kPrciPllcfg) = kPllRefSel | kPllBypass;
    reg(kPrciPllcfg) = kPllRefSel | kPllBypass | kPllSel;
  }
  reg(kGpioIofSel) = reg(kGpioIofSel) & ~kUart0Pins;
  reg(kGpioIofEn) = reg(kGpioIofEn) | kUart0Pins;
  Fe310Uart& u = uart0();
  u.div = (kClockHz + 115200 / 2) / 115200 - 1;  // 138: 115,108 baud
  u.txctrl = 1;  // txen, one stop bit
  u.rxctrl = 1;  // rxen; watermark 0: the interrupt while a byte is waiting
  u.ie = kRxWatermark;
  reg(kPlicPriority + 4 * kIrqUart0) = 1;
  reg(kPlicEnable) = 1u << kIrqUart0;
  reg(kPlicThreshold) = 0;
#if EMCP_BOARD_RTOS
  // mie: MEIE (11); the kernel enabled MTIE for its tick and turned mstatus.MIE on when it
  // started the first task. Any interrupt may wake the owner task: the kernel's critical
  // sections mask them all.
  __asm__ volatile("csrs mie, %0" ::"r"(1u << 11));
#else
  g_next_tick = mtime();
  schedule_tick();
  // mie: MTIE (7), MEIE (11). mstatus.MIE is on since the first instructions.
  __asm__ volatile("csrs mie, %0" ::"r"((1u << 7) | (1u << 11)));
#endif
}

// The UART's request is a level (bytes above the watermark, enabled): it is raised again at
// once when bytes wait.
void rx_release() { uart0().ie = kRxWatermark; }

void uart_write(const char* data, size_t n) {
  Fe310Uart& u = uart0();
  for (size_t i = 0; i < n; ++i) {
    while (u.txdata & kFull) {
    }
    u.txdata = static_cast<uint8_t>(data[i]);
  }
}

}  // namespace board
}  // namespace emcp
