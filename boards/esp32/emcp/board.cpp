// The board interface (board/board.h) on ESP-IDF: UART0 through ESP-IDF's UART driver (its
// interrupt fills the driver's ring; uart_read_bytes() takes from it without waiting), the
// millisecond clock from esp_timer, and the platform. The task that owns the server (its wait,
// its wake from other tasks and interrupts, the critical section, its stack's figures) is
// ports/freertos/src/owner.cpp, the same as under the kernel the emulated boards build
// (board/freertos.h). No heap after start-up: the driver allocates its ring and event queue
// once, in init().
#include <stdint.h>

#include "board/board.h"
#include "board/rx.h"
#include "driver/uart.h"
#include "emcp/util/atomic.h"
#include "esp_random.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/queue.h"

namespace {
constexpr uart_port_t kUart = UART_NUM_0;
// The driver's ring: the banner states it (EMCP_BOARD_RX_RING, set by the component).
constexpr int kRxRing = EMCP_BOARD_RX_RING;
constexpr int kEvents = 16;  // the driver's event queue, drained at every uart_read()
QueueHandle_t g_events = nullptr;
uint32_t g_input_errors = 0;
uint32_t g_ring_full = 0;   // UART_BUFFER_FULL: the driver held bytes in the FIFO
bool g_gap = false;         // an error event not yet taken by uart_take_loss()

// Takes the driver's events off its queue (a full queue would lose the next overflow event).
// Input lost or damaged: its hardware FIFO overflowed (the driver then empties it), a framing
// or parity error; each is a gap uart_take_loss() reports. Its ring was full: the driver held
// the data back in the FIFO rather than losing it (counted).
void drain_events() {
  uart_event_t ev;
  while (g_events != nullptr && xQueueReceive(g_events, &ev, 0) == pdTRUE) {
    if (ev.type == UART_FIFO_OVF || ev.type == UART_FRAME_ERR || ev.type == UART_PARITY_ERR) {
      ++g_input_errors;
      g_gap = true;
    } else if (ev.type == UART_BUFFER_FULL) {
      ++g_ring_full;
    }
  }
}
}  // namespace

namespace emcp {
namespace board {

const char* name() { return CONFIG_IDF_TARGET; }

void init() {
  uart_config_t cfg = {};
  cfg.baud_rate = 115200;
  cfg.data_bits = UART_DATA_8_BITS;
  cfg.parity = UART_PARITY_DISABLE;
  cfg.stop_bits = UART_STOP_BITS_1;
  cfg.flow_ctrl = UART_HW_FLOWCTRL_DISABLE;
  cfg.source_clk = UART_SCLK_DEFAULT;
  uart_driver_install(kUart, kRxRing, 0, kEvents, &g_events, 0);
  uart_param_config(kUart, &cfg);
}

uint64_t now_ms() { return static_cast<uint64_t>(esp_timer_get_time()) / 1000u; }

namespace {
// The hardware RNG (cryptographically secure while the RF subsystem or the bootloader's
// entropy source runs: ESP-IDF's esp_random documentation).
bool random_bytes(void* out, size_t n) {
  esp_fill_random(out, n);
  return true;
}
}  // namespace

// The server's inbox (emcp/mcp/inbox.h) wakes the owner task with emcp::board::wake(); without atomic
// read-modify-write (the ESP32-C3's RV32IMC, the ESP32-S2) it posts inside the kernel's
// critical section.
const emcp::Platform& platform() {
  static constexpr emcp::Platform kEsp32{&now_ms, &random_bytes, nullptr, nullptr, &wake,
                                         EMCP_ATOMIC_RMW ? nullptr : &critical_enter,
                                         EMCP_ATOMIC_RMW ? nullptr : &critical_exit};
  return kEsp32;
}

void uart_write(const char* data, size_t n) { uart_write_bytes(kUart, data, n); }

// The driver does not say where in its ring a gap is: it is reported when its event is seen,
// before the bytes read after that (the line it damaged is answered with an error; bytes the
// driver took between the gap and the event may land on either side of it).
size_t uart_read(uint8_t* buf, size_t cap) {
  drain_events();
  if (g_gap) return 0;
  const int n = uart_read_bytes(kUart, buf, static_cast<uint32_t>(cap), 0);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

bool uart_take_loss() {
  drain_events();
  const bool gap = g_gap;
  g_gap = false;
  return gap;
}

// Not bytes, as on the Cortex-M boards: the driver reports an overflow, not how much it dropped.
// Each counted event lost or damaged at least one byte; 0 still means nothing was lost.
uint32_t uart_dropped() {
  drain_events();
  return g_input_errors;
}

uint32_t uart_held() {
  drain_events();
  return g_ring_full;
}

}  // namespace board
}  // namespace emcp
