// emcp/lwip/tcp.h for ESP-IDF: forwards to ports/lwip's header (see http_listener.h here). On
// ESP-IDF's lwIP its hooks are not set (its own options); the component builds src/tcp.cpp for
// the pcb figures device_stats reports.
#include "../../../../../../ports/lwip/include/emcp/lwip/tcp.h"
