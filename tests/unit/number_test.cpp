// Tests of emcp/json/number.h: integer and double formatting, decimal-to-double conversion.
//
// Oracles: glibc strtod (correctly rounded) for decimal -> double, JavaScript's String(x) (Node,
// hard-coded below) for the ECMAScript layout, and exact midpoints between neighbouring doubles
// computed here with a small base-10^9 big integer.
#include "emcp/json/number.h"

#include <float.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "heap_guard.h"

using emcp::Status;
using emcp::json::decimal_to_double;
using emcp::json::decimal_overflows_double;
using emcp::json::format_decimal;
using emcp::json::kMaxDecimalChars;
using emcp::json::format_double;
using emcp::json::format_int64;
using emcp::json::format_uint64;
using emcp::json::kMaxDecimalDigits;
using emcp::json::kMaxDoubleChars;

namespace {

uint64_t bits_of(double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  return b;
}

double double_of(uint64_t b) {
  double v;
  memcpy(&v, &b, sizeof v);
  return v;
}

constexpr uint64_t kInfBits = 0x7FF0000000000000ULL;

/// format_double(v) as a string; checks the documented buffer bound (nothing written past the
/// returned length, length <= kMaxDoubleChars).
std::string fmt(double v) {
  char buf[64];
  memset(buf, 'X', sizeof buf);
  size_t n;
  {
    emcp_test::NoHeapScope no_heap;
    n = format_double(v, buf);
  }
  EXPECT_LE(n, kMaxDoubleChars) << v;
  for (size_t i = n; i < sizeof buf; ++i) {
    if (buf[i] != 'X') {
      ADD_FAILURE() << "format_double wrote past its length for " << v;
      break;
    }
  }
  return std::string(buf, n);
}

std::string fmt_i64(int64_t v) {
  char buf[32];
  size_t n;
  {
    emcp_test::NoHeapScope no_heap;
    n = format_int64(v, buf);
  }
  return std::string(buf, n);
}

std::string fmt_u64(uint64_t v) {
  char buf[32];
  size_t n;
  {
    emcp_test::NoHeapScope no_heap;
    n = format_uint64(v, buf);
  }
  return std::string(buf, n);
}

/// What the JSON reader passes to decimal_to_double().
struct Decimal {
  bool negative = false;
  uint8_t digits[kMaxDecimalDigits] = {};
  size_t count = 0;
  int32_t exp10 = 0;
};

/// Splits "[-]ddd[.ddd][e[+-]ddd]" into significant digits (leading and trailing zeros stripped)
/// and a decimal exponent, like the JSON reader does. Returns false when more than
/// kMaxDecimalDigits significant digits remain or the text is malformed.
bool to_decimal(const std::string& s, Decimal* d) {
  *d = Decimal();
  size_t i = 0;
  if (i < s.size() && s[i] == '-') {
    d->negative = true;
    ++i;
  }
  std::vector<uint8_t> all;
  long long exp_adjust = 0;
  bool any = false;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
    all.push_back(static_cast<uint8_t>(s[i] - '0'));
    any = true;
  }
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      all.push_back(static_cast<uint8_t>(s[i] - '0'));
      --exp_adjust;
      any = true;
    }
  }
  if (!any) return false;
  long long exp = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    if (i == s.size()) return false;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) exp = exp * 10 + (s[i] - '0');
    if (neg) exp = -exp;
  }
  if (i != s.size()) return false;
  size_t first = 0;
  while (first < all.size() && all[first] == 0) ++first;
  size_t last = all.size();
  while (last > first && all[last - 1] == 0) {
    --last;
    ++exp_adjust;
  }
  if (last - first > kMaxDecimalDigits) return false;
  d->count = last - first;
  for (size_t k = 0; k < d->count; ++k) d->digits[k] = all[first + k];
  long long e = d->count == 0 ? 0 : exp + exp_adjust;
  d->exp10 = static_cast<int32_t>(e);
  return true;
}

/// decimal_to_double() of d, inside a NoHeapScope.
Status convert(const Decimal& d, double* out) {
  emcp_test::NoHeapScope no_heap;
  return decimal_to_double(d.negative, d.digits, d.count, d.exp10, out);
}

/// Reference layout of ECMAScript Number::toString for digits d1..dk and exponent n
/// (value 0.d1..dk * 10^n), written independently of the library.
std::string js_layout(bool negative, const std::string& digits, int n) {
  const int k = static_cast<int>(digits.size());
  std::string r = negative ? "-" : "";
  if (k <= n && n <= 21) {
    r += digits + std::string(static_cast<size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    r += digits.substr(0, static_cast<size_t>(n)) + "." + digits.substr(static_cast<size_t>(n));
  } else if (-6 < n && n <= 0) {
    r += "0." + std::string(static_cast<size_t>(-n), '0') + digits;
  } else {
    r += digits.substr(0, 1);
    if (k > 1) r += "." + digits.substr(1);
    r += (n - 1 < 0 ? "e-" : "e+") + std::to_string(std::abs(n - 1));
  }
  return r;
}

/// Converts s with decimal_to_double() and with strtod and expects the same double (bit for
/// bit), or kNumberOverflow where strtod overflows.
void expect_same_as_strtod(const std::string& s) {
  Decimal d;
  ASSERT_TRUE(to_decimal(s, &d)) << s;
  const double ref = strtod(s.c_str(), nullptr);
  double got = 12345.0;
  const Status st = convert(d, &got);
  // The reader's range check, without conversion, must agree with strtod too.
  EXPECT_EQ(decimal_overflows_double(d.digits, d.count, d.exp10), std::isinf(ref)) << s;
  // format_decimal() writes the same digits (ECMAScript layout) and reads back the same.
  char text[kMaxDecimalChars];
  const std::string written(text, format_decimal(d.negative, d.digits, d.count, d.exp10, text));
  if (d.count == 0) {
    EXPECT_EQ(written, "0") << s;
  } else {
    std::string digits;
    for (size_t k = 0; k < d.count; ++k) digits += static_cast<char>('0' + d.digits[k]);
    EXPECT_EQ(written, js_layout(d.negative, digits, static_cast<int>(d.count) + d.exp10)) << s;
  }
  // Same value (-0 is written 0, as JSON.stringify does).
  EXPECT_EQ(strtod(written.c_str(), nullptr), ref) << s << " written " << written;
  if (std::isinf(ref)) {
    EXPECT_EQ(st, Status::kNumberOverflow) << s;
    EXPECT_EQ(got, 12345.0) << s << ": *out must stay unchanged on overflow";
  } else {
    ASSERT_EQ(st, Status::kOk) << s;
    EXPECT_EQ(bits_of(got), bits_of(ref)) << s << " -> " << got << " expected " << ref;
  }
}

/// Shortest correctly rounded digits that read back as v (v finite, > 0), via printf/strtod:
/// sets *digits (no trailing zeros) and *n (value 0.digits * 10^n).
void shortest_digits(double v, std::string* digits, int* n) {
  char buf[64];
  for (int p = 0; p < 17; ++p) {
    snprintf(buf, sizeof buf, "%.*e", p, v);
    if (strtod(buf, nullptr) == v) break;
  }
  // buf is "d.ddde[+-]xx" (or "de[+-]xx").
  std::string s(buf);
  const size_t epos = s.find('e');
  std::string mant = s.substr(0, epos);
  mant.erase(std::remove(mant.begin(), mant.end(), '.'), mant.end());
  while (mant.size() > 1 && mant.back() == '0') mant.pop_back();
  *digits = mant;
  *n = atoi(s.c_str() + epos + 1) + 1;
}

/// Significant digits of a format_double() result (sign, point, exponent and the zeros that only
/// place the point removed).
std::string significant_digits(const std::string& s) {
  std::string m = s.substr(0, s.find('e'));
  std::string d;
  for (char c : m) {
    if (c >= '0' && c <= '9') d += c;
  }
  const size_t first = d.find_first_not_of('0');
  if (first == std::string::npos) return "0";
  d = d.substr(first);
  while (d.size() > 1 && d.back() == '0') d.pop_back();
  return d;
}

/// Exact decimal expansion of the midpoint (2m + 1) 2^(q-1) between the double m 2^q and the next
/// one up: value = digits * 10^(*exp10), digits without trailing zeros.
std::string midpoint_decimal(uint64_t m, int q, int* exp10) {
  std::vector<uint32_t> big;  // base 10^9, little endian
  uint64_t v = 2 * m + 1;
  while (v != 0) {
    big.push_back(static_cast<uint32_t>(v % 1000000000u));
    v /= 1000000000u;
  }
  auto mul = [&big](uint32_t f) {
    uint64_t carry = 0;
    for (uint32_t& limb : big) {
      const uint64_t t = static_cast<uint64_t>(limb) * f + carry;
      limb = static_cast<uint32_t>(t % 1000000000u);
      carry = t / 1000000000u;
    }
    while (carry != 0) {
      big.push_back(static_cast<uint32_t>(carry % 1000000000u));
      carry /= 1000000000u;
    }
  };
  int twos = q - 1;
  *exp10 = 0;
  if (twos >= 0) {
    for (; twos >= 29; twos -= 29) mul(1u << 29);
    mul(1u << twos);
  } else {
    int fives = -twos;  // (2m+1) / 2^k = (2m+1) 5^k / 10^k
    *exp10 = -fives;
    for (; fives >= 12; fives -= 12) mul(244140625u);
    uint32_t p = 1;
    for (; fives > 0; --fives) p *= 5u;
    mul(p);
  }
  std::string s = std::to_string(big.back());
  char chunk[16];
  for (size_t i = big.size() - 1; i > 0; --i) {
    snprintf(chunk, sizeof chunk, "%09u", big[i - 1]);
    s += chunk;
  }
  while (s.size() > 1 && s.back() == '0') {
    s.pop_back();
    ++*exp10;
  }
  return s;
}

/// Adds `delta` (+1 or -1) to the last digit of the decimal string s (no sign, no point).
std::string add_last(std::string s, int delta) {
  size_t i = s.size();
  if (delta > 0) {
    while (i > 0 && s[i - 1] == '9') s[--i] = '0';
    if (i == 0) return "1" + s;
    ++s[i - 1];
  } else {
    while (i > 0 && s[i - 1] == '0') s[--i] = '9';
    --s[i - 1];
  }
  return s;
}

}  // namespace

// ---- Integers ----------------------------------------------------------------------------------

TEST(NumberFormatInt, Extremes) {
  EXPECT_EQ(fmt_i64(0), "0");
  EXPECT_EQ(fmt_i64(-1), "-1");
  EXPECT_EQ(fmt_i64(1), "1");
  EXPECT_EQ(fmt_i64(INT64_MAX), "9223372036854775807");
  EXPECT_EQ(fmt_i64(INT64_MIN), "-9223372036854775808");
  EXPECT_EQ(fmt_i64(INT64_MIN + 1), "-9223372036854775807");
  EXPECT_EQ(fmt_i64(4294967295LL), "4294967295");
  EXPECT_EQ(fmt_i64(4294967296LL), "4294967296");
  EXPECT_EQ(fmt_i64(-4294967296LL), "-4294967296");
  EXPECT_EQ(fmt_i64(1000000000LL), "1000000000");
  EXPECT_EQ(fmt_i64(999999999LL), "999999999");
  EXPECT_EQ(fmt_i64(1000000000000000000LL), "1000000000000000000");
  EXPECT_EQ(fmt_u64(0), "0");
  EXPECT_EQ(fmt_u64(UINT64_MAX), "18446744073709551615");
  EXPECT_EQ(fmt_u64(10000000000000000000ULL), "10000000000000000000");
  EXPECT_EQ(fmt_u64(4294967295ULL), "4294967295");
  EXPECT_EQ(fmt_u64(4294967296ULL), "4294967296");
}

TEST(NumberFormatInt, PowersOfTenAndNeighbours) {
  uint64_t p = 1;
  for (int i = 0; i < 20; ++i, p *= 10) {
    EXPECT_EQ(fmt_u64(p), std::to_string(p));
    EXPECT_EQ(fmt_u64(p - 1), std::to_string(p - 1));
    EXPECT_EQ(fmt_u64(p + 1), std::to_string(p + 1));
    if (p <= static_cast<uint64_t>(INT64_MAX)) {
      const int64_t s = static_cast<int64_t>(p);
      EXPECT_EQ(fmt_i64(-s), std::to_string(-s));
      EXPECT_EQ(fmt_i64(-s + 1), std::to_string(-s + 1));
    }
  }
}

TEST(NumberFormatInt, RandomMatchesToString) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 100000; ++i) {
    const uint64_t u = rng() >> (rng() % 64);  // all magnitudes
    const int64_t s = static_cast<int64_t>(rng()) >> (rng() % 64);
    ASSERT_EQ(fmt_u64(u), std::to_string(u));
    ASSERT_EQ(fmt_i64(s), std::to_string(s));
  }
}

// ---- format_double -----------------------------------------------------------------------------

TEST(NumberFormatDouble, MatchesJavaScriptStrings) {
  // Left: the value (as the shortest exponential literal); right: String(value) in Node 20.
  struct Case {
    double v;
    const char* js;
  };
  const Case cases[] = {
    {0e+0, "0"},
    {1e+0, "1"},
    {-1e+0, "-1"},
    {2e+0, "2"},
    {1e+1, "10"},
    {1e+2, "100"},
    {1e+15, "1000000000000000"},
    {1e+16, "10000000000000000"},
    {1e+17, "100000000000000000"},
    {1e+20, "100000000000000000000"},
    {1e+21, "1e+21"},
    {1e+22, "1e+22"},
    {1e+100, "1e+100"},
    {-1e+100, "-1e+100"},
    {1e+300, "1e+300"},
    {1e-1, "0.1"},
    {2e-1, "0.2"},
    {3e-1, "0.3"},
    {3.0000000000000004e-1, "0.30000000000000004"},
    {3.333333333333333e-1, "0.3333333333333333"},
    {6.666666666666666e-1, "0.6666666666666666"},
    {-6.666666666666666e-1, "-0.6666666666666666"},
    {5e-1, "0.5"},
    {1.5e+0, "1.5"},
    {4.35e+0, "4.35"},
    {1.23456e+2, "123.456"},
    {-1.23456e+2, "-123.456"},
    {3.14159e+0, "3.14159"},
    {3.141592653589793e+0, "3.141592653589793"},
    {2.718281828459045e+0, "2.718281828459045"},
    {2.220446049250313e-16, "2.220446049250313e-16"},
    {1e-5, "0.00001"},
    {1e-6, "0.000001"},
    {1e-7, "1e-7"},
    {1.5e-7, "1.5e-7"},
    {1.2345e-6, "0.0000012345"},
    {-1.2345678901234567e-6, "-0.0000012345678901234567"},
    {1.234e-5, "0.00001234"},
    {1e-3, "0.001"},
    {5e-7, "5e-7"},
    {1.23e-18, "1.23e-18"},
    {5e-324, "5e-324"},
    {1e-323, "1e-323"},
    {1.5e-323, "1.5e-323"},
    {2.2250738585072014e-308, "2.2250738585072014e-308"},
    {2.225073858507201e-308, "2.225073858507201e-308"},
    {1.7976931348623157e+308, "1.7976931348623157e+308"},
    {-1.7976931348623157e+308, "-1.7976931348623157e+308"},
    {9.007199254740992e+15, "9007199254740992"},
    {9.007199254740994e+15, "9007199254740994"},
    {-9.007199254740992e+15, "-9007199254740992"},
    {9.223372036854776e+18, "9223372036854776000"},
    {1.8446744073709552e+19, "18446744073709552000"},
    {2.9514790517935283e+20, "295147905179352830000"},
    {1.4411518807585587e+17, "144115188075855870"},
    {1.2345678901234568e+20, "123456789012345680000"},
    {1.2345678901234567e+19, "12345678901234567000"},
    {1.0000000000000002e+0, "1.0000000000000002"},
    {9.999999999999999e-1, "0.9999999999999999"},
    {2.5e+1, "25"},
    {1e-10, "1e-10"},
    {4.294967296e+9, "4294967296"},
    {4.2949672955e+9, "4294967295.5"},
    {1.234567125e+6, "1234567.125"},
    {7.999999999999999e-1, "0.7999999999999999"},
    {1.2100000000000002e+0, "1.2100000000000002"},
    {3.3333333333333336e+1, "33.333333333333336"},
    {9.999999999999999e+20, "999999999999999900000"},
    {1e-100, "1e-100"},
    {3e-200, "3e-200"},
    {6.02214076e+23, "6.02214076e+23"},
    {6.62607015e-34, "6.62607015e-34"},
    {1.602176634e-19, "1.602176634e-19"},
    {2.99792458e+8, "299792458"},
    {-1e-4, "-0.0001"},
    {1.23e-4, "0.000123"},
    {6.55360625e+4, "65536.0625"},
    {3.5e-323, "3.5e-323"},
    {1.4285714285714285e-1, "0.14285714285714285"},
    {3.142857142857143e+0, "3.142857142857143"},
    {1e+308, "1e+308"},
    {5e-310, "5e-310"},
  };
  for (const Case& c : cases) EXPECT_EQ(fmt(c.v), c.js) << "value " << c.js;
}

// Grisu2 cannot return a number that lies on (or within one 64-bit unit of) the boundary of the
// rounding interval, so for a few doubles whose shortest form sits there it finds a longer one
// (9.999999999999999e+22 for 1e23); format_double then shortens it. JavaScript's texts.
TEST(NumberFormatDouble, Grisu2MissesAreShortened) {
  struct Case {
    double v;
    const char* js;
  };
  const Case cases[] = {
      {1e23, "1e+23"},
      {8.41e21, "8.41e+21"},
      {1e126, "1e+126"},
      {70308786387853904.0, "70308786387853900"},
  };
  for (const Case& c : cases) {
    const std::string s = fmt(c.v);
    EXPECT_EQ(s, c.js);
    EXPECT_EQ(bits_of(strtod(s.c_str(), nullptr)), bits_of(c.v)) << s;
  }
}

TEST(NumberFormatDouble, SpecialValues) {
  EXPECT_EQ(fmt(0.0), "0");
  EXPECT_EQ(fmt(-0.0), "0");
  EXPECT_EQ(fmt(std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(fmt(-std::numeric_limits<double>::quiet_NaN()), "");
  EXPECT_EQ(fmt(std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(fmt(-std::numeric_limits<double>::infinity()), "");
  EXPECT_EQ(fmt(double_of(0x7FF0000000000001ULL)), "");  // signalling NaN payload
  EXPECT_EQ(fmt(DBL_MIN), "2.2250738585072014e-308");
  EXPECT_EQ(fmt(DBL_MAX), "1.7976931348623157e+308");
  EXPECT_EQ(fmt(-DBL_MAX), "-1.7976931348623157e+308");
  EXPECT_EQ(fmt(double_of(1)), "5e-324");
  EXPECT_EQ(fmt(-double_of(1)), "-5e-324");
  EXPECT_EQ(fmt(double_of(0x000FFFFFFFFFFFFFULL)), "2.225073858507201e-308");  // largest subnormal
  // The longest layout: 17 digits after "-0.00000".
  EXPECT_EQ(fmt(-1.2345678901234567e-6), "-0.0000012345678901234567");
  EXPECT_EQ(fmt(-1.2345678901234567e-6).size(), kMaxDoubleChars);
  EXPECT_EQ(fmt(-1.2345678901234567e-308), "-1.2345678901234567e-308");
}

TEST(NumberFormatDouble, LayoutBoundaries) {
  EXPECT_EQ(fmt(1e20), "100000000000000000000");
  EXPECT_EQ(fmt(1e21), "1e+21");
  EXPECT_EQ(fmt(1.5e21), "1.5e+21");
  EXPECT_EQ(fmt(123456789012345680000.0), "123456789012345680000");
  EXPECT_EQ(fmt(1e-6), "0.000001");
  EXPECT_EQ(fmt(1e-7), "1e-7");
  EXPECT_EQ(fmt(1.5e-7), "1.5e-7");
  EXPECT_EQ(fmt(0.1), "0.1");
  EXPECT_EQ(fmt(12.5), "12.5");
  EXPECT_EQ(fmt(-0.5), "-0.5");
  EXPECT_EQ(fmt(1e100), "1e+100");
  EXPECT_EQ(fmt(1.25e-100), "1.25e-100");
}

TEST(NumberFormatDouble, PowersOfTenAreOneDigit) {
  for (int i = -323; i <= 308; ++i) {
    const std::string lit = "1e" + std::to_string(i);
    const double v = strtod(lit.c_str(), nullptr);
    const std::string s = fmt(v);
    EXPECT_EQ(bits_of(strtod(s.c_str(), nullptr)), bits_of(v)) << lit;
    EXPECT_EQ(s, js_layout(false, "1", i + 1)) << lit;
  }
}

TEST(NumberFormatDouble, PowersOfTwoRoundTrip) {
  for (int i = -1074; i <= 1023; ++i) {
    const double v = std::ldexp(1.0, i);
    const std::string s = fmt(v);
    ASSERT_EQ(bits_of(strtod(s.c_str(), nullptr)), bits_of(v)) << i << " " << s;
    const double w = std::ldexp(-3.0, i - 1);  // -1.5 * 2^i
    const std::string t = fmt(w);
    ASSERT_EQ(bits_of(strtod(t.c_str(), nullptr)), bits_of(w)) << i << " " << t;
  }
}

TEST(NumberFormatDouble, IntegersArePrintedExactly) {
  for (int64_t i = 0; i <= 100000; ++i) {
    ASSERT_EQ(fmt(static_cast<double>(i)), std::to_string(i));
  }
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const int64_t v = static_cast<int64_t>(rng() >> (11 + rng() % 53));  // below 2^53
    ASSERT_EQ(fmt(static_cast<double>(v)), std::to_string(v));
    ASSERT_EQ(fmt(-static_cast<double>(v)), v == 0 ? "0" : "-" + std::to_string(v));
  }
  EXPECT_EQ(fmt(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(fmt(9007199254740991.0), "9007199254740991");
}

TEST(NumberFormatDouble, EdgeValuesRoundTrip) {
  const double values[] = {
      0.0, -0.0, DBL_MIN, -DBL_MIN, DBL_MAX, -DBL_MAX, DBL_EPSILON, 4.9e-324, 5e-324, 1e-323,
      0.1, 0.2, 0.3, 1e21, 1e-7, 123456789012345680000.0, 9007199254740992.0, 9007199254740993.0,
      2.2250738585072009e-308, 2.2250738585072011e-308, 1.7976931348623155e308,
      std::nextafter(DBL_MIN, 0.0), std::nextafter(DBL_MIN, 1.0), std::nextafter(DBL_MAX, 0.0),
      std::nextafter(1.0, 0.0), std::nextafter(1.0, 2.0), 1e22, 1e23, 5e-310, 8.98846567431158e307,
  };
  for (double v : values) {
    const std::string s = fmt(v);
    EXPECT_EQ(bits_of(strtod(s.c_str(), nullptr)), bits_of(v == 0 ? 0.0 : v)) << s;
  }
}

// 200,000 random bit patterns: the text reads back (with strtod and with decimal_to_double) as
// the same double and fits kMaxDoubleChars.
TEST(NumberFormatDouble, RandomBitsRoundTrip) {
  std::mt19937_64 rng(20240601);
  int checked = 0;
  for (int i = 0; i < 200000; ++i) {
    const uint64_t b = rng();
    const double v = double_of(b);
    if (!std::isfinite(v)) continue;
    const std::string s = fmt(v);
    ASSERT_EQ(bits_of(strtod(s.c_str(), nullptr)), bits_of(v == 0 ? 0.0 : v)) << s;
    Decimal d;
    ASSERT_TRUE(to_decimal(s, &d)) << s;
    double back = 0;
    ASSERT_EQ(convert(d, &back), Status::kOk) << s;
    ASSERT_EQ(bits_of(back), bits_of(v)) << s;
    ++checked;
  }
  EXPECT_GT(checked, 199000);
}

// Always the shortest digits (Grisu2, shortened where it missed), and the text matches
// JavaScript's (shortest digits, closest to the value) in almost all cases: where two shortest
// forms read back, Grisu2 does not always take the closer. Measured on 20,000 random doubles.
TEST(NumberFormatDouble, ShortestAndMostlyLikeJavaScript) {
  std::mt19937_64 rng(99);
  int total = 0;
  int longer = 0;
  int differs_from_js = 0;
  for (int i = 0; i < 20000; ++i) {
    const double v = double_of(rng() & ~(1ULL << 63));
    if (!std::isfinite(v) || v == 0) continue;
    ++total;
    std::string digits;
    int n = 0;
    shortest_digits(v, &digits, &n);
    const std::string s = fmt(v);
    const std::string ours = significant_digits(s);
    ASSERT_LE(ours.size(), 17u) << s;
    ASSERT_GE(ours.size(), digits.size()) << s;
    if (ours.size() > digits.size()) ++longer;
    if (s != js_layout(false, digits, n)) ++differs_from_js;
  }
  EXPECT_EQ(longer, 0);                     // never longer than shortest
  EXPECT_LE(differs_from_js * 100, total);  // at most 1% different from JavaScript
  printf("[          ] %d of %d not shortest, %d differ from the shortest-closest layout\n",
         longer, total, differs_from_js);
}

// ---- decimal_to_double -------------------------------------------------------------------------

TEST(NumberDecimalToDouble, HardCases) {
  const char* cases[] = {
      // Halfway cases between consecutive integers above 2^53: ties to even.
      "9007199254740993", "9007199254740995", "9007199254740997", "-9007199254740993",
      "18014398509481989", "18014398509481990", "18014398509481991", "18014398509481993",
      "9007199254740992.5", "9007199254740993.00000000000000000001",
      "9007199254740992.99999999999999999999",
      // Around the smallest normal and subnormals.
      "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
      "2.225073858507201e-308", "2.2250738585072009e-308", "4.9406564584124654e-324",
      "2.4703282292062327e-324", "2.4703282292062328e-324", "7.4109846876186982e-324",
      "7.4109846876186981e-324", "1e-323", "5e-324", "3e-324", "2e-324", "1e-324", "1e-400",
      "4.9e-324", "-4.9e-324", "-1e-400",
      // 64-digit truncations of the midpoint 2^-1075 and one unit above it.
      "2.470328229206232720882843964341106861825299013071623822127928412e-324",
      "2.470328229206232720882843964341106861825299013071623822127928413e-324",
      // Around the largest double and overflow.
      "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308",
      "1.797693134862315807e308", "1.797693134862315808e308", "-1.7976931348623159e308", "1e309",
      "1e308", "8.98846567431158e307",
      // 64-digit truncations of the midpoint DBL_MAX + 2^970 and one unit above it.
      "1.797693134862315807937289714053034150799341327100378269361737789e308",
      "1.797693134862315807937289714053034150799341327100378269361737790e308",
      // Classic difficult inputs for strtod implementations.
      "2.2250738585072012e-308", "0.1", "0.2", "0.3", "1e23", "8.41e21", "5e-310",
      "9.109383560000000e-31", "6.02214076e23",
      "1.00000000000000011102230246251565404236316680908203125",  // 1 + 2^-53: tie, to even
      "1.00000000000000011102230246251565404236316680908203124",
      "1.00000000000000011102230246251565404236316680908203126", "123456789012345678901234567890",
      "3.4028234663852886e38", "4.35", "0.000000000000000000000000000000000000000000001",
      "9007199254740991", "1e22", "1e23", "1e37", "1e38", "123e30", "9007199254740991e22",
      "9007199254740991e23", "1e-22", "1e-23", "9007199254740991e-22", "12345678901234567890e-5",
      "7.038531e-26", "2.0e-3", "69e267", "999999999999999999999999999999e-330",
      "358416272e-33", "1448997445238699", "8.2e-322", "1.0e-320", "1797693134862315708e290",
      "17976931348623157e292", "4.940656458412465441765687928682213723651e-324",
      "2.470328229206232720882e-324", "2.470328229206232720883e-324", "1.3e-322",
      "1234567890123456789012345678901234567890123456789012345678901234",
      "0.0000000000000000000000000000000000000000000000000000000000000000001234567890123456789",
  };
  for (const char* c : cases) expect_same_as_strtod(c);
}

TEST(NumberDecimalToDouble, DocumentedResults) {
  Decimal d;
  double v = 0;
  ASSERT_TRUE(to_decimal("1.7976931348623158e308", &d));
  ASSERT_EQ(convert(d, &v), Status::kOk);
  EXPECT_EQ(v, DBL_MAX);
  ASSERT_TRUE(to_decimal("1.7976931348623159e308", &d));
  v = 42;
  EXPECT_EQ(convert(d, &v), Status::kNumberOverflow);
  EXPECT_EQ(v, 42);  // unchanged
  ASSERT_TRUE(to_decimal("2.4703282292062327e-324", &d));
  ASSERT_EQ(convert(d, &v), Status::kOk);
  EXPECT_EQ(bits_of(v), 0u);
  ASSERT_TRUE(to_decimal("-2.4703282292062327e-324", &d));
  ASSERT_EQ(convert(d, &v), Status::kOk);
  EXPECT_EQ(bits_of(v), bits_of(-0.0));
  ASSERT_TRUE(to_decimal("2.4703282292062328e-324", &d));
  ASSERT_EQ(convert(d, &v), Status::kOk);
  EXPECT_EQ(bits_of(v), 1u);
  ASSERT_TRUE(to_decimal("9007199254740993", &d));
  ASSERT_EQ(convert(d, &v), Status::kOk);
  EXPECT_EQ(v, 9007199254740992.0);
}

TEST(NumberDecimalToDouble, ZeroAndExtremeExponents) {
  emcp_test::NoHeapScope no_heap;
  const uint8_t zeros[3] = {0, 0, 0};
  const uint8_t one[1] = {1};
  const uint8_t nines[3] = {9, 9, 9};
  double v = 7;
  Status s[16];
  uint64_t b[16];
  s[0] = decimal_to_double(false, nullptr, 0, 0, &v);
  b[0] = bits_of(v);
  s[1] = decimal_to_double(true, nullptr, 0, INT32_MAX, &v);
  b[1] = bits_of(v);
  s[2] = decimal_to_double(false, zeros, 3, INT32_MAX, &v);
  b[2] = bits_of(v);
  s[3] = decimal_to_double(true, zeros, 3, INT32_MIN, &v);
  b[3] = bits_of(v);
  s[4] = decimal_to_double(false, one, 1, INT32_MIN, &v);
  b[4] = bits_of(v);
  s[5] = decimal_to_double(true, one, 1, INT32_MIN, &v);
  b[5] = bits_of(v);
  v = 7;
  s[6] = decimal_to_double(false, one, 1, INT32_MAX, &v);
  b[6] = bits_of(v);
  s[7] = decimal_to_double(true, nines, 3, INT32_MAX - 1, &v);  // count + exp10 overflows int32
  b[7] = bits_of(v);
  s[8] = decimal_to_double(false, nines, 3, INT32_MIN + 1, &v);
  b[8] = bits_of(v);
  s[9] = decimal_to_double(false, one, 1, 308, &v);
  b[9] = bits_of(v);
  s[10] = decimal_to_double(false, one, 1, 309, &v);
  b[10] = bits_of(v);
  s[11] = decimal_to_double(false, one, 1, -324, &v);  // 1e-324 < 2^-1075: zero
  b[11] = bits_of(v);
  s[12] = decimal_to_double(false, nines, 3, -326, &v);  // 9.99e-324: 2 * 2^-1074
  b[12] = bits_of(v);
  EXPECT_EQ(s[0], Status::kOk);
  EXPECT_EQ(b[0], 0u);
  EXPECT_EQ(s[1], Status::kOk);
  EXPECT_EQ(b[1], bits_of(-0.0));
  EXPECT_EQ(s[2], Status::kOk);
  EXPECT_EQ(b[2], 0u);
  EXPECT_EQ(s[3], Status::kOk);
  EXPECT_EQ(b[3], bits_of(-0.0));
  EXPECT_EQ(s[4], Status::kOk);
  EXPECT_EQ(b[4], 0u);
  EXPECT_EQ(s[5], Status::kOk);
  EXPECT_EQ(b[5], bits_of(-0.0));
  EXPECT_EQ(s[6], Status::kNumberOverflow);
  EXPECT_EQ(b[6], bits_of(7.0));
  EXPECT_EQ(s[7], Status::kNumberOverflow);
  EXPECT_EQ(s[8], Status::kOk);
  EXPECT_EQ(b[8], 0u);
  EXPECT_EQ(s[9], Status::kOk);
  EXPECT_EQ(b[9], bits_of(1e308));
  EXPECT_EQ(s[10], Status::kNumberOverflow);
  EXPECT_EQ(s[11], Status::kOk);
  EXPECT_EQ(b[11], 0u);
  EXPECT_EQ(s[12], Status::kOk);
  EXPECT_EQ(b[12], 2u);
}

TEST(NumberDecimalToDouble, LeadingAndTrailingZerosAreAccepted) {
  // The reader strips them, but the function must not depend on it.
  const uint8_t d1[6] = {0, 0, 1, 2, 5, 0};  // 001250e-3 = 1.25
  const uint8_t d2[kMaxDecimalDigits] = {1};  // 1 followed by 63 zeros
  double v1 = 0, v2 = 0, v3 = 0;
  Status s1, s2, s3;
  {
    emcp_test::NoHeapScope no_heap;
    s1 = decimal_to_double(false, d1, 6, -3, &v1);
    s2 = decimal_to_double(false, d2, kMaxDecimalDigits, -63, &v2);
    s3 = decimal_to_double(false, d2, kMaxDecimalDigits, 245, &v3);
  }
  EXPECT_EQ(s1, Status::kOk);
  EXPECT_EQ(v1, 1.25);
  EXPECT_EQ(s2, Status::kOk);
  EXPECT_EQ(v2, 1.0);
  EXPECT_EQ(s3, Status::kOk);
  EXPECT_EQ(v3, 1e308);
}

TEST(NumberDecimalToDouble, RejectsBadArguments) {
  uint8_t digits[kMaxDecimalDigits + 1];
  for (size_t i = 0; i <= kMaxDecimalDigits; ++i) digits[i] = static_cast<uint8_t>(1 + i % 9);
  const uint8_t bad[2] = {1, 10};
  double v = 3;
  Status s1, s2, s3, s4;
  {
    emcp_test::NoHeapScope no_heap;
    s1 = decimal_to_double(false, digits, kMaxDecimalDigits + 1, 0, &v);
    s2 = decimal_to_double(false, bad, 2, 0, &v);
    s3 = decimal_to_double(false, nullptr, 1, 0, &v);
    s4 = decimal_to_double(false, digits, kMaxDecimalDigits, -300, &v);
  }
  EXPECT_EQ(s1, Status::kInvalidArgument);
  EXPECT_EQ(s2, Status::kInvalidArgument);
  EXPECT_EQ(s3, Status::kInvalidArgument);
  EXPECT_EQ(s4, Status::kOk);
}

// Random digit strings of 1..64 digits with exponents across -400..+400 (half of them steered
// into the range of doubles), compared with strtod.
TEST(NumberDecimalToDouble, RandomDigitStringsMatchStrtod) {
  std::mt19937_64 rng(4242);
  const int kCount = 200000;
  std::vector<std::string> texts;
  std::vector<Decimal> decs(kCount);
  texts.reserve(kCount);
  for (int i = 0; i < kCount; ++i) {
    const int n = 1 + static_cast<int>(rng() % 64);
    std::string s;
    if (rng() % 2) s += '-';
    for (int k = 0; k < n; ++k) s += static_cast<char>('0' + (k == 0 ? 1 + rng() % 9 : rng() % 10));
    // Mostly uniform digits; sometimes runs of 0s or 9s (near powers of ten and midpoints).
    if (rng() % 4 == 0 && n > 2) {
      const char fill = rng() % 2 ? '0' : '9';
      for (int k = 1 + static_cast<int>(rng() % (n - 1)); k < n; ++k) s[s.size() - n + k] = fill;
      if (rng() % 2) s.back() = static_cast<char>('0' + rng() % 10);
    }
    int e;
    if (rng() % 2) {
      e = static_cast<int>(rng() % 801) - 400;
    } else {
      e = static_cast<int>(rng() % 640) - 325 - n + 1;  // value in about [1e-325, 1e315)
    }
    s += "e" + std::to_string(e);
    ASSERT_TRUE(to_decimal(s, &decs[i])) << s;
    texts.push_back(s);
  }
  std::vector<double> got(kCount);
  std::vector<Status> st(kCount);
  {
    emcp_test::NoHeapScope no_heap;
    for (int i = 0; i < kCount; ++i) {
      const Decimal& d = decs[i];
      got[i] = 0;
      st[i] = decimal_to_double(d.negative, d.digits, d.count, d.exp10, &got[i]);
    }
  }
  int overflow = 0, zero = 0, subnormal = 0;
  for (int i = 0; i < kCount; ++i) {
    const double ref = strtod(texts[i].c_str(), nullptr);
    if (std::isinf(ref)) {
      ASSERT_EQ(st[i], Status::kNumberOverflow) << texts[i];
      ++overflow;
    } else {
      ASSERT_EQ(st[i], Status::kOk) << texts[i];
      ASSERT_EQ(bits_of(got[i]), bits_of(ref)) << texts[i] << " -> " << got[i] << " want " << ref;
      if (ref == 0) ++zero;
      if (ref != 0 && std::fabs(ref) < DBL_MIN) ++subnormal;
    }
  }
  EXPECT_GT(overflow, 1000);
  EXPECT_GT(zero, 1000);
  EXPECT_GT(subnormal, 100);
}

// Exact midpoints between neighbouring doubles, and long decimals just below and above them:
// the exact tie rounds to even, anything below to the lower double, anything above to the upper.
TEST(NumberDecimalToDouble, NearMidpoints) {
  std::mt19937_64 rng(777);
  std::vector<uint64_t> lows = {0, 1, 2, 0x000FFFFFFFFFFFFFULL, 0x0010000000000000ULL,
                                0x0010000000000001ULL, bits_of(1.0), bits_of(0.1),
                                bits_of(9007199254740992.0), bits_of(DBL_MAX),
                                bits_of(DBL_MAX) - 1, bits_of(1e23), bits_of(1e22),
                                bits_of(5e-324) + 1000};
  for (int i = 0; i < 3000; ++i) lows.push_back(rng() % bits_of(DBL_MAX));
  for (int i = 0; i < 500; ++i) lows.push_back(rng() % 0x0010000000000000ULL);  // subnormals
  for (int i = 0; i < 500; ++i) {  // exponents near 0, where midpoints are short
    lows.push_back(bits_of(1.0) - 0x0040000000000000ULL + rng() % 0x0080000000000000ULL);
  }
  int ties = 0, checks = 0;
  for (const uint64_t low : lows) {
    const uint64_t fraction = low & ((1ULL << 52) - 1);
    const int field = static_cast<int>(low >> 52);
    const uint64_t m = field == 0 ? fraction : fraction | (1ULL << 52);
    const int q = field == 0 ? -1074 : field - 1075;
    int e = 0;
    const std::string mid = midpoint_decimal(m, q, &e);
    const uint64_t high = low + 1;
    const uint64_t even = (low & 1) ? high : low;
    struct Probe {
      std::string digits;
      int exp10;
      uint64_t want;
    };
    std::vector<Probe> probes;
    if (mid.size() <= kMaxDecimalDigits) {
      // The tie itself, and one unit in the 64th digit above and below it.
      probes.push_back({mid, e, even});
      ++ties;
      const size_t pad = kMaxDecimalDigits - mid.size();
      const std::string wide = mid + std::string(pad, '0');
      const int wide_e = e - static_cast<int>(pad);
      if (pad > 0) probes.push_back({add_last(wide, +1), wide_e, high});
      probes.push_back({add_last(wide, -1), wide_e, low});
    }
    for (size_t len : {size_t{17}, size_t{18}, size_t{19}, size_t{20}, size_t{25}, size_t{40},
                       size_t{63}, size_t{64}}) {
      if (mid.size() <= len) continue;
      const std::string t = mid.substr(0, len);  // below the midpoint (mid has no trailing 0)
      const int te = e + static_cast<int>(mid.size() - len);
      probes.push_back({t, te, low});
      const std::string up = add_last(t, +1);  // above the midpoint
      probes.push_back({up, te + static_cast<int>(up.size() > len ? 1 : 0), high});
      if (up.size() > len) probes.back().digits = up.substr(0, len);
    }
    for (const Probe& p : probes) {
      std::string text = p.digits + "e" + std::to_string(p.exp10);
      Decimal d;
      ASSERT_TRUE(to_decimal(text, &d)) << text;
      double v = 0;
      const Status s = convert(d, &v);
      const double ref = strtod(text.c_str(), nullptr);
      ++checks;
      if (p.want >= kInfBits) {
        ASSERT_EQ(s, Status::kNumberOverflow) << text;
        ASSERT_TRUE(std::isinf(ref)) << text;
      } else {
        ASSERT_EQ(s, Status::kOk) << text;
        ASSERT_EQ(bits_of(v), p.want) << text;
        ASSERT_EQ(bits_of(ref), p.want) << text << " (strtod disagrees with the test's midpoint)";
      }
    }
  }
  EXPECT_GT(ties, 400);
  EXPECT_GT(checks, 40000);
}

TEST(NumberDecimalToDouble, FastPathBoundaries) {
  // Exact integers times exact powers of ten, and just past what the fast path covers.
  for (int e = -30; e <= 45; ++e) {
    for (const char* m : {"1", "9007199254740991", "9007199254740992", "123456789", "3", "7"}) {
      expect_same_as_strtod(std::string(m) + "e" + std::to_string(e));
      expect_same_as_strtod(std::string("-") + m + "e" + std::to_string(e));
    }
  }
}

TEST(NumberDecimalToDouble, SeventeenDigitOutputsOfFormatDouble) {
  // The most common input in practice: what a writer produced for an arbitrary double.
  std::mt19937_64 rng(31337);
  for (int i = 0; i < 50000; ++i) {
    const double v = double_of(rng() % bits_of(DBL_MAX));
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    expect_same_as_strtod(buf);
    snprintf(buf, sizeof buf, "%.16g", v);
    expect_same_as_strtod(buf);
  }
}

TEST(NumberDecimalOverflow, AroundTheMidpointAboveDblMax) {
  // The threshold is (2^54 - 1) * 2^970, 309 digits; inputs of up to 64 digits on both sides
  // of it, and of DBL_MAX, judged by strtod through expect_same_as_strtod.
  const std::string mid =
      "1797693134862315807937289714053034150799341327100378269361737789";
  for (size_t len = 1; len <= 64; ++len) {
    std::string p = mid.substr(0, len);
    const int e = 309 - static_cast<int>(len);
    expect_same_as_strtod(p + "e" + std::to_string(e));
    // One unit up and down in the last place.
    std::string up = p, down = p;
    for (size_t i = len; i-- > 0;) {
      if (up[i] == '9') { up[i] = '0'; continue; }
      ++up[i];
      break;
    }
    for (size_t i = len; i-- > 0;) {
      if (down[i] == '0') { down[i] = '9'; continue; }
      --down[i];
      break;
    }
    expect_same_as_strtod(up + "e" + std::to_string(e));
    expect_same_as_strtod("-" + down + "e" + std::to_string(e));
  }
  expect_same_as_strtod("1.7976931348623157e308");   // DBL_MAX
  expect_same_as_strtod("1.7976931348623158e308");   // rounds to DBL_MAX
  expect_same_as_strtod("1.7976931348623159e308");   // overflows
  expect_same_as_strtod("0.0001e313");
  expect_same_as_strtod("1e309");
  expect_same_as_strtod("9.99e308");
  EXPECT_FALSE(decimal_overflows_double(nullptr, 0, 1000000000));  // zero never overflows
}
