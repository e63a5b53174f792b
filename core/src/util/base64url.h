// Internal: base64url (RFC 4648 5) without padding, canonical only, as JWTs (auth/jwt.cpp)
// and the server's requestState (mcp/inputs.cpp) carry it.
#ifndef EMCP_SRC_UTIL_BASE64URL_H
#define EMCP_SRC_UTIL_BASE64URL_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace util {

/// True when `in` is canonical unpadded base64url (alphabet, length, zero unused bits).
bool b64url_valid(StrView in);
/// Decodes `n` characters already checked by b64url_valid() (or a run of them whose length is
/// a multiple of 4) into `out` (room for n * 3 / 4 bytes); returns the bytes written.
size_t b64url_decode_valid(const char* in, size_t n, uint8_t* out);
/// The bytes a valid text of `n` characters decodes to.
constexpr size_t b64url_decoded_size(size_t n) { return n / 4 * 3 + (n % 4 == 0 ? 0 : n % 4 - 1); }
/// Encodes `n` bytes into `out` (room for (n * 4 + 2) / 3 characters); returns the characters.
size_t b64url_encode(const uint8_t* in, size_t n, char* out);

}  // namespace util
EMCP_NS_END

#endif
