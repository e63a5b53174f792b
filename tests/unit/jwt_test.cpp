// JWT access-token verification (emcp/auth/jwt.h) and its Mbed TLS key (emcp/mbedtls/jwt_key.h).
//
// Nothing here is committed key material: every key is generated when the tests run, with the
// `openssl` command line tool, in a temporary folder, and every signed token is assembled by
// openssl too (its base64 of the header and the claims, its signature over them); the tests
// only re-encode the signature bytes into base64url (and DER to R||S for ES256). The core's
// parsing and claim checks are also driven through a stand-in signature callback (JwtCore.*),
// with tokens whose parts the test encodes itself, and once inside a NoHeapScope.
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>

#include "emcp/auth/jwt.h"
#include "emcp/mbedtls/jwt_key.h"
#include "heap_guard.h"

EMCP_NS_BEGIN
namespace auth {
// Readable assertion messages.
void PrintTo(JwtResult r, std::ostream* os) {
  *os << static_cast<int>(r) << " (" << jwt_result_text(r) << ")";
}
}  // namespace auth
EMCP_NS_END

namespace {

using emcp::Status;
using emcp::StrView;
using emcp::auth::JwtAlg;
using emcp::auth::JwtClaims;
using emcp::auth::JwtConfig;
using emcp::auth::JwtResult;
using emcp::auth::verify_jwt;
using emcp::mbedtls::JwtKey;

constexpr uint64_t kNow = 1700000000;
const char* const kIss = "https://as.example.com";
const char* const kAud = "https://device.example.com/mcp";

std::string_view sv(StrView v) { return std::string_view(v.data(), v.size()); }
StrView to_view(const std::string& s) { return StrView(s.data(), s.size()); }

// ---- encoding helpers of the test (independent of the code under test) ----------------------

std::string b64url(std::string_view bytes) {
  static const char kAlpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kAlpha[v >> 18];
    out += kAlpha[(v >> 12) & 63];
    out += kAlpha[(v >> 6) & 63];
    out += kAlpha[v & 63];
  }
  if (bytes.size() - i == 1) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += kAlpha[v >> 18];
    out += kAlpha[(v >> 12) & 63];
  } else if (bytes.size() - i == 2) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += kAlpha[v >> 18];
    out += kAlpha[(v >> 12) & 63];
    out += kAlpha[(v >> 6) & 63];
  }
  return out;
}

std::string hex(std::string_view bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : bytes) {
    out += kHex[uint8_t(c) >> 4];
    out += kHex[uint8_t(c) & 15];
  }
  return out;
}

// The claims of a token that passes, plus `extra` members (JSON text, without braces).
std::string claims(const std::string& extra = "", int64_t exp = int64_t(kNow) + 3600) {
  std::string s = std::string("{\"iss\":\"") + kIss + "\",\"aud\":\"" + kAud +
                  "\",\"exp\":" + std::to_string(exp);
  if (!extra.empty()) s += "," + extra;
  return s + "}";
}
std::string header(const char* alg) { return std::string("{\"alg\":\"") + alg + "\",\"typ\":\"JWT\"}"; }

// ---- openssl ------------------------------------------------------------------------------------

// Runs `cmd` with /bin/sh; its standard output, and whether it exited with status 0.
std::string run(const std::string& cmd, bool* ok) {
  std::string out;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) {
    *ok = false;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int status = pclose(f);
  *ok = status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return out;
}

std::string read_file(const std::string& path) {
  std::string out;
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  fclose(f);
  return out;
}

void write_file(const std::string& path, std::string_view data) {
  FILE* f = fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(fwrite(data.data(), 1, data.size(), f), data.size());
  fclose(f);
}

// The ECDSA-Sig-Value openssl writes (DER SEQUENCE of two INTEGERs) as JWS R||S (RFC 7518 3.4).
std::string der_to_raw(const std::string& der) {
  std::string out;
  size_t p = 0;
  auto byte = [&](size_t i) { return i < der.size() ? uint8_t(der[i]) : uint8_t(0); };
  if (byte(p++) != 0x30) return out;
  if (byte(p) & 0x80) p += 1 + (byte(p) & 0x7F); else ++p;
  for (int k = 0; k < 2; ++k) {
    if (byte(p++) != 0x02) return "";
    size_t len = byte(p++);
    std::string v = der.substr(p, len);
    p += len;
    while (v.size() > 32 && v[0] == '\0') v.erase(0, 1);
    if (v.size() > 32) return "";
    out += std::string(32 - v.size(), '\0') + v;
  }
  return out;
}

struct Token {
  std::string text;   // header.claims.signature
  std::string input;  // header.claims
  std::string sig;    // raw signature bytes
};

// Keys made by openssl in a fresh folder, once per test program (RSA only when a test asks).
class Keys {
 public:
  static Keys& get() {
    static Keys keys;
    return keys;
  }
  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  std::string path(const char* name) const { return dir_ + "/" + name; }
  // PEM texts of public keys.
  const std::string& ec_pub() const { return ec_pub_; }
  const std::string& rsa_pub() {
    make_rsa();
    return rsa_pub_;
  }
  const std::string& secret() const { return secret_; }

  // Runs openssl commands in the key folder; false (with a test failure) when one fails.
  bool sh(const std::string& cmd, std::string* out = nullptr) {
    bool ok = false;
    std::string o = run("cd '" + dir_ + "' && { " + cmd + " ; } 2>stderr.txt", &ok);
    if (!ok) ADD_FAILURE() << "command failed: " << cmd << "\n" << o << read_file(path("stderr.txt"));
    if (out) *out = o;
    return ok;
  }

  // A token whose header and claims openssl encodes and signs with `alg`'s key. `hmac_key`
  // replaces the HS256 secret.
  Token sign(JwtAlg alg, const std::string& header_json, const std::string& claims_json,
             const std::string* hmac_key = nullptr) {
    Token t;
    write_file(path("hdr.json"), header_json);
    write_file(path("pld.json"), claims_json);
    std::string opts;
    if (alg == JwtAlg::kES256) opts = "-sign ec.pem";
    else if (alg == JwtAlg::kRS256) { make_rsa(); opts = "-sign rsa.pem"; }
    else opts = "-mac HMAC -macopt hexkey:" + hex(hmac_key ? *hmac_key : secret_);
    std::string cmd =
        "h=$(openssl base64 -A -in hdr.json | tr '+/' '-_' | tr -d '=') && "
        "p=$(openssl base64 -A -in pld.json | tr '+/' '-_' | tr -d '=') && "
        "printf '%s.%s' \"$h\" \"$p\" > input.txt && "
        "openssl dgst -sha256 " + opts + " -binary -out sig.bin input.txt && cat input.txt";
    if (!sh(cmd, &t.input)) return t;
    std::string sig = read_file(path("sig.bin"));
    if (alg == JwtAlg::kES256) {
      sig = der_to_raw(sig);
      EXPECT_EQ(sig.size(), 64u) << "openssl's ECDSA signature did not parse";
    }
    t.sig = sig;
    t.text = t.input + "." + b64url(sig);
    return t;
  }

 private:
  Keys() {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/emcp-jwt-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) == nullptr) return;
    dir_ = buf.data();
    std::string hexsecret;
    ok_ = sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out ec.pem && "
             "openssl pkey -in ec.pem -pubout -out ec_pub.pem") &&
          sh("openssl rand -hex 32", &hexsecret);
    ec_pub_ = read_file(path("ec_pub.pem"));
    const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    for (size_t i = 0; i + 1 < hexsecret.size() && hexsecret[i] != '\n'; i += 2)
      secret_ += char(nibble(hexsecret[i]) * 16 + nibble(hexsecret[i + 1]));
    ok_ = ok_ && ec_pub_.find("BEGIN PUBLIC KEY") != std::string::npos && secret_.size() == 32;
  }
  ~Keys() {
    if (!dir_.empty()) {
      bool ok = false;
      (void)run("rm -rf '" + dir_ + "'", &ok);
    }
  }
  void make_rsa() {
    if (!rsa_pub_.empty() || !ok_) return;
    if (sh("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out rsa.pem && "
           "openssl pkey -in rsa.pem -pubout -out rsa_pub.pem"))
      rsa_pub_ = read_file(path("rsa_pub.pem"));
  }

  bool ok_ = false;
  std::string dir_;
  std::string ec_pub_;
  std::string rsa_pub_;
  std::string secret_;
};

// A configured verifier over a JwtKey, with its own scratch.
struct Verifier {
  JwtKey key;
  JwtConfig cfg;
  std::vector<uint8_t> scratch = std::vector<uint8_t>(2048);
  JwtClaims claims;

  explicit Verifier(JwtAlg alg) {
    Keys& k = Keys::get();
    Status s = Status::kInvalidArgument;
    if (alg == JwtAlg::kES256) s = key.load_public_key_pem(alg, k.ec_pub().c_str());
    else if (alg == JwtAlg::kRS256) s = key.load_public_key_pem(alg, k.rsa_pub().c_str());
    else s = key.load_hmac_secret(reinterpret_cast<const uint8_t*>(k.secret().data()), k.secret().size());
    EXPECT_EQ(s, Status::kOk);
    key.bind(&cfg);
    cfg.issuer = kIss;
    cfg.audience = kAud;
  }
  JwtResult check(const std::string& token, uint64_t now = kNow) {
    return verify_jwt(to_view(token), cfg, now, emcp::Span<uint8_t>(scratch.data(), scratch.size()), &claims);
  }
};

class JwtOpenssl : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(Keys::get().ok()) << "the openssl command line tool is needed to make test keys";
  }
  Keys& keys() { return Keys::get(); }
};

// ---- base64url ---------------------------------------------------------------------------------

std::string decode(std::string_view in, Status* st) {
  uint8_t buf[64];
  size_t n = 0;
  *st = emcp::auth::base64url_decode(StrView(in.data(), in.size()), buf, &n);
  return *st == Status::kOk ? std::string(reinterpret_cast<char*>(buf), n) : std::string();
}

TEST(JwtBase64url, DecodesRfc4648VectorsWithoutPadding) {
  // RFC 4648 section 10, padding removed (RFC 7515 2).
  const char* const vectors[][2] = {{"", ""},         {"Zg", "f"},         {"Zm8", "fo"},
                                    {"Zm9v", "foo"},  {"Zm9vYg", "foob"},  {"Zm9vYmE", "fooba"},
                                    {"Zm9vYmFy", "foobar"}};
  for (const auto& v : vectors) {
    Status st;
    EXPECT_EQ(decode(v[0], &st), v[1]) << v[0];
    EXPECT_EQ(st, Status::kOk) << v[0];
    EXPECT_EQ(emcp::auth::base64url_decoded_size(strlen(v[0])), strlen(v[1]));
  }
  Status st;
  EXPECT_EQ(decode("-_-_", &st), "\xfb\xff\xbf");  // the two url-safe characters: 62, 63
  EXPECT_EQ(st, Status::kOk);
}

TEST(JwtBase64url, RefusesWhatIsNotStrictBase64url) {
  using namespace std::string_view_literals;
  for (std::string_view bad : {"Zg=="sv, "Zm8="sv, "Zm9v\n"sv, " Zm9v"sv, "Zm 9v"sv, "+/+/"sv,
                               "Zm9v/A"sv, "Z"sv, "Zm9vY"sv, "Zh"sv, "Zm9"sv, "Zm+"sv, "Zm\0v"sv,
                               "Zm9v*"sv, "Zm9v\t"sv}) {
    Status st;
    (void)decode(bad, &st);
    EXPECT_EQ(st, Status::kInvalidArgument) << bad;
  }
  // "Zh": 'h' leaves bits set that belong to no byte; "Zm9": '9' likewise. Their canonical
  // forms decode.
  Status st;
  EXPECT_EQ(decode("Zg", &st), "f");
  EXPECT_EQ(decode("Zm8", &st), "fo");
}

TEST(JwtBase64url, SaysWhenTheOutputIsTooSmall) {
  uint8_t out[2] = {0xAA, 0xAA};
  size_t n = 99;
  EXPECT_EQ(emcp::auth::base64url_decode("Zm9v", emcp::Span<uint8_t>(out, 2), &n), Status::kNoSpace);
  EXPECT_EQ(out[0], 0xAA);
  EXPECT_EQ(n, 99u);
}

// ---- the core with a stand-in signature check ---------------------------------------------------

// The stand-in accepts exactly the signature bytes "good-signature" and records what it saw.
struct FakeVerify {
  int calls = 0;
  JwtAlg alg = JwtAlg::kES256;
  char input[1024];
  size_t input_len = 0;
  static bool fn(void* ctx, JwtAlg alg, const uint8_t* in, size_t n, const uint8_t* sig, size_t len) {
    auto* f = static_cast<FakeVerify*>(ctx);
    ++f->calls;
    f->alg = alg;
    f->input_len = n < sizeof f->input ? n : sizeof f->input;
    memcpy(f->input, in, f->input_len);
    return len == 14 && memcmp(sig, "good-signature", 14) == 0;
  }
};

std::string fake_token(const std::string& header_json, const std::string& claims_json,
                       const std::string& sig = "good-signature") {
  return b64url(header_json) + "." + b64url(claims_json) + "." + b64url(sig);
}

struct Core {
  FakeVerify fake;
  JwtConfig cfg;
  uint8_t scratch[2048];
  JwtClaims claims;
  Core() {
    cfg.alg = JwtAlg::kHS256;
    cfg.verify = &FakeVerify::fn;
    cfg.verify_ctx = &fake;
    cfg.issuer = kIss;
    cfg.audience = kAud;
  }
  JwtResult check(const std::string& token, uint64_t now = kNow, size_t scratch_size = 2048) {
    return verify_jwt(to_view(token), cfg, now, emcp::Span<uint8_t>(scratch, scratch_size), &claims);
  }
  JwtResult claims_are(const std::string& claims_json, uint64_t now = kNow) {
    return check(fake_token(header("HS256"), claims_json), now);
  }
};

TEST(JwtCore, AcceptsAGoodTokenAndHandsOutItsClaims) {
  Core c;
  const std::string t = fake_token(header("HS256"),
      claims("\"sub\":\"alice\",\"scope\":\"sensors:read relay:write\",\"client_id\":\"cli-1\""));
  ASSERT_EQ(c.check(t), JwtResult::kOk);
  EXPECT_EQ(c.fake.calls, 1);
  EXPECT_EQ(c.fake.alg, JwtAlg::kHS256);
  // The signing input is the ASCII of the first two parts.
  EXPECT_EQ(std::string_view(c.fake.input, c.fake.input_len), t.substr(0, t.rfind('.')));
  EXPECT_TRUE(c.claims.has_sub);
  EXPECT_EQ(sv(c.claims.sub), "alice");
  EXPECT_TRUE(c.claims.has_scope);
  EXPECT_EQ(sv(c.claims.scope), "sensors:read relay:write");
  EXPECT_TRUE(c.claims.has_client_id);
  EXPECT_EQ(sv(c.claims.client_id), "cli-1");
  EXPECT_EQ(c.claims.exp, int64_t(kNow) + 3600);
}

TEST(JwtCore, ClaimViewsAreUnescapedCopiesInTheScratch) {
  Core c;
  std::string t = fake_token(header("HS256"),
      claims("\"sub\":\"a\\u00e9\\/b\\u0000c\",\"scope\":\"\\u0072ead\""));
  ASSERT_EQ(c.check(t), JwtResult::kOk);
  // The token's buffer may go: the views live in the scratch.
  std::fill(t.begin(), t.end(), 'x');
  EXPECT_EQ(sv(c.claims.sub), std::string_view("a\xc3\xa9/b\0c", 7));
  EXPECT_EQ(sv(c.claims.scope), "read");
  EXPECT_FALSE(c.claims.has_client_id);
  EXPECT_TRUE(c.claims.client_id.empty());
  const auto* s = reinterpret_cast<const uint8_t*>(c.claims.sub.data());
  EXPECT_TRUE(s >= c.scratch && s + c.claims.sub.size() <= c.scratch + sizeof c.scratch);
}

TEST(JwtCore, AbsentOptionalClaimsAreMarkedAbsent) {
  Core c;
  ASSERT_EQ(c.claims_are(claims()), JwtResult::kOk);
  EXPECT_FALSE(c.claims.has_sub);
  EXPECT_FALSE(c.claims.has_scope);
  EXPECT_FALSE(c.claims.has_client_id);
  // Present but empty is not absent.
  ASSERT_EQ(c.claims_are(claims("\"scope\":\"\"")), JwtResult::kOk);
  EXPECT_TRUE(c.claims.has_scope);
  EXPECT_TRUE(c.claims.scope.empty());
}

TEST(JwtCore, RefusesTokensThatAreNotThreeParts) {
  Core c;
  const std::string h = b64url(header("HS256")), p = b64url(claims()), s = b64url("good-signature");
  EXPECT_EQ(c.check(""), JwtResult::kNoToken);
  EXPECT_EQ(c.check(h), JwtResult::kMalformed);
  EXPECT_EQ(c.check(h + "." + p), JwtResult::kMalformed);
  EXPECT_EQ(c.check(h + "." + p + "." + s + "." + s), JwtResult::kMalformed);
  EXPECT_EQ(c.check(h + "." + p + "." + s + "."), JwtResult::kMalformed);
  EXPECT_EQ(c.check("." + p + "." + s), JwtResult::kMalformed);
  EXPECT_EQ(c.check(h + ".." + s), JwtResult::kMalformed);
  EXPECT_EQ(c.check(".."), JwtResult::kMalformed);
  EXPECT_EQ(c.check(h + "." + p + "." + s), JwtResult::kOk);
  EXPECT_EQ(c.fake.calls, 1);  // only the good one got as far as the signature
}

TEST(JwtCore, RefusesPartsThatAreNotStrictBase64url) {
  Core c;
  const std::string h = b64url(header("HS256")), p = b64url(claims()), s = b64url("good-signature");
  ASSERT_EQ(s.size() % 4, 3u);  // "good-signature" is 14 bytes: 19 characters, 2 unused bits
  const std::string bad[] = {
      h + "." + p + "." + s + "=",                      // padding
      h + "=." + p + "." + s,                           // padding on the header
      h + "." + p + "." + s.substr(0, 5) + "+" + s.substr(6),  // standard base64 '+'
      h + "." + p.substr(0, 4) + "/" + p.substr(5) + "." + s,  // standard base64 '/'
      h + "." + p + "." + s.substr(0, 8) + " " + s.substr(8),  // whitespace
      h + "." + p + "." + s + "\n",
      " " + h + "." + p + "." + s,
      h + "." + p + "." + s.substr(0, 3) + "*" + s.substr(4),  // outside any alphabet
      h + "." + p + "." + s.substr(0, s.size() - 1) + "V",     // non-zero unused bits ("U" is)
      h + "." + p + "." + s + "AA",                             // impossible length (4k+1)
      h + "." + p + "." + s.substr(0, 8) + std::string(1, '\0') + s.substr(9),
  };
  ASSERT_EQ(s.back(), 'U');
  for (const std::string& t : bad) EXPECT_EQ(c.check(t), JwtResult::kBadBase64url) << t;
  EXPECT_EQ(c.fake.calls, 0);
}

TEST(JwtCore, RefusesHeadersAndClaimsThatAreNotOneJsonObject) {
  Core c;
  const char* const not_objects[] = {"[1]", "\"alg\"", "{\"alg\":\"HS256\"", "{\"alg\":\"HS256\"} x",
                                     "{\"alg\":\"HS256\",}", " ", "\xef\xbb\xbf{\"alg\":\"HS256\"}",
                                     "{\"alg\":\"HS256\",\"x\":\"\xff\"}", "null", "{\"alg\":'HS256'}",
                                     "{\"alg\":\"HS256\"}{}"};
  for (const char* h : not_objects) {
    const JwtResult r = c.check(fake_token(h, claims()));
    EXPECT_EQ(r, JwtResult::kBadJson) << h;
    EXPECT_TRUE(emcp::auth::jwt_malformed(r));
  }
  EXPECT_EQ(c.fake.calls, 0);
  for (const char* p : {"[1]", "{\"exp\":1", "{} {}", "{\"a\":1,}", "nul", "{\"exp\":01}"}) {
    EXPECT_EQ(c.claims_are(p), JwtResult::kBadJson) << p;
  }
  EXPECT_EQ(c.fake.calls, 6);  // the claims are read only after the signature was checked
}

TEST(JwtCore, ClaimsAreReadOnlyWhenTheSignatureHolds) {
  Core c;
  EXPECT_EQ(c.check(fake_token(header("HS256"), "not json", "bad")), JwtResult::kBadSignature);
  EXPECT_EQ(c.check(fake_token(header("HS256"), claims(), "")), JwtResult::kBadSignature);
}

TEST(JwtCore, RefusesDuplicateMemberNames) {
  Core c;
  EXPECT_EQ(c.claims_are(claims("\"exp\":1")), JwtResult::kDuplicateKey);
  EXPECT_EQ(c.claims_are(claims("\"sub\":\"a\",\"sub\":\"b\"")), JwtResult::kDuplicateKey);
  EXPECT_EQ(c.claims_are(claims("\"x\":1,\"y\":{},\"x\":2")), JwtResult::kDuplicateKey);
  // The same name once escaped is the same name.
  EXPECT_EQ(c.claims_are(claims("\"\\u0069ss\":\"x\"")), JwtResult::kDuplicateKey);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"alg\":\"HS256\"}", claims())), JwtResult::kDuplicateKey);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"none\",\"alg\":\"HS256\"}", claims())), JwtResult::kDuplicateKey);
  // Names inside nested values are not interpreted and not checked; the same name at two
  // levels is no duplicate.
  EXPECT_EQ(c.claims_are(claims("\"cnf\":{\"a\":1,\"a\":2},\"x\":{\"x\":[{\"x\":1}]}")), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("\"Exp\":\"not the same\"")), JwtResult::kOk);
}

TEST(JwtCore, RefusesClaimsOfTheWrongType) {
  Core c;
  const auto with = [](const std::string& member_exp, const std::string& rest = "") {
    return std::string("{\"iss\":\"") + kIss + "\",\"aud\":\"" + kAud + "\"," + member_exp + rest + "}";
  };
  EXPECT_EQ(c.claims_are(with("\"exp\":\"1700003600\"")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(with("\"exp\":null")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(with("\"exp\":true")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(with("\"exp\":[1700003600]")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(with("\"exp\":1700003600.5")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(with("\"exp\":1e30")), JwtResult::kBadClaimType);  // beyond int64
  EXPECT_EQ(c.claims_are(with("\"exp\":9223372036854775808")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(claims("\"nbf\":\"0\"")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(claims("\"iat\":{}")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(claims("\"sub\":42")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(claims("\"scope\":[\"a\",\"b\"]")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(claims("\"client_id\":null")), JwtResult::kBadClaimType);
  EXPECT_EQ(c.check(fake_token("{\"alg\":null}", claims())), JwtResult::kBadClaimType);
  EXPECT_EQ(c.check(fake_token("{\"alg\":[\"HS256\"]}", claims())), JwtResult::kBadClaimType);
  const std::string exp = ",\"exp\":" + std::to_string(kNow + 3600);
  EXPECT_EQ(c.claims_are(std::string("{\"iss\":1,\"aud\":\"") + kAud + "\"" + exp + "}"), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(std::string("{\"iss\":\"") + kIss + "\",\"aud\":{}" + exp + "}"), JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(std::string("{\"iss\":\"") + kIss + "\",\"aud\":[\"" + kAud + "\",1]" + exp + "}"),
            JwtResult::kBadClaimType);
  EXPECT_EQ(c.claims_are(std::string("{\"iss\":\"") + kIss + "\",\"aud\":[[\"" + kAud + "\"]]" + exp + "}"),
            JwtResult::kBadClaimType);
  // Other claims may have any type.
  EXPECT_EQ(c.claims_are(claims("\"roles\":[1,{\"a\":null}],\"admin\":false,\"n\":1.5e300")), JwtResult::kOk);
}

TEST(JwtCore, NumericDatesMayBeWrittenAsIntegralNumbers) {
  Core c;
  const auto with_exp = [](const char* exp) {
    return std::string("{\"iss\":\"") + kIss + "\",\"aud\":\"" + kAud + "\",\"exp\":" + exp + "}";
  };
  ASSERT_EQ(c.claims_are(with_exp("1700003600.0")), JwtResult::kOk);
  EXPECT_EQ(c.claims.exp, 1700003600);
  ASSERT_EQ(c.claims_are(with_exp("1.7000036e9")), JwtResult::kOk);
  EXPECT_EQ(c.claims.exp, 1700003600);
  ASSERT_EQ(c.claims_are(with_exp("17000036E2")), JwtResult::kOk);
  EXPECT_EQ(c.claims.exp, 1700003600);
  ASSERT_EQ(c.claims_are(with_exp("9223372036854775807")), JwtResult::kOk);
  EXPECT_EQ(c.claims.exp, INT64_MAX);
  ASSERT_EQ(c.claims_are(with_exp("9.223372036854775807e18")), JwtResult::kOk);
  EXPECT_EQ(c.claims.exp, INT64_MAX);
  EXPECT_EQ(c.claims_are(with_exp("-1")), JwtResult::kExpired);
  EXPECT_EQ(c.claims_are(with_exp("0.0")), JwtResult::kExpired);
  EXPECT_EQ(c.claims_are(with_exp("-9223372036854775807")), JwtResult::kExpired);
  EXPECT_EQ(c.claims_are(with_exp("1700003600.000001")), JwtResult::kBadClaimType);
}

TEST(JwtCore, ChecksTheLifetimeWithTheSkew) {
  Core c;  // skew 60 s
  const int64_t now = int64_t(kNow);
  EXPECT_EQ(c.claims_are(claims("", now)), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("", now - 60)), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("", now - 61)), JwtResult::kExpired);
  EXPECT_EQ(c.claims_are(claims("\"nbf\":" + std::to_string(now + 60))), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("\"nbf\":" + std::to_string(now + 61))), JwtResult::kNotYetValid);
  EXPECT_EQ(c.claims_are(claims("\"iat\":" + std::to_string(now + 60))), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("\"iat\":" + std::to_string(now + 61))), JwtResult::kNotYetValid);
  EXPECT_EQ(c.claims_are(claims("\"iat\":" + std::to_string(now - 86400) + ",\"nbf\":0")), JwtResult::kOk);
  c.cfg.skew_s = 0;
  EXPECT_EQ(c.claims_are(claims("", now)), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("", now - 1)), JwtResult::kExpired);
  EXPECT_EQ(c.claims_are(claims("\"nbf\":" + std::to_string(now + 1))), JwtResult::kNotYetValid);
  // No overflow at the ends of the ranges.
  c.cfg.skew_s = UINT32_MAX;
  EXPECT_EQ(c.claims_are(claims("", INT64_MAX)), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("\"nbf\":" + std::to_string(INT64_MAX), INT64_MAX), UINT64_MAX), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("", INT64_MAX), UINT64_MAX), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(claims("", INT64_MIN + 1)), JwtResult::kExpired);
}

TEST(JwtCore, RequiresExpIssAndAud) {
  Core c;
  const std::string iss = std::string("\"iss\":\"") + kIss + "\"";
  const std::string aud = std::string("\"aud\":\"") + kAud + "\"";
  const std::string exp = "\"exp\":" + std::to_string(kNow + 3600);
  EXPECT_EQ(c.claims_are("{" + iss + "," + aud + "}"), JwtResult::kMissingClaim);
  EXPECT_EQ(c.claims_are("{" + aud + "," + exp + "}"), JwtResult::kMissingClaim);
  EXPECT_EQ(c.claims_are("{" + iss + "," + exp + "}"), JwtResult::kMissingClaim);
  EXPECT_EQ(c.claims_are("{}"), JwtResult::kMissingClaim);
  EXPECT_EQ(c.claims_are("{" + iss + "," + aud + "," + exp + "}"), JwtResult::kOk);
}

TEST(JwtCore, MatchesIssuerAndAudienceExactly) {
  Core c;
  const std::string exp = ",\"exp\":" + std::to_string(kNow + 3600);
  const auto tok = [&](const std::string& iss_json, const std::string& aud_json) {
    return "{\"iss\":" + iss_json + ",\"aud\":" + aud_json + exp + "}";
  };
  const std::string aud = std::string("\"") + kAud + "\"";
  const std::string iss = std::string("\"") + kIss + "\"";
  EXPECT_EQ(c.claims_are(tok("\"https://evil.example.com\"", aud)), JwtResult::kWrongIssuer);
  EXPECT_EQ(c.claims_are(tok("\"https://as.example.com/\"", aud)), JwtResult::kWrongIssuer);
  EXPECT_EQ(c.claims_are(tok("\"https://as.example.co\"", aud)), JwtResult::kWrongIssuer);
  EXPECT_EQ(c.claims_are(tok("\"HTTPS://as.example.com\"", aud)), JwtResult::kWrongIssuer);
  EXPECT_EQ(c.claims_are(tok("\"https://as.example.com\\u0000\"", aud)), JwtResult::kWrongIssuer);
  EXPECT_EQ(c.claims_are(tok("\"https:\\/\\/as.example.com\"", aud)), JwtResult::kOk);  // same text
  EXPECT_EQ(c.claims_are(tok(iss, "\"https://other.example.com/mcp\"")), JwtResult::kWrongAudience);
  EXPECT_EQ(c.claims_are(tok(iss, "\"https://device.example.com/mcp/\"")), JwtResult::kWrongAudience);
  EXPECT_EQ(c.claims_are(tok(iss, "\"https://device.example.com\"")), JwtResult::kWrongAudience);
  EXPECT_EQ(c.claims_are(tok(iss, "[]")), JwtResult::kWrongAudience);
  EXPECT_EQ(c.claims_are(tok(iss, "[\"https://a.example\",\"https://b.example\"]")), JwtResult::kWrongAudience);
  EXPECT_EQ(c.claims_are(tok(iss, "[\"https://a.example\"," + aud + "]")), JwtResult::kOk);
  EXPECT_EQ(c.claims_are(tok(iss, "[" + aud + "]")), JwtResult::kOk);
}

TEST(JwtCore, PinsTheAlgorithm) {
  Core c;  // HS256 pinned
  for (const char* alg : {"none", "None", "NONE", "", "ES256", "RS256", "HS384", "HS512", "hs256",
                          "HS256 ", "HS256\\u0000"}) {
    EXPECT_EQ(c.check(fake_token(header(alg), claims())), JwtResult::kAlgMismatch) << alg;
    EXPECT_EQ(c.check(fake_token(header(alg), claims(), "")), JwtResult::kAlgMismatch) << alg;
  }
  EXPECT_EQ(c.check(fake_token("{\"typ\":\"JWT\"}", claims())), JwtResult::kAlgMismatch);
  EXPECT_EQ(c.check(b64url("{\"alg\":\"none\"}") + "." + b64url(claims()) + "."), JwtResult::kAlgMismatch);
  EXPECT_EQ(c.fake.calls, 0);  // never asked
  c.cfg.alg = JwtAlg::kES256;
  EXPECT_EQ(c.check(fake_token(header("HS256"), claims())), JwtResult::kAlgMismatch);
  ASSERT_EQ(c.check(fake_token(header("ES256"), claims())), JwtResult::kOk);
  EXPECT_EQ(c.fake.alg, JwtAlg::kES256);
}

TEST(JwtCore, RefusesCriticalExtensions) {
  Core c;
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"crit\":[\"exp\"],\"exp\":1}", claims())), JwtResult::kCritHeader);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"b64\":false,\"crit\":[\"b64\"]}", claims())), JwtResult::kCritHeader);
  EXPECT_EQ(c.check(fake_token("{\"crit\":[],\"alg\":\"HS256\"}", claims())), JwtResult::kCritHeader);
  EXPECT_EQ(c.fake.calls, 0);
  // Other header parameters are ignored (the key never comes from the token).
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"kid\":\"k1\",\"jwk\":{\"kty\":\"oct\",\"k\":\"AA\"},"
                               "\"jku\":\"https://evil.example/keys\",\"typ\":\"at+jwt\"}", claims())),
            JwtResult::kOk);
}

// RFC 9068 2.1 and 4: a JWT access token says "typ": "at+jwt" (RFC 8725 3.11: explicit
// typing, so that another JWT of the same issuer and key cannot pass for one); the media type
// may be written in full ("application/at+jwt", RFC 7515 4.1.9), in any case (RFC 6838 4.2).
// Checked only with JwtConfig::require_at_jwt.
TEST(JwtCore, RequiresTheAccessTokenTypeWhenAsked) {
  Core c;
  const auto typed = [](const std::string& members) { return fake_token("{\"alg\":\"HS256\"" + members + "}", claims()); };
  const char* const accepted[] = {
      ",\"typ\":\"at+jwt\"", ",\"typ\":\"AT+JWT\"", ",\"typ\":\"At+Jwt\"", ",\"typ\":\"application/at+jwt\"",
      ",\"typ\":\"Application/AT+JWT\"", ",\"typ\":\"at\\u002bjwt\"", ",\"typ\":\"application\\/at+jwt\"",
      ",\"typ\":\"at+jwt\",\"kid\":\"k1\""};
  const char* const refused[] = {
      "", ",\"typ\":\"JWT\"", ",\"typ\":\"jwt\"", ",\"typ\":\"application/jwt\"", ",\"typ\":\"at+jwt \"",
      ",\"typ\":\" at+jwt\"", ",\"typ\":\"at+jwt; charset=utf-8\"", ",\"typ\":\"at+jwt\\u0000\"", ",\"typ\":\"at-jwt\"",
      ",\"typ\":\"text/at+jwt\"", ",\"typ\":\"application/\"", ",\"typ\":\"xapplication/at+jwt\"",
      ",\"typ\":\"application/at+jwt+x\"", ",\"typ\":\"\"", ",\"typ\":1", ",\"typ\":null", ",\"typ\":true",
      ",\"typ\":[\"at+jwt\"]", ",\"typ\":{\"typ\":\"at+jwt\"}", ",\"cty\":\"at+jwt\""};
  // Off (the default): "typ" is not looked at, whatever it holds.
  for (const char* m : accepted) EXPECT_EQ(c.check(typed(m)), JwtResult::kOk) << m;
  for (const char* m : refused) EXPECT_EQ(c.check(typed(m)), JwtResult::kOk) << m;
  c.cfg.require_at_jwt = true;
  for (const char* m : accepted) EXPECT_EQ(c.check(typed(m)), JwtResult::kOk) << m;
  c.fake.calls = 0;
  for (const char* m : refused) {
    const JwtResult r = c.check(typed(m));
    EXPECT_EQ(r, JwtResult::kWrongType) << m;
    EXPECT_FALSE(emcp::auth::jwt_malformed(r));
  }
  EXPECT_EQ(c.fake.calls, 0);  // decided from the header, before the signature
  // Twice is a duplicate, even when both say at+jwt; the earlier header checks come first.
  EXPECT_EQ(c.check(typed(",\"typ\":\"at+jwt\",\"typ\":\"at+jwt\"")), JwtResult::kDuplicateKey);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"none\",\"typ\":\"JWT\"}", claims())), JwtResult::kAlgMismatch);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"crit\":[\"x\"],\"typ\":\"JWT\"}", claims())), JwtResult::kCritHeader);
  // A good type does not stand in for the signature or the claims.
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"typ\":\"at+jwt\"}", claims(), "forged")), JwtResult::kBadSignature);
  EXPECT_EQ(c.check(fake_token("{\"alg\":\"HS256\",\"typ\":\"at+jwt\"}", claims("", int64_t(kNow) - 3600))),
            JwtResult::kExpired);
}

TEST(JwtCore, ATokenLongerThanTheScratchIsTooLarge) {
  Core c;
  const std::string t = fake_token(header("HS256"), claims("\"pad\":\"" + std::string(600, 'x') + "\""));
  ASSERT_LT(t.size(), sizeof c.scratch);
  EXPECT_EQ(c.check(t, kNow, t.size() - 1), JwtResult::kTooLarge);
  EXPECT_EQ(c.check(t, kNow, 0), JwtResult::kTooLarge);
  EXPECT_EQ(c.fake.calls, 0);
  // A scratch as large as the token always suffices, whatever the token holds.
  EXPECT_EQ(c.check(t, kNow, t.size()), JwtResult::kOk);
  const std::string many = fake_token(header("HS256"),
      claims("\"sub\":\"" + std::string(300, 's') + "\",\"scope\":\"" + std::string(300, 'p') +
             "\",\"client_id\":\"" + std::string(300, 'c') + "\",\"a\":1,\"b\":2,\"cc\":3,\"d\":[\"" + kAud + "\"]"),
      std::string(300, 'g'));
  c.fake.calls = 0;
  EXPECT_EQ(c.check(many, kNow, many.size()), JwtResult::kBadSignature);  // the stand-in's bytes differ
  const std::string many_ok = fake_token(header("HS256"),
      claims("\"sub\":\"" + std::string(300, 's') + "\",\"scope\":\"" + std::string(300, 'p') +
             "\",\"client_id\":\"" + std::string(300, 'c') + "\",\"a\":1,\"b\":2,\"cc\":3"));
  ASSERT_LE(many_ok.size(), sizeof c.scratch);
  ASSERT_EQ(c.check(many_ok, kNow, many_ok.size()), JwtResult::kOk);
  EXPECT_EQ(c.claims.scope.size(), 300u);
}

TEST(JwtCore, RefusesAnIncompleteConfiguration) {
  Core c;
  const std::string t = fake_token(header("HS256"), claims());
  JwtConfig good = c.cfg;
  c.cfg.verify = nullptr;
  EXPECT_EQ(c.check(t), JwtResult::kBadConfig);
  c.cfg = good;
  c.cfg.issuer = nullptr;
  EXPECT_EQ(c.check(t), JwtResult::kBadConfig);
  c.cfg = good;
  c.cfg.audience = "";
  EXPECT_EQ(c.check(t), JwtResult::kBadConfig);
  c.cfg = good;
  c.cfg.alg = static_cast<JwtAlg>(7);
  EXPECT_EQ(c.check(t), JwtResult::kBadConfig);
  c.cfg = good;
  EXPECT_EQ(c.check(t), JwtResult::kOk);
}

TEST(JwtCore, EveryResultHasItsOwnText) {
  std::vector<std::string> seen;
  for (int i = 0; i < int(JwtResult::kCount_); ++i) {
    const std::string text = emcp::auth::jwt_result_text(JwtResult(i));
    EXPECT_FALSE(text.empty()) << i;
    // It goes into a WWW-Authenticate error_description (RFC 6750 3: no '"' or '\\'), which
    // the resource server's challenge buffer holds up to 64 bytes of.
    EXPECT_LE(text.size(), 64u) << text;
    EXPECT_EQ(text.find_first_of("\"\\"), std::string::npos) << text;
    for (const std::string& other : seen) EXPECT_NE(text, other) << i;
    seen.push_back(text);
  }
  EXPECT_STREQ(emcp::auth::jwt_alg_name(JwtAlg::kES256), "ES256");
  EXPECT_STREQ(emcp::auth::jwt_alg_name(JwtAlg::kRS256), "RS256");
  EXPECT_STREQ(emcp::auth::jwt_alg_name(JwtAlg::kHS256), "HS256");
}

TEST(JwtCore, OnFailureTheClaimsAreEmpty) {
  Core c;
  ASSERT_EQ(c.claims_are(claims("\"sub\":\"alice\"")), JwtResult::kOk);
  ASSERT_TRUE(c.claims.has_sub);
  EXPECT_EQ(c.claims_are(claims("\"sub\":\"alice\"", int64_t(kNow) - 3600)), JwtResult::kExpired);
  EXPECT_FALSE(c.claims.has_sub);
  EXPECT_TRUE(c.claims.sub.empty());
  EXPECT_EQ(c.claims.exp, 0);
}

TEST(JwtCore, VerifiesWithoutTouchingTheHeap) {
  Core c;
  const std::string good = fake_token(header("HS256"),
      claims("\"sub\":\"alice\",\"scope\":\"a b\",\"aud2\":[1,2,{\"x\":\"y\"}]"));
  const std::string bad[] = {
      fake_token(header("none"), claims()),
      fake_token(header("HS256"), claims("", int64_t(kNow) - 3600)),
      fake_token(header("HS256"), claims("\"exp\":2")),
      fake_token(header("HS256"), claims(), "forged"),
      good + "=",
      good.substr(0, good.size() / 2),
  };
  emcp_test::NoHeapScope no_heap;
  EXPECT_EQ(c.check(good), JwtResult::kOk);
  for (const std::string& t : bad) EXPECT_NE(c.check(t), JwtResult::kOk);
  EXPECT_EQ(no_heap.allocations(), 0u);
}

// ---- with Mbed TLS and openssl ------------------------------------------------------------------

TEST_F(JwtOpenssl, Es256TokenFromOpensslVerifies) {
  Verifier v(JwtAlg::kES256);
  const Token t = keys().sign(JwtAlg::kES256, header("ES256"),
                              claims("\"sub\":\"alice\",\"scope\":\"sensors:read relay:write\""));
  ASSERT_EQ(v.check(t.text), JwtResult::kOk) << t.text;
  EXPECT_EQ(sv(v.claims.sub), "alice");
  EXPECT_EQ(sv(v.claims.scope), "sensors:read relay:write");
  EXPECT_EQ(v.claims.exp, int64_t(kNow) + 3600);
}

TEST_F(JwtOpenssl, Rs256TokenFromOpensslVerifies) {
  Verifier v(JwtAlg::kRS256);
  const Token good = keys().sign(JwtAlg::kRS256, header("RS256"),
      std::string("{\"iss\":\"") + kIss + "\",\"aud\":[\"https://other.example\",\"" + kAud +
          "\"],\"exp\":" + std::to_string(kNow + 600) + ",\"sub\":\"bob\",\"client_id\":\"inspector\"}");
  ASSERT_EQ(v.check(good.text), JwtResult::kOk);
  EXPECT_EQ(sv(v.claims.sub), "bob");
  EXPECT_EQ(sv(v.claims.client_id), "inspector");
  EXPECT_FALSE(v.claims.has_scope);
  EXPECT_EQ(good.sig.size(), 256u);
}

TEST_F(JwtOpenssl, Hs256TokenFromOpensslVerifies) {
  Verifier v(JwtAlg::kHS256);
  const Token t = keys().sign(JwtAlg::kHS256, header("HS256"), claims("\"scope\":\"tools\""));
  ASSERT_EQ(v.check(t.text), JwtResult::kOk);
  EXPECT_EQ(sv(v.claims.scope), "tools");
  // A secret longer than the SHA-256 block (kept as its hash, as HMAC does).
  const std::string long_secret(100, 'k');
  JwtKey key;
  ASSERT_EQ(key.load_hmac_secret(reinterpret_cast<const uint8_t*>(long_secret.data()), long_secret.size()), Status::kOk);
  const Token t2 = keys().sign(JwtAlg::kHS256, header("HS256"), claims(), &long_secret);
  key.bind(&v.cfg);
  EXPECT_EQ(v.check(t2.text), JwtResult::kOk);
  EXPECT_EQ(v.check(t.text), JwtResult::kBadSignature);
}

TEST_F(JwtOpenssl, AFlippedBitBreaksTheSignature) {
  for (JwtAlg alg : {JwtAlg::kES256, JwtAlg::kRS256, JwtAlg::kHS256}) {
    Verifier v(alg);
    const Token t = keys().sign(alg, header(emcp::auth::jwt_alg_name(alg)), claims("\"sub\":\"alice\""));
    ASSERT_EQ(v.check(t.text), JwtResult::kOk);
    for (size_t bit : {size_t(0), size_t(7), t.sig.size() * 4 + 3, t.sig.size() * 8 - 1}) {
      std::string sig = t.sig;
      sig[bit / 8] = char(sig[bit / 8] ^ (1 << (bit % 8)));
      EXPECT_EQ(v.check(t.input + "." + b64url(sig)), JwtResult::kBadSignature)
          << emcp::auth::jwt_alg_name(alg) << " bit " << bit;
    }
    // The claims changed under the signature ("alice" -> "alicf").
    std::string input = t.input;
    const std::string forged_claims = b64url(claims("\"sub\":\"alicf\""));
    input = input.substr(0, input.find('.') + 1) + forged_claims;
    EXPECT_EQ(v.check(input + "." + b64url(t.sig)), JwtResult::kBadSignature);
    // A signature of the wrong length.
    EXPECT_EQ(v.check(t.input + "." + b64url(t.sig + "x")), JwtResult::kBadSignature);
    EXPECT_EQ(v.check(t.input + "." + b64url(t.sig.substr(1))), JwtResult::kBadSignature);
    EXPECT_EQ(v.check(t.input + "."), JwtResult::kBadSignature);
  }
}

TEST_F(JwtOpenssl, EveryTruncationIsRefused) {
  Verifier v(JwtAlg::kES256);
  const Token t = keys().sign(JwtAlg::kES256, header("ES256"), claims());
  ASSERT_EQ(v.check(t.text), JwtResult::kOk);
  for (size_t n = 0; n < t.text.size(); ++n) EXPECT_NE(v.check(t.text.substr(0, n)), JwtResult::kOk) << n;
  EXPECT_EQ(v.check(t.input), JwtResult::kMalformed);
  EXPECT_EQ(v.check(t.text.substr(0, t.text.size() - 1)), JwtResult::kBadBase64url);  // 85 characters
  EXPECT_EQ(v.check(t.text.substr(0, t.text.size() - 2)), JwtResult::kBadSignature);  // 63 bytes
}

TEST_F(JwtOpenssl, BadInputTable) {
  Verifier es(JwtAlg::kES256);
  Verifier rs(JwtAlg::kRS256);
  const int64_t now = int64_t(kNow);
  struct Case {
    const char* what;
    Verifier* v;
    std::string token;
    JwtResult want;
  };
  const std::string ok_claims = claims("\"sub\":\"alice\"");
  const Token es_ok = keys().sign(JwtAlg::kES256, header("ES256"), ok_claims);
  const std::string& rsa_pem = keys().rsa_pub();
  const Case cases[] = {
      {"no token", &es, "", JwtResult::kNoToken},
      {"two parts", &es, es_ok.input, JwtResult::kMalformed},
      {"four parts", &es, es_ok.text + "." + b64url("x"), JwtResult::kMalformed},
      {"non-base64url characters", &es, es_ok.input + "." + std::string(86, '+'), JwtResult::kBadBase64url},
      {"padding", &es, es_ok.text + "==", JwtResult::kBadBase64url},
      {"truncated", &es, es_ok.text.substr(0, es_ok.text.size() - 10), JwtResult::kBadSignature},
      {"expired", &es, keys().sign(JwtAlg::kES256, header("ES256"), claims("", now - 3600)).text, JwtResult::kExpired},
      {"not yet valid", &es,
       keys().sign(JwtAlg::kES256, header("ES256"), claims("\"nbf\":" + std::to_string(now + 3600))).text,
       JwtResult::kNotYetValid},
      {"wrong aud", &es,
       keys().sign(JwtAlg::kES256, header("ES256"),
                   std::string("{\"iss\":\"") + kIss + "\",\"aud\":\"https://other.example.com/mcp\",\"exp\":" +
                       std::to_string(now + 3600) + "}").text,
       JwtResult::kWrongAudience},
      {"aud array without ours", &es,
       keys().sign(JwtAlg::kES256, header("ES256"),
                   std::string("{\"iss\":\"") + kIss + "\",\"aud\":[\"https://a.example\",\"https://b.example\"],\"exp\":" +
                       std::to_string(now + 3600) + "}").text,
       JwtResult::kWrongAudience},
      {"wrong iss", &es,
       keys().sign(JwtAlg::kES256, header("ES256"),
                   std::string("{\"iss\":\"https://evil.example.com\",\"aud\":\"") + kAud + "\",\"exp\":" +
                       std::to_string(now + 3600) + "}").text,
       JwtResult::kWrongIssuer},
      {"alg none", &rs, b64url("{\"alg\":\"none\",\"typ\":\"JWT\"}") + "." + b64url(ok_claims) + ".",
       JwtResult::kAlgMismatch},
      {"HS256 signed with the RSA public key's PEM, RS256 pinned", &rs,
       keys().sign(JwtAlg::kHS256, header("HS256"), ok_claims, &rsa_pem).text, JwtResult::kAlgMismatch},
      {"ES256 token, RS256 pinned", &rs, es_ok.text, JwtResult::kAlgMismatch},
      {"RS256 token, ES256 pinned", &es, keys().sign(JwtAlg::kRS256, header("RS256"), ok_claims).text,
       JwtResult::kAlgMismatch},
      {"bad signature", &es, es_ok.input + "." + b64url(std::string(64, '\x11')), JwtResult::kBadSignature},
      {"duplicate claim", &es,
       keys().sign(JwtAlg::kES256, header("ES256"), claims("\"sub\":\"alice\",\"sub\":\"admin\"")).text,
       JwtResult::kDuplicateKey},
      {"exp as string", &es,
       keys().sign(JwtAlg::kES256, header("ES256"),
                   std::string("{\"iss\":\"") + kIss + "\",\"aud\":\"" + kAud + "\",\"exp\":\"" +
                       std::to_string(now + 3600) + "\"}").text,
       JwtResult::kBadClaimType},
      {"crit", &es, keys().sign(JwtAlg::kES256, "{\"alg\":\"ES256\",\"crit\":[\"x\"],\"x\":1}", ok_claims).text,
       JwtResult::kCritHeader},
      {"good", &es, es_ok.text, JwtResult::kOk},
  };
  for (const Case& c : cases) EXPECT_EQ(c.v->check(c.token), c.want) << c.what;

  // Oversize: larger than the scratch is its own result; the same token fits a larger one.
  const Token big = keys().sign(JwtAlg::kES256, header("ES256"),
                                claims("\"pad\":\"" + std::string(3000, 'p') + "\""));
  ASSERT_GT(big.text.size(), es.scratch.size());
  EXPECT_EQ(es.check(big.text), JwtResult::kTooLarge);
  es.scratch.resize(big.text.size());
  EXPECT_EQ(es.check(big.text), JwtResult::kOk);
}

TEST_F(JwtOpenssl, TheKeyOnlyChecksItsOwnAlgorithm) {
  Verifier es(JwtAlg::kES256);
  Verifier rs(JwtAlg::kRS256);
  Verifier hs(JwtAlg::kHS256);
  const Token es_t = keys().sign(JwtAlg::kES256, header("ES256"), claims());
  const Token rs_t = keys().sign(JwtAlg::kRS256, header("RS256"), claims());
  const std::string& rsa_pem = keys().rsa_pub();
  const Token hs_pem = keys().sign(JwtAlg::kHS256, header("HS256"), claims(), &rsa_pem);
  const auto call = [](Verifier& v, JwtAlg alg, const Token& t) {
    return JwtKey::verify_signature(&v.key, alg, reinterpret_cast<const uint8_t*>(t.input.data()),
                                    t.input.size(), reinterpret_cast<const uint8_t*>(t.sig.data()), t.sig.size());
  };
  EXPECT_TRUE(call(es, JwtAlg::kES256, es_t));
  EXPECT_TRUE(call(rs, JwtAlg::kRS256, rs_t));
  // Even a caller that forgot to pin cannot make a public key check an HMAC, or the reverse.
  EXPECT_FALSE(call(rs, JwtAlg::kHS256, hs_pem));
  EXPECT_FALSE(call(es, JwtAlg::kRS256, rs_t));
  EXPECT_FALSE(call(rs, JwtAlg::kES256, es_t));
  EXPECT_FALSE(call(hs, JwtAlg::kES256, es_t));
  EXPECT_FALSE(JwtKey::verify_signature(nullptr, JwtAlg::kES256, nullptr, 0, nullptr, 0));
  JwtKey empty;
  EXPECT_FALSE(empty.loaded());
  EXPECT_FALSE(JwtKey::verify_signature(&empty, JwtAlg::kES256,
                                        reinterpret_cast<const uint8_t*>(es_t.input.data()), es_t.input.size(),
                                        reinterpret_cast<const uint8_t*>(es_t.sig.data()), es_t.sig.size()));
  // The RSA key's PEM is refused as an HMAC secret outright.
  JwtKey k;
  EXPECT_EQ(k.load_hmac_secret(reinterpret_cast<const uint8_t*>(rsa_pem.data()), rsa_pem.size()),
            Status::kInvalidArgument);
  EXPECT_FALSE(k.loaded());
}

TEST_F(JwtOpenssl, KeysOfTheWrongKindAreRefused) {
  std::string p384, rsa1024, ec_priv;
  ASSERT_TRUE(keys().sh("openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out p384.pem && "
                        "openssl pkey -in p384.pem -pubout -out p384_pub.pem && "
                        "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out rsa1024.pem && "
                        "openssl pkey -in rsa1024.pem -pubout -out rsa1024_pub.pem && "
                        "openssl pkey -in ec.pem -pubout -outform DER -out ec_pub.der"));
  p384 = read_file(keys().path("p384_pub.pem"));
  rsa1024 = read_file(keys().path("rsa1024_pub.pem"));
  ec_priv = read_file(keys().path("ec.pem"));
  const std::string ec_der = read_file(keys().path("ec_pub.der"));
  const std::string& ec = keys().ec_pub();
  const std::string& rsa = keys().rsa_pub();
  JwtKey k;
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, ec.c_str()), Status::kOk);
  EXPECT_TRUE(k.loaded());
  EXPECT_EQ(k.alg(), JwtAlg::kES256);
  EXPECT_EQ(k.load_public_key(JwtAlg::kES256, reinterpret_cast<const uint8_t*>(ec_der.data()), ec_der.size()),
            Status::kOk);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kRS256, rsa.c_str()), Status::kOk);
  EXPECT_EQ(k.alg(), JwtAlg::kRS256);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kRS256, ec.c_str()), Status::kInvalidArgument);
  EXPECT_FALSE(k.loaded());  // a failed load forgets the earlier key
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, rsa.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, p384.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kRS256, rsa1024.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kHS256, ec.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, ec_priv.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, "not a key"), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key_pem(JwtAlg::kES256, nullptr), Status::kInvalidArgument);
  EXPECT_EQ(k.load_public_key(JwtAlg::kES256, reinterpret_cast<const uint8_t*>(ec.data()), ec.size()),
            Status::kInvalidArgument);  // PEM without its NUL
  EXPECT_FALSE(k.loaded());
  const uint8_t short_secret[31] = {1};
  EXPECT_EQ(k.load_hmac_secret(short_secret, sizeof short_secret), Status::kInvalidArgument);
  EXPECT_EQ(k.load_hmac_secret(nullptr, 32), Status::kInvalidArgument);
  const uint8_t secret[32] = {1};
  EXPECT_EQ(k.load_hmac_secret(secret, sizeof secret), Status::kOk);
  EXPECT_EQ(k.alg(), JwtAlg::kHS256);
}

// The access token type (RFC 9068) on tokens openssl encoded and signed: with
// JwtConfig::require_at_jwt only "at+jwt" (any case, "application/" or not) passes; without it
// the same tokens all verify. The type is part of the signed header: changing it breaks the
// signature.
TEST_F(JwtOpenssl, TheAccessTokenTypeIsCheckedWhenAsked) {
  for (JwtAlg alg : {JwtAlg::kES256, JwtAlg::kHS256}) {
    const std::string name = emcp::auth::jwt_alg_name(alg);
    Verifier v(alg);
    const auto sign = [&](const std::string& typ_member) {
      return keys().sign(alg, "{\"alg\":\"" + name + "\"" + typ_member + "}", claims("\"sub\":\"alice\""));
    };
    const Token at = sign(",\"typ\":\"at+jwt\"");
    const Token full = sign(",\"typ\":\"application/at+jwt\"");
    const Token upper = sign(",\"typ\":\"AT+JWT\"");
    const Token jwt = sign(",\"typ\":\"JWT\"");
    const Token none = sign("");
    for (const Token* t : {&at, &full, &upper, &jwt, &none}) EXPECT_EQ(v.check(t->text), JwtResult::kOk) << name << " " << t->text;
    v.cfg.require_at_jwt = true;
    EXPECT_EQ(v.check(at.text), JwtResult::kOk) << name;
    EXPECT_EQ(sv(v.claims.sub), "alice");
    EXPECT_EQ(v.check(full.text), JwtResult::kOk) << name;
    EXPECT_EQ(v.check(upper.text), JwtResult::kOk) << name;
    EXPECT_EQ(v.check(jwt.text), JwtResult::kWrongType) << name;
    EXPECT_EQ(v.check(none.text), JwtResult::kWrongType) << name;
    // "JWT" rewritten to "at+jwt" under the signature made over "JWT".
    const std::string retyped = b64url("{\"alg\":\"" + name + "\",\"typ\":\"at+jwt\"}") +
                                jwt.text.substr(jwt.text.find('.'));
    EXPECT_EQ(v.check(retyped), JwtResult::kBadSignature) << name;
  }
}

// ---- ECDSA: r and s outside [1, n-1] -----------------------------------------------------------
//
// An ES256 signature (r, s) is valid only with 1 <= r, s <= n - 1, n the order of P-256 (FIPS
// 186-5 6.4.2, SEC 1 4.1.4 step 1); a verifier that reduced r or s mod n, or let 0 through,
// would accept forgeries (r + n, s), (0, 0)... A random signature's r and s are close to 2^256,
// so r + n does not fit 32 bytes: the test instead makes a signature with small r and s, and
// the public key that makes it valid: with R = (x, y) a point of small x, r = x, and
// Q = r^-1 (s R - e G), u1 G + u2 Q = e/s G + r/s Q = R. Mbed TLS's point arithmetic builds Q;
// openssl judges every row on its own (`openssl dgst -verify`, DER signatures), and emcp's
// verdict (JwtKey through verify_jwt) must be openssl's and the row's.

// A 32-byte big-endian value as an mbedtls_mpi and back.
struct Mpi {
  mbedtls_mpi v;
  Mpi() { mbedtls_mpi_init(&v); }
  ~Mpi() { mbedtls_mpi_free(&v); }
  Mpi(const Mpi&) = delete;
  Mpi& operator=(const Mpi&) = delete;
  std::string bytes32() const {
    std::string out(32, '\0');
    EXPECT_EQ(mbedtls_mpi_write_binary(&v, reinterpret_cast<unsigned char*>(&out[0]), 32), 0);
    return out;
  }
};

// A DER INTEGER of the unsigned big-endian `v` (minimal: no leading zero byte unless the top
// bit is set; zero is one 0 byte), as openssl wants it.
std::string der_uint(const std::string& v) {
  size_t skip = 0;
  while (skip + 1 < v.size() && v[skip] == '\0') ++skip;
  std::string body = v.substr(skip);
  if (uint8_t(body[0]) & 0x80) body.insert(body.begin(), '\0');
  return std::string(1, '\x02') + char(body.size()) + body;
}
std::string der_signature(const std::string& r, const std::string& s) {
  const std::string body = der_uint(r) + der_uint(s);
  return std::string(1, '\x30') + char(body.size()) + body;
}

TEST_F(JwtOpenssl, Es256SignaturesOutsideTheGroupOrderAreRefused) {
  // The token's signing input, encoded here; its hash by openssl.
  const std::string input = b64url(header("ES256")) + "." + b64url(claims("\"sub\":\"alice\""));
  write_file(keys().path("ecdsa_input.txt"), input);
  std::string digest;
  ASSERT_TRUE(keys().sh("openssl dgst -sha256 -binary -out ecdsa_hash.bin ecdsa_input.txt"));
  digest = read_file(keys().path("ecdsa_hash.bin"));
  ASSERT_EQ(digest.size(), 32u);

  mbedtls_ecp_group grp;
  mbedtls_ecp_group_init(&grp);
  ASSERT_EQ(mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1), 0);
  mbedtls_ecp_point R, Q;
  mbedtls_ecp_point_init(&R);
  mbedtls_ecp_point_init(&Q);
  Mpi x, rhs, t, y, exp, r, s, e, rinv, u1, u2, n_minus_s, r_plus_n, s_plus_n, all_ones;
  // R: the first x >= 2 with x^3 - 3x + b a square mod p (p = 3 mod 4: y = rhs^((p+1)/4)).
  // y^2 = x^3 + a x + b with a = -3 (Mbed TLS keeps A empty for P-256).
  ASSERT_EQ(mbedtls_mpi_add_int(&exp.v, &grp.P, 1), 0);
  ASSERT_EQ(mbedtls_mpi_shift_r(&exp.v, 2), 0);
  bool found = false;
  for (int xi = 2; xi < 200 && !found; ++xi) {
    ASSERT_EQ(mbedtls_mpi_lset(&x.v, xi), 0);
    ASSERT_EQ(mbedtls_mpi_lset(&rhs.v, int64_t(xi) * xi * xi - 3 * xi), 0);
    ASSERT_EQ(mbedtls_mpi_add_mpi(&rhs.v, &rhs.v, &grp.B), 0);
    ASSERT_EQ(mbedtls_mpi_mod_mpi(&rhs.v, &rhs.v, &grp.P), 0);
    ASSERT_EQ(mbedtls_mpi_exp_mod(&y.v, &rhs.v, &exp.v, &grp.P, nullptr), 0);
    ASSERT_EQ(mbedtls_mpi_mul_mpi(&t.v, &y.v, &y.v), 0);
    ASSERT_EQ(mbedtls_mpi_mod_mpi(&t.v, &t.v, &grp.P), 0);
    found = mbedtls_mpi_cmp_mpi(&t.v, &rhs.v) == 0;
  }
  ASSERT_TRUE(found);
  ASSERT_EQ(mbedtls_mpi_copy(&R.X, &x.v), 0);
  ASSERT_EQ(mbedtls_mpi_copy(&R.Y, &y.v), 0);
  ASSERT_EQ(mbedtls_mpi_lset(&R.Z, 1), 0);
  ASSERT_EQ(mbedtls_ecp_check_pubkey(&grp, &R), 0) << "R is on the curve";
  // r = x (small, below n), s small; e the hash.
  ASSERT_EQ(mbedtls_mpi_copy(&r.v, &x.v), 0);
  ASSERT_EQ(mbedtls_mpi_lset(&s.v, 0x1234567), 0);
  ASSERT_EQ(mbedtls_mpi_read_binary(&e.v, reinterpret_cast<const unsigned char*>(digest.data()), 32), 0);
  ASSERT_EQ(mbedtls_mpi_mod_mpi(&e.v, &e.v, &grp.N), 0);
  // Q = (-e/r) G + (s/r) R.
  ASSERT_EQ(mbedtls_mpi_inv_mod(&rinv.v, &r.v, &grp.N), 0);
  ASSERT_EQ(mbedtls_mpi_mul_mpi(&u1.v, &e.v, &rinv.v), 0);
  ASSERT_EQ(mbedtls_mpi_mod_mpi(&u1.v, &u1.v, &grp.N), 0);
  ASSERT_EQ(mbedtls_mpi_sub_mpi(&u1.v, &grp.N, &u1.v), 0);
  ASSERT_EQ(mbedtls_mpi_mul_mpi(&u2.v, &s.v, &rinv.v), 0);
  ASSERT_EQ(mbedtls_mpi_mod_mpi(&u2.v, &u2.v, &grp.N), 0);
  ASSERT_EQ(mbedtls_ecp_muladd(&grp, &Q, &u1.v, &grp.G, &u2.v, &R), 0);
  ASSERT_EQ(mbedtls_ecp_check_pubkey(&grp, &Q), 0);
  Mpi qx, qy;
  ASSERT_EQ(mbedtls_mpi_copy(&qx.v, &Q.X), 0);
  ASSERT_EQ(mbedtls_mpi_copy(&qy.v, &Q.Y), 0);
  // The public key as SubjectPublicKeyInfo (id-ecPublicKey, prime256v1, uncompressed point),
  // and openssl's PEM of it (openssl checks the point).
  static const unsigned char kSpkiPrefix[] = {0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02,
                                              0x01, 0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03,
                                              0x42, 0x00, 0x04};
  const std::string spki = std::string(reinterpret_cast<const char*>(kSpkiPrefix), sizeof kSpkiPrefix) +
                           qx.bytes32() + qy.bytes32();
  write_file(keys().path("ecdsa_q.der"), spki);
  ASSERT_TRUE(keys().sh("openssl pkey -pubin -inform DER -in ecdsa_q.der -out ecdsa_q.pem"));
  Verifier v(JwtAlg::kES256);
  ASSERT_EQ(v.key.load_public_key(JwtAlg::kES256, reinterpret_cast<const uint8_t*>(spki.data()), spki.size()), Status::kOk);
  v.key.bind(&v.cfg);

  // The rows' values.
  ASSERT_EQ(mbedtls_mpi_sub_mpi(&n_minus_s.v, &grp.N, &s.v), 0);
  ASSERT_EQ(mbedtls_mpi_add_mpi(&r_plus_n.v, &r.v, &grp.N), 0);
  ASSERT_EQ(mbedtls_mpi_add_mpi(&s_plus_n.v, &s.v, &grp.N), 0);
  ASSERT_LE(mbedtls_mpi_bitlen(&r_plus_n.v), 256u) << "r + n fits 32 bytes";
  ASSERT_LE(mbedtls_mpi_bitlen(&s_plus_n.v), 256u) << "s + n fits 32 bytes";
  Mpi n;
  ASSERT_EQ(mbedtls_mpi_copy(&n.v, &grp.N), 0);
  const std::string R32 = r.bytes32(), S32 = s.bytes32(), N32 = n.bytes32(), Z32(32, '\0'), F32(32, '\xff');
  const std::string RN32 = r_plus_n.bytes32(), SN32 = s_plus_n.bytes32(), NS32 = n_minus_s.bytes32();
  struct Row {
    const char* what;
    std::string r, s;
    bool valid;
  };
  const Row rows[] = {
      {"(r, s): the signature the key was made for", R32, S32, true},
      {"(r, n - s): its twin, also valid ECDSA (JWS asks for no low s)", R32, NS32, true},
      {"(r + n, s)", RN32, S32, false},
      {"(r, s + n)", R32, SN32, false},
      {"(r + n, s + n)", RN32, SN32, false},
      {"(n, s)", N32, S32, false},
      {"(r, n)", R32, N32, false},
      {"(n, n)", N32, N32, false},
      {"(0, s)", Z32, S32, false},
      {"(r, 0)", R32, Z32, false},
      {"(0, 0)", Z32, Z32, false},
      {"(2^256 - 1, s)", F32, S32, false},
      {"(r, 2^256 - 1)", R32, F32, false},
  };
  int k = 0;
  for (const Row& row : rows) {
    const std::string file = "ecdsa_sig" + std::to_string(k++) + ".der";
    write_file(keys().path(file.c_str()), der_signature(row.r, row.s));
    bool openssl_ok = false;
    (void)run("cd '" + keys().dir() + "' && openssl dgst -sha256 -verify ecdsa_q.pem -signature " + file +
                  " ecdsa_input.txt >/dev/null 2>&1",
              &openssl_ok);
    EXPECT_EQ(openssl_ok, row.valid) << "openssl on " << row.what;
    const JwtResult ours = v.check(input + "." + b64url(row.r + row.s));
    EXPECT_EQ(ours, row.valid ? JwtResult::kOk : JwtResult::kBadSignature) << row.what;
  }
  mbedtls_ecp_point_free(&R);
  mbedtls_ecp_point_free(&Q);
  mbedtls_ecp_group_free(&grp);
}

}  // namespace
