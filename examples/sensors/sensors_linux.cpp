// Linux readings: thermal zones, load average, uptime and memory from /sys and /proc. Where the
// host has no such source (a container without thermal zones, say), the model answers and the
// reading says so (simulated: true). Uses stdio: this file is part of the Linux example only.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensors.h"

namespace sensors {

namespace {
bool g_force = false;

// Reads the first line of a file into buf; false when it does not exist.
bool read_line(const char* path, char* buf, size_t cap) {
  FILE* f = fopen(path, "r");
  if (!f) return false;
  const bool ok = fgets(buf, static_cast<int>(cap), f) != nullptr;
  fclose(f);
  return ok;
}

bool temperature(double* out) {
  char buf[64];
  for (int zone = 0; zone < 16; ++zone) {
    char path[64];
    snprintf(path, sizeof path, "/sys/class/thermal/thermal_zone%d/temp", zone);
    if (!read_line(path, buf, sizeof buf)) continue;
    const long milli = strtol(buf, nullptr, 10);
    if (milli <= 0) continue;
    *out = static_cast<double>(milli) / 1000.0;
    return true;
  }
  return false;
}

bool meminfo(double* used_percent) {
  FILE* f = fopen("/proc/meminfo", "r");
  if (!f) return false;
  char line[128];
  double total = 0, available = 0;
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "MemTotal:", 9) == 0) total = strtod(line + 9, nullptr);
    if (strncmp(line, "MemAvailable:", 13) == 0) available = strtod(line + 13, nullptr);
  }
  fclose(f);
  if (total <= 0) return false;
  *used_percent = 100.0 * (total - available) / total;
  return true;
}
}  // namespace

const char* description(Id id) {
  switch (id) {
    case Id::kTemperature: return "CPU/die temperature in degrees Celsius (Linux thermal zone)";
    case Id::kLoad: return "1-minute load average (/proc/loadavg)";
    case Id::kUptime: return "Seconds since boot (/proc/uptime)";
    case Id::kMemory: return "Memory in use, percent of total (/proc/meminfo)";
  }
  return "";
}

void force_simulation(bool on) { g_force = on; }

Reading read(Id id, uint64_t now_ms) {
  if (g_force) return simulate(id, now_ms);
  Reading r;
  char buf[128];
  switch (id) {
    case Id::kTemperature: r.ok = temperature(&r.value); break;
    case Id::kLoad:
      r.ok = read_line("/proc/loadavg", buf, sizeof buf);
      if (r.ok) r.value = strtod(buf, nullptr);
      break;
    case Id::kUptime:
      r.ok = read_line("/proc/uptime", buf, sizeof buf);
      if (r.ok) r.value = static_cast<double>(static_cast<long>(strtod(buf, nullptr)));
      break;
    case Id::kMemory: r.ok = meminfo(&r.value); break;
  }
  return r.ok ? r : simulate(id, now_ms);
}

}  // namespace sensors
