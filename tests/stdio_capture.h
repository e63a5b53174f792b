// What a test program's server writes to its stdio transport, kept in a fixed buffer
// (tests/queue, tests/config): pass &StdioCapture::write and the capture as the context.
#ifndef EMCP_TESTS_STDIO_CAPTURE_H
#define EMCP_TESTS_STDIO_CAPTURE_H

#include <stdio.h>
#include <string.h>

#include "emcp/platform.h"
#include "emcp/util/status.h"

// A platform whose clock stands still (nothing in these programs times out), no random source.
inline uint64_t stdio_test_no_time() { return 0; }
constexpr emcp::Platform kStdioTestPlatform{&stdio_test_no_time, nullptr};
// What a client of 2025-11-25 sends first: initialize and notifications/initialized, a line each.
constexpr const char kStdioTestHello[] =
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
    "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

struct StdioCapture {
  char out[4096];
  size_t len = 0;
  static emcp::Status write(void* ctx, const char* p, size_t n) {
    auto* self = static_cast<StdioCapture*>(ctx);
    if (self->len + n > sizeof self->out) return emcp::Status::kNoSpace;
    memcpy(self->out + self->len, p, n);
    self->len += n;
    return emcp::Status::kOk;
  }
  // Prints why the test failed and what the server wrote; returns the exit status 1.
  int fail(const char* program, const char* what) const {
    fprintf(stderr, "%s: %s\noutput: %.*s\n", program, what, static_cast<int>(len), out);
    return 1;
  }
};

#endif  // EMCP_TESTS_STDIO_CAPTURE_H
