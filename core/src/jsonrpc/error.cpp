#include "emcp/jsonrpc/error.h"

EMCP_NS_BEGIN
namespace jsonrpc {

const char* error_code_message(ErrorCode code) {
  switch (code) {
    case ErrorCode::kParseError: return "Parse error";
    case ErrorCode::kInvalidRequest: return "Invalid Request";
    case ErrorCode::kMethodNotFound: return "Method not found";
    case ErrorCode::kInvalidParams: return "Invalid params";
    case ErrorCode::kInternalError: return "Internal error";
    case ErrorCode::kResourceNotFound: return "Resource not found";
    case ErrorCode::kUrlElicitationRequired: return "URL elicitation required";
    case ErrorCode::kServerError: return "Server error";
#if EMCP_MODERN_ERA
    case ErrorCode::kHeaderMismatch: return "Header mismatch";
    case ErrorCode::kMissingClientCapability: return "Missing required client capability";
    case ErrorCode::kUnsupportedVersion: return "Unsupported protocol version";
#else
    case ErrorCode::kHeaderMismatch:
    case ErrorCode::kMissingClientCapability:
    case ErrorCode::kUnsupportedVersion: break;
#endif
  }
  return "Server error";
}

ErrorCode error_code_for(Status s) {
  if (is_json_syntax_error(s)) return ErrorCode::kParseError;
  if (is_json_limit_error(s)) return ErrorCode::kInvalidRequest;
  switch (s) {
    case Status::kNoSpace: return ErrorCode::kInvalidRequest;
    case Status::kNotFound:
    case Status::kWrongType:
    case Status::kOutOfRange:
    case Status::kInvalidArgument: return ErrorCode::kInvalidParams;
    default: return ErrorCode::kInternalError;
  }
}

}  // namespace jsonrpc
EMCP_NS_END
