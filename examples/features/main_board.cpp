// What each MCP feature adds to a firmware image: the minimal server (one tool without
// parameters, over the UART) with one feature more per image, chosen by EMCP_FEATURE_*
// (examples/features/firmware.cmake builds one image per feature; docs/footprint.md's table
// "What each feature adds" is measured from them). Each feature is shown as an application
// would use it, small: the figures are what the core links for it, plus these few lines.
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#if EMCP_FEATURE_CLIENT_REQUESTS
#include "emcp/mcp/input_bridge.h"
#endif
#if EMCP_FEATURE_HTTP
#include "board/net.h"
#include "board/serve_net.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/transport/http_server.h"
#if EMCP_FEATURE_WEBSOCKET
#include "emcp/crypto/sha1.h"
#endif
#endif

using namespace emcp::mcp;

namespace {

int read_decicelsius() { return 215; }

void read_temperature(ToolCall& call) {
  call.text({"Temperature: ", TextPiece::fixed(read_decicelsius(), 1), " \xC2\xB0" "C"});
#if EMCP_FEATURE_LOGGING
  // Logging: a notifications/message to every session whose level lets it through.
  call.server().log(LogLevel::kInfo, "temperature read", "sensor");
#endif
}

#if EMCP_FEATURE_PARAMS
// Tools with parameters: a schema of each kind, validated before the handler runs.
constexpr const char* kColors[] = {"red", "green", "blue"};
constexpr Param kLedArgs[] = {
    Param::boolean("on", "Switch the LED on").required(),
    Param::integer("brightness", "Percent").range(0, 100),
    Param::number("fade_s", "Fade time, seconds").range(0, 10),
    Param::string("color", "Colour").one_of(kColors),
};
void set_led(ToolCall& call) {
  call.text({"LED ", call.boolean("on") ? "on" : "off", " at ", call.integer("brightness", 100), "%, ",
             call.str("color", "red")});
}
#endif

#if EMCP_FEATURE_CLIENT_REQUESTS
// Requests to the client: a tool that asks the user (elicitation) and answers with the reply.
constexpr Param kForm[] = {Param::number("reference", "A trusted thermometer's reading").required()};
void calibrate(ToolCall& call) {
  const emcp::json::Value answer = call.input().answer("reference");
  if (!answer.exists()) {
    if (!call.input().elicit("reference", "Enter a trusted thermometer's reading.", kForm))
      call.fail({"Could not ask the client: ", call.input().why_not(), "."});
    return;
  }
  call.text({"Calibrated against ", answer["content"]["reference"].as_double().value_or(0)});
}
StaticInputBridge<1, 256> g_bridge;
#endif

constexpr Tool kTools[] = {
    Tool::make("read_temperature", &read_temperature).describe("Reads the board's temperature").read_only(),
#if EMCP_FEATURE_PARAMS
    Tool::make("set_led", &set_led).describe("Sets the LED").with_params(kLedArgs),
#endif
#if EMCP_FEATURE_CLIENT_REQUESTS
    Tool::make("calibrate", &calibrate).describe("Calibrates against a reading the user gives"),
#endif
};

#if EMCP_FEATURE_RESOURCES
// Resources: two fixed ones and a template with a variable.
void read_status(ResourceRead& read) { read.text("ok", "text/plain"); }
void read_sensor(ResourceRead& read) {
  if (!(read.var("name") == emcp::StrView("temperature"))) return read.not_found();
  read.text({TextPiece::fixed(read_decicelsius(), 1)}, "text/plain");
}
constexpr Resource kResources[] = {
    Resource::make("device://status", "status", &read_status).describe("Device status").mime("text/plain"),
    Resource::make("device://firmware", "firmware", &read_status).describe("Firmware version").mime("text/plain"),
};
constexpr ResourceTemplate kTemplates[] = {
    ResourceTemplate::make("sensor://{name}", "sensor", &read_sensor).describe("A sensor's reading"),
};
#endif

#if EMCP_FEATURE_PROMPTS
// Prompts: one with arguments (and, with completion, an argument the client can complete).
constexpr const char* kSensors[] = {"temperature", "humidity", "pressure"};
#if EMCP_FEATURE_COMPLETION
void complete_sensor(Completion& c) { c.add_matching(kSensors); }
#endif
void diagnose(PromptGet& get) {
  get.message(Role::kUser).text({"Diagnose the ", get.arg("sensor", "temperature"), " sensor: ",
                                 get.arg("symptom", "nothing specific"), "."});
}
constexpr PromptArg kDiagnoseArgs[] = {
#if EMCP_FEATURE_COMPLETION
    PromptArg::make("sensor", "The sensor").completed_by(&complete_sensor),
#else
    PromptArg::make("sensor", "The sensor"),
#endif
    PromptArg::make("symptom", "What looks wrong"),
};
constexpr Prompt kPrompts[] = {
    Prompt::make("diagnose", &diagnose).describe("Asks to diagnose a sensor").with_args(kDiagnoseArgs),
};
#endif

constexpr ServerInfo kInfo = {"features", "1.0"};

}  // namespace

#if EMCP_FEATURE_HTTP
// HTTP: the same server over Streamable HTTP and HTTP+SSE through lwIP (4 connections, 2
// sessions, as emcp-sensors-net), beside the UART; with EMCP_FEATURE_WEBSOCKET, WebSocket too.
Server g_server(kInfo, emcp::board::net_platform());
emcp::transport::StaticLineTransport<2048, 64> g_link(g_server, &emcp::board::uart_flush, nullptr);
emcp::transport::HttpOptions g_http_options;
emcp::lwip::StaticLwipHttpListener<4> g_listener;
emcp::transport::StaticHttpServer<4, 2, 2048, 1024, 1536> g_http(g_server, g_http_options, g_listener.port_interface());
#else
Server g_server(kInfo, emcp::board::platform());
emcp::transport::StaticLineTransport<2048, 64> g_link(g_server, &emcp::board::uart_flush, nullptr);
#endif

int main() {
  emcp::board::init();
  g_server.set_tools(kTools);
#if EMCP_FEATURE_RESOURCES
  g_server.set_resources(kResources);
  g_server.set_templates(kTemplates);
#endif
#if EMCP_FEATURE_PROMPTS
  g_server.set_prompts(kPrompts);
#endif
#if EMCP_FEATURE_CLIENT_REQUESTS
  g_server.set_input_bridge(g_bridge);
#endif
#if EMCP_FEATURE_HTTP
#if EMCP_FEATURE_WEBSOCKET
  g_http_options.sha1 = &emcp::crypto::sha1;
#else
  g_http_options.ws_path = nullptr;
#endif
  emcp::board::HttpService net;
  net.http = &g_http;
  net.listener = &g_listener;
  net.options = &g_http_options;
  emcp::board::serve_uart_and_http(g_server, g_link, "emcp-features", emcp::board::Loop{}, net, emcp::board::NetConfig{});
#else
  emcp::board::serve_uart(g_server, g_link, "emcp-features", emcp::board::Loop{});
#endif
}
