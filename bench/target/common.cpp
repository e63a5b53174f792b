// bench/target/common.cpp - see common.h.
#include "common.h"

#include <string.h>

#include "board/board.h"
#include "emcp/json/number.h"

volatile uint32_t g_bench_mark = 0;
extern "C" __attribute__((noinline, used)) void emcp_bench_begin() { g_bench_mark = 1; }
extern "C" __attribute__((noinline, used)) void emcp_bench_end() { g_bench_mark = 2; }

namespace bench {

namespace {
uint32_t g_rand = 0x9E3779B9u;
}  // namespace

uint32_t next_random() {
  g_rand ^= g_rand << 13;
  g_rand ^= g_rand >> 17;
  g_rand ^= g_rand << 5;
  return g_rand;
}

bool fixed_random(void* out, size_t n) {
  auto* p = static_cast<uint8_t*>(out);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(next_random());
  return true;
}

emcp::Platform fixed_platform(uint64_t (*now_ms)()) {
  emcp::Platform p = emcp::board::platform();
  p.now_ms = now_ms;
  p.random = &fixed_random;
  p.unix_time_s = nullptr;
  return p;
}

void say(const char* text) { emcp::board::uart_write(text, strlen(text)); }

void say_number(size_t v) {
  char digits[24];
  emcp::board::uart_write(digits, emcp::json::format_uint64(v, digits));
}

void fail(const char* why, int code) {
  say("fail ");
  say(why);
  say(" ");
  say_number(static_cast<size_t>(code < 0 ? -code : code));
  say("\nend\n");
  for (;;) {
  }
}

void case_line(const char* name, uint32_t windows, size_t in, size_t out) {
  say("case ");
  say(name);
  say(" windows=");
  say_number(windows);
  say(" in=");
  say_number(in);
  say(" out=");
  say_number(out);
  say("\n");
}

size_t request_text(char* out, size_t cap, const char* head, const char* body) {
  size_t n = 0;
  const auto add = [&](const char* s) {
    const size_t k = strlen(s);
    if (n + k >= cap) fail("the request does not fit", 0);
    memcpy(out + n, s, k);
    n += k;
  };
  char length_text[24];
  length_text[emcp::json::format_uint64(strlen(body), length_text)] = '\0';
  add(head);
  add("Content-Length: ");
  add(length_text);
  add("\r\n\r\n");
  add(body);
  return n;
}

namespace {

// The value of header `name` (lower case) in `answer`, into `out`.
void header_value(const char* answer, const char* name, char* out, size_t cap) {
  const size_t k = strlen(name);
  for (const char* p = answer; *p != '\0'; ++p) {
    size_t i = 0;
    while (i < k && p[i] != '\0' && (p[i] | 0x20) == name[i]) ++i;
    if (i == k && p[i] == ':') {
      p += k + 1;
      while (*p == ' ') ++p;
      size_t n = 0;
      while (p[n] != '\r' && p[n] != '\0' && n + 1 < cap) out[n] = p[n], ++n;
      out[n] = '\0';
      return;
    }
  }
  fail("no session header in the initialize answer", 0);
}

}  // namespace

void session_requests(const char* suffix, RequestFn request) {
  char name[96];
  const auto named = [&](const char* what) {
    name[0] = '\0';
    strcat(name, what);
    strcat(name, " ");
    strcat(name, suffix);
    return name;
  };
  const char* common =
      "Host: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";
  char head[512];
  const auto compose = [&](const char* session) {
    head[0] = '\0';
    strcat(head, "POST /mcp HTTP/1.1\r\n");
    strcat(head, common);
    if (session != nullptr) {
      strcat(head, "Mcp-Session-Id: ");
      strcat(head, session);
      strcat(head, "\r\nMCP-Protocol-Version: 2025-11-25\r\n");
    }
    return head;
  };
  const char* answer = request(named("initialize"), compose(nullptr),
                               "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                               "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}");
  char session[80];
  header_value(answer, "mcp-session-id", session, sizeof session);
  answer = request(named("notifications/initialized"), compose(session),
                   "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  if (strncmp(answer, "HTTP/1.1 202", 12) != 0) fail("notifications/initialized was not accepted", 0);
  char text[101];  // the echo's 100 characters
  memset(text, 'x', 100);
  text[100] = '\0';
  char body[256] = "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",";
  strcat(body, "\"arguments\":{\"text\":\"");
  strcat(body, text);
  strcat(body, "\"}}}");
  answer = request(named("tools/call echo (100 characters)"), compose(session), body);
  if (strncmp(answer, "HTTP/1.1 200", 12) != 0 || strstr(answer, "\"isError\":true") != nullptr ||
      strstr(answer, text) == nullptr)
    fail("the echo did not come back", 0);
}

}  // namespace bench
