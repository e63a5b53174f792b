// board/credentials.h - what a device is provisioned with, read from a credentials region of its
// flash (EMCP_BOARD_CREDENTIALS_ADDR, board.cmake), where production writes it at provisioning
// time and the tests load it (scripts/run-board puts it there with QEMU's loader): the TLS
// certificate chain and key a board serves HTTPS with, how it authorizes requests, the MQTT
// broker it dials. Never part of an image.
//
// The region: "EMCPCRED", the certificate's length and the key's (32-bit little-endian, each
// counting the NUL that ends its PEM text; both 0: no TLS credentials, the entries below
// only), the certificate chain (PEM), the key (PEM), then the entries. The views point into the
// region (flash: valid for ever).
//
// Context: any (reads memory only).
#ifndef EMCP_BOARD_CREDENTIALS_H
#define EMCP_BOARD_CREDENTIALS_H

#include <stddef.h>
#include <stdint.h>

namespace emcp {
namespace board {

struct Credentials {
  const uint8_t* cert = nullptr;
  size_t cert_len = 0;  ///< with the NUL
  const uint8_t* key = nullptr;
  size_t key_len = 0;   ///< with the NUL
};

/// Reads the credentials region's certificate and key: false when it holds none (no magic,
/// lengths that do not fit the region, a text without its NUL, or a region of entries only).
bool credentials(Credentials* out);

/// Optional entries after the key ("AUTH", a 32-bit count, then each entry: its type, its
/// length with the NUL, its NUL-terminated text): how the board authorizes requests, and
/// where it finds its MQTT broker.
enum class Entry : uint32_t {
  kStaticToken = 1,  ///< a bearer token granting every scope (repeatable)
  kJwtKey = 2,       ///< a PEM public key JWT access tokens are signed with (EC P-256, RSA)
  kIssuer = 3,       ///< the issuer those tokens must name
  kAudience = 4,     ///< the server's canonical URI (the tokens' audience)
  kClock = 5,        ///< "semihosting": set the wall clock from the host (QEMU)
  kJwtType = 6,      ///< "at+jwt": the JWTs' header typ must say so (JwtConfig::require_at_jwt)
  kMqttBroker = 7,   ///< the MQTT broker, "mqtt://HOST[:PORT]" or "mqtts://HOST[:PORT]" (HOST an IPv4 address)
  kMqttName = 8,     ///< the MCP-over-MQTT server-name ("devices/sensors/kitchen")
  kMqttId = 9,       ///< the server-id (the MQTT client id)
  kMqttCa = 10,      ///< mqtts://: the CA certificates (PEM) the broker's certificate must lead to
  kMqttCert = 11,    ///< mqtts://, optional: the board's client certificate (PEM) ...
  kMqttKey = 12,     ///< ... and its private key (PEM)
  kMqttTlsName = 13, ///< mqtts://, optional: the name the broker's certificate carries (and SNI), when
                     ///< HOST, an address, is not it
};
/// The `index`-th entry of `type` (a NUL-terminated text in the region), or nullptr.
const char* credential_entry(Entry type, unsigned index = 0);

}  // namespace board
}  // namespace emcp

#endif
