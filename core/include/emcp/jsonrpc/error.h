// emcp/jsonrpc/error.h - JSON-RPC 2.0 and MCP wire error codes, mapped from Status in one place.
//
// Context: any.
#ifndef EMCP_JSONRPC_ERROR_H
#define EMCP_JSONRPC_ERROR_H

#include <stdint.h>

#include "emcp/util/status.h"

/// A human-readable error text, or "" when EMCP_ERROR_STRINGS is 0 (the literal is then not
/// in the binary; answers fall back to the standard message of their code).
#if EMCP_ERROR_STRINGS
#define EMCP_ERRTEXT(s) (s)
#else
#define EMCP_ERRTEXT(s) ("")
#endif

EMCP_NS_BEGIN
namespace jsonrpc {

/// Error codes of the JSON-RPC 2.0 specification (section 5.1) and of MCP.
enum class ErrorCode : int32_t {
  kParseError = -32700,      ///< invalid JSON; answered with id null
  kInvalidRequest = -32600,  ///< not a valid request object (or beyond a configured limit)
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kServerError = -32000,             ///< implementation-defined (HTTP: missing or unknown session)
  kResourceNotFound = -32002,        ///< MCP: resources/read of an unknown URI
  kUrlElicitationRequired = -32042,  ///< MCP 2025-11-25
  kHeaderMismatch = -32020,           ///< MCP 2026-07-28: an HTTP header missing or not the body's
  kMissingClientCapability = -32021,  ///< MCP 2026-07-28: the request needs an undeclared capability
  kUnsupportedVersion = -32022,       ///< MCP 2026-07-28: `_meta` names a revision not served
};

/// The standard message for a code ("Parse error", "Invalid Request", ...), or "Server error".
const char* error_code_message(ErrorCode code);

/// The wire code for a failure status: JSON syntax -> kParseError; JSON limits and kNoSpace ->
/// kInvalidRequest; kNotFound (a missing argument), kWrongType, kOutOfRange and
/// kInvalidArgument -> kInvalidParams; anything else -> kInternalError. (Unknown methods are
/// answered with kMethodNotFound by the dispatcher, not through a Status.)
ErrorCode error_code_for(Status s);

}  // namespace jsonrpc
EMCP_NS_END

#endif  // EMCP_JSONRPC_ERROR_H
