// emcp-sensors on an ESP32: the emulated boards' FreeRTOS firmware (examples/sensors/main_rtos.cpp
// with main_board.cpp's firmware, built here without their main()): the task that owns the
// server, serving MCP on UART0, and a sensor task posting its samples to the server's inbox.
// ESP-IDF's scheduler already runs when app_main() is called; app_main() starts those tasks and
// returns (ESP-IDF then deletes its own task).
void sensors_rtos_start();  // examples/sensors/main_rtos.cpp

extern "C" void app_main() { sensors_rtos_start(); }
