// The sdkconfig.h values the ESP32 files read (FreeRTOS.h includes it), as
// boards/esp32/examples/sensors_net's sdkconfig.defaults sets them (compile-only, see
// driver/uart.h). A real build generates this file from menuconfig.
#pragma once
#ifndef CONFIG_IDF_TARGET
#define CONFIG_IDF_TARGET "esp32"
#endif
// FreeRTOS's tick (ESP-IDF's default 100; sensors_net's sdkconfig.defaults sets 1000).
#define CONFIG_FREERTOS_HZ 1000
// lwIP (ESP-IDF component lwip): core locking, required by emcp (boards/esp32/README.md).
#define CONFIG_LWIP_TCPIP_CORE_LOCKING 1
#define CONFIG_LWIP_CHECK_THREAD_SAFETY 1
#define CONFIG_LWIP_IPV4 1
#define CONFIG_LWIP_MAX_SOCKETS 10
#define CONFIG_LWIP_MAX_ACTIVE_TCP 16
#define CONFIG_LWIP_MAX_LISTENING_TCP 16
#define CONFIG_LWIP_MAX_UDP_PCBS 16
#define CONFIG_LWIP_MAX_RAW_PCBS 16
#define CONFIG_LWIP_TCP_MSS 1440
#define CONFIG_LWIP_TCP_SND_BUF_DEFAULT 5760
#define CONFIG_LWIP_TCP_WND_DEFAULT 5760
#define CONFIG_LWIP_TCPIP_RECVMBOX_SIZE 32
// The example's Wi-Fi credentials (main/Kconfig.projbuild).
#define CONFIG_EMCP_WIFI_SSID "emcp"
#define CONFIG_EMCP_WIFI_PASSWORD "password"
