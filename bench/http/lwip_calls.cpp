// emcp_lwip_http_calls: the sensors example's echo tool called N times, one at a time on one
// keep-alive Streamable HTTP connection, through ports/lwip: the HTTP engine behind
// LwipHttpListener on lwIP built for the host, the client a raw lwIP TCP pcb of the same stack
// over its loopback netif (tests/lwip/lwip_world.h). For bench/http/run.sh, which runs it under
// callgrind with N and 2N calls and, beside it, emcp-sensors --http (the posix socket port) with
// the same requests: instructions per tools/call of each port's run_once (the engine and the
// port, and for lwIP the stack's output path), and of the whole process.
//
//   emcp_lwip_http_calls N      prints "calls=N bytes_in=B bytes_out=B" (or fails, exit 1)
//   emcp_lwip_http_calls --ram  prints what a connection and a session hold (bytes)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "app.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "lwip/memp.h"
#include "lwip/priv/memp_priv.h"
#include "lwip_world.h"
#include "mcp_fixture_app.h"

namespace {

constexpr size_t kConns = 4, kSessions = 2, kArena = EMCP_ARENA_SIZE, kOut = 1536, kReplay = 4096;

bool fake_random(void* out, size_t n) {
  static uint8_t x = 0;
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = ++x;
  return true;
}
const emcp::Platform kPlatform{&fixture::now_ms, &fake_random};

emcp::mcp::Server g_server(app::kServerInfo, kPlatform);
emcp::transport::HttpOptions g_options;
emcp::lwip::StaticLwipHttpListener<kConns> g_net;
emcp::transport::StaticHttpServer<kConns, kSessions, kArena, kOut, kReplay> g_http(g_server, g_options,
                                                                                 g_net.port_interface());


void on_assert(const char* message, const char* file, int line) {
  fprintf(stderr, "lwIP assertion: %s (%s:%d)\n", message, file, line);
}

std::string post(const std::string& body, const std::string& session) {
  std::string r = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n";
  if (!session.empty()) r += "Mcp-Session-Id: " + session + "\r\nMCP-Protocol-Version: 2025-11-25\r\n";
  return r + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// Sends `request` and runs the world until one whole Content-Length answer is in; returns it
// (head and body) and takes it from the client's buffer.
std::string exchange(const std::string& request) {
  if (!lwip_world::client(0).send(request.data(), request.size())) return "";
  for (int i = 0; i < 100000; ++i) {
    lwip_world::step();
    g_net.run_once();
    const std::string in(lwip_world::client(0).data(), lwip_world::client(0).size());
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const size_t cl = in.find("Content-Length: ");
    if (cl == std::string::npos || cl > end) continue;
    const size_t n = strtoul(in.c_str() + cl + 16, nullptr, 10);
    if (in.size() < end + 4 + n) continue;
    lwip_world::client(0).consume(end + 4 + n);
    return in.substr(0, end + 4 + n);
  }
  return "";
}

int ram() {
  using emcp::transport::HttpConnection;
  using emcp::transport::HttpSession;
  printf("engine_connection=%zu arena=%zu out=%zu reader=%zu session=%zu replay=%zu listener_slot=%zu "
         "tcp_pcb=%u altcp_pcb=%u tcp_seg=%u pbuf_pool=%u\n",
         sizeof(HttpConnection), kArena, kOut, sizeof(emcp::json::StaticReader<>), sizeof(HttpSession), kReplay,
         sizeof(emcp::lwip::LwipConn), static_cast<unsigned>(memp_pools[MEMP_TCP_PCB]->size),
         static_cast<unsigned>(memp_pools[MEMP_ALTCP_PCB]->size), static_cast<unsigned>(memp_pools[MEMP_TCP_SEG]->size),
         static_cast<unsigned>(memp_pools[MEMP_PBUF_POOL]->size));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--ram") == 0) return ram();
  const long n = argc == 2 ? atol(argv[1]) : 0;
  if (n <= 0) {
    fprintf(stderr, "usage: emcp_lwip_http_calls N | --ram\n");
    return 2;
  }
  lwip_world::init(&on_assert);
  app::init(g_server, &fixture::now_ms);
  g_net.attach(g_http.handler());
  g_net.set_pump(&lwip_world::pump, nullptr);
  if (g_net.listen(80) != emcp::Status::kOk || !lwip_world::client(0).connect(80)) {
    fprintf(stderr, "cannot listen or connect\n");
    return 1;
  }
  const std::string init = exchange(post(
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})",
      ""));
  const size_t at = init.find("Mcp-Session-Id: ");
  if (at == std::string::npos) {
    fprintf(stderr, "initialize failed: %s\n", init.c_str());
    return 1;
  }
  const std::string sid = init.substr(at + 16, 32);
  const std::string note = post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", sid);
  if (!lwip_world::client(0).send(note.data(), note.size())) return 1;
  for (int i = 0; i < 200; ++i) {
    lwip_world::step();
    g_net.run_once();
  }
  lwip_world::client(0).consume(lwip_world::client(0).size());  // the 202
  size_t in = 0, out = 0;
  for (long id = 1; id <= n; ++id) {
    const std::string text = "benchmark request " + std::to_string(id);
    const std::string req = post(R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
                                     R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":")" +
                                     text + R"("}}})",
                                 sid);
    const std::string answer = exchange(req);
    if (answer.find("\"id\":" + std::to_string(id) + ",") == std::string::npos ||
        answer.find(text) == std::string::npos) {
      fprintf(stderr, "call %ld: wrong answer: %s\n", id, answer.c_str());
      return 1;
    }
    in += req.size();
    out += answer.size();
  }
  printf("calls=%ld bytes_in=%zu bytes_out=%zu\n", n, in, out);
  return 0;
}
