// STM32F405/407 (Cortex-M4): USART1 on PA9/PA10 at 115200 8N1 with an RX interrupt (IRQ 37),
// SysTick at 1 kHz from a 168 MHz system clock. Register level, no vendor HAL. The same code
// runs on QEMU's netduinoplus2 (which models the USART but not the clock tree: its clock is a
// fixed 168 MHz, and RCC/GPIO writes are ignored) and on Discovery/Nucleo boards.
#include <stdint.h>

#include "board/arch.h"
#include "board/board.h"
#include "board/rx.h"

namespace {

constexpr uint32_t kSysClk = 168000000;  // after clock_init()
constexpr uint32_t kApb2Clk = kSysClk / 2;

inline volatile uint32_t& reg(uint32_t addr) { return *reinterpret_cast<volatile uint32_t*>(addr); }

// RCC
constexpr uint32_t kRcc = 0x40023800u;
volatile uint32_t& rcc_cr() { return reg(kRcc + 0x00); }
volatile uint32_t& rcc_pllcfgr() { return reg(kRcc + 0x04); }
volatile uint32_t& rcc_cfgr() { return reg(kRcc + 0x08); }
volatile uint32_t& rcc_ahb1enr() { return reg(kRcc + 0x30); }
volatile uint32_t& rcc_apb2enr() { return reg(kRcc + 0x44); }
volatile uint32_t& flash_acr() { return reg(0x40023C00u); }
// GPIOA
constexpr uint32_t kGpioA = 0x40020000u;
// USART1
struct Usart {
  volatile uint32_t sr;   // bit 5 RXNE, bit 7 TXE, bit 3 ORE
  volatile uint32_t dr;
  volatile uint32_t brr;
  volatile uint32_t cr1;  // bit 13 UE, bit 5 RXNEIE, bit 3 TE, bit 2 RE
  volatile uint32_t cr2;
  volatile uint32_t cr3;  // bit 9 CTSE, bit 8 RTSE
};
Usart& usart1() { return *reinterpret_cast<Usart*>(0x40011000u); }
constexpr uint32_t kRxne = 1u << 5, kOre = 1u << 3;
constexpr uint32_t kIrqUsart1 = 37;


// 168 MHz from the internal 16 MHz oscillator: PLL M=16, N=336, P=2; APB1 /4, APB2 /2; five
// flash wait states. QEMU does not model the clock tree (PLLRDY never rises there, and its
// clock already is 168 MHz), so the waits are bounded.
void clock_init() {
  flash_acr() = (flash_acr() & ~0xFu) | 5u | (1u << 8) | (1u << 9) | (1u << 10);
  rcc_pllcfgr() = 16u | (336u << 6) | (0u << 16) | (7u << 24);  // HSI source, P = 2, Q = 7
  rcc_cr() = rcc_cr() | (1u << 24);                              // PLLON
  for (uint32_t i = 0; i < 100000 && (rcc_cr() & (1u << 25)) == 0; ++i) {
  }
  rcc_cfgr() = (rcc_cfgr() & ~0xFCF3u) | (5u << 10) | (4u << 13) | 2u;  // PPRE1 /4, PPRE2 /2, SW = PLL
  for (uint32_t i = 0; i < 100000 && ((rcc_cfgr() >> 2) & 3u) != 2u; ++i) {
  }
}

}  // namespace

// USART1 (IRQ 37): every received byte goes into the ring while it has room; without room the
// line is turned off at the NVIC (QEMU 7.2 keeps its request up while RXNE is set, whatever
// RXNEIE says) and the byte stays in DR, until rx_release(). Reading SR, then DR, clears RXNE
// and ORE. On an overrun DR still holds the byte before the lost ones: it is kept, then the
// loss is placed after it.
extern "C" void IRQ37_Handler() {
  Usart& u = usart1();
  for (;;) {
    const uint32_t sr = u.sr;
    if ((sr & (kRxne | kOre)) == 0) break;
    if ((sr & kRxne) && !emcp::board::rx_room()) {
      emcp::board::arch::nvic_disable(kIrqUsart1);
      emcp::board::rx_hold();
      break;
    }
    const uint8_t b = static_cast<uint8_t>(u.dr);
    if (sr & kRxne) emcp::board::rx_byte(b);
    if (sr & kOre) emcp::board::rx_lost();
  }
}

namespace emcp {
namespace board {

const char* name() { return "stm32f4"; }

void init() {
  clock_init();
  rcc_ahb1enr() = rcc_ahb1enr() | 1u;         // GPIOA
  rcc_apb2enr() = rcc_apb2enr() | (1u << 4);  // USART1
  // PA9 (TX), PA10 (RX): alternate function 7.
  reg(kGpioA + 0x00) = (reg(kGpioA + 0x00) & ~(0xFu << 18)) | (0xAu << 18);
  reg(kGpioA + 0x24) = (reg(kGpioA + 0x24) & ~(0xFFu << 4)) | (0x77u << 4);
  Usart& u = usart1();
  u.brr = (kApb2Clk + 115200 / 2) / 115200;
#if EMCP_STM32F4_RTSCTS
  // Hardware flow control: PA11 (CTS) and PA12 (RTS), alternate function 7. RTS goes inactive
  // while the receive register is full, that is while the receive interrupt holds a byte back
  // (board/rx.h), and the host waits; CTS holds our transmitter while the host cannot take more.
  reg(kGpioA + 0x00) = (reg(kGpioA + 0x00) & ~(0xFu << 22)) | (0xAu << 22);
  reg(kGpioA + 0x24) = (reg(kGpioA + 0x24) & ~(0xFFu << 12)) | (0x77u << 12);
  u.cr3 = (1u << 9) | (1u << 8);
#endif
  u.cr1 = (1u << 13) | (1u << 5) | (1u << 3) | (1u << 2);  // UE, RXNEIE, TE, RE
  arch::nvic_enable(kIrqUsart1);
  struct SysTickRegs {
    volatile uint32_t ctrl, load, val, calib;
  };
  auto& st = *reinterpret_cast<SysTickRegs*>(0xE000E010u);
  st.load = kSysClk / 1000 - 1;
  st.val = 0;
  st.ctrl = 7u;  // processor clock, interrupt, enable
}

void rx_release() {
  arch::nvic_enable(kIrqUsart1);
  arch::nvic_pend(kIrqUsart1);
}

void uart_write(const char* data, size_t n) {
  Usart& u = usart1();
  for (size_t i = 0; i < n; ++i) {
    while ((u.sr & (1u << 7)) == 0) {
    }
    u.dr = static_cast<uint8_t>(data[i]);
  }
}

}  // namespace board
}  // namespace emcp
