// Cortex-M start-up (ARMv6-M, ARMv7-M): the vector table (the initial stack pointer, reset in
// common/startup.cpp, 14 core exceptions and the board's interrupt slots, up to 96, each a weak
// alias a board overrides), the fault handlers, and SysTick's millisecond count (weak, as the
// SVCall and PendSV slots: an RTOS takes them).
#include <stdint.h>

#include "board/arch.h"

extern "C" {
extern uint32_t __stack_top__;  // from the linker script
extern volatile uint64_t g_board_ms;  // common/startup.cpp

void Reset_Handler();  // common/startup.cpp
void Default_Handler();
void HardFault_Handler();
// SVCall, PendSV and SysTick: weak, so that an RTOS's strong definitions take the slots
// (FreeRTOS's Cortex-M port, under these names: boards/<board>/freertos/FreeRTOSConfig.h).
void SVC_Handler() __attribute__((weak, alias("Default_Handler")));
void PendSV_Handler() __attribute__((weak, alias("Default_Handler")));
void SysTick_Handler();

void Default_Handler() {
  for (;;) EMCP_ARCH_HALT(0);
}

void HardFault_Handler() {
  for (;;) EMCP_ARCH_HALT(1);
}

// Bare metal: the millisecond count (common/startup.cpp's now_ms()).
__attribute__((weak)) void SysTick_Handler() { g_board_ms = g_board_ms + 1; }
}  // extern "C"

// ---- vector table ---------------------------------------------------------------------------
#define EMCP_WEAK_IRQ(n) extern "C" void IRQ##n##_Handler() __attribute__((weak, alias("Default_Handler")));
#define EMCP_IRQ8(a) EMCP_WEAK_IRQ(a##0) EMCP_WEAK_IRQ(a##1) EMCP_WEAK_IRQ(a##2) EMCP_WEAK_IRQ(a##3) \
  EMCP_WEAK_IRQ(a##4) EMCP_WEAK_IRQ(a##5) EMCP_WEAK_IRQ(a##6) EMCP_WEAK_IRQ(a##7)
EMCP_WEAK_IRQ(0) EMCP_WEAK_IRQ(1) EMCP_WEAK_IRQ(2) EMCP_WEAK_IRQ(3) EMCP_WEAK_IRQ(4) EMCP_WEAK_IRQ(5)
EMCP_WEAK_IRQ(6) EMCP_WEAK_IRQ(7) EMCP_WEAK_IRQ(8) EMCP_WEAK_IRQ(9)
EMCP_IRQ8(1) EMCP_WEAK_IRQ(18) EMCP_WEAK_IRQ(19)
EMCP_IRQ8(2) EMCP_WEAK_IRQ(28) EMCP_WEAK_IRQ(29)
EMCP_IRQ8(3) EMCP_WEAK_IRQ(38) EMCP_WEAK_IRQ(39)
EMCP_IRQ8(4) EMCP_WEAK_IRQ(48) EMCP_WEAK_IRQ(49)
EMCP_IRQ8(5) EMCP_WEAK_IRQ(58) EMCP_WEAK_IRQ(59)
EMCP_IRQ8(6) EMCP_WEAK_IRQ(68) EMCP_WEAK_IRQ(69)
EMCP_IRQ8(7) EMCP_WEAK_IRQ(78) EMCP_WEAK_IRQ(79)
EMCP_IRQ8(8) EMCP_WEAK_IRQ(88) EMCP_WEAK_IRQ(89)
EMCP_WEAK_IRQ(90) EMCP_WEAK_IRQ(91) EMCP_WEAK_IRQ(92) EMCP_WEAK_IRQ(93) EMCP_WEAK_IRQ(94) EMCP_WEAK_IRQ(95)

#define EMCP_V(n) reinterpret_cast<const void*>(&IRQ##n##_Handler),
#define EMCP_V10(a) EMCP_V(a##0) EMCP_V(a##1) EMCP_V(a##2) EMCP_V(a##3) EMCP_V(a##4) EMCP_V(a##5) \
  EMCP_V(a##6) EMCP_V(a##7) EMCP_V(a##8) EMCP_V(a##9)

// Interrupt slots in the table: the board's count (board.cmake: EMCP_BOARD_IRQS) rounded up to
// 16; 4 bytes of flash each.
#ifndef EMCP_BOARD_IRQS
#define EMCP_BOARD_IRQS 96
#endif
static_assert(EMCP_BOARD_IRQS >= 1 && EMCP_BOARD_IRQS <= 96, "1 to 96 interrupt slots");
constexpr int kIrqSlots = (EMCP_BOARD_IRQS + 15) / 16 * 16;

extern "C" __attribute__((section(".vectors"), used)) const void* const g_vectors[16 + kIrqSlots] = {
    &__stack_top__,
    reinterpret_cast<const void*>(&Reset_Handler),
    reinterpret_cast<const void*>(&Default_Handler),    // NMI
    reinterpret_cast<const void*>(&HardFault_Handler),
    reinterpret_cast<const void*>(&Default_Handler),    // MemManage
    reinterpret_cast<const void*>(&Default_Handler),    // BusFault
    reinterpret_cast<const void*>(&Default_Handler),    // UsageFault
    nullptr, nullptr, nullptr, nullptr,
    reinterpret_cast<const void*>(&SVC_Handler),
    reinterpret_cast<const void*>(&Default_Handler),    // DebugMonitor
    nullptr,
    reinterpret_cast<const void*>(&PendSV_Handler),
    reinterpret_cast<const void*>(&SysTick_Handler),
    EMCP_V(0) EMCP_V(1) EMCP_V(2) EMCP_V(3) EMCP_V(4) EMCP_V(5) EMCP_V(6) EMCP_V(7) EMCP_V(8) EMCP_V(9)
    EMCP_V(10) EMCP_V(11) EMCP_V(12) EMCP_V(13) EMCP_V(14) EMCP_V(15)
#if EMCP_BOARD_IRQS > 16
    EMCP_V(16) EMCP_V(17) EMCP_V(18) EMCP_V(19) EMCP_V10(2) EMCP_V(30) EMCP_V(31)
#endif
#if EMCP_BOARD_IRQS > 32
    EMCP_V(32) EMCP_V(33) EMCP_V(34) EMCP_V(35) EMCP_V(36) EMCP_V(37) EMCP_V(38) EMCP_V(39)
    EMCP_V10(4)
#endif
#if EMCP_BOARD_IRQS > 48
    EMCP_V10(5) EMCP_V(60) EMCP_V(61) EMCP_V(62) EMCP_V(63)
#endif
#if EMCP_BOARD_IRQS > 64
    EMCP_V(64) EMCP_V(65) EMCP_V(66) EMCP_V(67) EMCP_V(68) EMCP_V(69) EMCP_V10(7)
#endif
#if EMCP_BOARD_IRQS > 80
    EMCP_V10(8) EMCP_V(90) EMCP_V(91) EMCP_V(92) EMCP_V(93) EMCP_V(94) EMCP_V(95)
#endif
};
