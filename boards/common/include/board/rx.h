// board/rx.h - the receive side the boards share: a board's UART interrupt hands each received
// byte to rx_byte() and reports bytes the hardware lost with rx_lost(); common/rx.cpp keeps them
// in a ring (EMCP_BOARD_RX_RING bytes, 1 KiB by default) and implements uart_read(),
// uart_take_loss(), the counters and idle() of board/board.h on it.
//
// Nothing is lost while the UART can hold bytes back: before reading a byte, the interrupt asks
// rx_room(); when there is none (the ring is full, or a loss waits for the loop), it turns its
// receive interrupt off, calls rx_hold() and leaves the byte in the UART, whose FIFO, RTS/CTS
// flow control or emulation (QEMU's UARTs take no byte from the host while one waits) holds
// the sender. Once the loop has made room it calls the board's rx_release(), which turns the
// interrupt on again. A UART without flow control then overruns, and reports it with rx_lost():
// the loss is kept in its place (board/ring.h), so the transport answers the damaged line with
// an error instead of parsing what was left of it.
//
// Context: rx_room(), rx_byte(), rx_lost() and rx_hold() in the UART interrupt only (single
// producer); rx_release() (the board's) from the main loop.
#ifndef EMCP_BOARD_RX_H
#define EMCP_BOARD_RX_H

#include <stddef.h>
#include <stdint.h>

#ifndef EMCP_BOARD_RX_RING
#define EMCP_BOARD_RX_RING 1024
#endif
// The size as text, for the banner (the option must be a plain number).
#define EMCP_BOARD_RX_TEXT_(n) #n
#define EMCP_BOARD_RX_TEXT(n) EMCP_BOARD_RX_TEXT_(n)
#define EMCP_BOARD_RX_RING_TEXT EMCP_BOARD_RX_TEXT(EMCP_BOARD_RX_RING)
// emcp-bridge assumes a ring of 256 bytes when it has not seen the banner that states the size.
static_assert(EMCP_BOARD_RX_RING >= 256 && (EMCP_BOARD_RX_RING & (EMCP_BOARD_RX_RING - 1)) == 0,
              "EMCP_BOARD_RX_RING: a power of two, at least 256");

// 1: the interrupt holds bytes back when the ring has no room (above). 0: it takes every byte
// and the ring loses what does not fit, as a UART without FIFO or flow control would (tests).
#ifndef EMCP_BOARD_RX_HOLD
#define EMCP_BOARD_RX_HOLD 1
#endif

namespace emcp {
namespace board {

/// True when a byte read now is kept. A board whose UART can hold bytes asks before each read.
bool rx_room();
/// How many bytes read now are kept, for a board that reads several at once (a host console):
/// rx_room()'s count (without EMCP_BOARD_RX_HOLD, what the ring has room for, at least 1).
size_t rx_space();
/// Queues a received byte; without room() the byte is lost and counted (a gap in the input).
void rx_byte(uint8_t b);
/// Counts bytes the UART lost before they could be read (an overrun): a gap in the input here.
void rx_lost();
/// The interrupt found no room and turned its receive interrupt off: the UART holds the bytes.
void rx_hold();

/// Implemented by each board: turns the receive interrupt on again after rx_hold(), so that the
/// bytes the UART held are taken (called by the loop once the ring has room).
void rx_release();

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_RX_H
