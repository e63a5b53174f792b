// emcp/jsonrpc/message.h - one decoded JSON-RPC 2.0 message.
//
// The decoder fills these in the arena; every view inside stays valid until the arena is
// rewound (the next Decoder::begin()).
//
// Context: the loop that owns the decoder.
#ifndef EMCP_JSONRPC_MESSAGE_H
#define EMCP_JSONRPC_MESSAGE_H

#include <stdint.h>

#include "emcp/json/value.h"
#include "emcp/jsonrpc/error.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace jsonrpc {

/// A request id as MCP allows it: a string or an integer; null only in error responses.
struct Id {
  enum class Type : uint8_t { kNone, kNull, kInt, kString };
  Type type = Type::kNone;
  int64_t num = 0;
  StrView str;

  static Id null() { return Id{Type::kNull, 0, StrView()}; }
  static Id of(int64_t n) { return Id{Type::kInt, n, StrView()}; }
  static Id of(StrView s) { return Id{Type::kString, 0, s}; }
  bool present() const { return type == Type::kInt || type == Type::kString; }
  bool operator==(const Id& o) const {
    return type == o.type && (type != Type::kInt || num == o.num) &&
           (type != Type::kString || str == o.str);
  }
};

enum class Kind : uint8_t {
  kRequest,        ///< method + id: must be answered
  kNotification,   ///< method, no id: never answered
  kResponse,       ///< id + result: answers one of our requests
  kErrorResponse,  ///< id (maybe null) + error: answers one of our requests
  kInvalid,        ///< not a valid message: answer with error_code / reason and `id`
};

struct Message {
  Kind kind = Kind::kInvalid;
  /// The id (kNone for notifications; for kInvalid: the id if it could be read, else null).
  Id id;
  StrView method;       ///< requests and notifications
  json::Value params;   ///< object or array, or missing
  json::Value result;   ///< responses
  struct Error {
    int64_t code = 0;
    StrView message;
    json::Value data;   ///< missing when absent
  } error;              ///< error responses
  /// kInvalid only: the code to answer with and why (static text after the code's standard
  /// message, e.g. "duplicate key" for "Invalid Request: duplicate key"; "" when the Status
  /// says it all), plus detail: the Status behind it (kOk if none) and the byte offset in the
  /// message (-1 if none).
  ErrorCode invalid_code = ErrorCode::kInvalidRequest;
  const char* reason = "";
  Status cause = Status::kOk;
  /// kErrorResponse only: made by the decoder for a client's response it could not keep
  /// (Decoder::keep_lost_responses(); `reason` and error.message say why), not sent by the client.
  bool lost = false;
  int64_t offset = -1;
  const Message* next = nullptr;  ///< next message of a batch
};

}  // namespace jsonrpc
EMCP_NS_END

#endif  // EMCP_JSONRPC_MESSAGE_H
