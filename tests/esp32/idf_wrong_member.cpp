// Must not compile (test esp32_idf_rejects_wrong_member): esp_netif_ip_info_t's address is
// `ip`, not `ip_addr`. Compiled as a source of the emcp_net component against ESP-IDF v5.5.5's
// headers by idf_compile_check.py --only, which must refuse it and name this file: the check
// judges structs against ESP-IDF's own definitions.
#include <stdint.h>

#include "esp_netif.h"

uint32_t address_of(const esp_netif_ip_info_t& info) { return info.ip_addr.addr; }
