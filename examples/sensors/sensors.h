// The sensor interface of the sensors example: what the MCP tools and resources read. Each
// platform implements read() - Linux from /sys and /proc (sensors_linux.cpp), boards and
// `emcp-sensors --simulate` from a deterministic model (sensors_sim.cpp).
#ifndef EMCP_EXAMPLES_SENSORS_SENSORS_H
#define EMCP_EXAMPLES_SENSORS_SENSORS_H

#include <stdint.h>

#include "emcp/util/span.h"

namespace sensors {

enum class Id : uint8_t { kTemperature, kLoad, kUptime, kMemory };
constexpr int kCount = 4;

struct Reading {
  double value = 0;
  bool simulated = false;  ///< true when the platform has no such sensor and a model answered
  bool ok = false;
};

/// "temperature", "load", "uptime", "memory".
const char* name(Id id);
/// "°C", "", "s", "%".
const char* unit(Id id);
/// One line saying what the sensor measures and where the value comes from.
const char* description(Id id);
/// Digits after the point worth showing.
int decimals(Id id);
bool parse(emcp::StrView s, Id* out);

/// Reads a sensor now (`now_ms`: the platform's monotonic clock).
Reading read(Id id, uint64_t now_ms);

/// The deterministic model: the same readings for the same time, on every platform.
Reading simulate(Id id, uint64_t now_ms);

/// Forces the model on platforms that have real sensors (for tests and demos).
void force_simulation(bool on);

}  // namespace sensors

#endif
