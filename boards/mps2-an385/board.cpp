// ARM MPS2 with the AN385 FPGA image (Cortex-M3, 25 MHz), as QEMU's `-M mps2-an385` models it:
// CMSDK APB UART0 at 0x40004000 (RX interrupt 0), SysTick from the processor clock.
#include <stdint.h>

#include "board/arch.h"
#include "board/board.h"
#include "board/rx.h"
#if EMCP_BOARD_RTOS
#include "FreeRTOSConfig.h"
#endif

namespace {

constexpr uint32_t kSysClk = 25000000;

struct CmsdkUart {
  volatile uint32_t data;
  volatile uint32_t state;      // bit 0 TX full, bit 1 RX full, bit 2 TX overrun, bit 3 RX overrun
  volatile uint32_t ctrl;       // bit 0 TX enable, bit 1 RX enable, bit 3 RX interrupt enable
  volatile uint32_t intstatus;  // write 1 to clear; bit 1 RX
  volatile uint32_t bauddiv;
};
CmsdkUart& uart0() { return *reinterpret_cast<CmsdkUart*>(0x40004000u); }

#if !EMCP_BOARD_RTOS
struct SysTickRegs {
  volatile uint32_t ctrl, load, val, calib;
};
SysTickRegs& systick() { return *reinterpret_cast<SysTickRegs*>(0xE000E010u); }
#endif
constexpr uint32_t kIrqUart0Rx = 0;


}  // namespace

// UART0 receive (IRQ 0): the bytes the UART holds go into the ring while it has room; without
// room the line is turned off at the NVIC and the byte stays in the UART (QEMU then takes no
// more from the host), until rx_release().
extern "C" void IRQ0_Handler() {
  CmsdkUart& u = uart0();
  // Clear the interrupt first, then drain: a byte that arrives after the clear raises it
  // again. (Clearing after draining would lose the interrupt of a byte that came in between,
  // and with it the receiver: the UART holds that byte and takes no more.)
  u.intstatus = 2u;
  while (u.state & 2u) {
    if (!emcp::board::rx_room()) {
      emcp::board::arch::nvic_disable(kIrqUart0Rx);
      emcp::board::rx_hold();
      break;
    }
    emcp::board::rx_byte(static_cast<uint8_t>(u.data));
  }
  if (u.state & 8u) {  // RX overrun: a byte was lost before we read it
    u.state = 8u;
    emcp::board::rx_lost();
  }
}

namespace emcp {
namespace board {

const char* name() { return "mps2-an385"; }

void init() {
  CmsdkUart& u = uart0();
  u.bauddiv = kSysClk / 115200;  // at least 16, or QEMU ignores the UART
  u.ctrl = 1u | 2u | 8u;         // TX, RX, RX interrupt
  (void)u.data;                  // QEMU: a first read makes it poll the host side at once
  u.intstatus = 0xFu;
#if EMCP_BOARD_RTOS
  // The receive interrupt wakes the owner task through FreeRTOS's API: its priority must be
  // one the kernel masks (freertos/FreeRTOSConfig.h).
  emcp::board::arch::nvic_set_priority(kIrqUart0Rx, configMAX_SYSCALL_INTERRUPT_PRIORITY);
#endif
  emcp::board::arch::nvic_enable(kIrqUart0Rx);
#if !EMCP_BOARD_RTOS  // FreeRTOS owns SysTick
  systick().load = kSysClk / 1000 - 1;
  systick().val = 0;
  systick().ctrl = 7u;           // processor clock, interrupt, enable
#endif
}

// The interrupt cleared its request before it stopped reading: pend it so that it drains what
// the UART held.
void rx_release() {
  arch::nvic_enable(kIrqUart0Rx);
  arch::nvic_pend(kIrqUart0Rx);
}

void uart_write(const char* data, size_t n) {
  CmsdkUart& u = uart0();
  for (size_t i = 0; i < n; ++i) {
    while (u.state & 1u) {
    }
    u.data = static_cast<uint8_t>(data[i]);
  }
}

}  // namespace board
}  // namespace emcp
