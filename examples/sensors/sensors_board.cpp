// Sensors on the boards: the deterministic model (sensors_common.cpp) answers every reading;
// uptime comes from SysTick through the clock the application passes.
#include "sensors.h"

namespace sensors {

namespace {
constexpr const char* kDescriptions[kCount] = {
    "Die temperature in degrees Celsius (simulated model on this board)",
    "CPU load, as the 1-minute average a Linux host reports (simulated model on this board)",
    "Seconds since the board started (SysTick)",
    "Memory in use, percent (simulated model on this board)",
};
}  // namespace

const char* description(Id id) { return kDescriptions[static_cast<int>(id)]; }

Reading read(Id id, uint64_t now_ms) { return simulate(id, now_ms); }

void force_simulation(bool) {}

}  // namespace sensors
