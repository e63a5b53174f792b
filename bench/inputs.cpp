#include "inputs.h"

#include <stdint.h>
#include <stdio.h>

namespace bench {

namespace {

// A fixed linear congruential generator: the same sequence everywhere.
class Lcg {
 public:
  explicit Lcg(uint32_t seed) : s_(seed) {}
  uint32_t next() {
    s_ = s_ * 1664525u + 1013904223u;
    return s_ >> 8;
  }
  uint32_t below(uint32_t n) { return next() % n; }

 private:
  uint32_t s_;
};

// Sentences for descriptions, already JSON-escaped (they are pasted between quotes as is).
// Some carry escapes (\n, \", \\, \t, \uXXXX including a surrogate pair) and raw UTF-8
// (2-, 3- and 4-byte sequences), as tool descriptions written by people do.
const char* const kSentences[] = {
    "Reads the current value from the sensor and returns it with a timestamp.",
    "Values are reported in SI units (°C, kPa, µs) unless `unit` says otherwise.",
    "Returns an error if the device does not answer within 100 ms.",
    R"(Pass \"force\": true to override the safety interlock; use with care.)",
    R"(Usage:\n  1. configure the pin\n  2. call this tool\nSee the datasheet → section 4.2.)",
    "Safe to call repeatedly; it has no side effects.",
    "The naïve default suits most boards; tune it for long cables.",
    "Status icons: ✅ ok, ⚠️ warning, 🔥 overheated.",
    R"(Logs are written to C:\\data\\log.txt on the host bridge.)",
    R"(Accepts caf\u00e9-style names; emoji such as \ud83d\ude80 are kept.)",
    "The result lists every address that acknowledged, in ascending order.",
    "Writes are buffered and flushed at the end of the call.",
    R"(Columns are separated by \t and rows by \n in the text output.)",
    "Only one call may run at a time; concurrent calls wait for the bus.",
    "Ranges are inclusive; out-of-range values are rejected, not clamped.",
    "Ångström-level precision is not guaranteed — expect ±0.5 %.",
};
constexpr uint32_t kSentenceCount = sizeof(kSentences) / sizeof(kSentences[0]);

const char* const kVerbs[] = {"read", "write", "set", "get", "scan", "reset", "measure", "toggle",
                              "configure", "calibrate", "list", "erase"};
const char* const kNouns[] = {"temperature", "gpio", "pwm_duty", "i2c_bus", "adc_channel", "led",
                              "relay", "humidity", "flash_page", "uart_baud", "motor_speed",
                              "pressure", "rtc_time", "spi_device", "battery", "log"};
constexpr uint32_t kVerbCount = sizeof(kVerbs) / sizeof(kVerbs[0]);
constexpr uint32_t kNounCount = sizeof(kNouns) / sizeof(kNouns[0]);

// Property schemas (name, JSON text of the schema).
struct Prop {
  const char* name;
  const char* schema;
};
const Prop kProps[] = {
    {"pin", R"({"type":"integer","minimum":0,"maximum":47,"description":"GPIO pin number on the header."})"},
    {"channel", R"({"type":"integer","minimum":0,"maximum":15,"default":0})"},
    {"duration_ms", R"({"type":"integer","minimum":1,"maximum":60000,"description":"How long to hold, in milliseconds."})"},
    {"level", R"({"type":"boolean","description":"true drives the line high."})"},
    {"mode", R"({"type":"string","enum":["input","output","input_pullup","input_pulldown"],"default":"input"})"},
    {"unit", R"({"type":"string","enum":["celsius","fahrenheit","kelvin"],"description":"Unit of the reported value (°C, °F or K)."})"},
    {"threshold", R"({"type":"number","minimum":-40.5,"maximum":125.0,"description":"Alarm threshold."})"},
    {"label", R"({"type":"string","maxLength":32,"description":"Free text shown on the display, e.g. \"Fan rear\"."})"},
    {"address", R"({"type":"integer","minimum":8,"maximum":119,"description":"7-bit I²C address."})"},
    {"samples", R"({"type":"integer","minimum":1,"maximum":1024,"default":16})"},
    {"tags", R"({"type":"array","items":{"type":"string"},"maxItems":8,"uniqueItems":true})"},
    {"rate_hz", R"({"type":"number","exclusiveMinimum":0,"maximum":1e6,"default":2.5e3})"},
    {"dry_run", R"({"type":"boolean","default":false})"},
    {"offset", R"({"type":"integer","minimum":-32768,"maximum":32767})"},
};
constexpr uint32_t kPropCount = sizeof(kProps) / sizeof(kProps[0]);

const char* bool_text(bool b) { return b ? "true" : "false"; }

void append_title(std::string* out, const char* verb, const char* noun) {
  // "Read temperature", "Set pwm duty": first letter upper case, underscores as spaces.
  std::string t = std::string(verb) + " " + noun;
  t[0] = static_cast<char>(t[0] - 'a' + 'A');
  for (char& c : t)
    if (c == '_') c = ' ';
  *out += t;
}

}  // namespace

std::string make_tools_call() {
  return R"({"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"set_pwm_duty",)"
         R"("arguments":{"channel":3,"duty":0.625,"frequency_hz":20000,"invert":false,)"
         R"("label":"fan rear"},"_meta":{"progressToken":"call-17"}}})";
}

std::string make_tools_list() {
  Lcg rng(20250101u);
  std::string s;
  s.reserve(24 * 1024);
  s += R"({"jsonrpc":"2.0","id":2,"result":{"tools":[)";
  const uint32_t kTools = 30;
  for (uint32_t t = 0; t < kTools; ++t) {
    const char* verb = kVerbs[(t * 5u + rng.below(3)) % kVerbCount];
    const char* noun = kNouns[t % kNounCount];
    if (t != 0) s += ',';
    s += R"({"name":")";
    s += verb;
    s += '_';
    s += noun;
    if (t >= kNounCount) {  // keep names unique
      char sfx[16];
      snprintf(sfx, sizeof sfx, "_%u", t / kNounCount + 1);
      s += sfx;
    }
    s += R"(","title":")";
    append_title(&s, verb, noun);
    s += R"(","description":")";
    const uint32_t sentences = 1 + rng.below(3);
    for (uint32_t i = 0; i < sentences; ++i) {
      if (i != 0) s += ' ';
      s += kSentences[(t * 3u + i * 7u + rng.below(2)) % kSentenceCount];
    }
    s += R"(","inputSchema":{"type":"object","properties":{)";
    const uint32_t props = 2 + rng.below(3);
    const uint32_t first = rng.below(kPropCount);
    for (uint32_t i = 0; i < props; ++i) {
      const Prop& p = kProps[(first + i * 3u) % kPropCount];
      if (i != 0) s += ',';
      s += '"';
      s += p.name;
      s += "\":";
      s += p.schema;
    }
    s += R"(},"required":[)";
    const uint32_t required = 1 + rng.below(props);
    for (uint32_t i = 0; i < required; ++i) {
      if (i != 0) s += ',';
      s += '"';
      s += kProps[(first + i * 3u) % kPropCount].name;
      s += '"';
    }
    s += R"(],"additionalProperties":false},"annotations":{"title":")";
    append_title(&s, verb, noun);
    const bool read_only = verb[0] == 'r' || verb[0] == 'g' || verb[0] == 'l' || verb[0] == 'm';
    s += R"(","readOnlyHint":)";
    s += bool_text(read_only);
    s += R"(,"destructiveHint":)";
    s += bool_text(!read_only && rng.below(4) == 0);
    s += R"(,"idempotentHint":)";
    s += bool_text(read_only || rng.below(2) == 0);
    s += R"(,"openWorldHint":false}})";
  }
  s += R"(],"nextCursor":"eyJwYWdlIjoyfQ=="}})";
  return s;
}

}  // namespace bench
