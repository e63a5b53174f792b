// Must not compile (test esp32_idf_rejects_wrong_call): uart_read_bytes() writes into its
// buffer (void*), and a const one is passed. Compiled as a source of the emcp component against
// ESP-IDF v5.5.5's headers by idf_compile_check.py --only, which must refuse it and name this
// file: the check judges calls against ESP-IDF's own declarations.
#include <stdint.h>

#include "driver/uart.h"

int read_into(const uint8_t* buf) { return uart_read_bytes(UART_NUM_0, buf, 4, 0); }
