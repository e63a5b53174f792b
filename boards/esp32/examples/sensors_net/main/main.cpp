// emcp-sensors-net on an ESP32: joins the Wi-Fi network set in menuconfig (emcp example: Wi-Fi)
// as a station with ESP-IDF's own APIs, as ESP-IDF's station example does, then starts the
// emulated boards' FreeRTOS network firmware (examples/sensors/main_rtos.cpp with
// main_board_net.cpp's firmware, built here without their main()): the task that owns the
// server, MCP on UART0 at once, over HTTP on port 80 once DHCP gives an address (the banner
// says so; device_stats' "network" object and the board's address appear in the Host allow
// list once bound), and a sensor task posting its samples to the server's inbox. The station
// reconnects whenever it loses the network.
//
// ESP-IDF allocates here, once, from its own heap (outside emcp, which allocates nothing): NVS,
// the default event loop, the station's esp_netif, the Wi-Fi driver's buffers; lwIP's pcbs and
// pbufs come from the same heap while it runs (MEM_LIBC_MALLOC, MEMP_MEM_MALLOC).
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "esp_err.h"
#include "esp_event.h"
#include "esp_netif.h"
#include "esp_wifi.h"
#include "nvs_flash.h"
#include "sdkconfig.h"

void sensors_rtos_start();  // examples/sensors/main_rtos.cpp

namespace {

// The station (re)connects when it starts and whenever it loses the network; esp_netif's own
// handlers then run DHCP, and emcp::board::net_poll() reports the address to the firmware.
void on_wifi(void*, esp_event_base_t base, int32_t id, void*) {
  if (base == WIFI_EVENT && (id == WIFI_EVENT_STA_START || id == WIFI_EVENT_STA_DISCONNECTED)) esp_wifi_connect();
}

// A menuconfig string into one of wifi_config_t's byte arrays (zeroed: terminated when shorter;
// an SSID of exactly 32 bytes needs no terminator).
template <size_t N, size_t M>
void copy_setting(uint8_t (&to)[N], const char (&from)[M]) {
  static_assert(M - 1 <= N, "the Wi-Fi setting is longer than ESP-IDF's field (menuconfig: emcp example: Wi-Fi)");
  memcpy(to, from, M - 1);
}

void start_wifi() {
  esp_err_t err = nvs_flash_init();  // the Wi-Fi driver keeps its calibration and settings in NVS
  if (err == ESP_ERR_NVS_NO_FREE_PAGES || err == ESP_ERR_NVS_NEW_VERSION_FOUND) {
    ESP_ERROR_CHECK(nvs_flash_erase());
    err = nvs_flash_init();
  }
  ESP_ERROR_CHECK(err);
  ESP_ERROR_CHECK(esp_netif_init());  // starts lwIP's tcpip thread
  ESP_ERROR_CHECK(esp_event_loop_create_default());
  (void)esp_netif_create_default_wifi_sta();  // the default netif emcp::board::net_state() reads
  wifi_init_config_t init = WIFI_INIT_CONFIG_DEFAULT();
  ESP_ERROR_CHECK(esp_wifi_init(&init));
  ESP_ERROR_CHECK(esp_event_handler_instance_register(WIFI_EVENT, ESP_EVENT_ANY_ID, &on_wifi, nullptr, nullptr));
  wifi_config_t station = {};
  copy_setting(station.sta.ssid, CONFIG_EMCP_WIFI_SSID);
  copy_setting(station.sta.password, CONFIG_EMCP_WIFI_PASSWORD);
  ESP_ERROR_CHECK(esp_wifi_set_mode(WIFI_MODE_STA));
  ESP_ERROR_CHECK(esp_wifi_set_config(WIFI_IF_STA, &station));
  ESP_ERROR_CHECK(esp_wifi_start());
}
}  // namespace

extern "C" void app_main() {
  // The network first: emcp::board::net_init() (in the firmware) finds the interface it brought up.
  start_wifi();
  sensors_rtos_start();
}
