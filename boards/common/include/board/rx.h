// board/rx.h - the receive side the boards share: a board's UART interrupt hands each
// received byte to rx_byte() and reports a byte the hardware lost with rx_lost();
// common/rx.cpp keeps them in a 1 KiB ring and implements uart_read(), uart_dropped() and
// idle() of board/board.h on it.
//
// Context: rx_byte() and rx_lost() in the UART interrupt only (single producer).
#ifndef EMCP_BOARD_RX_H
#define EMCP_BOARD_RX_H

#include <stdint.h>

namespace board {

/// Queues a received byte; when the ring is full the byte is lost and counted.
void rx_byte(uint8_t b);
/// Counts a byte the UART lost before it could be read (overrun).
void rx_lost();
/// True when the ring is full: a board whose UART holds bytes back (a FIFO, flow control) can
/// leave them there until the loop has taken some, instead of losing them.
bool rx_full();

}  // namespace board

#endif  // EMCP_BOARD_RX_H
