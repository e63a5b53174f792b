#include "emcp/mbedtls/sha1.h"

#include <mbedtls/sha1.h>
#include <mbedtls/version.h>

EMCP_NS_BEGIN
namespace mbedtls {

void sha1(const void* data, size_t n, uint8_t out[20]) {
#if MBEDTLS_VERSION_MAJOR >= 3
  (void)mbedtls_sha1(static_cast<const unsigned char*>(data), n, out);
#else
  (void)mbedtls_sha1_ret(static_cast<const unsigned char*>(data), n, out);
#endif
}

}  // namespace mbedtls
EMCP_NS_END
