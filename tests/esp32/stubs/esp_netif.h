// ESP-IDF v5 esp_netif.h (component esp_netif): the calls boards/esp32's network files make,
// with the types they take, as ESP-IDF documents them (compile-only, see driver/uart.h).
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "esp_err.h"

typedef struct esp_netif_obj esp_netif_t;

/// An IPv4 address in network byte order (lwIP's ip4_addr_t).
struct esp_ip4_addr {
  uint32_t addr;
};
typedef struct esp_ip4_addr esp_ip4_addr_t;

typedef struct {
  esp_ip4_addr_t ip;
  esp_ip4_addr_t netmask;
  esp_ip4_addr_t gw;
} esp_netif_ip_info_t;

typedef enum {
  ESP_NETIF_DHCP_INIT = 0,
  ESP_NETIF_DHCP_STARTED,
  ESP_NETIF_DHCP_STOPPED,
  ESP_NETIF_DHCP_STATUS_MAX
} esp_netif_dhcp_status_t;

#ifdef __cplusplus
extern "C" {
#endif
esp_err_t esp_netif_init(void);
esp_netif_t* esp_netif_get_default_netif(void);
size_t esp_netif_get_nr_of_ifs(void);
bool esp_netif_is_netif_up(esp_netif_t* esp_netif);
esp_err_t esp_netif_get_ip_info(esp_netif_t* esp_netif, esp_netif_ip_info_t* ip_info);
esp_err_t esp_netif_get_mac(esp_netif_t* esp_netif, uint8_t mac[]);
esp_err_t esp_netif_dhcpc_get_status(esp_netif_t* esp_netif, esp_netif_dhcp_status_t* status);
#ifdef __cplusplus
}
#endif
