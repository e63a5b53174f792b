// ESP-IDF v5 esp_wifi.h (component esp_wifi, with esp_wifi_types.h and esp_wifi_default.h): a
// station's bring-up as boards/esp32/examples/sensors_net does it (compile-only, see
// driver/uart.h). WIFI_INIT_CONFIG_DEFAULT() fills in dozens of sdkconfig values on ESP-IDF;
// here it is an empty initializer.
#pragma once
#include <stdint.h>

#include "esp_err.h"
#include "esp_event.h"
#include "esp_netif.h"

typedef enum { WIFI_MODE_NULL = 0, WIFI_MODE_STA, WIFI_MODE_AP, WIFI_MODE_APSTA } wifi_mode_t;
typedef enum { WIFI_IF_STA = 0, WIFI_IF_AP = 1 } wifi_interface_t;
typedef enum {
  WIFI_EVENT_WIFI_READY = 0,
  WIFI_EVENT_SCAN_DONE,
  WIFI_EVENT_STA_START,
  WIFI_EVENT_STA_STOP,
  WIFI_EVENT_STA_CONNECTED,
  WIFI_EVENT_STA_DISCONNECTED,
} wifi_event_t;
ESP_EVENT_DECLARE_BASE(WIFI_EVENT);

typedef struct {
  int static_rx_buf_num;
  int dynamic_rx_buf_num;
  int tx_buf_type;
  int magic;
} wifi_init_config_t;
#define WIFI_INIT_CONFIG_DEFAULT() {}

typedef struct {
  uint8_t ssid[32];
  uint8_t password[64];
  uint8_t bssid_set;
  uint8_t bssid[6];
  uint8_t channel;
} wifi_sta_config_t;
typedef struct {
  uint8_t ssid[32];
  uint8_t password[64];
} wifi_ap_config_t;
typedef union {
  wifi_ap_config_t ap;
  wifi_sta_config_t sta;
} wifi_config_t;

#ifdef __cplusplus
extern "C" {
#endif
esp_netif_t* esp_netif_create_default_wifi_sta(void);  // esp_wifi_default.h
esp_err_t esp_wifi_init(const wifi_init_config_t* config);
esp_err_t esp_wifi_set_mode(wifi_mode_t mode);
esp_err_t esp_wifi_set_config(wifi_interface_t interface, wifi_config_t* conf);
esp_err_t esp_wifi_start(void);
esp_err_t esp_wifi_connect(void);
#ifdef __cplusplus
}
#endif
