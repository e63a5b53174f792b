// Sensor names and the deterministic model, shared by every platform.
#include "sensors.h"

namespace sensors {

namespace {
constexpr const char* kNames[kCount] = {"temperature", "load", "uptime", "memory"};
constexpr const char* kUnits[kCount] = {("\xC2\xB0" "C"), "", "s", "%"};
constexpr int kDecimals[kCount] = {1, 2, 0, 1};

// A small deterministic pseudo-random value in [0, 1) for (sensor, step): a hash, not a
// generator with state, so readings depend only on time.
double noise(uint32_t a, uint32_t b) {
  uint32_t x = a * 0x9E3779B1u ^ (b + 0x7F4A7C15u) * 0x85EBCA77u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 12;
  x *= 0x297A2D39u;
  x ^= x >> 15;
  return static_cast<double>(x >> 8) / 16777216.0;
}

// A triangle wave of the given period (ms) between 0 and 1.
double triangle(uint64_t t, uint64_t period) {
  const uint64_t phase = t % period;
  const double x = static_cast<double>(phase) / static_cast<double>(period);
  return x < 0.5 ? 2 * x : 2 * (1 - x);
}
}  // namespace

const char* name(Id id) { return kNames[static_cast<int>(id)]; }
const char* unit(Id id) { return kUnits[static_cast<int>(id)]; }
int decimals(Id id) { return kDecimals[static_cast<int>(id)]; }

bool parse(emcp::StrView s, Id* out) {
  for (int i = 0; i < kCount; ++i) {
    if (s == emcp::StrView(kNames[i])) {
      *out = static_cast<Id>(i);
      return true;
    }
  }
  return false;
}

Reading simulate(Id id, uint64_t now_ms) {
  Reading r;
  r.ok = true;
  r.simulated = true;
  const uint32_t step = static_cast<uint32_t>(now_ms / 1000);  // new values once a second
  switch (id) {
    case Id::kTemperature:  // die temperature: 38-46 °C over 2 minutes, +-0.2 °C noise
      r.value = 38.0 + 8.0 * triangle(now_ms, 120000) + 0.4 * (noise(1, step) - 0.5);
      break;
    case Id::kLoad:  // CPU load: 0.1-1.5 over 5 minutes
      r.value = 0.1 + 1.4 * triangle(now_ms, 300000) + 0.05 * noise(2, step);
      break;
    case Id::kUptime:
      r.value = static_cast<double>(now_ms / 1000);
      break;
    case Id::kMemory:  // memory in use: 30-60 %
      r.value = 30.0 + 30.0 * triangle(now_ms, 600000) + noise(4, step);
      break;
  }
  return r;
}

}  // namespace sensors
