// emcp/jsonrpc/error.h - JSON-RPC 2.0 and MCP wire error codes, mapped from Status in one place.
//
// Context: any.
#ifndef EMCP_JSONRPC_ERROR_H
#define EMCP_JSONRPC_ERROR_H

#include <stdint.h>

#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace jsonrpc {

/// Error codes of the JSON-RPC 2.0 specification (section 5.1) and of MCP.
enum class ErrorCode : int32_t {
  kParseError = -32700,      ///< invalid JSON; answered with id null
  kInvalidRequest = -32600,  ///< not a valid request object (or beyond a configured limit)
  kMethodNotFound = -32601,
  kInvalidParams = -32602,
  kInternalError = -32603,
  kResourceNotFound = -32002,        ///< MCP: resources/read of an unknown URI
  kUrlElicitationRequired = -32042,  ///< MCP 2025-11-25
};

/// The standard message for a code ("Parse error", "Invalid Request", ...), or "Server error".
const char* error_code_message(ErrorCode code);

/// The wire code for a failure status: JSON syntax -> kParseError; JSON limits and malformed
/// envelopes -> kInvalidRequest; kNotFound -> kMethodNotFound; kWrongType, kOutOfRange and
/// kInvalidArgument -> kInvalidParams; anything else -> kInternalError.
ErrorCode error_code_for(Status s);

}  // namespace jsonrpc
EMCP_NS_END

#endif  // EMCP_JSONRPC_ERROR_H
