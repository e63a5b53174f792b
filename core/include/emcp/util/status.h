// emcp/util/status.h - the one status code of emcp, and Result<T>.
//
// Every fallible function returns a Status (or a Result<T> that carries one). Status is
// [[nodiscard]]: ignoring it is a compile error under -Werror. Wire error codes (JSON-RPC, HTTP)
// are separate enums mapped from Status in one place (emcp/jsonrpc/error.h).
//
// Context: any.
#ifndef EMCP_UTIL_STATUS_H
#define EMCP_UTIL_STATUS_H

#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN

enum class [[nodiscard]] Status : uint8_t {
  kOk = 0,

  // General.
  kNoSpace,          ///< a fixed buffer or the arena is full
  kInvalidArgument,  ///< the caller passed something the API does not accept
  kInvalidState,     ///< the call is not allowed in the object's current state
  kNotFound,         ///< a looked-up key, index or name does not exist
  kWrongType,        ///< a value exists but has another JSON type
  kOutOfRange,       ///< a value exists but does not fit the requested type
  kWouldBlock,       ///< the port cannot take or give bytes now; try again later
  kIoError,          ///< the port reported a failure
  kClosed,           ///< the peer or the stream has ended

  // JSON syntax (the input is not RFC 8259 JSON).
  kUnexpectedChar,      ///< a byte that cannot appear here (includes trailing commas)
  kUnexpectedEnd,       ///< input ended inside a value, or no value at all
  kInvalidNumber,       ///< number grammar violated (leading zero, missing digits...)
  kInvalidEscape,       ///< unknown escape or bad \uXXXX
  kInvalidSurrogate,    ///< \uXXXX surrogate without its pair (cannot be UTF-8)
  kInvalidUtf8,         ///< bytes that are not well-formed UTF-8
  kControlInString,     ///< unescaped byte below 0x20 inside a string
  kTrailingData,        ///< non-whitespace after the complete document

  // JSON limits (valid JSON that exceeds a configured capacity).
  kDepthLimit,       ///< nesting deeper than EMCP_JSON_MAX_DEPTH
  kKeyTooLong,       ///< key longer than EMCP_JSON_MAX_KEY_LEN
  kNumberTooLong,    ///< more significant digits than EMCP_JSON_MAX_NUMBER_DIGITS
  kNumberOverflow,   ///< number magnitude beyond the largest double

  kCount_  ///< not a status: number of values
};

/// True for the statuses that mean "the input is not JSON" (answered with -32700).
constexpr bool is_json_syntax_error(Status s) {
  return s >= Status::kUnexpectedChar && s <= Status::kTrailingData;
}
/// True for the statuses that mean "valid JSON beyond a configured limit".
constexpr bool is_json_limit_error(Status s) {
  return s >= Status::kDepthLimit && s <= Status::kNumberOverflow;
}

/// Short English description of a status ("unexpected character"), or "" when
/// EMCP_ERROR_STRINGS is 0. The returned string is static.
const char* status_str(Status s);

/// A value or the Status that explains why there is none.
/// Example:
///   Result<int64_t> r = args["count"].as_int();
///   if (!r.ok()) return r.status();
///   int64_t n = r.value();
template <typename T>
class [[nodiscard]] Result {
 public:
  constexpr Result(T value) : value_(value), status_(Status::kOk) {}  // NOLINT: implicit by design
  constexpr Result(Status status) : value_(), status_(status) {}     // NOLINT: implicit by design

  constexpr bool ok() const { return status_ == Status::kOk; }
  constexpr Status status() const { return status_; }
  /// The value; a default-constructed T when !ok().
  constexpr const T& value() const { return value_; }
  /// The value, or `fallback` when !ok().
  constexpr T value_or(T fallback) const { return ok() ? value_ : fallback; }

 private:
  T value_;
  Status status_;
};

EMCP_NS_END

#endif  // EMCP_UTIL_STATUS_H
