// Mbed TLS's configuration for emcp's board builds (MBEDTLS_CONFIG_FILE): only what the
// firmware uses, no heap (a static pool: emcp/mbedtls/pool.h), no file system, no standard
// output, no entropy of its own (the random generator is seeded from the Platform's random).
// The host links the system's libmbedtls instead (libmbedtls-dev, Debian's defaults).
//
// What it serves: a TLS 1.2 server (emcp/mbedtls/tls.h) with ECDHE-ECDSA or ECDHE-RSA key
// exchange, AES-128-GCM or ChaCha20-Poly1305, the P-256 curve, session tickets; X.509
// certificates and PEM keys; JWT signature checks (ES256, RS256, HS256: emcp/mbedtls/jwt_key.h);
// no SHA-1 but in the client (below). With EMCP_MBEDTLS_CLIENT=1 (emcp_mbedtls_library's DEFINES)
// a TLS 1.2 client instead of the server, for the connection a device dials (the MQTT client's
// to its broker: TlsLayer::dialer()): the same suites and curve, the server's name sent (SNI)
// and verified, a smaller maximum fragment length asked of the server; no server, no tickets.
#ifndef EMCP_MBEDTLS_CONFIG_H
#define EMCP_MBEDTLS_CONFIG_H

#include <stddef.h>
#include <time.h>  // (ssl_tls.c names time_t even with MBEDTLS_PLATFORM_TIME_TYPE_MACRO)

// ---- Platform: memory from emcp's pool, time from emcp's clock
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_PLATFORM_CALLOC_MACRO emcp_mbedtls_calloc
#define MBEDTLS_PLATFORM_FREE_MACRO emcp_mbedtls_free
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_PLATFORM_TIME_TYPE_MACRO long long
#define MBEDTLS_PLATFORM_TIME_MACRO emcp_mbedtls_time
#define MBEDTLS_PLATFORM_NO_STD_FUNCTIONS
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_HAVE_ASM
#ifdef __cplusplus
extern "C" {
#endif
void* emcp_mbedtls_calloc(size_t count, size_t size);
void emcp_mbedtls_free(void* p);
/// Seconds: the Platform's wall clock once known, else seconds since start (tickets' ages).
long long emcp_mbedtls_time(long long* t);
#ifdef __cplusplus
}
#endif

// ---- Hashes, MACs, random
#define MBEDTLS_MD_C
// The WebSocket handshake takes core's SHA-1 (emcp/crypto/sha1.h, a loop of a few hundred bytes
// where Mbed TLS's is 3.7 KB unrolled); TLS 1.2 and the server's own certificate need SHA-256
// only (a provisioned chain signed with SHA-1 does not load: its signature's algorithm is
// unknown without it). The client keeps SHA-1 to read certificates: a CA bundle may hold roots
// signed with it (DigiCert Global Root CA, GlobalSign R1), which a client must load.
#if EMCP_MBEDTLS_CLIENT
#define MBEDTLS_SHA1_C
#endif
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_CTR_DRBG_C
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_AES_FEWER_TABLES

// ---- Public keys, certificates
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#ifndef EMCP_MBEDTLS_NO_NIST_OPTIM  // bench/target/tls.cpp measures the handshake without it
#define MBEDTLS_ECP_NIST_OPTIM
#endif
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_OID_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

// ---- TLS 1.2 server (or client)
#define MBEDTLS_CIPHER_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#if EMCP_MBEDTLS_CLIENT
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
// The client asks the server for records of at most its record buffers (RFC 6066's
// max_fragment_length: OpenSSL, and so Mosquitto, honours it; TlsContext::init_client), so that
// a broker's record of a longer message still fits: buffers of 2 KiB each way, below.
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
#ifndef MBEDTLS_SSL_IN_CONTENT_LEN
#define MBEDTLS_SSL_IN_CONTENT_LEN 2048
#endif
#endif
// EMCP_MBEDTLS_SERVER (the default without EMCP_MBEDTLS_CLIENT): the server's side. Both at once
// only for bench/target/tls.cpp, which counts a handshake with both ends in one image.
#ifndef EMCP_MBEDTLS_SERVER
#define EMCP_MBEDTLS_SERVER (!EMCP_MBEDTLS_CLIENT)
#endif
#if EMCP_MBEDTLS_SERVER
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_SESSION_TICKETS
#define MBEDTLS_SSL_TICKET_C
#endif
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_ENCRYPT_THEN_MAC
// Record buffers (the server's): a client's records up to 4 KiB of plaintext (a larger one is
// refused with a record_overflow alert: the request bodies of MCP are smaller), answers in
// records of up to 2 KiB. Each connection holds both while open (about 6.3 KiB with the record
// overhead). The client's: 2 KiB each way (above).
#ifndef MBEDTLS_SSL_IN_CONTENT_LEN
#define MBEDTLS_SSL_IN_CONTENT_LEN 4096
#endif
#ifndef MBEDTLS_SSL_OUT_CONTENT_LEN
#define MBEDTLS_SSL_OUT_CONTENT_LEN 2048
#endif
// The server asks no certificate of the client, and the client verifies the server's during the
// handshake: none to keep.
#undef MBEDTLS_SSL_KEEP_PEER_CERTIFICATE

#include "mbedtls/check_config.h"

#endif
