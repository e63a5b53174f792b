// Linux readings: thermal zones, load average, uptime and memory from /sys and /proc. Where the
// host has no such source (a container without thermal zones, say), the model answers and the
// reading says so (simulated: true). Plain open/read system calls and our own number parsing:
// nothing here allocates (stdio's fopen would), so all of emcp-sensors passes the zero-heap check.
#include <fcntl.h>
#include <unistd.h>

#include "sensors.h"

namespace sensors {

namespace {
bool g_force = false;

// Reads up to cap-1 bytes of a file into buf (NUL-terminated); false when it does not exist.
bool read_file(const char* path, char* buf, size_t cap) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t n = 0;
  while (n + 1 < cap) {
    const ssize_t k = ::read(fd, buf + n, cap - 1 - n);
    if (k <= 0) break;
    n += static_cast<size_t>(k);
  }
  ::close(fd);
  buf[n] = '\0';
  return n != 0;
}

// Parses a decimal number (digits, optional fraction) at *p, advancing *p. Enough for /proc.
double parse_number(const char** p) {
  const char* s = *p;
  while (*s == ' ' || *s == '\t') ++s;
  double v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
  if (*s == '.') {
    double scale = 0.1;
    for (++s; *s >= '0' && *s <= '9'; ++s, scale /= 10) v += (*s - '0') * scale;
  }
  *p = s;
  return v;
}

bool temperature(double* out) {
  char buf[32];
  char path[] = "/sys/class/thermal/thermal_zone0/temp";
  for (char zone = '0'; zone <= '9'; ++zone) {
    path[31] = zone;
    if (!read_file(path, buf, sizeof buf)) continue;
    const char* p = buf;
    const double milli = parse_number(&p);
    if (milli <= 0) continue;
    *out = milli / 1000.0;
    return true;
  }
  return false;
}

// The value of "Key:   1234 kB" in /proc/meminfo text.
double meminfo_value(const char* text, const char* key) {
  const size_t len = __builtin_strlen(key);
  for (const char* line = text; *line;) {
    if (__builtin_strncmp(line, key, len) == 0) {
      const char* p = line + len;
      return parse_number(&p);
    }
    while (*line && *line != '\n') ++line;
    if (*line == '\n') ++line;
  }
  return 0;
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
  char buf[2048];
  const char* p = buf;
  switch (id) {
    case Id::kTemperature:
      r.ok = temperature(&r.value);
      break;
    case Id::kLoad:
      r.ok = read_file("/proc/loadavg", buf, sizeof buf);
      if (r.ok) r.value = parse_number(&p);
      break;
    case Id::kUptime:
      r.ok = read_file("/proc/uptime", buf, sizeof buf);
      if (r.ok) r.value = static_cast<double>(static_cast<long>(parse_number(&p)));
      break;
    case Id::kMemory:
      r.ok = read_file("/proc/meminfo", buf, sizeof buf);
      if (r.ok) {
        const double total = meminfo_value(buf, "MemTotal:");
        const double available = meminfo_value(buf, "MemAvailable:");
        r.ok = total > 0;
        if (r.ok) r.value = 100.0 * (total - available) / total;
      }
      break;
  }
  return r.ok ? r : simulate(id, now_ms);
}

}  // namespace sensors
