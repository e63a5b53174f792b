// Stand-ins the HTTP fuzz targets share: a predictable random source (the first session of every
// input gets the same id, which the seeds use) and a stand-in digest (the WebSocket handshake's
// correctness is tested elsewhere; here only its use).
#ifndef EMCP_TESTS_FUZZ_FAKES_H
#define EMCP_TESTS_FUZZ_FAKES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

namespace fuzz_fakes {

inline uint8_t g_counter = 0;
inline bool random(void* out, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = ++g_counter;
  return true;
}
inline void sha1(const void* data, size_t n, uint8_t out[20]) {
  memset(out, 0, 20);
  for (size_t i = 0; i < n; ++i) out[i % 20] = static_cast<uint8_t>(out[i % 20] * 31 + static_cast<const uint8_t*>(data)[i]);
}

}  // namespace fuzz_fakes

#endif
