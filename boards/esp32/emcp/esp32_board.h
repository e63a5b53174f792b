// esp32_board.h - what boards/esp32's board layer (board.cpp) adds to board/board.h on ESP-IDF:
// the serving task's stack size, which ESP-IDF cannot tell a task about itself, and the hook
// through which the network (boards/esp32/emcp_net, net.cpp) takes over board::idle()'s wait.
//
// Context: app_main() or the serving task, before board::init() / board::net_init().
#ifndef EMCP_BOARDS_ESP32_BOARD_H
#define EMCP_BOARDS_ESP32_BOARD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The stack size in bytes of the task that serves (as given to xTaskCreate, whose depth is in
/// bytes on ESP-IDF), for board::stack_size() and board::stack_high_water(); 0: unknown.
///   emcp_board_set_stack_size(kStack);
///   xTaskCreate(&serve, "emcp", kStack / sizeof(StackType_t), nullptr, 5, nullptr);
void emcp_board_set_stack_size(uint32_t bytes);

/// What board::idle() runs instead of its own wait (one tick, or less when UART input is
/// waiting); nullptr: its own. boards/esp32/emcp_net's board::net_init() sets it: the serving
/// task then holds lwIP's core lock except inside board::net_poll(), which does the round's
/// waiting with the lock released, so idle() must not wait a second time with the lock held.
void emcp_board_set_idle(void (*on_idle)(void));

#ifdef __cplusplus
}
#endif

#endif  // EMCP_BOARDS_ESP32_BOARD_H
