// The sensors example: a device's sensors, an LED and a relay, its log, exposed over MCP.
#include "app.h"

#include <string.h>

#include "emcp/json/number.h"
#if EMCP_SENSORS_INBOX_STATS
#include "emcp/mcp/inbox.h"
#endif
#if EMCP_SENSORS_TASK_STATS
#include "board/freertos.h"
#endif
#include "media.h"
#include "sensors.h"

// EMCP_SENSORS_CLIENT_TOOLS (default 1): the four tools that ask the client or send binary
// content (calibrate_temperature: elicitation, summarize_readings: sampling, list_roots: roots,
// snapshot: PNG and WAV) and the roots hook. 0 leaves them out, which measures what the rest of
// the example costs on a board (the image emcp-sensors-lean in docs/footprint.md).
// EMCP_SENSORS_NETWORK (default 0): device_stats' output schema has the "network" object a
// network image fills in (examples/sensors/main_board_net.cpp).
#ifndef EMCP_SENSORS_NETWORK
#define EMCP_SENSORS_NETWORK 0
#endif
// EMCP_SENSORS_HTTP_STATS (default: on Linux and in network images): the "http" object of
// device_stats (the engine's counters), which the program fills in while it serves HTTP.
#ifndef EMCP_SENSORS_HTTP_STATS
#if defined(__linux__) || (EMCP_SENSORS_NETWORK && EMCP_SENSORS_HTTP)
#define EMCP_SENSORS_HTTP_STATS 1
#else
#define EMCP_SENSORS_HTTP_STATS 0
#endif
#endif
#ifndef EMCP_SENSORS_CLIENT_TOOLS
#define EMCP_SENSORS_CLIENT_TOOLS 1
#endif
// EMCP_SENSORS_INBOX_STATS (default 0; the FreeRTOS images, main_rtos.cpp: 1): the "inbox"
// object of device_stats, the server's inbox's counters (emcp/mcp/inbox.h's InboxStats), written
// when the server has an inbox.
#ifndef EMCP_SENSORS_INBOX_STATS
#define EMCP_SENSORS_INBOX_STATS 0
#endif
// EMCP_SENSORS_TASK_STATS (default 0; the FreeRTOS images: 1): the "tasks" array of
// device_stats, each watched task's stack (board/freertos.h's task_stacks(): the owner, the
// sensor task, lwIP's tcpip_thread and the NIC's receive task where the image has them).
#ifndef EMCP_SENSORS_TASK_STATS
#define EMCP_SENSORS_TASK_STATS 0
#endif
// EMCP_SENSORS_INPUT_SLOTS (default 2): calls asking an older client at once (InputBridge).
// Built for MCP 2026-07-28 only (EMCP_LEGACY_ERA=0, emcp/opt.h: the image emcp-sensors-modern),
// the example has no older clients: no InputBridge and no roots hook (clients of that revision
// answer input-required results and announce nothing).
#ifndef EMCP_SENSORS_INPUT_SLOTS
#define EMCP_SENSORS_INPUT_SLOTS 2
#endif

namespace app {

constexpr emcp::mcp::ServerInfo kServerInfo = [] {  // constant-initialized: no start-up order
  emcp::mcp::ServerInfo i;
  i.name = "emcp-sensors";
  i.version = "0.1.0";
  i.title = "emcp sensors demo";
  i.description = "A device's sensors, LED, relay and log over MCP, served by emcp (zero heap).";
  i.instructions =
      "This server is a small device. Read its sensors with read_sensor or the sensor:// "
      "resources, switch its LED and relay, sample a sensor over time, and read its log.";
  return i;
}();

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;

namespace {

// ---- Device state -------------------------------------------------------------------------------

Server* g_server = nullptr;
uint64_t (*g_now)() = nullptr;
bool g_led = false;
bool g_relay = false;

constexpr int kHistory = 32;  // readings kept per sensor, one per second
double g_history[sensors::kCount][kHistory];
uint32_t g_history_count = 0;
uint64_t g_next_history = 0;
char g_last_sent[sensors::kCount][24];  // the value text last announced (resources/updated)

// Formats a reading like the resources show it ("41.3").
size_t format_value(sensors::Id id, double v, char* out) {
  return format_text(out, 24, {TextPiece(v, static_cast<int8_t>(sensors::decimals(id)))});
}

double g_offset = 0;  // temperature calibration (calibrate_temperature)

sensors::Reading now_reading(sensors::Id id) {
  sensors::Reading r = sensors::read(id, g_now());
  if (id == sensors::Id::kTemperature) r.value += g_offset;
  return r;
}

constexpr int kLogLines = 8;
constexpr int kLogWidth = 96;
char g_log[kLogLines][kLogWidth];
uint8_t g_log_len[kLogLines];
uint32_t g_log_count = 0;  // lines ever written

// Calls fn(line) for each log line, oldest first.
template <typename Fn>
void for_each_log_line(Fn fn) {
  const uint32_t n = g_log_count < kLogLines ? g_log_count : kLogLines;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = (g_log_count - n + i) % kLogLines;
    fn(StrView(g_log[k], g_log_len[k]));
  }
}

// " °C", or "" for unitless sensors.
StrView unit_suffix(sensors::Id id) {
  switch (id) {
    case sensors::Id::kTemperature: return " \xC2\xB0" "C";
    case sensors::Id::kUptime: return " s";
    case sensors::Id::kMemory: return " %";
    default: return "";
  }
}

// ---- Tools --------------------------------------------------------------------------------------

constexpr const char* kSensorNames[] = {"temperature", "load", "uptime", "memory"};

struct SensorOut {
  sensors::Id id;
  sensors::Reading r;
};

void write_reading(emcp::json::Writer& w, const void* ctx) {
  const auto* s = static_cast<const SensorOut*>(ctx);
  w.begin_object();
  w.member_str("sensor", sensors::name(s->id));
  w.member_double("value", s->r.value);
  w.member_str("unit", sensors::unit(s->id));
  w.member_bool("simulated", s->r.simulated);
  w.end_object();
}

void read_sensor(ToolCall& call) {
  sensors::Id id;
  if (!sensors::parse(call.str("sensor"), &id)) return call.invalid_params("unknown sensor");
  const SensorOut out{id, now_reading(id)};
  call.text({sensors::name(id), ": ", TextPiece(out.r.value, static_cast<int8_t>(sensors::decimals(id))),
             unit_suffix(id), out.r.simulated ? " (simulated)" : ""});
  call.structured(&write_reading, &out);
}

void write_all(emcp::json::Writer& w, const void*) {
  w.begin_object();
  for (int i = 0; i < sensors::kCount; ++i) {
    const auto id = static_cast<sensors::Id>(i);
    w.member_double(sensors::name(id), now_reading(id).value);
  }
  w.end_object();
}

void read_all(ToolCall& call) { call.structured(&write_all, nullptr); }

void set_led(ToolCall& call) {
  g_led = call.boolean("on");
  log(LogLevel::kInfo, g_led ? "LED switched on" : "LED switched off");
  g_server->resource_updated("device://led");
  call.text({"LED is now ", g_led ? "on" : "off"});
}

// Answers first, then notifies: notifications sent while the answer is open wait in the
// server's queue (EMCP_NOTIFY_QUEUE) and follow it (set_led notifies before it answers).
void set_relay(ToolCall& call) {
  g_relay = call.boolean("on");
  call.text({"Relay is now ", g_relay ? "closed" : "open"});
  log(LogLevel::kNotice, g_relay ? "relay closed (load powered)" : "relay opened (load off)");
  g_server->resource_updated("device://relay");
}

// sample_sensor: a long-running tool. The handler defers; tick() takes the samples, reports
// progress, honours cancellation and finally answers.
struct Job {
  bool active = false;
  Pending pending;
  sensors::Id id = sensors::Id::kTemperature;
  int64_t samples = 0;
  int64_t taken = 0;
  uint32_t interval = 0;
  uint64_t next_at = 0;
  double min = 0, max = 0, sum = 0;
};
Job g_jobs[EMCP_MAX_DEFERRED];

void sample_sensor(ToolCall& call) {
  sensors::Id id;
  if (!sensors::parse(call.str("sensor"), &id)) return call.invalid_params("unknown sensor");
  Job* job = nullptr;
  for (Job& j : g_jobs)
    if (!j.active && job == nullptr) job = &j;
  if (job == nullptr) return call.fail("All sampling slots are busy; try again when a run ends.");
  const Pending p = call.defer();  // copies what it needs of the request; args go away after
  if (!p.valid()) return;          // answered with an error already
  *job = Job{};
  job->active = true;
  job->pending = p;
  job->id = id;
  job->samples = call.integer("samples");
  job->interval = static_cast<uint32_t>(call.integer("interval_ms"));
  job->next_at = g_now();
  log(LogLevel::kInfo, "sampling started");
}

void finish_job(ToolCall& call, void* ctx) {
  const Job& j = *static_cast<const Job*>(ctx);
  const int8_t d = static_cast<int8_t>(sensors::decimals(j.id));
  call.text({"Sampled ", sensors::name(j.id), " ", static_cast<long long>(j.taken), " times: min ",
             TextPiece(j.min, d), ", average ", TextPiece(j.sum / static_cast<double>(j.taken), d),
             ", max ", TextPiece(j.max, d), unit_suffix(j.id)});
}

void run_jobs() {
  const uint64_t now = g_now();
  for (Job& j : g_jobs) {
    if (!j.active) continue;
    if (g_server->cancelled(j.pending)) {
      (void)g_server->complete(j.pending, nullptr, nullptr);  // frees the slot, sends nothing
      j.active = false;
      log(LogLevel::kInfo, "sampling cancelled by the client");
      continue;
    }
    if (j.taken >= j.samples) {  // all samples taken; the answer waited for the channel
      if (g_server->complete(j.pending, &finish_job, &j) == Status::kWouldBlock) continue;
      j.active = false;
      log(LogLevel::kInfo, "sampling finished");
      continue;
    }
    if (now < j.next_at) continue;
    const double v = now_reading(j.id).value;
    if (j.taken == 0 || v < j.min) j.min = v;
    if (j.taken == 0 || v > j.max) j.max = v;
    j.sum += v;
    ++j.taken;
    j.next_at = now + j.interval;
    if (j.taken < j.samples) {
      (void)g_server->progress(j.pending, static_cast<double>(j.taken),
                               static_cast<double>(j.samples), "sampling");
      continue;
    }
    if (g_server->complete(j.pending, &finish_job, &j) == Status::kWouldBlock) continue;
    j.active = false;
    log(LogLevel::kInfo, "sampling finished");
  }
}

#if EMCP_SENSORS_CLIENT_TOOLS
// The three tools that ask the client (elicitation, sampling, roots) ask through Inputs and
// return; they run again with the answer. A 2026-07-28 client gets an input-required result and
// retries with the answer; an older one is sent the request (elicitation/create...) while the
// server's InputBridge (init() below) holds the call. The answer is the client's word: checked.

// Older clients are asked through requests while the bridge holds the call. The tools take no
// arguments and ask one question a round: the arena holds the request's name, arguments and
// _meta (progressToken), and the rebuilt request around the answer (8 JSON values).
#if EMCP_LEGACY_ERA
emcp::mcp::StaticInputBridge<EMCP_SENSORS_INPUT_SLOTS, 8 * sizeof(emcp::json::Node) + 160> g_bridge;
#endif

// Why a question could not go out: -32021 for a 2026-07-28 request that did not declare the
// capability, else a tool error with the reason.
void cannot_ask(ToolCall& call, bool declared, const char* capability) {
  if (!declared && call.input().missing_capability(capability)) return;
  call.fail({"Could not ask the client: ", call.input().why_not(), "."});
}

// calibrate_temperature: asks the user (elicitation) for a reference reading.
constexpr Param kCalibrationForm[] = {
    Param::number("reference_celsius", "Temperature of a trusted thermometer next to the device")
        .range(-40, 125)
        .required(),
};

void calibrate_temperature(ToolCall& call) {
  const emcp::json::Value answer = call.input().answer("reference");
  if (!answer.exists()) {
    if (!call.input().elicit("reference", "Enter the temperature a trusted thermometer shows next to the device.",
                             kCalibrationForm))
      cannot_ask(call, call.peer().caps.elicitation_form, "elicitation");
    return;
  }
  const StrView action = answer["action"].as_string().value_or("");
  if (!(action == "accept"))
    return call.text({"Calibration not done: the user chose \"", action, "\"."});
  const emcp::Result<double> ref = answer["content"]["reference_celsius"].as_double();
  if (!ref.ok() || ref.value() < -40 || ref.value() > 125)
    return call.fail("Calibration not done: the answer holds no reference_celsius between -40 and 125.");
  const double measured = sensors::read(sensors::Id::kTemperature, g_now()).value;  // raw
  g_offset = ref.value() - measured;
  call.text({"Calibrated: reference ", TextPiece(ref.value(), 1), " \xC2\xB0" "C, measured ",
             TextPiece(measured, 1), " \xC2\xB0" "C, offset ", TextPiece(g_offset, 2)});
  log(LogLevel::kNotice, "temperature calibrated");
}

// summarize_readings: asks the client's model (sampling) for a one-paragraph summary.
// The question for the client's model: the readings, as text (format_text: no printf).
size_t describe_device(char* out, size_t cap) {
  size_t n = format_text(out, cap, {"Summarize the state of this device in one short paragraph. Readings: "});
  for (int i = 0; i < sensors::kCount; ++i) {
    const auto id = static_cast<sensors::Id>(i);
    n += format_text(out + n, cap - n,
                     {sensors::name(id), " ", TextPiece(now_reading(id).value, static_cast<int8_t>(sensors::decimals(id))),
                      unit_suffix(id), "; "});
  }
  return n + format_text(out + n, cap - n, {"LED ", g_led ? "on" : "off", ", relay ", g_relay ? "closed" : "open", "."});
}

void summarize_readings(ToolCall& call) {
  const emcp::json::Value answer = call.input().answer("summary");
  if (!answer.exists()) {
    char question[208];  // the longest readings take about 180 bytes; format_text cuts cleanly
    const size_t n = describe_device(question, sizeof question);
    if (!call.input().sample_text("summary", StrView(question, n), 200, "You are a concise embedded systems assistant."))
      cannot_ask(call, call.peer().caps.sampling, "sampling");
    return;
  }
  call.text({"Summary by ", answer["model"].as_string().value_or("the client's model"), ": ",
             answer["content"]["text"].as_string().value_or("(the model answered without text)")});
}

// list_roots: what the client shares with the server (roots/list).
void list_roots(ToolCall& call) {
  const emcp::json::Value answer = call.input().answer("roots");
  if (!answer.exists()) {
    if (!call.input().list_roots("roots")) cannot_ask(call, call.peer().caps.roots, "roots");
    return;
  }
  const emcp::json::Value roots = answer["roots"];
  if (!roots.is_array()) return call.fail("The client's answer holds no list of roots.");
  ContentWriter& out = call.content();  // one text block, streamed: any number of roots
  out.text_begin();
  out.text_part({"The client shares ", static_cast<long long>(roots.size()), " root(s)"});
  for (emcp::json::Value root : roots.elements()) out.text_part({": ", root["uri"].as_string().value_or("?")});
  out.text_end();
}

#if EMCP_LEGACY_ERA
// The client says its roots changed (clients that declared roots.listChanged): logged; the
// list_roots tool asks for the new list.
void roots_changed(Session&, void*) { log(LogLevel::kInfo, "the client's roots changed"); }
#endif

// snapshot: a PNG chart of the temperature history and a beep, to show binary content.
void snapshot(ToolCall& call) {
  static uint8_t png[media::kMaxPng];
  double values[kHistory];
  const uint32_t n = g_history_count < kHistory ? g_history_count : kHistory;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t k = (g_history_count - n + i) % kHistory;
    values[i] = g_history[static_cast<int>(sensors::Id::kTemperature)][k];
  }
  const size_t png_len = media::chart_png(values, n, png, sizeof png);
  call.text({"Temperature over the last ", static_cast<long long>(n), " seconds:"});
  call.image(png, png_len, "image/png");
  static uint8_t wav[media::kMaxWav];
  const size_t wav_len = media::beep_wav(wav, sizeof wav);
  call.audio(wav, wav_len, "audio/wav");
}
#endif  // EMCP_SENSORS_CLIENT_TOOLS

// get_log: the device log, embedded, with a link to its resource.
void get_log(ToolCall& call);

// echo: answers with its text, to check the link to the device (and to benchmark a round trip).
void echo(ToolCall& call) { call.text(call.str("text")); }

// device_stats: memory and traffic figures of the running server (soak tests watch them).
void (*g_stats_source)(PlatformStats*) = nullptr;

#if EMCP_SENSORS_HTTP_STATS
// The HTTP engine's slots and counters (emcp::transport::HttpStats, in its order after the
// four slot figures; docs/http.md says what each counts).
constexpr Param kHttpStats[] = {
    Param::integer("connections_in_use").required(),
    Param::integer("connections").required(),
    Param::integer("sessions_in_use").required(),
    Param::integer("sessions").required(),
    Param::integer("refused_busy", "New connections refused: no slot could be reclaimed (503)").required(),
    Param::integer("reclaimed_slow", "Slow heads or stalled bodies that gave their slot (408)").required(),
    Param::integer("reclaimed_idle", "Idle keep-alive connections that gave their slot").required(),
    Param::integer("displaced", "Connections of a peer over its share that gave their slot").required(),
    Param::integer("shed_keepalive", "Answers that closed their connection: every slot taken, the session holding another").required(),
    Param::integer("timeout_head").required(),
    Param::integer("timeout_body").required(),
    Param::integer("timeout_idle").required(),
    Param::integer("timeout_send").required(),
    Param::integer("session_refused_rate", "New sessions refused: the peer opened them too fast (429)").required(),
    Param::integer("session_refused_full", "New sessions refused: no session slot could be freed (503)").required(),
    Param::integer("session_evicted").required(),
    Param::integer("session_expired").required(),
};
#endif

#if EMCP_SENSORS_MQTT
// MCP over MQTT (PlatformStats::Mqtt, in its order): the broker connection now, the client
// slots, the MQTT arena's high-water mark, and what docs/mqtt.md counts.
constexpr Param kMqttStats[] = {
    Param::boolean("connected", "Connected to the broker now").required(),
    Param::integer("sessions_in_use").required(),
    Param::integer("sessions").required(),
    Param::integer("arena_high_water").required(),
    Param::integer("arena_size").required(),
    Param::integer("dials", "Connections to the broker attempted").required(),
    Param::integer("connects", "Connections the broker accepted").required(),
    Param::integer("sessions_opened").required(),
    Param::integer("refused", "initialize refused: every client slot taken").required(),
    Param::integer("too_large", "Answers longer than the transmit buffer (replaced by an error) and notifications dropped").required(),
    Param::integer("qos0_fallbacks", "Messages sent at QoS 0: the broker's Receive Maximum was reached").required(),
    Param::integer("stray", "Messages on no topic of a session").required(),
};
#endif

#if EMCP_SENSORS_INBOX_STATS
// The inbox's counters (emcp::mcp::InboxStats, in its order; docs/concurrency.md says what
// each counts): a post refused is one its caller saw refused.
constexpr Param kInboxStats[] = {
    Param::integer("posted").required(),   Param::integer("refused").required(),
    Param::integer("run").required(),      Param::integer("retried").required(),
    Param::integer("in_use").required(),   Param::integer("high_water").required(),
    Param::integer("slots").required(),
};
#endif

#if EMCP_SENSORS_TASK_STATS
// A task's stack (emcp::board::TaskStack), the kernel's high-water mark of it.
constexpr Param kTaskStackFields[] = {
    Param::string("name").required(),
    Param::integer("stack_size", "Bytes").required(),
    Param::integer("stack_high_water", "Most bytes of the stack ever used").required(),
};
constexpr Param kTaskStack = Param::object("", kTaskStackFields);
// device_stats' snapshot of them (static: the owner's stack is tight on the smaller boards).
static_assert(EMCP_FREERTOS_WATCHED_TASKS > 0, "EMCP_SENSORS_TASK_STATS lists the watched tasks: EMCP_FREERTOS_WATCHED_TASKS > 0");
constexpr size_t kMaxTasks = EMCP_FREERTOS_WATCHED_TASKS;
emcp::board::TaskStack g_tasks[kMaxTasks];
#endif

struct StatsNow {
  PlatformStats st;
  uint64_t uptime_ms;
  uint32_t notifications_dropped;  // the server's: 0 means no notification was lost
#if EMCP_SENSORS_INBOX_STATS
  bool has_inbox = false;
  emcp::mcp::InboxStats inbox{};
#endif
#if EMCP_SENSORS_TASK_STATS
  size_t tasks = 0;  // in g_tasks
#endif
};

// Written twice (text and structuredContent): everything is read once, before.
void write_stats(emcp::json::Writer& w, const void* ctx) {
  const StatsNow& now = *static_cast<const StatsNow*>(ctx);
  const PlatformStats& st = now.st;
  w.begin_object();
  w.member_str("platform", st.platform);
  w.member_int("uptime_ms", static_cast<int64_t>(now.uptime_ms));
  w.member_int("messages", static_cast<int64_t>(st.messages));
  w.member_int("arena_high_water", static_cast<int64_t>(st.arena_high_water));
  w.member_int("arena_size", static_cast<int64_t>(st.arena_size));
  w.member_int("stack_high_water", static_cast<int64_t>(st.stack_high_water));
  w.member_int("stack_size", static_cast<int64_t>(st.stack_size));
  w.member_int("input_dropped", static_cast<int64_t>(st.input_dropped));
  w.member_int("input_held", static_cast<int64_t>(st.input_held));
  w.member_int("notifications_dropped", now.notifications_dropped);
  if (st.write_network != nullptr) {
    w.key("network");
    w.begin_object();
    st.write_network(w);
    w.end_object();
  }
#if EMCP_SENSORS_HTTP_STATS
  if (st.http != nullptr) {
    const PlatformStats::Http& h = *st.http;
    const emcp::transport::HttpStats& c = h.stats;
    w.key("http");
    w.begin_object();
    w.member_int("connections_in_use", static_cast<int64_t>(h.connections_in_use));
    w.member_int("connections", static_cast<int64_t>(h.connections));
    w.member_int("sessions_in_use", static_cast<int64_t>(h.sessions_in_use));
    w.member_int("sessions", static_cast<int64_t>(h.sessions));
    const uint32_t counters[] = {c.refused_busy,         c.reclaimed_slow,       c.reclaimed_idle,    c.displaced,
                                 c.shed_keepalive,       c.timeout_head,         c.timeout_body,      c.timeout_idle,
                                 c.timeout_send,         c.session_refused_rate, c.session_refused_full,
                                 c.session_evicted,      c.session_expired};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; ++i)
      w.member_int(kHttpStats[4 + i].name, counters[i]);
    w.end_object();
  }
#endif
#if EMCP_SENSORS_MQTT
  if (st.mqtt != nullptr) {
    const PlatformStats::Mqtt& m = *st.mqtt;
    w.key("mqtt");
    w.begin_object();
    w.member_bool(kMqttStats[0].name, m.connected);
    const uint64_t figures[] = {m.sessions_in_use, m.sessions, m.arena_high_water, m.arena_size,
                                m.dials,           m.connects, m.sessions_opened,  m.refused,
                                m.too_large,       m.qos0_fallbacks, m.stray};
    for (size_t i = 0; i < sizeof figures / sizeof figures[0]; ++i)
      w.member_int(kMqttStats[1 + i].name, static_cast<int64_t>(figures[i]));
    w.end_object();
  }
#endif
#if EMCP_SENSORS_INBOX_STATS
  if (now.has_inbox) {
    const emcp::mcp::InboxStats& in = now.inbox;
    w.key("inbox");
    w.begin_object();
    const uint32_t counters[] = {in.posted, in.refused, in.run, in.retried, in.in_use, in.high_water, in.slots};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; ++i) w.member_int(kInboxStats[i].name, counters[i]);
    w.end_object();
  }
#endif
#if EMCP_SENSORS_TASK_STATS
  w.key("tasks");
  w.begin_array();
  for (size_t i = 0; i < now.tasks; ++i) {
    w.begin_object();
    w.member_str(kTaskStackFields[0].name, g_tasks[i].name);
    w.member_int(kTaskStackFields[1].name, static_cast<int64_t>(g_tasks[i].size));
    w.member_int(kTaskStackFields[2].name, static_cast<int64_t>(g_tasks[i].high_water));
    w.end_object();
  }
  w.end_array();
#endif
  w.end_object();
}

void device_stats(ToolCall& call) {
  StatsNow now{PlatformStats{}, g_now(), g_server->notifications_dropped()};
  if (g_stats_source) g_stats_source(&now.st);
#if EMCP_SENSORS_INBOX_STATS
  now.has_inbox = g_server->inbox() != nullptr;
  if (now.has_inbox) now.inbox = g_server->inbox()->stats();
#endif
#if EMCP_SENSORS_TASK_STATS
  const size_t watched = emcp::board::task_stacks(g_tasks, kMaxTasks);
  now.tasks = watched < kMaxTasks ? watched : kMaxTasks;
#endif
  call.structured(&write_stats, &now);
}

#if EMCP_SENSORS_NETWORK
// What a network image adds (board/serve_net.h): connection and session slots in use and at
// most, the HTTP arena's high-water mark, lwIP's pools (used now, most ever, size, times found
// empty), the frames the NIC and its driver dropped, and lwIP's TCP: SYNs it had no pcb for,
// TIME_WAIT connections reopened, pcbs per state (ports/lwip's emcp/lwip/tcp.h).
constexpr Param kPcbCount = Param::integer("");
constexpr Param kNetworkStats[] = {
    // An image serving HTTP only: its connection and session slots, its arena's high-water mark.
    Param::integer("connections_in_use"),
    Param::integer("connections"),
    Param::integer("sessions_in_use"),
    Param::integer("sessions"),
    Param::integer("http_arena_high_water"),
    Param::integer("accepted").required(),
    Param::integer("refused").required(),
    Param::integer("pbuf_pool_used").required(),
    Param::integer("pbuf_pool_max").required(),
    Param::integer("pbuf_pool_size").required(),
    Param::integer("tcp_pcb_used").required(),
    Param::integer("tcp_pcb_max").required(),
    Param::integer("tcp_pcb_size").required(),
    Param::integer("tcp_seg_max").required(),
    Param::integer("tcp_seg_size").required(),
    Param::integer("heap_used").required(),
    Param::integer("heap_max").required(),
    Param::integer("heap_size").required(),
    Param::integer("pbuf_pool_failures").required(),
    Param::integer("tcp_pcb_failures").required(),
    Param::integer("tcp_seg_failures").required(),
    Param::integer("heap_failures").required(),
    Param::integer("rx_dropped").required(),
    Param::integer("rx_overrun").required(),
    Param::integer("syn_dropped").required(),
    Param::integer("time_wait_reopened").required(),
    Param::array("tcp_states", kPcbCount,
                 "pcbs per state: closed, listen, syn_sent, syn_rcvd, established, fin_wait_1, fin_wait_2, "
                 "close_wait, closing, last_ack, time_wait").required(),
#if EMCP_SENSORS_TLS
    // TLS images only: Mbed TLS's static pool and the handshakes.
    Param::integer("tls_pool_used"),
    Param::integer("tls_pool_max"),
    Param::integer("tls_pool_size"),
    Param::integer("tls_pool_failures"),
    Param::integer("tls_handshake_peak", "Most pool bytes one handshake took beyond what was in use before (one during which no other connection opened or ended)"),
    Param::integer("tls_established_size", "Most pool bytes an established connection keeps"),
    Param::integer("tls_handshakes"),
    Param::integer("tls_resumed"),
    Param::integer("tls_failed"),
    Param::integer("tls_refused_memory"),
#endif
};
#endif

constexpr Param kStatsOutput[] = {
    Param::string("platform").required(),
    Param::integer("uptime_ms").required(),
    Param::integer("messages").required(),
    Param::integer("arena_high_water").required(),
    Param::integer("arena_size").required(),
    Param::integer("stack_high_water").required(),
    Param::integer("stack_size").required(),
    Param::integer("input_dropped").required(),
    Param::integer("input_held").required(),
    Param::integer("notifications_dropped").required(),
#if EMCP_SENSORS_NETWORK
    Param::object("network", kNetworkStats, "The board's network: HTTP's slots, lwIP, the NIC (network images only)"),
#endif
#if EMCP_SENSORS_HTTP_STATS
    Param::object("http", kHttpStats, "The HTTP engine's slots, refusals, reclaims, timeouts and evictions (over HTTP only)"),
#endif
#if EMCP_SENSORS_MQTT
    Param::object("mqtt", kMqttStats, "MCP over MQTT: the broker connection and the client sessions (over MQTT only)"),
#endif
#if EMCP_SENSORS_INBOX_STATS
    Param::object("inbox", kInboxStats, "The server's inbox: what other tasks and interrupts posted to the owner"),
#endif
#if EMCP_SENSORS_TASK_STATS
    Param::array("tasks", kTaskStack, "The RTOS tasks' stacks").required(),
#endif
};

constexpr Param kSensorParam[] = {
    Param::string("sensor", "Which sensor").one_of(kSensorNames).required(),
};
constexpr Param kReadingOutput[] = {
    Param::string("sensor").required(),
    Param::number("value").required(),
    Param::string("unit").required(),
    Param::boolean("simulated", "True when no real sensor exists and a model answered").required(),
};
constexpr Param kSwitchParams[] = {
    Param::boolean("on", "true to switch on (LED) / close (relay), false for off/open").required(),
};
constexpr Param kSampleParams[] = {
    Param::string("sensor", "Which sensor").one_of(kSensorNames).required(),
    Param::integer("samples", "How many readings to take").range(1, 100).with_default(10),
    Param::integer("interval_ms", "Milliseconds between readings").range(10, 10000).with_default(200),
};

// echo's longest text; the bench firmware (bench/target) takes a 4 KiB argument.
#ifndef EMCP_SENSORS_ECHO_MAX
#define EMCP_SENSORS_ECHO_MAX 1000
#endif
constexpr Param kEchoParams[] = {
    Param::string("text", "Any text").length(0, EMCP_SENSORS_ECHO_MAX).required(),
};

// (Declared in app.h.)
}  // namespace
const char* const kScopes[2] = {"sensors:read", "device:control"};
namespace {

constexpr Tool kTools[] = {
    Tool::make("read_sensor", &read_sensor)
        .titled("Read a sensor")
        .describe("Reads one sensor of the device now: temperature (\xC2\xB0" "C), load, uptime (s) or memory (%).")
        .with_params(kSensorParam)
        .with_output(kReadingOutput)
        .read_only(),
    Tool::make("read_all", &read_all)
        .titled("Read all sensors")
        .describe("Reads every sensor at once, as one JSON object.")
        .read_only(),
    Tool::make("set_led", &set_led)
        .titled("Switch the LED")
        .describe("Switches the status LED on or off.")
        .with_params(kSwitchParams)
        .destructive(false)
        .idempotent()
        .scoped("device:control"),
    Tool::make("set_relay", &set_relay)
        .titled("Switch the relay")
        .describe("Closes (powers the load) or opens the relay. Switches real equipment on a device.")
        .with_params(kSwitchParams)
        .destructive()
        .idempotent()
        .scoped("device:control"),
    Tool::make("sample_sensor", &sample_sensor)
        .titled("Sample a sensor")
        .describe("Reads a sensor repeatedly and reports min/average/max. Reports progress; can be cancelled.")
        .with_params(kSampleParams)
        .read_only()
        .runs_as_task(),  // a task for a client that allows it, where the server has tasks (Linux)
#if EMCP_SENSORS_CLIENT_TOOLS
    Tool::make("calibrate_temperature", &calibrate_temperature)
        .titled("Calibrate the temperature sensor")
        .describe("Asks the user for a reference temperature and stores the offset.")
        .destructive(false)
        .idempotent(false)
        .scoped("device:control"),
    Tool::make("summarize_readings", &summarize_readings)
        .titled("Summarize the device state")
        .describe("Asks the client's language model to summarize the current readings.")
        .read_only(),
    Tool::make("list_roots", &list_roots)
        .titled("List the client's roots")
        .describe("Shows which roots (folders) the client shares with the server.")
        .read_only(),
    Tool::make("snapshot", &snapshot)
        .titled("Temperature chart")
        .describe("A PNG chart of the last 32 seconds of temperature, and a beep.")
        .read_only(),
#endif
    Tool::make("get_log", &get_log)
        .titled("Device log")
        .describe("The last lines of the device log.")
        .read_only(),
    Tool::make("echo", &echo)
        .titled("Echo")
        .describe("Answers with the given text: checks the link to the device.")
        .with_params(kEchoParams)
        .read_only(),
    Tool::make("device_stats", &device_stats)
        .titled("Device statistics")
        .describe("Memory and traffic figures of the server: messages handled, most arena and stack ever used, input bytes and notifications lost.")
        .with_output(kStatsOutput)
        .read_only(),
};

// ---- Resources ----------------------------------------------------------------------------------

void read_sensor_resource(ResourceRead& read) {
  const sensors::Id id = *static_cast<const sensors::Id*>(read.user());
  const sensors::Reading r = now_reading(id);
  read.text({"{\"sensor\":\"", sensors::name(id), "\",\"value\":",
             TextPiece(r.value, static_cast<int8_t>(sensors::decimals(id))), ",\"unit\":\"",
             sensors::unit(id), "\",\"simulated\":", r.simulated ? "true" : "false", "}"});
}

void read_led(ResourceRead& read) { read.text(g_led ? "on" : "off"); }
void read_relay(ResourceRead& read) { read.text(g_relay ? "closed" : "open"); }

// The log is streamed line by line from its ring: no text buffer on the stack.
void read_log(ResourceRead& read) {
  read.text_begin();
  for_each_log_line([&](StrView line) { read.text_part({line, "\n"}); });
  read.text_end();
}

void get_log(ToolCall& call) {
  ContentWriter& c = call.content();
  c.resource_text_begin("device://log", "text/plain");
  for_each_log_line([&](StrView line) { c.text_part({line, "\n"}); });
  c.text_end();
  call.resource_link("device://log", "device log", "text/plain", "The live log (subscribe for updates)");
}

void read_history(ResourceRead& read) {
  sensors::Id id;
  if (!sensors::parse(read.var("sensor"), &id)) return read.not_found();
  // JSON streamed as the text: no buffer whatever the digits of the values.
  read.text_begin("application/json");
  read.text_part({"{\"sensor\":\"", sensors::name(id), "\",\"unit\":\"", sensors::unit(id), "\",\"values\":["});
  const uint32_t n = g_history_count < kHistory ? g_history_count : kHistory;
  for (uint32_t i = 0; i < n; ++i)
    read.text_part({i == 0 ? "" : ",", g_history[static_cast<int>(id)][(g_history_count - n + i) % kHistory]});
  read.text_part("]}");
  read.text_end();
}

void complete_sensor(Completion& c) { c.add_matching(kSensorNames); }

constexpr sensors::Id kSensorIds[] = {sensors::Id::kTemperature, sensors::Id::kLoad,
                                     sensors::Id::kUptime, sensors::Id::kMemory};

constexpr Resource kResources[] = {
    Resource::make("sensor://temperature", "temperature", &read_sensor_resource)
        .titled("Temperature").describe("Die temperature, \xC2\xB0" "C").mime("application/json")
        .with_user(&kSensorIds[0]),
    Resource::make("sensor://load", "load", &read_sensor_resource)
        .titled("Load").describe("1-minute load average").mime("application/json")
        .with_user(&kSensorIds[1]),
    Resource::make("sensor://uptime", "uptime", &read_sensor_resource)
        .titled("Uptime").describe("Seconds since boot").mime("application/json")
        .with_user(&kSensorIds[2]),
    Resource::make("sensor://memory", "memory", &read_sensor_resource)
        .titled("Memory").describe("Memory in use, %").mime("application/json")
        .with_user(&kSensorIds[3]),
    Resource::make("device://led", "led", &read_led).titled("LED state").describe("on or off").mime("text/plain"),
    Resource::make("device://relay", "relay", &read_relay).titled("Relay state").describe("closed or open").mime("text/plain"),
    Resource::make("device://log", "log", &read_log).titled("Device log").describe("The last lines of the device log").mime("text/plain"),
};

constexpr ResourceTemplate kTemplates[] = {
    ResourceTemplate::make("sensor://{sensor}/history", "sensor history", &read_history)
        .titled("Sensor history")
        .describe("The last 32 readings of a sensor, one per second")
        .mime("application/json")
        .completed_by(&complete_sensor),
};

// ---- Prompts ------------------------------------------------------------------------------------

void diagnose(PromptGet& get) {
  const StrView symptom = get.arg("symptom", "nothing specific");
  sensors::Id focus = sensors::Id::kTemperature;
  const bool has_focus = sensors::parse(get.arg("sensor"), &focus);
  ContentWriter& m = get.message(Role::kUser);
  m.text_begin();
  m.text_part({"Diagnose this device. Reported symptom: ", symptom, ". Current readings: "});
  for (int i = 0; i < sensors::kCount; ++i) {
    const auto id = static_cast<sensors::Id>(i);
    const sensors::Reading r = now_reading(id);
    m.text_part({sensors::name(id), " ", TextPiece(r.value, static_cast<int8_t>(sensors::decimals(id))),
                 unit_suffix(id), i + 1 < sensors::kCount ? ", " : "."});
  }
  if (has_focus) m.text_part({" Pay most attention to the ", sensors::name(focus), " sensor."});
  m.text_end();
  ContentWriter& log_msg = get.message(Role::kUser);
  log_msg.resource_text_begin("device://log", "text/plain");
  for_each_log_line([&](StrView line) { log_msg.text_part({line, "\n"}); });
  log_msg.text_end();
}

constexpr PromptArg kDiagnoseArgs[] = {
    PromptArg::make("sensor", "The sensor to look at first").completed_by(&complete_sensor),
    PromptArg::make("symptom", "What looks wrong"),
};

constexpr Prompt kPrompts[] = {
    Prompt::make("diagnose_device", &diagnose)
        .titled("Diagnose the device")
        .describe("Readings and the device log, with a request to find what is wrong")
        .with_args(kDiagnoseArgs),
};

// ---- Periodic work ------------------------------------------------------------------------------

bool g_sampled_elsewhere[sensors::kCount];  // app::sampled() announces this sensor's changes

// notifications/resources/updated for sensor `id` when `v`, as the resource shows it, differs
// from what was last announced.
void announce_if_changed(sensors::Id id, double v) {
  const int i = static_cast<int>(id);
  char text[24];
  const size_t n = format_value(id, v, text);
  text[n] = '\0';
  if (strcmp(text, g_last_sent[i]) != 0) {
    memcpy(g_last_sent[i], text, n + 1);
    char uri[32] = "sensor://";
    strcat(uri, sensors::name(id));
    g_server->resource_updated(uri);
  }
}

void record_history() {
  const uint64_t now = g_now();
  if (now < g_next_history) return;
  g_next_history = now + 1000;
  const uint32_t k = g_history_count % kHistory;
  for (int i = 0; i < sensors::kCount; ++i) {
    const auto id = static_cast<sensors::Id>(i);
    const double v = now_reading(id).value;
    g_history[i][k] = v;
    if (!g_sampled_elsewhere[i]) announce_if_changed(id, v);
  }
  ++g_history_count;
}

}  // namespace

void log(LogLevel level, StrView line) {
  const uint32_t k = g_log_count % kLogLines;
  size_t n = line.size() < kLogWidth ? line.size() : kLogWidth;
  memcpy(g_log[k], line.data(), n);
  g_log_len[k] = static_cast<uint8_t>(n);
  ++g_log_count;
  if (g_server) {
    g_server->log(level, line, "device");
    g_server->resource_updated("device://log");
  }
}

void sampled_elsewhere(int sensor) {
  if (sensor >= 0 && sensor < sensors::kCount) g_sampled_elsewhere[sensor] = true;
}

void sampled(int sensor, double value) {
  if (sensor < 0 || sensor >= sensors::kCount || g_server == nullptr) return;
  g_sampled_elsewhere[sensor] = true;
  const auto id = static_cast<sensors::Id>(sensor);
  announce_if_changed(id, id == sensors::Id::kTemperature ? value + g_offset : value);
}

void set_stats_source(void (*fn)(PlatformStats* out)) { g_stats_source = fn; }

void init(Server& server, uint64_t (*now_ms)()) {
  g_server = &server;
  g_now = now_ms;
  server.set_tools(kTools);
  server.set_resources(kResources);
  server.set_templates(kTemplates);
  server.set_prompts(kPrompts);
#if EMCP_SENSORS_CLIENT_TOOLS && EMCP_LEGACY_ERA
  server.on_roots_changed(&roots_changed, nullptr);
  server.set_input_bridge(g_bridge);
#endif
  log(LogLevel::kInfo, "device started");
  record_history();
}

void tick() {
  run_jobs();
  record_history();
}

uint32_t next_tick_ms() {
  const uint64_t now = g_now();
  uint64_t next = g_next_history;
  for (const Job& j : g_jobs)
    if (j.active && j.next_at < next) next = j.next_at;
  return next <= now ? 0 : static_cast<uint32_t>(next - now);
}

}  // namespace app
