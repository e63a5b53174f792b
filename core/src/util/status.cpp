#include "emcp/util/status.h"

EMCP_NS_BEGIN

const char* status_str(Status s) {
#if EMCP_ERROR_STRINGS
  switch (s) {
    case Status::kOk: return "ok";
    case Status::kNoSpace: return "out of space";
    case Status::kInvalidArgument: return "invalid argument";
    case Status::kInvalidState: return "invalid state";
    case Status::kNotFound: return "not found";
    case Status::kWrongType: return "wrong type";
    case Status::kOutOfRange: return "out of range";
    case Status::kWouldBlock: return "would block";
    case Status::kIoError: return "I/O error";
    case Status::kClosed: return "closed";
    case Status::kUnexpectedChar: return "unexpected character";
    case Status::kUnexpectedEnd: return "unexpected end of input";
    case Status::kInvalidNumber: return "invalid number";
    case Status::kInvalidEscape: return "invalid escape";
    case Status::kInvalidSurrogate: return "unpaired UTF-16 surrogate";
    case Status::kInvalidUtf8: return "invalid UTF-8";
    case Status::kControlInString: return "control character in string";
    case Status::kTrailingData: return "data after the JSON value";
    case Status::kDepthLimit: return "nesting too deep";
    case Status::kKeyTooLong: return "key too long";
    case Status::kNumberTooLong: return "number has too many digits";
    case Status::kNumberOverflow: return "number too large";
    case Status::kCount_: break;
  }
  return "unknown status";
#else
  (void)s;
  return "";
#endif
}

EMCP_NS_END
