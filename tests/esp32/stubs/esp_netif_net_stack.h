// ESP-IDF v5 esp_netif_net_stack.h (component esp_netif): the TCP/IP stack's own interface
// behind an esp_netif (lwIP's struct netif) (compile-only, see driver/uart.h).
#pragma once
#include "esp_netif.h"

#ifdef __cplusplus
extern "C" {
#endif
void* esp_netif_get_netif_impl(esp_netif_t* esp_netif);
#ifdef __cplusplus
}
#endif
