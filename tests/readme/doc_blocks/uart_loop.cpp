// docs/porting.md: the loop of a port.
#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

size_t uart_read(uint8_t* buf, size_t cap);  // takes what the receive interrupt put in the ring
bool uart_take_loss();                       // true once per gap in the input
void network_run_once();                     // the network port's delivery (none on a UART image)
void app_tick();
void sleep_until_interrupt();
extern emcp::mcp::Server server;
extern emcp::transport::LineTransport& link;

[[noreturn]] void doc_block() {
  uint8_t buf[64];
// @BLOCK@
}
