// emcp/lwip/http_listener.h for ESP-IDF: forwards to ports/lwip's header. ports/lwip/include
// cannot be an include folder here: it also holds emcp's own lwipopts.h and arch/cc.h (NO_SYS,
// static pools), which would shadow ESP-IDF's and build emcp against another lwIP than the one
// ESP-IDF runs.
#include "../../../../../../ports/lwip/include/emcp/lwip/http_listener.h"
