// number.cpp - decimal <-> double conversions without libc (see emcp/json/number.h).
//
// format_double: Grisu2 (F. Loitsch, "Printing Floating-Point Numbers Quickly and Accurately
// with Integers", PLDI 2010) with 64-bit "do-it-yourself" floats, then the ECMAScript
// Number::toString layout.
//
// decimal_to_double: Clinger's exact fast path when the digits and the power of ten are both
// exact doubles; otherwise a 64-bit approximation D * 10^e ~= F * 2^E with a tracked error bound,
// accepted when the bound cannot change the rounding, and else settled exactly by comparing
// D * 10^e with the midpoints between neighbouring doubles in fixed-size big integers.
//
// Everything is integer arithmetic on uint32_t/uint64_t (64x64->128 products are built from
// 32-bit halves, so no __int128 is needed); the only double arithmetic is the fast path, one
// IEEE operation on exact operands. No recursion, no heap; from libc only memcpy (and the
// memset the compiler may emit for zeroing loops).
//
// Resources, measured with arm-none-eabi-g++ 12.2 -mcpu=cortex-m3 -mthumb -Os (-fstack-usage):
//   flash: 4.2 KiB for the whole file, of which 0.9 KiB are tables (87 cached powers, 696 B;
//          exact doubles 1e0..1e22, 184 B; 10^0..10^9, 40 B), plus libgcc's soft-float
//          multiply/divide and 64-bit division.
//   stack: format_double 160 B + 56 B (exponent digits) = 216 B worst case.
//          decimal_to_double 104 B; with the exact comparison (hard cases only) +304 B for
//          compare_with_midpoint (two 32-limb big integers) +40 B for its helpers: 448 B.
//          format_int64 16 B + 56 B. (x86-64 -O2: 160 B, and 96 + 336 B.)
#include "emcp/json/number.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emcp/util/assert.h"

EMCP_NS_BEGIN
namespace json {

namespace {

// ---- Tables ------------------------------------------------------------------------------------

/// 10^0 .. 10^9.
constexpr uint32_t kPow10U32[10] = {1u,      10u,      100u,      1000u,      10000u,
                                    100000u, 1000000u, 10000000u, 100000000u, 1000000000u};

/// 10^0 .. 10^22: the powers of ten that are exact doubles (5^22 < 2^53).
constexpr double kExactPow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                    1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                    1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/// Decimal exponent of kCachedPow10[0] and the step between entries.
constexpr int32_t kCachedPow10MinExp = -348;
constexpr int32_t kCachedPow10Step = 8;
constexpr uint32_t kCachedPow10Count = 87;

/// Normalized 64-bit significands of 10^k for k = -348, -340, ..., 340: 10^k ~= f * 2^e with
/// 2^63 <= f < 2^64, f rounded to nearest from the exact value (error <= 1/2 unit), and
/// e = floor(k * log2(10)) - 63 (recomputed by cached_power()). Generated with exact rational
/// arithmetic by tools/gen_pow10_table.py, which also checks the formula for e on every entry.
/// 87 entries * 8 bytes = 696 bytes of flash.
constexpr uint64_t kCachedPow10[kCachedPow10Count] = {
    0xFA8FD5A0081C0288ULL, 0xBAAEE17FA23EBF76ULL, 0x8B16FB203055AC76ULL,
    0xCF42894A5DCE35EAULL, 0x9A6BB0AA55653B2DULL, 0xE61ACF033D1A45DFULL,
    0xAB70FE17C79AC6CAULL, 0xFF77B1FCBEBCDC4FULL, 0xBE5691EF416BD60CULL,
    0x8DD01FAD907FFC3CULL, 0xD3515C2831559A83ULL, 0x9D71AC8FADA6C9B5ULL,
    0xEA9C227723EE8BCBULL, 0xAECC49914078536DULL, 0x823C12795DB6CE57ULL,
    0xC21094364DFB5637ULL, 0x9096EA6F3848984FULL, 0xD77485CB25823AC7ULL,
    0xA086CFCD97BF97F4ULL, 0xEF340A98172AACE5ULL, 0xB23867FB2A35B28EULL,
    0x84C8D4DFD2C63F3BULL, 0xC5DD44271AD3CDBAULL, 0x936B9FCEBB25C996ULL,
    0xDBAC6C247D62A584ULL, 0xA3AB66580D5FDAF6ULL, 0xF3E2F893DEC3F126ULL,
    0xB5B5ADA8AAFF80B8ULL, 0x87625F056C7C4A8BULL, 0xC9BCFF6034C13053ULL,
    0x964E858C91BA2655ULL, 0xDFF9772470297EBDULL, 0xA6DFBD9FB8E5B88FULL,
    0xF8A95FCF88747D94ULL, 0xB94470938FA89BCFULL, 0x8A08F0F8BF0F156BULL,
    0xCDB02555653131B6ULL, 0x993FE2C6D07B7FACULL, 0xE45C10C42A2B3B06ULL,
    0xAA242499697392D3ULL, 0xFD87B5F28300CA0EULL, 0xBCE5086492111AEBULL,
    0x8CBCCC096F5088CCULL, 0xD1B71758E219652CULL, 0x9C40000000000000ULL,
    0xE8D4A51000000000ULL, 0xAD78EBC5AC620000ULL, 0x813F3978F8940984ULL,
    0xC097CE7BC90715B3ULL, 0x8F7E32CE7BEA5C70ULL, 0xD5D238A4ABE98068ULL,
    0x9F4F2726179A2245ULL, 0xED63A231D4C4FB27ULL, 0xB0DE65388CC8ADA8ULL,
    0x83C7088E1AAB65DBULL, 0xC45D1DF942711D9AULL, 0x924D692CA61BE758ULL,
    0xDA01EE641A708DEAULL, 0xA26DA3999AEF774AULL, 0xF209787BB47D6B85ULL,
    0xB454E4A179DD1877ULL, 0x865B86925B9BC5C2ULL, 0xC83553C5C8965D3DULL,
    0x952AB45CFA97A0B3ULL, 0xDE469FBD99A05FE3ULL, 0xA59BC234DB398C25ULL,
    0xF6C69A72A3989F5CULL, 0xB7DCBF5354E9BECEULL, 0x88FCF317F22241E2ULL,
    0xCC20CE9BD35C78A5ULL, 0x98165AF37B2153DFULL, 0xE2A0B5DC971F303AULL,
    0xA8D9D1535CE3B396ULL, 0xFB9B7CD9A4A7443CULL, 0xBB764C4CA7A44410ULL,
    0x8BAB8EEFB6409C1AULL, 0xD01FEF10A657842CULL, 0x9B10A4E5E9913129ULL,
    0xE7109BFBA19C0C9DULL, 0xAC2820D9623BF429ULL, 0x80444B5E7AA7CF85ULL,
    0xBF21E44003ACDD2DULL, 0x8E679C2F5E44FF8FULL, 0xD433179D9C8CB841ULL,
    0x9E19DB92B4E31BA9ULL, 0xEB96BF6EBADF77D9ULL, 0xAF87023B9BF0EE6BULL,
};

// ---- IEEE 754 binary64 layout ------------------------------------------------------------------

constexpr uint64_t kHiddenBit = 1ULL << 52;
constexpr uint64_t kFractionMask = kHiddenBit - 1;
constexpr uint64_t kSignBit = 1ULL << 63;
constexpr uint64_t kInfinityBits = 0x7FF0000000000000ULL;  // also: exponent field mask
constexpr int32_t kExponentBias = 1075;                     // 1023 + 52 fraction bits
constexpr int32_t kMinExponent = 1 - kExponentBias;         // -1074, exponent of subnormals

/// The bits of `v`.
inline uint64_t to_bits(double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return bits;
}

/// The double whose bits are `bits`.
inline double from_bits(uint64_t bits) {
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

/// Splits the non-negative finite (or infinite, read as 2^1024) double `bits` into the integer
/// significand *m and exponent *q with value m * 2^q.
inline void decode_bits(uint64_t bits, uint64_t* m, int32_t* q) {
  const uint64_t fraction = bits & kFractionMask;
  const int32_t field = static_cast<int32_t>((bits & ~kSignBit) >> 52);
  if (field == 0) {
    *m = fraction;
    *q = kMinExponent;
  } else {
    *m = fraction | kHiddenBit;
    *q = field - kExponentBias;
  }
}

// ---- 64-bit helpers ----------------------------------------------------------------------------

/// Number of leading zero bits of x (x != 0).
inline int32_t leading_zeros64(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_clzll(x);
#else
  int32_t n = 0;
  while ((x & kSignBit) == 0) {
    x <<= 1;
    ++n;
  }
  return n;
#endif
}

/// The full 128-bit product a * b as *hi:*lo, from four 32x32->64 products.
inline void mul_64x64(uint64_t a, uint64_t b, uint64_t* hi, uint64_t* lo) {
  const uint64_t a_lo = a & 0xFFFFFFFFu;
  const uint64_t a_hi = a >> 32;
  const uint64_t b_lo = b & 0xFFFFFFFFu;
  const uint64_t b_hi = b >> 32;
  const uint64_t p0 = a_lo * b_lo;
  const uint64_t p1 = a_lo * b_hi;
  const uint64_t p2 = a_hi * b_lo;
  const uint64_t p3 = a_hi * b_hi;
  // Sum of the middle column; cannot overflow (3 * (2^32 - 1) < 2^64).
  const uint64_t mid = (p0 >> 32) + (p1 & 0xFFFFFFFFu) + (p2 & 0xFFFFFFFFu);
  *hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
  *lo = (mid << 32) | (p0 & 0xFFFFFFFFu);
}

/// A "do-it-yourself" float f * 2^e.
struct DiyFp {
  uint64_t f;
  int32_t e;
};

/// Upper 64 bits of the product, rounded to nearest (ties up): error <= 1/2 unit of the result
/// plus the inputs' own errors. Not normalized.
inline DiyFp mul_rounded(DiyFp a, DiyFp b) {
  uint64_t hi;
  uint64_t lo;
  mul_64x64(a.f, b.f, &hi, &lo);
  // hi <= (2^64 - 1)^2 >> 64 = 2^64 - 2, so the increment cannot wrap.
  return DiyFp{hi + (lo >> 63), a.e + b.e + 64};
}

/// floor(k * log2(10)), exact for |k| <= 1000 (1741647 / 2^19 approximates log2(10); checked
/// against exact arithmetic for every such k, and tools/gen_pow10_table.py re-checks the k of
/// the table).
inline int32_t floor_log2_pow10(int32_t k) {
  const int32_t p = k * 1741647;
  return p >= 0 ? (p >> 19) : -((-p + (1 << 19) - 1) >> 19);
}

/// Entry i of the cached powers: 10^(kCachedPow10MinExp + 8 i) as a normalized DiyFp.
inline DiyFp cached_power(uint32_t i) {
  const int32_t k = kCachedPow10MinExp + kCachedPow10Step * static_cast<int32_t>(i);
  return DiyFp{kCachedPow10[i], floor_log2_pow10(k) - 63};
}

/// Decimal exponent of cached_power(i).
inline int32_t cached_power_exp10(uint32_t i) {
  return kCachedPow10MinExp + kCachedPow10Step * static_cast<int32_t>(i);
}

// ---- Integer formatting ------------------------------------------------------------------------

/// Writes `v` in decimal to `out` and returns the length. Only 32-bit divisions: above 32
/// bits, v is divided by 10^4 as four 16-bit limbs (each step's dividend stays below 2^30), so
/// Cortex-M links no 64-bit division routine (~700 bytes) for it.
size_t write_decimal_u64(uint64_t v, char* out) {
  char tmp[20];  // UINT64_MAX has 20 digits; filled backwards
  size_t n = 0;
  while (v > 0xFFFFFFFFu) {
    uint32_t rem = 0;
    uint64_t q = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
      const uint32_t cur = (rem << 16) | static_cast<uint32_t>((v >> shift) & 0xFFFFu);
      q |= static_cast<uint64_t>(cur / 10000u) << shift;
      rem = cur % 10000u;
    }
    for (int i = 0; i < 4; ++i) {
      tmp[n++] = static_cast<char>('0' + rem % 10u);
      rem /= 10u;
    }
    v = q;
  }
  uint32_t v32 = static_cast<uint32_t>(v);
  do {
    tmp[n++] = static_cast<char>('0' + v32 % 10u);
    v32 /= 10u;
  } while (v32 != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

// ---- Grisu2 ------------------------------------------------------------------------------------

/// Target range of the binary exponent of the scaled boundaries: the integral part then fits
/// 32 bits (e <= -32) and the fraction times 10 fits 64 bits (e >= -60). The window (28) is
/// wider than one table step (8 * log2(10) < 27), so some cached power always lands in it.
constexpr int32_t kGrisuAlpha = -60;
constexpr int32_t kGrisuGamma = -32;
static_assert(kGrisuGamma - kGrisuAlpha >= 27, "the window must hold one table step");

/// Most digits Grisu2 produces for a double. Generation stops at the latest at the first digit
/// position whose unit is <= delta, the width of the safe interval, and
/// delta >= W+ * 2^-53 * (1 - 2^-10) > W+ * 1.1e-16 (one ulp minus the shrink), so that position
/// is at most 16 below the leading digit of W+: at most 17 digits.
constexpr size_t kMaxGrisuDigits = 17;

/// Grisu's final step: the digits in buf[0..len) are a number p with W+ - p = rest, all in units
/// of the scaled value. Lowers the last digit while p stays inside the safe interval
/// (W+ - p <= delta) and moves closer to the scaled value w (W+ - w = dist).
void grisu_round(char* buf, size_t len, uint64_t dist, uint64_t delta, uint64_t rest,
                 uint64_t ten_kappa) {
  while (rest < dist && delta - rest >= ten_kappa &&
         (rest + ten_kappa < dist || dist - rest > rest + ten_kappa - dist)) {
    --buf[len - 1];
    rest += ten_kappa;
  }
}

/// Grisu2 for the positive finite double with significand f and exponent e (value f * 2^e):
/// writes the digits to buf (kMaxGrisuDigits bytes), returns their count and sets *k10 so that
/// the value is digits * 10^(*k10).
size_t grisu2(uint64_t f, int32_t e, bool lower_boundary_closer, char* buf, int32_t* k10) {
  // Boundaries m+ = (2f + 1) 2^(e-1) and m- = (2f - 1) 2^(e-1), or (4f - 1) 2^(e-2) when the
  // double below is closer (f is a power of two above the smallest normal). Every number
  // strictly between them reads back as this double.
  DiyFp upper{(f << 1) + 1, e - 1};
  const int32_t s = leading_zeros64(upper.f);
  upper.f <<= s;
  upper.e -= s;
  DiyFp lower = lower_boundary_closer ? DiyFp{(f << 2) - 1, e - 2} : DiyFp{(f << 1) - 1, e - 1};
  lower.f <<= (lower.e - upper.e);
  lower.e = upper.e;
  const DiyFp value{f << (e - upper.e), upper.e};

  // Cached power c = 10^kc with alpha <= upper.e + c.e + 64 <= gamma: the smallest table entry
  // whose exponent reaches alpha (start from an estimate, then step).
  const int32_t min_exp = kGrisuAlpha - upper.e - 64;
  int32_t est = (min_exp + 1219) * 10 / 266;  // e(i) ~= 26.6 i - 1219
  if (est < 0) est = 0;
  if (est > static_cast<int32_t>(kCachedPow10Count) - 1) {
    est = static_cast<int32_t>(kCachedPow10Count) - 1;
  }
  uint32_t idx = static_cast<uint32_t>(est);
  while (idx + 1 < kCachedPow10Count && cached_power(idx).e < min_exp) ++idx;
  while (idx > 0 && cached_power(idx - 1).e >= min_exp) --idx;
  const DiyFp c = cached_power(idx);
  const int32_t kc = cached_power_exp10(idx);

  // Scaled value and boundaries. Each product is off by less than one unit (1/2 from the table
  // entry, 1/2 from rounding), so shrinking the interval by one unit on each side keeps
  // everything in it strictly inside the exact interval (m-, m+) * 10^kc.
  const DiyFp w = mul_rounded(value, c);
  DiyFp wp = mul_rounded(upper, c);
  DiyFp wm = mul_rounded(lower, c);
  wp.f -= 1;
  wm.f += 1;
  uint64_t delta = wp.f - wm.f;
  uint64_t dist = wp.f - w.f;

  // Digits of W+, stopping at the first position where the truncated remainder fits delta.
  const int32_t shift = -wp.e;  // 32..60
  const uint64_t one = 1ULL << shift;
  uint32_t p1 = static_cast<uint32_t>(wp.f >> shift);  // integral part, >= 8
  uint64_t p2 = wp.f & (one - 1);                      // fractional part
  int32_t kappa = 10;
  while (kappa > 1 && p1 < kPow10U32[kappa - 1]) --kappa;  // number of digits of p1
  size_t len = 0;
  while (kappa > 0) {
    const uint32_t div = kPow10U32[kappa - 1];
    buf[len++] = static_cast<char>('0' + p1 / div);
    p1 %= div;
    --kappa;
    const uint64_t rest = (static_cast<uint64_t>(p1) << shift) + p2;
    if (rest <= delta) {
      *k10 = kappa - kc;
      grisu_round(buf, len, dist, delta, rest, static_cast<uint64_t>(kPow10U32[kappa]) << shift);
      return len;
    }
  }
  for (;;) {
    // delta < one here (else the previous step would have stopped), so none of these overflow.
    p2 *= 10u;
    delta *= 10u;
    dist *= 10u;
    buf[len++] = static_cast<char>('0' + (p2 >> shift));
    p2 &= one - 1;
    --kappa;
    if (p2 <= delta) {
      *k10 = kappa - kc;
      grisu_round(buf, len, dist, delta, p2, one);
      return len;
    }
  }
}

/// Lays out the digits d1..dk (value 0.d1..dk * 10^n) like ECMAScript Number::toString and
/// returns the length written to out.
size_t write_ecmascript(const char* digits, size_t k, int32_t n, char* out) {
  size_t pos = 0;
  const int32_t ki = static_cast<int32_t>(k);
  if (ki <= n && n <= 21) {  // integer: digits and n - k zeros
    memcpy(out, digits, k);
    pos = k;
    for (int32_t i = ki; i < n; ++i) out[pos++] = '0';
  } else if (0 < n && n <= 21) {  // point inside the digits
    const size_t int_len = static_cast<size_t>(n);
    memcpy(out, digits, int_len);
    out[int_len] = '.';
    memcpy(out + int_len + 1, digits + int_len, k - int_len);
    pos = k + 1;
  } else if (-6 < n && n <= 0) {  // 0.000ddd
    out[pos++] = '0';
    out[pos++] = '.';
    for (int32_t i = n; i < 0; ++i) out[pos++] = '0';
    memcpy(out + pos, digits, k);
    pos += k;
  } else {  // d[.ddd]e+X / e-X
    out[pos++] = digits[0];
    if (k > 1) {
      out[pos++] = '.';
      memcpy(out + pos, digits + 1, k - 1);
      pos += k - 1;
    }
    out[pos++] = 'e';
    int32_t x = n - 1;
    out[pos++] = x < 0 ? '-' : '+';
    if (x < 0) x = -x;
    pos += write_decimal_u64(static_cast<uint64_t>(x), out + pos);
  }
  return pos;
}

// ---- Big integers for the exact comparison -----------------------------------------------------

/// Capacity of BigInt in 32-bit limbs. Worst case of compare_with_midpoint() over every input
/// decimal_to_double() can pass it (up to 64 digits, exponents the range checks let through,
/// candidates within a few ulps of the value): 916 bits, i.e. 29 limbs (e.g. 64 digits times
/// 10^-372, where the midpoint side is (2m+1) * 5^372). 32 limbs leave 108 bits of margin.
constexpr uint32_t kBigLimbs = 32;

/// Fixed-capacity unsigned integer, little-endian 32-bit limbs.
class BigInt {
 public:
  BigInt() : size_(0) {}

  /// Sets the value to v.
  void set_u64(uint64_t v) {
    size_ = 0;
    while (v != 0) {
      limbs_[size_++] = static_cast<uint32_t>(v);
      v >>= 32;
    }
  }

  /// this = this * mul + add.
  void mul_add(uint32_t mul, uint32_t add) {
    uint64_t carry = add;
    for (uint32_t i = 0; i < size_; ++i) {
      const uint64_t t = static_cast<uint64_t>(limbs_[i]) * mul + carry;
      limbs_[i] = static_cast<uint32_t>(t);
      carry = t >> 32;
    }
    if (carry != 0) {
      EMCP_ASSERT(size_ < kBigLimbs);
      limbs_[size_++] = static_cast<uint32_t>(carry);
    }
  }

  /// Sets the value to the decimal digits[0..count), most significant first.
  void set_decimal(const uint8_t* digits, size_t count) {
    size_ = 0;
    size_t i = 0;
    while (i < count) {
      uint32_t chunk = 0;
      uint32_t n = 0;
      for (; i < count && n < 9; ++i, ++n) chunk = chunk * 10u + digits[i];
      mul_add(kPow10U32[n], chunk);
    }
  }

  /// this *= 5^k.
  void mul_pow5(uint32_t k) {
    constexpr uint32_t kPow5_13 = 1220703125u;  // largest power of 5 below 2^32
    for (; k >= 13; k -= 13) mul_add(kPow5_13, 0);
    uint32_t p = 1;
    for (; k > 0; --k) p *= 5u;
    if (p != 1) mul_add(p, 0);
  }

  /// this <<= bits.
  void shift_left(uint32_t bits) {
    if (size_ == 0) return;
    const uint32_t limb_shift = bits / 32;
    const uint32_t bit_shift = bits % 32;
    if (bit_shift != 0) {
      uint32_t carry = 0;
      for (uint32_t i = 0; i < size_; ++i) {
        const uint32_t v = limbs_[i];
        limbs_[i] = (v << bit_shift) | carry;
        carry = v >> (32 - bit_shift);
      }
      if (carry != 0) {
        EMCP_ASSERT(size_ < kBigLimbs);
        limbs_[size_++] = carry;
      }
    }
    if (limb_shift != 0) {
      EMCP_ASSERT(size_ + limb_shift <= kBigLimbs);
      for (uint32_t i = size_; i > 0; --i) limbs_[i - 1 + limb_shift] = limbs_[i - 1];
      for (uint32_t i = 0; i < limb_shift; ++i) limbs_[i] = 0;
      size_ += limb_shift;
    }
  }

  /// -1, 0 or 1 as a < b, a == b, a > b.
  static int compare(const BigInt& a, const BigInt& b) {
    if (a.size_ != b.size_) return a.size_ < b.size_ ? -1 : 1;
    for (uint32_t i = a.size_; i > 0; --i) {
      if (a.limbs_[i - 1] != b.limbs_[i - 1]) return a.limbs_[i - 1] < b.limbs_[i - 1] ? -1 : 1;
    }
    return 0;
  }

 private:
  uint32_t limbs_[kBigLimbs];  // limbs_[0..size_) are the value, no leading zero limb
  uint32_t size_;
};

/// Sign of D * 10^e10 - M, where D is the decimal digits[0..count) and M = (2m + 1) 2^(q-1) is
/// the midpoint between the finite non-negative double `lower` = m 2^q and the next one up.
/// Both sides are scaled to integers and the common power of two is cancelled:
///   D 5^e10 2^e10  vs  (2m + 1) 2^(q-1), moving 5^|e10| and the excess power of two to one side.
int compare_with_midpoint(const uint8_t* digits, size_t count, int32_t e10, uint64_t lower) {
  uint64_t m;
  int32_t q;
  decode_bits(lower, &m, &q);
  BigInt x;
  BigInt mid;
  x.set_decimal(digits, count);
  mid.set_u64(2 * m + 1);
  if (e10 >= 0) {
    x.mul_pow5(static_cast<uint32_t>(e10));
  } else {
    mid.mul_pow5(static_cast<uint32_t>(-e10));
  }
  const int32_t t = e10 - (q - 1);
  if (t >= 0) {
    x.shift_left(static_cast<uint32_t>(t));
  } else {
    mid.shift_left(static_cast<uint32_t>(-t));
  }
  return BigInt::compare(x, mid);
}

/// Correct rounding by exact comparison: starting from the candidate bits `b` (at most
/// kInfinityBits, which stands for "overflow"), steps one double at a time until the exact
/// value D * 10^e10 lies between the midpoints below and above b, breaking ties to even.
/// Returns the final bits (kInfinityBits for overflow). The candidate comes from a 64-bit
/// approximation, so this takes one to three comparisons.
uint64_t refine_exactly(const uint8_t* digits, size_t count, int32_t e10, uint64_t b) {
  int dir = 0;  // +1 after stepping up, -1 after stepping down
  for (;;) {
    if (dir >= 0 && b != kInfinityBits) {
      const int c = compare_with_midpoint(digits, count, e10, b);
      if (c > 0) {
        ++b;
        dir = 1;
        continue;
      }
      if (c == 0) return b + (b & 1);  // tie: the even one of b and b + 1
      if (dir > 0) return b;           // we stepped over the midpoint below b
    }
    if (b == 0) return b;
    const int c = compare_with_midpoint(digits, count, e10, b - 1);
    if (c < 0) {
      --b;
      dir = -1;
      continue;
    }
    return c == 0 ? b - (b & 1) : b;  // tie: the even one of b - 1 and b
  }
}

/// Sets f * 2^e = f * 2^e * g rounded to 64 bits and normalized, and updates *err, a bound in
/// units of the last place of f on the distance to the exact value: the inputs' errors (g's is
/// at most 1/2 unit when inexact) carry over, a normalizing shift doubles them, and rounding adds
/// 1/2. Both inputs must be normalized (top bit set).
void mul_normalized(uint64_t* f, int32_t* e, DiyFp g, bool g_exact, uint32_t* err) {
  uint64_t hi;
  uint64_t lo;
  mul_64x64(*f, g.f, &hi, &lo);
  int32_t ex = *e + g.e + 64;
  uint32_t new_err = *err + (g_exact ? 0u : 1u);
  if ((hi & kSignBit) == 0) {  // the product of two normalized values is >= 2^126
    hi = (hi << 1) | (lo >> 63);
    lo <<= 1;
    ex -= 1;
    new_err *= 2;
  }
  if ((lo & kSignBit) != 0) {
    hi += 1;
    if (hi == 0) {
      hi = kSignBit;
      ex += 1;
    }
  }
  *f = hi;
  *e = ex;
  *err = new_err + 1;
}

/// Decimal exponents outside these bounds need no arithmetic (n = digit count, e = exponent):
/// the value is at least 10^(n+e-1), so n + e >= 310 overflows (10^309 > DBL_MAX), and below
/// 10^(n+e), so n + e <= -324 rounds to zero (10^-324 is below half the smallest subnormal,
/// 2^-1075 ~= 2.47e-324).
constexpr int64_t kOverflowDigitsExp = 310;
constexpr int64_t kZeroDigitsExp = -324;

/// Whether the compiler evaluates double arithmetic in double precision (not x87 extended),
/// which Clinger's fast path needs for a single correct rounding.
#if defined(__FLT_EVAL_METHOD__) && (__FLT_EVAL_METHOD__ == 0 || __FLT_EVAL_METHOD__ == 1)
constexpr bool kExactDoubleArithmetic = true;
#else
constexpr bool kExactDoubleArithmetic = false;
#endif

/// Clinger's fast path: when w < 2^53 and 10^|e10| (or 10^(e10-22) folded into w) are exact
/// doubles, one IEEE multiplication or division rounds correctly. Returns false when it does
/// not apply.
bool fast_path(uint64_t w, int32_t e10, double* out) {
  constexpr uint64_t kMaxExact = 1ULL << 53;
  if (!kExactDoubleArithmetic || w >= kMaxExact) return false;
  if (e10 >= -22 && e10 < 0) {
    *out = static_cast<double>(w) / kExactPow10[-e10];
    return true;
  }
  if (e10 >= 0 && e10 <= 22) {
    *out = static_cast<double>(w) * kExactPow10[e10];
    return true;
  }
  if (e10 > 22 && e10 <= 22 + 15) {
    uint64_t scale = 1;
    for (int32_t i = 22; i < e10; ++i) scale *= 10u;
    if (w > (kMaxExact - 1) / scale) return false;
    *out = static_cast<double>(w * scale) * kExactPow10[22];
    return true;
  }
  return false;
}

/// Bits of the double nearest to D * 10^e10 (D = digits[0..count), no leading or trailing zero
/// digit, 1 <= count <= 64, e10 inside the range checks), or kInfinityBits when it overflows.
uint64_t nearest_double_bits(const uint8_t* digits, size_t count, int32_t e10) {
  // w = the first (up to) 19 digits, exactly; D * 10^e10 = (w + frac) * 10^we with
  // 0 <= frac < 1 (frac > 0 only when digits were dropped).
  const size_t nd = count < 19 ? count : 19;
  uint64_t w = 0;
  for (size_t i = 0; i < nd; ++i) w = w * 10u + digits[i];
  const int32_t we = e10 + static_cast<int32_t>(count - nd);

  // Normalize w and multiply by 10^we = 10^r * 10^kc (exact 10^r, r = 0..7, then a cached power).
  // err bounds |F - exact| in units of F's last place.
  const int32_t s = leading_zeros64(w);
  uint64_t f = w << s;
  int32_t e2 = -s;
  uint32_t err = count > nd ? (1u << s) : 0u;
  const uint32_t idx = static_cast<uint32_t>((we - kCachedPow10MinExp) / kCachedPow10Step);
  const uint32_t r = static_cast<uint32_t>(we - cached_power_exp10(idx));
  if (r != 0) {
    const uint64_t p = kPow10U32[r];
    const int32_t ps = leading_zeros64(p);
    mul_normalized(&f, &e2, DiyFp{p << ps, -ps}, true, &err);
  }
  mul_normalized(&f, &e2, cached_power(idx), false, &err);

  // Round F * 2^E (F in [2^63, 2^64)) to 53 bits, or fewer for subnormals: the value is in
  // [2^p, 2^(p+1)) with p = E + 63, and its last kept bit has weight 2^max(E + 11, -1074).
  const int32_t p = e2 + 63;
  const int32_t shift = p < -1022 ? -1074 - e2 : 11;
  uint64_t b = 0;
  bool decided = false;
  if (shift < 64) {
    const uint64_t mant = f >> shift;  // with the hidden bit for normals
    const uint64_t low = f & ((1ULL << shift) - 1);
    const uint64_t half = 1ULL << (shift - 1);  // >= 1024, far above err (< 100)
    // Exponent field minus one: adding a mantissa that has the hidden bit set (or that rounds
    // up to 2^53, or for a subnormal up to 2^52) carries into the field.
    const uint64_t field = p < -1022 ? 0 : static_cast<uint64_t>(p + 1022);
    b = (field << 52) + mant;
    if (low > half + err) {
      b += 1;
      decided = true;
    } else if (low + err < half) {
      decided = true;
    }
  }
  if (b >= kInfinityBits) {
    if (decided) return kInfinityBits;
    b = kInfinityBits;
  }
  if (decided) return b;
  // Too close to a midpoint (or a tie) for the error bound: settle it exactly.
  return refine_exactly(digits, count, e10, b);
}

}  // namespace

size_t format_int64(int64_t v, char* out) {
  if (v < 0) {
    out[0] = '-';
    // 0 - v in unsigned arithmetic is |v|, also for INT64_MIN.
    return 1 + write_decimal_u64(0u - static_cast<uint64_t>(v), out + 1);
  }
  return write_decimal_u64(static_cast<uint64_t>(v), out);
}

size_t format_uint64(uint64_t v, char* out) { return write_decimal_u64(v, out); }

namespace {
// Grisu2 misses the shortest digits for about 0.1% of doubles (1e23 comes out as
// 9.999999999999999e+22): the shorter number lies in the sliver of the rounding interval that
// Grisu2's approximation leaves out. Two distinct numbers of at most k digits both inside an
// interval one double wide need k >= 16, so only 16- and 17-digit results can be too long:
// for those, drop the last digit (rounded down or up, the closer first) while the shorter
// number still reads back (correctly rounded) as the same double.
void shorten(uint64_t magnitude, char* digits, size_t* k, int32_t* k10) {
  uint8_t d[kMaxGrisuDigits + 1];
  bool found = true;
  while (*k > 1 && found) {
    const size_t n = *k - 1;
    const bool up_first = digits[n] >= '5';
    found = false;
    for (int attempt = 0; attempt < 2 && !found; ++attempt) {
      for (size_t i = 0; i < n; ++i) d[i] = static_cast<uint8_t>(digits[i] - '0');
      size_t m = n;
      int32_t e = *k10 + 1;
      if ((attempt == 0) == up_first) {  // rounded up: add one at the last kept digit
        size_t i = n;
        while (i > 0 && d[i - 1] == 9) d[--i] = 0;
        if (i == 0) {  // 99..9 + 1: a one and the zeros (dropped below)
          d[0] = 1;
          m = 1;
          e += static_cast<int32_t>(n);
        } else {
          ++d[i - 1];
        }
      }
      double back = 0;
      if (decimal_to_double(false, d, m, e, &back) != Status::kOk || to_bits(back) != magnitude)
        continue;
      for (size_t i = 0; i < m; ++i) digits[i] = static_cast<char>('0' + d[i]);
      while (m > 1 && digits[m - 1] == '0') {
        --m;
        ++e;
      }
      *k = m;
      *k10 = e;
      found = true;
    }
  }
}
}  // namespace

size_t format_double(double v, char* out) {
  const uint64_t bits = to_bits(v);
  if ((bits & kInfinityBits) == kInfinityBits) return 0;  // NaN or infinity
  const uint64_t magnitude = bits & ~kSignBit;
  if (magnitude == 0) {  // 0 and -0
    out[0] = '0';
    return 1;
  }
  size_t pos = 0;
  if ((bits & kSignBit) != 0) out[pos++] = '-';

  uint64_t f;
  int32_t e;
  decode_bits(magnitude, &f, &e);
  const bool closer = (magnitude & kFractionMask) == 0 && (magnitude >> 52) > 1;
  char digits[kMaxGrisuDigits + 1];
  int32_t k10 = 0;
  size_t k = grisu2(f, e, closer, digits, &k10);
  // Grisu2 does not end on a zero digit; stay safe anyway so the layout sees the shortest form.
  while (k > 1 && digits[k - 1] == '0') {
    --k;
    ++k10;
  }
  if (k >= 16) shorten(magnitude, digits, &k, &k10);
  return pos + write_ecmascript(digits, k, static_cast<int32_t>(k) + k10, out + pos);
}

Status decimal_to_double(bool negative, const uint8_t* digits, size_t count, int32_t exp10,
                         double* out) {
  if (count > kMaxDecimalDigits || (count != 0 && digits == nullptr)) {
    return Status::kInvalidArgument;
  }
  for (size_t i = 0; i < count; ++i) {
    if (digits[i] > 9) return Status::kInvalidArgument;
  }
  // Strip leading and trailing zero digits; exponent arithmetic in 64 bits (exp10 + count
  // cannot overflow int64).
  while (count != 0 && digits[0] == 0) {
    ++digits;
    --count;
  }
  int64_t e = exp10;
  while (count != 0 && digits[count - 1] == 0) {
    --count;
    ++e;
  }
  const uint64_t sign = negative ? kSignBit : 0u;
  if (count == 0) {
    *out = from_bits(sign);
    return Status::kOk;
  }
  const int64_t magnitude = static_cast<int64_t>(count) + e;
  if (magnitude >= kOverflowDigitsExp) return Status::kNumberOverflow;
  if (magnitude <= kZeroDigitsExp) {
    *out = from_bits(sign);
    return Status::kOk;
  }
  const int32_t e10 = static_cast<int32_t>(e);  // now in [-387, 308]

  if (count <= 19) {
    uint64_t w = 0;
    for (size_t i = 0; i < count; ++i) w = w * 10u + digits[i];
    double v;
    if (fast_path(w, e10, &v)) {
      *out = negative ? -v : v;
      return Status::kOk;
    }
  }
  const uint64_t bits = nearest_double_bits(digits, count, e10);
  if (bits >= kInfinityBits) return Status::kNumberOverflow;
  *out = from_bits(bits | sign);
  return Status::kOk;
}

namespace {
// The first kMaxDecimalDigits digits of the midpoint between DBL_MAX and 2^1024,
// (2^54 - 1) * 2^970 (309 digits): values from it up round to infinity.
constexpr char kOverflowMidpoint[] =
    "1797693134862315807937289714053034150799341327100378269361737789";
static_assert(sizeof(kOverflowMidpoint) - 1 == kMaxDecimalDigits, "one digit per input digit");

// Strips leading and trailing zero digits; returns the exponent of the last digit kept.
int64_t strip_zeros(const uint8_t** digits, size_t* count, int32_t exp10) {
  int64_t e = exp10;
  while (*count != 0 && (*digits)[0] == 0) {
    ++*digits;
    --*count;
  }
  while (*count != 0 && (*digits)[*count - 1] == 0) {
    --*count;
    ++e;
  }
  return e;
}
}  // namespace

bool decimal_overflows_double(const uint8_t* digits, size_t count, int32_t exp10) {
  if (count > kMaxDecimalDigits) count = kMaxDecimalDigits;  // callers keep to the limit
  const int64_t e = strip_zeros(&digits, &count, exp10);
  if (count == 0) return false;
  const int64_t magnitude = static_cast<int64_t>(count) + e;  // value in [10^(m-1), 10^m)
  if (magnitude != kOverflowDigitsExp - 1) return magnitude >= kOverflowDigitsExp;
  // Same decade as the midpoint: compare digit by digit. The midpoint has non-zero digits
  // beyond the 64th, so an input equal to its first 64 digits is still below it.
  for (size_t i = 0; i < kMaxDecimalDigits; ++i) {
    const int d = i < count ? digits[i] : 0;
    const int m = kOverflowMidpoint[i] - '0';
    if (d != m) return d > m;
  }
  return false;
}

size_t format_decimal(bool negative, const uint8_t* digits, size_t count, int32_t exp10,
                      char* out) {
  if (count > kMaxDecimalDigits) count = kMaxDecimalDigits;
  const int64_t e = strip_zeros(&digits, &count, exp10);
  if (count == 0) {
    out[0] = '0';
    return 1;
  }
  char text[kMaxDecimalDigits];
  for (size_t i = 0; i < count; ++i) text[i] = static_cast<char>('0' + digits[i]);
  size_t pos = 0;
  if (negative) out[pos++] = '-';
  // The reader saturates exponents near +-10^9, so the point position fits int32.
  int64_t n = static_cast<int64_t>(count) + e;
  if (n > INT32_MAX) n = INT32_MAX;
  if (n < -INT32_MAX) n = -INT32_MAX;
  return pos + write_ecmascript(text, count, static_cast<int32_t>(n), out + pos);
}

}  // namespace json
EMCP_NS_END
