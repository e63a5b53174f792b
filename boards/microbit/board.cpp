// BBC micro:bit v1 (nRF51822: Cortex-M0, ARMv6-M; 256 KiB flash, 16 KiB RAM), as QEMU's
// `-M microbit` models it: UART0 at 0x40002000 (IRQ 2) on the board's USB serial pins (TX P0.24,
// RX P0.25), and TIMER0 at 0x40008000 (IRQ 8) for the millisecond clock: the nRF51's Cortex-M0
// has no SysTick. The core's code runs here as on the other boards, compiled for ARMv6-M
// (Thumb-1, no hardware divide, unaligned accesses fault).
#include <stdint.h>

#include "board/arch.h"
#include "board/board.h"
#include "board/rx.h"

extern "C" volatile uint64_t g_board_ms;  // boards/common/startup.cpp

namespace {

// Tasks are written 1 to start; events read 1 when they happened and are cleared by writing 0.
struct Nrf51Uart {
  volatile uint32_t tasks_startrx;      // 0x000
  volatile uint32_t tasks_stoprx;       // 0x004
  volatile uint32_t tasks_starttx;      // 0x008
  volatile uint32_t tasks_stoptx;       // 0x00C
  uint32_t reserved0[62];
  volatile uint32_t events_rxdrdy;      // 0x108
  uint32_t reserved1[4];
  volatile uint32_t events_txdrdy;      // 0x11C
  uint32_t reserved2;
  volatile uint32_t events_error;       // 0x124
  uint32_t reserved3[119];
  volatile uint32_t intenset;           // 0x304: bit 2 RXDRDY, bit 9 ERROR
  volatile uint32_t intenclr;           // 0x308
  uint32_t reserved4[93];
  volatile uint32_t errorsrc;           // 0x480: bit 0 overrun; write 1 to clear
  uint32_t reserved5[31];
  volatile uint32_t enable;             // 0x500: 4 enables the UART
  uint32_t reserved6;
  volatile uint32_t pselrts;            // 0x508
  volatile uint32_t pseltxd;            // 0x50C
  volatile uint32_t pselcts;            // 0x510
  volatile uint32_t pselrxd;            // 0x514
  volatile uint32_t rxd;                // 0x518
  volatile uint32_t txd;                // 0x51C
  uint32_t reserved7;
  volatile uint32_t baudrate;           // 0x524
  uint32_t reserved8[17];
  volatile uint32_t config;             // 0x56C: bit 0 HWFC (RTS/CTS flow control)
};
static_assert(__builtin_offsetof(Nrf51Uart, events_rxdrdy) == 0x108, "UART layout");
static_assert(__builtin_offsetof(Nrf51Uart, intenset) == 0x304, "UART layout");
static_assert(__builtin_offsetof(Nrf51Uart, errorsrc) == 0x480, "UART layout");
static_assert(__builtin_offsetof(Nrf51Uart, baudrate) == 0x524, "UART layout");
static_assert(__builtin_offsetof(Nrf51Uart, config) == 0x56C, "UART layout");
Nrf51Uart& uart0() { return *reinterpret_cast<Nrf51Uart*>(0x40002000u); }

struct Nrf51Timer {
  volatile uint32_t tasks_start;        // 0x000
  volatile uint32_t tasks_stop;         // 0x004
  volatile uint32_t tasks_count;        // 0x008
  volatile uint32_t tasks_clear;        // 0x00C
  uint32_t reserved0[76];
  volatile uint32_t events_compare0;    // 0x140
  uint32_t reserved1[47];
  volatile uint32_t shorts;             // 0x200: bit 0 COMPARE0 -> CLEAR
  uint32_t reserved2[64];
  volatile uint32_t intenset;           // 0x304: bit 16 COMPARE0
  uint32_t reserved3[127];
  volatile uint32_t mode;               // 0x504: 0 timer
  volatile uint32_t bitmode;            // 0x508: 0 16-bit
  uint32_t reserved4;
  volatile uint32_t prescaler;          // 0x510: 16 MHz / 2^n
  uint32_t reserved5[11];
  volatile uint32_t cc0;                // 0x540
};
static_assert(__builtin_offsetof(Nrf51Timer, events_compare0) == 0x140, "TIMER layout");
static_assert(__builtin_offsetof(Nrf51Timer, shorts) == 0x200, "TIMER layout");
static_assert(__builtin_offsetof(Nrf51Timer, mode) == 0x504, "TIMER layout");
static_assert(__builtin_offsetof(Nrf51Timer, cc0) == 0x540, "TIMER layout");
Nrf51Timer& timer0() { return *reinterpret_cast<Nrf51Timer*>(0x40008000u); }

volatile uint32_t& reg(uintptr_t address) { return *reinterpret_cast<volatile uint32_t*>(address); }

// CLOCK: the 16 MHz crystal (the baud rate and the millisecond tick are only as good as it; the
// internal RC oscillator the chip starts on is off by a few %). GPIO: the UART's pins.
constexpr uintptr_t kClockHfclkStart = 0x40000000u, kClockHfclkStarted = 0x40000100u;
constexpr uintptr_t kGpioOutset = 0x50000508u, kGpioPinCnf = 0x50000700u;
constexpr uint32_t kPinTx = 24, kPinRx = 25;

constexpr uint32_t kIrqUart0 = 2, kIrqTimer0 = 8;

}  // namespace

// UART0 (IRQ 2): every received byte goes into the ring while it has room; without room the
// line is turned off at the NVIC and the bytes stay in the UART's FIFO (6 bytes; with RTS/CTS
// wired and CONFIG.HWFC on, the sender waits; QEMU takes no more from the host), until
// rx_release(). The event is cleared before RXD is read: reading RXD raises it again when
// another byte is already waiting.
extern "C" void IRQ2_Handler() {
  Nrf51Uart& u = uart0();
  while (u.events_rxdrdy) {
    if (!emcp::board::rx_room()) {
      emcp::board::arch::nvic_disable(kIrqUart0);
      emcp::board::rx_hold();
      break;
    }
    u.events_rxdrdy = 0;
    emcp::board::rx_byte(static_cast<uint8_t>(u.rxd));
  }
  if (u.events_error) {  // overrun (or a framing error, a break): a byte is lost
    u.events_error = 0;
    u.errorsrc = u.errorsrc;
    (void)u.events_error;  // the clear has reached the peripheral before the return
    emcp::board::rx_lost();
  }
}

// TIMER0 (IRQ 8): compare 0 every millisecond (the timer clears itself on it). The event is
// read back after its clear: a write still on its way to the peripheral when the handler
// returns would raise the interrupt again and count a millisecond twice.
extern "C" void IRQ8_Handler() {
  Nrf51Timer& t = timer0();
  if (t.events_compare0 == 0) return;
  t.events_compare0 = 0;
  (void)t.events_compare0;
  g_board_ms = g_board_ms + 1;
}

namespace emcp {
namespace board {

const char* name() { return "microbit"; }

void init() {
  reg(kClockHfclkStart) = 1;
  // The crystal starts in under a millisecond; the wait is bounded (some 40 ms) so that a
  // board without one still runs, on the RC oscillator.
  for (uint32_t i = 0; i < 100000 && reg(kClockHfclkStarted) == 0; ++i) {
  }
  // TX drives high (idle) before the UART takes it; RX is an input with its buffer connected.
  reg(kGpioOutset) = 1u << kPinTx;
  reg(kGpioPinCnf + 4 * kPinTx) = 1u | (1u << 1);  // output, input buffer disconnected
  reg(kGpioPinCnf + 4 * kPinRx) = 0;               // input, buffer connected, no pull
  Nrf51Uart& u = uart0();
  u.pseltxd = kPinTx;       // the micro:bit's USB serial: P0.24 out, P0.25 in
  u.pselrxd = kPinRx;
  u.baudrate = 0x01D7E000;  // 115200
#if defined(EMCP_MICROBIT_RTS_PIN) && defined(EMCP_MICROBIT_CTS_PIN)
  // Hardware flow control on two edge-connector pins (the micro:bit's USB interface chip wires
  // none): RTS goes inactive while the RX FIFO cannot take more, that is while the receive
  // interrupt holds bytes back (board/rx.h), and the host waits.
  reg(kGpioOutset) = 1u << EMCP_MICROBIT_RTS_PIN;
  reg(kGpioPinCnf + 4 * EMCP_MICROBIT_RTS_PIN) = 1u | (1u << 1);
  reg(kGpioPinCnf + 4 * EMCP_MICROBIT_CTS_PIN) = 0;
  u.pselrts = EMCP_MICROBIT_RTS_PIN;
  u.pselcts = EMCP_MICROBIT_CTS_PIN;
  u.config = 1;  // HWFC
#endif
  u.enable = 4;
  u.events_rxdrdy = 0;
  u.events_txdrdy = 0;
  u.intenset = (1u << 2) | (1u << 9);  // RXDRDY, ERROR
  u.tasks_starttx = 1;
  u.tasks_startrx = 1;
  Nrf51Timer& t = timer0();
  t.mode = 0;
  t.bitmode = 0;            // 16 bits: 1,000 counts fit
  t.prescaler = 4;          // 16 MHz / 16 = 1 MHz
  t.cc0 = 1000;             // 1 ms
  t.shorts = 1;             // COMPARE0 -> CLEAR
  t.intenset = 1u << 16;    // COMPARE0
  t.tasks_start = 1;
  arch::nvic_enable(kIrqUart0);
  arch::nvic_enable(kIrqTimer0);
}

void rx_release() {
  arch::nvic_enable(kIrqUart0);
  arch::nvic_pend(kIrqUart0);
}

void uart_write(const char* data, size_t n) {
  Nrf51Uart& u = uart0();
  for (size_t i = 0; i < n; ++i) {
    u.txd = static_cast<uint8_t>(data[i]);
    while (!u.events_txdrdy) {
    }
    u.events_txdrdy = 0;
  }
}

}  // namespace board
}  // namespace emcp
