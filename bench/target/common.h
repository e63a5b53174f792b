// bench/target/common.h - what the target benchmarks' firmwares share (bench/target/calls.cpp,
// tls.cpp, net.cpp): the counted window's marks, a line on the UART, a failure report, and the
// MCP session the HTTP benchmarks send (the same requests over TLS, over the HTTP engine alone
// and over lwIP).
#ifndef EMCP_BENCH_TARGET_COMMON_H
#define EMCP_BENCH_TARGET_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/platform.h"

// The window's marks: bench/target/insn_plugin.c counts the instructions from the first
// instruction of emcp_bench_begin() to the first of emcp_bench_end(). Not inlined, never folded
// into one (each stores its own value), kept by the linker (used).
extern "C" void emcp_bench_begin();
extern "C" void emcp_bench_end();

namespace bench {

// A fixed random sequence (xorshift32 from a fixed seed: the same keys, nonces, session ids and
// TCP sequence numbers every run; a bench, never a device): its next word, or `n` bytes of it.
uint32_t next_random();
bool fixed_random(void* out, size_t n);
// The board's platform with the clock `now_ms` (the firmware's own), fixed_random, and no
// calendar time: what a case does never depends on the host.
emcp::Platform fixed_platform(uint64_t (*now_ms)());

// Writes `text` on the UART (polled).
void say(const char* text);
void say_number(size_t v);
// "fail WHY CODE" and "end" on the UART, then stops (the scripts report the line).
[[noreturn]] void fail(const char* why, int code);

// A case's line: "case NAME windows=K in=BYTES out=BYTES" (K counted windows belong to it; the
// bytes are what went each way), which bench/target/guest_cases.py reads.
void case_line(const char* name, uint32_t windows, size_t in, size_t out);

// An HTTP request's text into `out`: `head` (its request line and headers), Content-Length,
// the blank line, `body`. Returns its length; fails when it does not fit.
size_t request_text(char* out, size_t cap, const char* head, const char* body);

// One HTTP request (`head`: its request line and headers but Content-Length, which is added;
// `body`) sent as the benchmark sends them, the answer read back: returns it, head and body,
// NUL-terminated. The request is a case of the benchmark named `name`.
using RequestFn = const char* (*)(const char* name, const char* head, const char* body);

// A session's opening (initialize, notifications/initialized) and a tool call (echo, 100
// characters) through `request`, each a case named "WHAT SUFFIX"; fails unless each answer is
// what the specification wants (the session header, 202, the echoed text).
void session_requests(const char* suffix, RequestFn request);

}  // namespace bench

#endif
