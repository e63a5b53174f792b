// Internal: byte classes shared by the JSON reader (validation) and writer (escaping and
// UTF-8 repair). One 256-byte table in flash.
#ifndef EMCP_SRC_JSON_CHAR_CLASS_H
#define EMCP_SRC_JSON_CHAR_CLASS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace json {
namespace detail {

// Byte classes inside a string. Everything but kPlain needs a closer look.
enum StrClass : uint8_t {
  kPlain = 0,  // printable ASCII other than '"' and '\'
  kQuote,
  kBackslash,
  kControl,  // 0x00-0x1F
  kBadByte,  // never valid here: 0x80-0xBF as a lead, 0xC0, 0xC1, 0xF5-0xFF
  kLead2,    // 0xC2-0xDF: one continuation 80-BF
  kLeadE0,   // two continuations, the first A0-BF (no overlong forms)
  kLead3,    // 0xE1-0xEC, 0xEE, 0xEF: two continuations 80-BF
  kLeadED,   // two continuations, the first 80-9F (no UTF-16 surrogates)
  kLeadF0,   // three continuations, the first 90-BF (no overlong forms)
  kLead4,    // 0xF1-0xF3: three continuations 80-BF
  kLeadF4,   // three continuations, the first 80-8F (nothing above U+10FFFF)
};

struct StrTable {
  uint8_t cls[256];
};

constexpr StrTable make_str_table() {
  StrTable t{};
  for (int c = 0; c < 256; ++c) {
    uint8_t k = kPlain;
    if (c < 0x20) k = kControl;
    else if (c == '"') k = kQuote;
    else if (c == '\\') k = kBackslash;
    else if (c < 0x80) k = kPlain;
    else if (c < 0xC2) k = kBadByte;
    else if (c < 0xE0) k = kLead2;
    else if (c == 0xE0) k = kLeadE0;
    else if (c == 0xED) k = kLeadED;
    else if (c < 0xF0) k = kLead3;
    else if (c == 0xF0) k = kLeadF0;
    else if (c < 0xF4) k = kLead4;
    else if (c == 0xF4) k = kLeadF4;
    else k = kBadByte;
    t.cls[c] = k;
  }
  return t;
}

inline constexpr StrTable kStr = make_str_table();

/// Skips bytes of class kPlain from p (up to end) and returns the first other byte's position
/// (or end). Tests a machine word at a time: a byte needs attention when it is '"', '\\', below
/// 0x20 or at least 0x80 (the "has zero byte" / "has byte less than" bit tricks). Borrows only
/// run towards higher bytes, so the lowest flagged byte is exactly the first such byte; on
/// little-endian targets its index is the count of trailing zero bits / 8.
inline const uint8_t* skip_plain(const uint8_t* p, const uint8_t* end) {
  using Word = uintptr_t;
  constexpr Word kOnes = static_cast<Word>(~static_cast<Word>(0)) / 255u;
  constexpr Word kHigh = kOnes * 0x80u;
  while (static_cast<size_t>(end - p) >= sizeof(Word)) {
    Word w;
    memcpy(&w, p, sizeof w);
    const Word q = w ^ (kOnes * static_cast<Word>('"'));
    const Word b = w ^ (kOnes * static_cast<Word>('\\'));
    const Word flags = (((q - kOnes) & ~q) | ((b - kOnes) & ~b) | (w - kOnes * 0x20u) | w) & kHigh;
    if (flags != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      if (sizeof(Word) == 8) return p + (__builtin_ctzll(static_cast<unsigned long long>(flags)) >> 3);
      return p + (__builtin_ctz(static_cast<unsigned>(flags)) >> 3);
#else
      break;
#endif
    }
    p += sizeof(Word);
  }
  while (p != end && kStr.cls[*p] == kPlain) ++p;
  return p;
}

/// Copies the bytes of class kPlain from p, n at most, to out, and returns how many (n when all
/// were plain). One pass for the short texts a writer puts whole (keys, short values), where a
/// scan and then a copy cost two passes and two calls.
inline size_t copy_plain(char* out, const uint8_t* p, size_t n) {
  size_t i = 0;
  for (; i < n; ++i) {
    const uint8_t c = p[i];
    if (kStr.cls[c] != kPlain) break;
    out[i] = static_cast<char>(c);
  }
  return i;
}

/// For a lead byte class: how many continuation bytes follow and the allowed range of the
/// first one (later ones are always 80-BF). Returns false for classes that are not leads.
inline bool utf8_lead(uint8_t cls, uint8_t* need, uint8_t* lo, uint8_t* hi) {
  *lo = 0x80;
  *hi = 0xBF;
  switch (cls) {
    case kLead2: *need = 1; return true;
    case kLeadE0: *need = 2; *lo = 0xA0; return true;
    case kLead3: *need = 2; return true;
    case kLeadED: *need = 2; *hi = 0x9F; return true;
    case kLeadF0: *need = 3; *lo = 0x90; return true;
    case kLead4: *need = 3; return true;
    case kLeadF4: *need = 3; *hi = 0x8F; return true;
    default: return false;
  }
}

}  // namespace detail
}  // namespace json
EMCP_NS_END

#endif
