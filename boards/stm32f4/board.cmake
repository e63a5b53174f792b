# stm32f4: Cortex-M4; software floating point (the application's doubles need it either way).
set(EMCP_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfloat-abi=soft)
set(EMCP_BOARD_QEMU_MACHINE netduinoplus2)
# STM32F405/407 interrupt lines (USART1 is IRQ 37; FPU is the last, 81).
set(EMCP_BOARD_IRQS 82)
