#include "emcp/auth/jwt.h"

#include <string.h>

#include "emcp/json/reader.h"
#include "../util/base64url.h"

EMCP_NS_BEGIN
namespace auth {

namespace {

using json::Event;
using util::b64url_decode_valid;
using util::b64url_valid;

// ---- scratch --------------------------------------------------------------------------------------

// The scratch as two stacks: string values grow from the bottom, the top-level member names
// (for the duplicate check; each as a length byte and its bytes) from the top.
class Store {
 public:
  explicit Store(Span<uint8_t> s) : base_(s.data()), cap_(s.size()), lo_(0), hi_(s.size()) {}

  void clear() {
    lo_ = 0;
    hi_ = cap_;
  }
  uint8_t* base() const { return base_; }
  size_t cap() const { return cap_; }
  size_t lo() const { return lo_; }

  // Appends bytes to the string being collected; false when they do not fit.
  bool append(StrView bytes) {
    if (bytes.size() > hi_ - lo_) return false;
    if (bytes.size() != 0) memcpy(base_ + lo_, bytes.data(), bytes.size());
    lo_ += bytes.size();
    return true;
  }
  StrView view_from(size_t start) const {
    return StrView(reinterpret_cast<const char*>(base_ + start), lo_ - start);
  }

  // Records a member name; kDuplicateKey when it was recorded before, kTooLarge when the
  // scratch is full (cannot happen with a scratch as large as the token), else kOk.
  JwtResult add_key(StrView key) {
    for (size_t p = hi_; p < cap_;) {
      const size_t len = base_[p];
      if (len == key.size() && memcmp(base_ + p + 1, key.data(), len) == 0)
        return JwtResult::kDuplicateKey;
      p += 1 + len;
    }
    if (key.size() > kJwtMaxKeyLen || key.size() + 1 > hi_ - lo_) return JwtResult::kTooLarge;
    hi_ -= key.size() + 1;
    base_[hi_] = static_cast<uint8_t>(key.size());
    if (key.size() != 0) memcpy(base_ + hi_ + 1, key.data(), key.size());
    return JwtResult::kOk;
  }

 private:
  uint8_t* base_;
  size_t cap_;
  size_t lo_;
  size_t hi_;
};

// ---- one part as a stream of JSON events -----------------------------------------------------

// Feeds the reader a (checked) base64url part, decoded a few bytes at a time.
class PartReader {
 public:
  PartReader(json::Reader& r, StrView b64) : r_(r), in_(b64) { r_.reset(); }

  Event next() {
    for (;;) {
      const Event e = r_.next();
      if (e != Event::kNeedInput) return e;
      if (finished_) return Event::kError;  // cannot happen: the reader ends after finish()
      if (pos_ == in_.size()) {
        r_.finish();
        finished_ = true;
        continue;
      }
      size_t n = in_.size() - pos_;
      if (n > kChunkChars) n = kChunkChars;  // a multiple of 4 unless it is the last run
      const size_t got = b64url_decode_valid(in_.data() + pos_, n, buf_);
      pos_ += n;
      r_.feed(buf_, got);
    }
  }
  json::Reader& reader() { return r_; }

 private:
  static constexpr size_t kChunkChars = 64;
  json::Reader& r_;
  StrView in_;
  size_t pos_ = 0;
  bool finished_ = false;
  uint8_t buf_[kChunkChars / 4 * 3];
};

// Reads the rest of a string value whose first event (kStringPart or kString) is `e`. With
// `keep` the unescaped bytes are collected in the store and *out is their view.
JwtResult read_string(PartReader& in, Store& store, Event e, bool keep, StrView* out) {
  const size_t start = store.lo();
  for (;;) {
    if (keep && !store.append(in.reader().text())) return JwtResult::kTooLarge;
    if (e == Event::kString) break;
    e = in.next();
    if (e != Event::kStringPart && e != Event::kString) return JwtResult::kBadJson;
  }
  if (keep) *out = store.view_from(start);
  return JwtResult::kOk;
}

// Skips the rest of a container whose opening event was just read.
JwtResult skip_container(PartReader& in) {
  const uint32_t outer = in.reader().depth() - 1;
  for (;;) {
    const Event e = in.next();
    if (e == Event::kError || e == Event::kDocumentEnd || e == Event::kNeedInput)
      return JwtResult::kBadJson;
    if ((e == Event::kObjectEnd || e == Event::kArrayEnd) && in.reader().depth() == outer)
      return JwtResult::kOk;
  }
}

bool is_scalar_or_open(Event e) {
  return e == Event::kString || e == Event::kStringPart || e == Event::kInt ||
         e == Event::kDouble || e == Event::kTrue || e == Event::kFalse || e == Event::kNull ||
         e == Event::kObjectBegin || e == Event::kArrayBegin;
}

// The members verify_jwt() reads.
enum class Member : uint8_t {
  kOther,
  kAlg,
  kCrit,
  kTyp,
  kIss,
  kAud,
  kExp,
  kNbf,
  kIat,
  kSub,
  kScope,
  kClientId,
};

Member header_member(StrView key) {
  if (key.equals("alg")) return Member::kAlg;
  if (key.equals("crit")) return Member::kCrit;
  if (key.equals("typ")) return Member::kTyp;
  return Member::kOther;
}

Member claim_member(StrView key) {
  if (key.equals("iss")) return Member::kIss;
  if (key.equals("aud")) return Member::kAud;
  if (key.equals("exp")) return Member::kExp;
  if (key.equals("nbf")) return Member::kNbf;
  if (key.equals("iat")) return Member::kIat;
  if (key.equals("sub")) return Member::kSub;
  if (key.equals("scope")) return Member::kScope;
  if (key.equals("client_id")) return Member::kClientId;
  return Member::kOther;
}

// Equality of `s` with `lower` (lower case, NUL-terminated) when ASCII letters are folded.
bool equal_folded(StrView s, const char* lower) {
  size_t i = 0;
  for (; i < s.size() && lower[i] != '\0'; ++i) {
    const char c = s[i] >= 'A' && s[i] <= 'Z' ? static_cast<char>(s[i] - 'A' + 'a') : s[i];
    if (c != lower[i]) return false;
  }
  return i == s.size() && lower[i] == '\0';
}

// A JWT access token's type (RFC 9068 2.1): "at+jwt", or the media type written in full
// (RFC 7515 4.1.9); media type names are case-insensitive (RFC 6838 4.2).
bool at_jwt(StrView typ) { return equal_folded(typ, "at+jwt") || equal_folded(typ, "application/at+jwt"); }

// A NumericDate from the number the reader just reported (kInt or kDouble): integral values
// within int64 only.
bool numeric_date(const json::Reader& r, Event e, int64_t* out) {
  if (e == Event::kInt) {
    *out = r.int_value();
    return true;
  }
  // kDouble: a fraction, an exponent, or an integer beyond int64. Exact, from the digits.
  const json::Reader::Decimal d = r.decimal();
  if (d.count == 0) {
    *out = 0;
    return true;
  }
  if (d.exp10 < 0) return false;  // no trailing zeros in the digits: a fraction remains
  if (static_cast<int64_t>(d.count) + d.exp10 > 19) return false;
  uint64_t v = 0;
  const uint64_t kMax = static_cast<uint64_t>(INT64_MAX);
  for (uint16_t i = 0; i < d.count; ++i) {
    if (v > (kMax - d.digits[i]) / 10) return false;
    v = v * 10 + d.digits[i];
  }
  for (int32_t i = 0; i < d.exp10; ++i) {
    if (v > kMax / 10) return false;
    v *= 10;
  }
  *out = d.negative ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
  return true;
}

// What the header and the claims say, gathered while they are read.
struct Seen {
  // Header.
  bool alg_ok = false;
  bool crit = false;
  bool typ_ok = false;
  // Claims.
  bool iss = false, iss_ok = false;
  bool aud = false, aud_ok = false;
  bool exp = false, nbf = false, iat = false;
  int64_t exp_v = 0, nbf_v = 0, iat_v = 0;
  JwtClaims claims;
};

struct Context {
  const JwtConfig& config;
  Store& store;
  Seen& seen;
};

// Handles the value of member `m` whose first event is `e`.
JwtResult on_value(PartReader& in, const Context& cx, Member m, Event e) {
  Seen& s = cx.seen;
  const bool is_string = e == Event::kString || e == Event::kStringPart;
  const bool is_number = e == Event::kInt || e == Event::kDouble;
  switch (m) {
    case Member::kOther:
      break;
    case Member::kCrit:
      s.crit = true;
      break;
    case Member::kTyp: {
      if (!cx.config.require_at_jwt || !is_string) break;  // not looked at, or never "at+jwt"
      StrView v;
      const JwtResult r = read_string(in, cx.store, e, true, &v);
      if (r != JwtResult::kOk) return r;
      s.typ_ok = at_jwt(v);
      return JwtResult::kOk;
    }
    case Member::kAlg: {
      if (!is_string) return JwtResult::kBadClaimType;
      StrView v;
      const JwtResult r = read_string(in, cx.store, e, true, &v);
      if (r != JwtResult::kOk) return r;
      s.alg_ok = v.equals(jwt_alg_name(cx.config.alg));
      return JwtResult::kOk;
    }
    case Member::kIss: {
      if (!is_string) return JwtResult::kBadClaimType;
      StrView v;
      const JwtResult r = read_string(in, cx.store, e, true, &v);
      if (r != JwtResult::kOk) return r;
      s.iss = true;
      s.iss_ok = v.equals(cx.config.issuer);
      return JwtResult::kOk;
    }
    case Member::kAud: {
      s.aud = true;
      if (is_string) {
        StrView v;
        const JwtResult r = read_string(in, cx.store, e, true, &v);
        if (r != JwtResult::kOk) return r;
        s.aud_ok = v.equals(cx.config.audience);
        return JwtResult::kOk;
      }
      if (e != Event::kArrayBegin) return JwtResult::kBadClaimType;
      for (;;) {
        e = in.next();
        if (e == Event::kArrayEnd) return JwtResult::kOk;
        if (e == Event::kError) return JwtResult::kBadJson;
        if (e != Event::kString && e != Event::kStringPart) return JwtResult::kBadClaimType;
        StrView v;
        const JwtResult r = read_string(in, cx.store, e, true, &v);
        if (r != JwtResult::kOk) return r;
        if (v.equals(cx.config.audience)) s.aud_ok = true;
      }
    }
    case Member::kExp:
    case Member::kNbf:
    case Member::kIat: {
      int64_t v = 0;
      if (!is_number || !numeric_date(in.reader(), e, &v)) return JwtResult::kBadClaimType;
      if (m == Member::kExp) {
        s.exp = true;
        s.exp_v = v;
      } else if (m == Member::kNbf) {
        s.nbf = true;
        s.nbf_v = v;
      } else {
        s.iat = true;
        s.iat_v = v;
      }
      return JwtResult::kOk;
    }
    case Member::kSub:
    case Member::kScope:
    case Member::kClientId: {
      if (!is_string) return JwtResult::kBadClaimType;
      StrView v;
      const JwtResult r = read_string(in, cx.store, e, true, &v);
      if (r != JwtResult::kOk) return r;
      if (m == Member::kSub) {
        s.claims.sub = v;
        s.claims.has_sub = true;
      } else if (m == Member::kScope) {
        s.claims.scope = v;
        s.claims.has_scope = true;
      } else {
        s.claims.client_id = v;
        s.claims.has_client_id = true;
      }
      return JwtResult::kOk;
    }
  }
  // A value nobody reads: skip it whole.
  if (is_string) return read_string(in, cx.store, e, false, nullptr);
  if (e == Event::kObjectBegin || e == Event::kArrayBegin) return skip_container(in);
  return JwtResult::kOk;
}

// Reads one part (header or claims): exactly one JSON object, its top-level members handed to
// on_value() after the duplicate check.
JwtResult read_object(json::Reader& reader, StrView b64, const Context& cx, bool header) {
  PartReader in(reader, b64);
  if (in.next() != Event::kObjectBegin) return JwtResult::kBadJson;
  for (;;) {
    Event e = in.next();
    if (e == Event::kObjectEnd) break;
    if (e != Event::kKey) return JwtResult::kBadJson;
    const StrView key = reader.text();
    JwtResult r = cx.store.add_key(key);
    if (r != JwtResult::kOk) return r;
    const Member m = header ? header_member(key) : claim_member(key);
    e = in.next();
    if (!is_scalar_or_open(e)) return JwtResult::kBadJson;
    r = on_value(in, cx, m, e);
    if (r != JwtResult::kOk) return r;
  }
  return in.next() == Event::kDocumentEnd ? JwtResult::kOk : JwtResult::kBadJson;
}

// a + b, saturated at INT64_MAX (b >= 0).
int64_t add_sat(int64_t a, uint32_t b) {
  return a > INT64_MAX - static_cast<int64_t>(b) ? INT64_MAX : a + static_cast<int64_t>(b);
}

}  // namespace

Status base64url_decode(StrView in, Span<uint8_t> out, size_t* out_len) {
  if (!b64url_valid(in)) return Status::kInvalidArgument;
  const size_t need = base64url_decoded_size(in.size());
  if (need > out.size()) return Status::kNoSpace;
  *out_len = b64url_decode_valid(in.data(), in.size(), out.data());
  return Status::kOk;
}

const char* jwt_alg_name(JwtAlg alg) {
  switch (alg) {
    case JwtAlg::kES256: return "ES256";
    case JwtAlg::kRS256: return "RS256";
    case JwtAlg::kHS256: return "HS256";
  }
  return "";
}

const char* jwt_result_text(JwtResult r) {
#if EMCP_ERROR_STRINGS
  switch (r) {
    case JwtResult::kOk: return "ok";
    case JwtResult::kNoToken: return "no token";
    case JwtResult::kBadConfig: return "token verifier not configured";
    case JwtResult::kTooLarge: return "token too large";
    case JwtResult::kMalformed: return "token is not three base64url parts";
    case JwtResult::kBadBase64url: return "token part is not base64url";
    case JwtResult::kBadJson: return "token header or claims are not a JSON object";
    case JwtResult::kDuplicateKey: return "token has a duplicate header or claim name";
    case JwtResult::kBadClaimType: return "token claim of the wrong type";
    case JwtResult::kAlgMismatch: return "token algorithm not accepted";
    case JwtResult::kCritHeader: return "token has critical extensions";
    case JwtResult::kWrongType: return "token typ is not at+jwt";
    case JwtResult::kBadSignature: return "token signature invalid";
    case JwtResult::kMissingClaim: return "token lacks exp, iss or aud";
    case JwtResult::kExpired: return "token expired";
    case JwtResult::kNotYetValid: return "token not yet valid";
    case JwtResult::kWrongIssuer: return "token from another issuer";
    case JwtResult::kWrongAudience: return "token for another audience";
    case JwtResult::kCount_: break;
  }
  return "unknown token result";
#else
  (void)r;
  return "";
#endif
}

JwtResult verify_jwt(StrView token, const JwtConfig& config, uint64_t now_unix_s,
                     Span<uint8_t> scratch, JwtClaims* out) {
  *out = JwtClaims();
  if (config.verify == nullptr || config.issuer == nullptr || config.issuer[0] == '\0' ||
      config.audience == nullptr || config.audience[0] == '\0' ||
      jwt_alg_name(config.alg)[0] == '\0')
    return JwtResult::kBadConfig;
  if (token.empty()) return JwtResult::kNoToken;
  if (token.size() > scratch.size()) return JwtResult::kTooLarge;

  // header '.' claims '.' signature
  size_t dots[2] = {0, 0};
  size_t ndots = 0;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '.') continue;
    if (ndots == 2) return JwtResult::kMalformed;
    dots[ndots++] = i;
  }
  if (ndots != 2) return JwtResult::kMalformed;
  const StrView header = token.sub(0, dots[0]);
  const StrView payload = token.sub(dots[0] + 1, dots[1] - dots[0] - 1);
  const StrView signature = token.sub(dots[1] + 1);
  if (header.empty() || payload.empty()) return JwtResult::kMalformed;
  if (!b64url_valid(header) || !b64url_valid(payload) || !b64url_valid(signature))
    return JwtResult::kBadBase64url;

  uint32_t depth_bits[(EMCP_JSON_MAX_DEPTH + 31) / 32];
  char key_buf[kJwtMaxKeyLen];
  uint8_t digits[40];
  json::Reader reader(json::Reader::Storage{depth_bits, EMCP_JSON_MAX_DEPTH, key_buf,
                                            static_cast<uint16_t>(kJwtMaxKeyLen), digits,
                                            static_cast<uint16_t>(sizeof digits)});
  Store store(scratch);
  Seen seen;
  const Context cx{config, store, seen};

  // The header: which algorithm, any extension.
  JwtResult r = read_object(reader, header, cx, true);
  if (r != JwtResult::kOk) return r;
  if (!seen.alg_ok) return JwtResult::kAlgMismatch;
  if (seen.crit) return JwtResult::kCritHeader;
  if (config.require_at_jwt && !seen.typ_ok) return JwtResult::kWrongType;

  // The signature, over the ASCII of header '.' claims, before the claims are read.
  store.clear();
  const size_t sig_len = b64url_decode_valid(signature.data(), signature.size(), store.base());
  if (!config.verify(config.verify_ctx, config.alg,
                     reinterpret_cast<const uint8_t*>(token.data()), dots[1], store.base(),
                     sig_len))
    return JwtResult::kBadSignature;

  // The claims.
  store.clear();
  r = read_object(reader, payload, cx, false);
  if (r != JwtResult::kOk) return r;
  if (!seen.exp || !seen.iss || !seen.aud) return JwtResult::kMissingClaim;
  const int64_t now = now_unix_s > static_cast<uint64_t>(INT64_MAX)
                          ? INT64_MAX
                          : static_cast<int64_t>(now_unix_s);
  if (now > add_sat(seen.exp_v, config.skew_s)) return JwtResult::kExpired;
  const int64_t latest = add_sat(now, config.skew_s);
  if ((seen.nbf && seen.nbf_v > latest) || (seen.iat && seen.iat_v > latest))
    return JwtResult::kNotYetValid;
  if (!seen.iss_ok) return JwtResult::kWrongIssuer;
  if (!seen.aud_ok) return JwtResult::kWrongAudience;

  seen.claims.exp = seen.exp_v;
  *out = seen.claims;
  return JwtResult::kOk;
}

}  // namespace auth
EMCP_NS_END
