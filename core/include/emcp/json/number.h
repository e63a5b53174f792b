// emcp/json/number.h - exact conversions between decimal text and double, without libc.
//
// JSON numbers in emcp never go through strtod or printf: newlib's strtod allocates, and the
// printf family adds 20+ KiB of flash. These two functions are the only place emcp converts
// between binary floating point and decimal.
//
// Context: any (pure functions, no state).
#ifndef EMCP_JSON_NUMBER_H
#define EMCP_JSON_NUMBER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace json {

/// Longest text format_double() writes: "-0.0000012345678901234567" (17 digits after
/// "-0.00000") is 25 bytes; "-1.2345678901234567e-308" is 24.
constexpr size_t kMaxDoubleChars = 25;

/// Writes the finite double `v` as decimal text into `out` (at least kMaxDoubleChars bytes) and
/// returns the number of bytes written (no NUL). The text parses back to exactly `v` and uses
/// the layout of ECMAScript Number.prototype.toString (what JSON.stringify writes): "0", "-0"
/// is written as "0", "3", "0.1", "1.5e-7", "1e+21", "123456789012345680000". The digits are
/// the shortest that round-trip: Grisu2's, and where Grisu2 misses them (about 0.1% of
/// doubles: the shortest form lies within about 2^-63, relative, of the edge of the rounding
/// interval, e.g. 1e23) its 16- or 17-digit result is shortened while the shorter number reads
/// back as `v` ("1e+23", as JavaScript writes it).
/// Returns 0 for NaN and infinities, which JSON cannot represent.
size_t format_double(double v, char* out);

/// Writes `v` in decimal into `out` (at least 20 bytes) and returns the length.
size_t format_int64(int64_t v, char* out);
/// Writes `v` in decimal into `out` (at least 20 bytes) and returns the length.
size_t format_uint64(uint64_t v, char* out);

/// Most significant digits decimal_to_double() accepts.
constexpr size_t kMaxDecimalDigits = 64;

/// Converts the decimal number (-1)^negative * D * 10^exp10 to the nearest double (ties to
/// even), where D is the integer whose decimal digits are `digits[0..count)`, each 0-9, most
/// significant first (count <= kMaxDecimalDigits; count == 0 means zero). Values too small for
/// a subnormal become (signed) zero. Returns kNumberOverflow when the value rounds to infinity
/// (*out is then left unchanged), kInvalidArgument when count is too large (or a digit is above
/// 9, or digits is null with count > 0), else kOk. Leading and trailing zero digits are allowed.
/// Correctly rounded for every input, like a conforming strtod; any int32 exp10 is accepted.
/// Stack: under 512 bytes on Cortex-M3 (two fixed-size big integers for hard cases).
Status decimal_to_double(bool negative, const uint8_t* digits, size_t count, int32_t exp10,
                         double* out);

/// True when D * 10^exp10 (digits as for decimal_to_double) rounds to infinity as a double,
/// i.e. exactly when decimal_to_double() would return kNumberOverflow; no floating point, a
/// few dozen bytes of code. The reader checks numbers with it and converts only on demand.
bool decimal_overflows_double(const uint8_t* digits, size_t count, int32_t exp10);

/// Longest text format_decimal() writes (kMaxDecimalDigits digits, sign, point, exponent).
constexpr size_t kMaxDecimalChars = kMaxDecimalDigits + 16;

/// Writes (-1)^negative * D * 10^exp10 (digits as for decimal_to_double) exactly, every digit
/// kept, in the layout format_double() uses (ECMAScript Number::toString: "0.25", "1.5e-7",
/// "1e+21"; zero and -0 as "0") into `out` (at least kMaxDecimalChars bytes); returns the
/// length. No floating point: this is how a number read from JSON is written back.
size_t format_decimal(bool negative, const uint8_t* digits, size_t count, int32_t exp10,
                      char* out);

}  // namespace json
EMCP_NS_END

#endif  // EMCP_JSON_NUMBER_H
