// SHA-256 and HMAC-SHA256 of core (emcp/crypto/sha256.h), equal_ct(), and core's SHA-1
// (emcp/crypto/sha1.h, the WebSocket handshake's), tested the same way at the end.
//
// Three kinds of evidence: the published vectors (FIPS 180-4 examples and the NIST "one million
// a" message, RFC 4231 test cases 1-7); the streaming contract (every split of the input gives
// the digest of the whole); and two independent implementations at test time: Mbed TLS in
// process (fixed seeds, thousands of lengths, keys and splits) and the `openssl` command line
// tool on inputs and keys it makes itself with `openssl rand`, fresh in each run (a failure
// prints them in hex).
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <algorithm>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "emcp/crypto/sha1.h"
#include "emcp/crypto/sha256.h"
#include "emcp/http/websocket.h"
#include "heap_guard.h"
#include "mbedtls/md.h"

namespace {

using emcp::crypto::equal_ct;
using emcp::crypto::HmacSha256;
using emcp::crypto::kSha256BlockSize;
using emcp::crypto::kSha256Size;
using emcp::crypto::Sha256;

using Bytes = std::vector<uint8_t>;

Bytes bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
Bytes repeat(uint8_t b, size_t n) { return Bytes(n, b); }

std::string hex(const uint8_t* p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[p[i] >> 4];
    out += kHex[p[i] & 15];
  }
  return out;
}
std::string hex(const Bytes& b) { return hex(b.data(), b.size()); }

Bytes unhex(const std::string& h) {
  const auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
  Bytes out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(uint8_t(nibble(h[i]) * 16 + nibble(h[i + 1])));
  return out;
}

std::string sha256_hex(const Bytes& m) {
  uint8_t d[kSha256Size];
  Sha256::hash(m.data(), m.size(), d);
  return hex(d, sizeof d);
}

std::string hmac_hex(const Bytes& key, const Bytes& m) {
  uint8_t t[kSha256Size];
  HmacSha256::mac(key.data(), key.size(), m.data(), m.size(), t);
  return hex(t, sizeof t);
}

// The digest and tag of Mbed TLS (the system's libmbedcrypto), for the differential tests.
std::string mbedtls_sha256_hex(const Bytes& m) {
  uint8_t d[32];
  EXPECT_EQ(mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), m.data(), m.size(), d), 0);
  return hex(d, sizeof d);
}
std::string mbedtls_hmac_hex(const Bytes& key, const Bytes& m) {
  uint8_t d[32];
  EXPECT_EQ(mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key.data(), key.size(),
                            m.data(), m.size(), d),
            0);
  return hex(d, sizeof d);
}

Bytes random_bytes(std::mt19937_64& rng, size_t n) {
  Bytes b(n);
  for (uint8_t& x : b) x = uint8_t(rng());
  return b;
}

// True when the `n` bytes at `p` hold `run` (for the wiping tests).
bool holds_run(const uint8_t* p, size_t n, const Bytes& run) {
  for (size_t i = 0; i + run.size() <= n; ++i)
    if (memcmp(p + i, run.data(), run.size()) == 0) return true;
  return false;
}

// Storage for one T, zeroed first (so that its padding bytes are defined), to look at the
// object's bytes during and after its lifetime.
template <typename T>
struct Zeroed {
  alignas(T) uint8_t bytes[sizeof(T)];
  Zeroed() { memset(bytes, 0, sizeof bytes); }
  T* make() { return new (bytes) T; }
  bool holds(const Bytes& run) const { return holds_run(bytes, sizeof bytes, run); }
  bool all_zero() const { return std::count(bytes, bytes + sizeof bytes, 0) == long(sizeof bytes); }
};

// ---- the shell and openssl ------------------------------------------------------------------------

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

Bytes read_file(const std::string& path) {
  Bytes out;
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) return out;
  uint8_t buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  fclose(f);
  return out;
}

// A fresh folder for openssl's files, removed at the end of the test.
class Folder {
 public:
  Folder() {
    const char* tmp = getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/emcp-sha256-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (mkdtemp(buf.data()) != nullptr) dir_ = buf.data();
  }
  ~Folder() {
    bool ok = false;
    if (!dir_.empty()) (void)run("rm -rf '" + dir_ + "'", &ok);
  }
  bool ok() const { return !dir_.empty(); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  // Runs `cmd` in the folder; its output, or "" and a test failure when it fails.
  std::string sh(const std::string& cmd) {
    bool ok = false;
    std::string out = run("cd '" + dir_ + "' && { " + cmd + " ; } 2>stderr.txt", &ok);
    if (!ok) {
      const Bytes err = read_file(path("stderr.txt"));
      ADD_FAILURE() << "command failed: " << cmd << "\n" << std::string(err.begin(), err.end());
      return "";
    }
    return out;
  }

 private:
  std::string dir_;
};

// The first field of each line of `openssl dgst -r` ("<hex> *<file>").
std::vector<std::string> digests(const std::string& out) {
  std::vector<std::string> d;
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (eol == std::string::npos) eol = out.size();
    const std::string line = out.substr(pos, eol - pos);
    d.push_back(line.substr(0, line.find(' ')));
    pos = eol + 1;
  }
  return d;
}

// Lengths around every padding boundary (55/56 and 63/64/65 mod 64), and some longer ones.
const size_t kLengths[] = {0,   1,   2,   3,   31,  32,  33,  54,  55,  56,  57,  62,  63,  64,
                           65,  100, 111, 118, 119, 120, 121, 127, 128, 129, 183, 184, 191, 192,
                           193, 255, 256, 257, 511, 512, 1000, 4095, 4096};

// ---- SHA-256: published vectors ------------------------------------------------------------------

// FIPS 180-4 examples (NIST's "SHA256.pdf" and "SHA2_Additional.pdf") and the empty message.
TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha256_hex(bytes("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(Bytes()), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // 448 bits: the padding's length field no longer fits the block, a second block follows.
  EXPECT_EQ(sha256_hex(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(bytes("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                             "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu")),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  // Empty update() calls, a null pointer with them, change nothing.
  Sha256 s;
  s.update(nullptr, 0);
  s.update("ab", 2);
  s.update("", 0);
  s.update("c", 1);
  uint8_t d[kSha256Size];
  s.finish(d);
  EXPECT_EQ(hex(d, sizeof d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// One million 'a' (FIPS 180-4 example), fed in pieces of odd, changing sizes that straddle the
// block boundary in every way, and once in a single call.
TEST(Sha256, OneMillionAInOddPieces) {
  const Bytes a = repeat('a', 1000000);
  const size_t pieces[] = {1, 3, 7, 13, 61, 63, 64, 65, 127, 129, 999, 4097};
  Sha256 s;
  size_t done = 0;
  for (size_t i = 0; done < a.size(); ++i) {
    const size_t n = std::min(pieces[i % (sizeof pieces / sizeof pieces[0])], a.size() - done);
    s.update(a.data() + done, n);
    done += n;
  }
  uint8_t d[kSha256Size];
  s.finish(d);
  EXPECT_EQ(hex(d, sizeof d), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256_hex(a), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// ---- SHA-256: the streaming contract -------------------------------------------------------------

// Split into three at every pair of offsets (the second update() may fill, cross or end on a
// block boundary), and fed byte by byte: always the digest of the whole. The input also starts
// at an odd address, as the firmware's buffers may.
TEST(Sha256, EverySplitGivesTheSameDigest) {
  std::mt19937_64 rng(256);
  const Bytes storage = random_bytes(rng, 131);
  const uint8_t* m = storage.data() + 1;  // 130 bytes at an odd address
  const size_t n = 130;
  uint8_t whole[kSha256Size];
  Sha256::hash(m, n, whole);
  for (size_t i = 0; i <= n; ++i) {
    for (size_t j = i; j <= n; ++j) {
      Sha256 s;
      s.update(m, i);
      s.update(m + i, j - i);
      s.update(m + j, n - j);
      uint8_t d[kSha256Size];
      s.finish(d);
      ASSERT_EQ(memcmp(d, whole, sizeof d), 0) << "split at " << i << " and " << j;
    }
  }
  Sha256 s;
  for (size_t i = 0; i < n; ++i) s.update(m + i, 1);
  uint8_t d[kSha256Size];
  s.finish(d);
  EXPECT_EQ(memcmp(d, whole, sizeof d), 0);
  // The digest may go to an odd address too.
  uint8_t out[kSha256Size + 1];
  Sha256::hash(m, n, out + 1);
  EXPECT_EQ(memcmp(out + 1, whole, sizeof whole), 0);
}

TEST(Sha256, FinishAndResetStartANewMessage) {
  Sha256 s;
  uint8_t d[kSha256Size];
  s.update("some other message", 18);
  s.finish(d);
  s.update("abc", 3);  // after finish(): a new message
  s.finish(d);
  EXPECT_EQ(hex(d, sizeof d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const Bytes long_part = repeat('x', 100);  // a whole block hashed and a part buffered
  s.update(long_part.data(), long_part.size());
  s.reset();
  s.update("abc", 3);
  s.finish(d);
  EXPECT_EQ(hex(d, sizeof d), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, ACopyForksTheHash) {
  Sha256 s;
  s.update("ab", 2);
  Sha256 fork = s;
  s.update("c", 1);
  fork.update("cd", 2);
  uint8_t d1[kSha256Size], d2[kSha256Size];
  s.finish(d1);
  fork.finish(d2);
  EXPECT_EQ(hex(d1, sizeof d1), sha256_hex(bytes("abc")));
  EXPECT_EQ(hex(d2, sizeof d2), sha256_hex(bytes("abcd")));
}

// finish() leaves no byte of the message in the object (the buffered tail is zeroed), and the
// destructor zeroes the whole object, in the middle of a message too.
TEST(Sha256, FinishAndTheDestructorLeaveNoMessageBytesBehind) {
  const Bytes secret = repeat(0xA5, 100);  // 36 bytes stay buffered before finish()
  Zeroed<Sha256> storage;
  Sha256* s = storage.make();
  s->update(secret.data(), secret.size());
  ASSERT_TRUE(storage.holds(repeat(0xA5, 16)));  // the test sees a buffered tail
  uint8_t d[kSha256Size];
  s->finish(d);
  EXPECT_FALSE(storage.holds(repeat(0xA5, 4)));
  // ...and it is exactly a fresh object again.
  const Sha256 fresh;
  EXPECT_EQ(memcmp(s, &fresh, sizeof fresh), 0);
  s->update(secret.data(), secret.size());
  s->~Sha256();
  EXPECT_TRUE(storage.all_zero());
}

// Against Mbed TLS: every length up to 4 blocks plus random longer ones, random splits.
TEST(Sha256, MatchesMbedTls) {
  std::mt19937_64 rng(180);
  for (size_t len = 0; len < 600; ++len) {
    const size_t n = len < 300 ? len : size_t(rng() % 20000);
    const Bytes m = random_bytes(rng, n);
    const std::string expect = mbedtls_sha256_hex(m);
    ASSERT_EQ(sha256_hex(m), expect) << "length " << n;
    // The same message in random pieces.
    Sha256 s;
    size_t done = 0;
    while (done < n) {
      const size_t k = std::min(n - done, size_t(rng() % 150));
      s.update(m.data() + done, k);
      done += k;
    }
    uint8_t d[kSha256Size];
    s.finish(d);
    ASSERT_EQ(hex(d, sizeof d), expect) << "length " << n << " in pieces";
  }
}

// Against openssl, on random data openssl makes: the lengths around every padding boundary.
// `digest` is openssl dgst's name of the hash, `ours` the hex digest of ours.
void matches_openssl_on_its_random_data(const std::string& digest, std::string (*ours)(const Bytes&)) {
  Folder dir;
  ASSERT_TRUE(dir.ok());
  std::string files;
  std::string make = "openssl rand -out r.bin 4096";
  for (size_t n : kLengths) {
    make += " && head -c " + std::to_string(n) + " r.bin > m" + std::to_string(n) + ".bin";
    files += " m" + std::to_string(n) + ".bin";
  }
  const std::string out = dir.sh(make + " && openssl dgst -" + digest + " -r" + files);
  const std::vector<std::string> theirs = digests(out);
  const size_t count = sizeof kLengths / sizeof kLengths[0];
  ASSERT_EQ(theirs.size(), count) << out;
  const Bytes r = read_file(dir.path("r.bin"));
  ASSERT_EQ(r.size(), 4096u);
  for (size_t i = 0; i < count; ++i) {
    const Bytes m(r.begin(), r.begin() + long(kLengths[i]));
    EXPECT_EQ(ours(m), theirs[i]) << digest << ", length " << kLengths[i] << ", message " << hex(m);
  }
}

TEST(Sha256, MatchesOpensslOnItsRandomData) { matches_openssl_on_its_random_data("sha256", sha256_hex); }

// ---- HMAC-SHA256 ---------------------------------------------------------------------------------

struct Rfc4231Case {
  Bytes key;
  Bytes data;
  const char* tag;  // hex; case 5 gives the first 128 bits only
};

// RFC 4231 section 4, test cases 1 to 7 (6 and 7 with a 131-byte key, hashed first).
std::vector<Rfc4231Case> rfc4231() {
  Bytes key4;
  for (uint8_t i = 1; i <= 25; ++i) key4.push_back(i);
  return {
      {repeat(0x0b, 20), bytes("Hi There"),
       "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {bytes("Jefe"), bytes("what do ya want for nothing?"),
       "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {repeat(0xaa, 20), repeat(0xdd, 50),
       "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"},
      {key4, repeat(0xcd, 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"},
      {repeat(0x0c, 20), bytes("Test With Truncation"), "a3b6167473100ee06e0c796c2955552b"},
      {repeat(0xaa, 131), bytes("Test Using Larger Than Block-Size Key - Hash Key First"),
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {repeat(0xaa, 131),
       bytes("This is a test using a larger than block-size key and a larger than block-size "
             "data. The key needs to be hashed before being used by the HMAC algorithm."),
       "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"},
  };
}

TEST(HmacSha256, Rfc4231Cases1To7) {
  const std::vector<Rfc4231Case> cases = rfc4231();
  for (size_t i = 0; i < cases.size(); ++i) {
    const Rfc4231Case& c = cases[i];
    const std::string expect = c.tag;
    EXPECT_EQ(hmac_hex(c.key, c.data).substr(0, expect.size()), expect) << "test case " << i + 1;
    // Streaming, byte by byte.
    HmacSha256 h;
    h.init(c.key.data(), c.key.size());
    for (uint8_t b : c.data) h.update(&b, 1);
    uint8_t t[kSha256Size];
    h.finish(t);
    EXPECT_EQ(hex(t, sizeof t).substr(0, expect.size()), expect) << "test case " << i + 1 << " streamed";
  }
}

// RFC 2104: a key of up to 64 bytes is padded, a longer one replaced by its SHA-256.
TEST(HmacSha256, OnlyKeysLongerThanABlockAreHashed) {
  std::mt19937_64 rng(2104);
  const Bytes m = bytes("requestState");
  const size_t key_lengths[] = {32, 63, 64, 65, 131, 1000};
  for (size_t len : key_lengths) {
    const Bytes key = random_bytes(rng, len);
    uint8_t kh[kSha256Size];
    Sha256::hash(key.data(), key.size(), kh);
    const Bytes hashed(kh, kh + sizeof kh);
    if (len > kSha256BlockSize)
      EXPECT_EQ(hmac_hex(key, m), hmac_hex(hashed, m)) << "key of " << len;
    else
      EXPECT_NE(hmac_hex(key, m), hmac_hex(hashed, m)) << "key of " << len;
  }
  // The zero padding: a key and the same key with zero bytes appended (up to 64) are the same
  // HMAC key; an empty key is the all-zero one.
  EXPECT_EQ(hmac_hex(bytes("key"), m), hmac_hex(bytes(std::string("key\0\0", 5)), m));
  EXPECT_EQ(hmac_hex(Bytes(), m), hmac_hex(repeat(0, 64), m));
  uint8_t t[kSha256Size];
  HmacSha256::mac(nullptr, 0, m.data(), m.size(), t);
  EXPECT_EQ(hex(t, sizeof t), hmac_hex(repeat(0, 64), m));
}

// Every split of the message, and a keyed object copied once per message (the key hashed once).
TEST(HmacSha256, SplitsAndCopiesOfAKeyedObjectGiveTheSameTag) {
  std::mt19937_64 rng(4231);
  const Bytes key = random_bytes(rng, 32);
  const Bytes m = random_bytes(rng, 200);
  const std::string whole = hmac_hex(key, m);
  HmacSha256 keyed;
  keyed.init(key.data(), key.size());
  for (size_t i = 0; i <= m.size(); ++i) {
    HmacSha256 h = keyed;
    h.update(m.data(), i);
    h.update(m.data() + i, m.size() - i);
    uint8_t t[kSha256Size];
    h.finish(t);
    ASSERT_EQ(hex(t, sizeof t), whole) << "split at " << i;
  }
  // init() again on a used object, and over a MAC in progress.
  HmacSha256 h;
  h.init(key.data(), key.size());
  h.update("dropped", 7);
  h.init(key.data(), key.size());
  h.update(m.data(), m.size());
  uint8_t t[kSha256Size];
  h.finish(t);
  EXPECT_EQ(hex(t, sizeof t), whole);
  h.init(key.data(), key.size());
  h.update(m.data(), m.size());
  h.finish(t);
  EXPECT_EQ(hex(t, sizeof t), whole);
}

// finish() keeps neither the message tail nor the key state, and the destructor zeroes the
// key state, in the middle of a MAC too (the inner hash zeroes itself).
TEST(HmacSha256, FinishAndTheDestructorLeaveNoKeyOrMessageBehind) {
  const Bytes key = repeat(0x11, 32);
  const Bytes msg = repeat(0x5A, 100);
  Zeroed<HmacSha256> storage;
  HmacSha256* h = storage.make();
  h->init(key.data(), key.size());
  h->update(msg.data(), msg.size());
  ASSERT_TRUE(storage.holds(repeat(0x5A, 16)));
  uint8_t t[kSha256Size];
  h->finish(t);
  EXPECT_FALSE(storage.holds(repeat(0x5A, 4)));
  // Byte for byte an object never keyed: no key state either.
  Zeroed<HmacSha256> never_keyed;
  never_keyed.make();
  EXPECT_EQ(memcmp(storage.bytes, never_keyed.bytes, sizeof storage.bytes), 0);
  h->init(key.data(), key.size());
  h->update(msg.data(), msg.size());
  h->~HmacSha256();
  EXPECT_TRUE(storage.all_zero());
}

// update() or finish() without init(), or after finish(), is a programmer error (EMCP_ASSERT):
// a tag without the key would otherwise come out, which anyone could compute.
TEST(HmacSha256DeathTest, UseWithoutAKeyIsAProgrammerError) {
  uint8_t t[kSha256Size];
  HmacSha256 never_keyed;
  EXPECT_DEATH(never_keyed.update("x", 1), "");
  EXPECT_DEATH(never_keyed.finish(t), "");
  HmacSha256 h;
  h.init(reinterpret_cast<const uint8_t*>("key"), 3);
  h.finish(t);
  EXPECT_DEATH(h.update("x", 1), "");
  EXPECT_DEATH(h.finish(t), "");
}

// Against Mbed TLS: random keys of every length to 3 blocks, random messages.
TEST(HmacSha256, MatchesMbedTls) {
  std::mt19937_64 rng(2026);
  for (size_t klen = 0; klen <= 200; ++klen) {
    const Bytes key = random_bytes(rng, klen);
    for (int k = 0; k < 4; ++k) {
      const Bytes m = random_bytes(rng, rng() % 700);
      ASSERT_EQ(hmac_hex(key, m), mbedtls_hmac_hex(key, m)) << "key of " << klen << ", message of " << m.size();
    }
  }
}

// Against openssl, with keys and messages openssl makes: key lengths around the block size
// (`-mac HMAC -macopt hexkey:`), and a text key through `-hmac`.
TEST(HmacSha256, MatchesOpensslOnItsRandomKeysAndData) {
  Folder dir;
  ASSERT_TRUE(dir.ok());
  std::string files;
  std::string make = "openssl rand -out r.bin 4096";
  for (size_t n : kLengths) {
    make += " && head -c " + std::to_string(n) + " r.bin > m" + std::to_string(n) + ".bin";
    files += " m" + std::to_string(n) + ".bin";
  }
  (void)dir.sh(make);
  const Bytes r = read_file(dir.path("r.bin"));
  ASSERT_EQ(r.size(), 4096u);
  const size_t count = sizeof kLengths / sizeof kLengths[0];
  const size_t key_lengths[] = {1, 16, 20, 32, 33, 63, 64, 65, 100, 131, 256};
  for (size_t klen : key_lengths) {
    const std::string key_hex = dir.sh("openssl rand -hex " + std::to_string(klen));
    const Bytes key = unhex(key_hex.substr(0, 2 * klen));
    ASSERT_EQ(key.size(), klen);
    const std::vector<std::string> theirs =
        digests(dir.sh("openssl dgst -sha256 -mac HMAC -macopt hexkey:" + hex(key) + " -r" + files));
    ASSERT_EQ(theirs.size(), count);
    for (size_t i = 0; i < count; ++i) {
      const Bytes m(r.begin(), r.begin() + long(kLengths[i]));
      EXPECT_EQ(hmac_hex(key, m), theirs[i])
          << "key " << hex(key) << ", message of " << m.size() << ": " << hex(m);
    }
  }
  const std::string text_key = "emcp requestState key";
  const std::vector<std::string> theirs =
      digests(dir.sh("openssl dgst -sha256 -hmac '" + text_key + "' -r" + files));
  ASSERT_EQ(theirs.size(), count);
  for (size_t i = 0; i < count; ++i) {
    const Bytes m(r.begin(), r.begin() + long(kLengths[i]));
    EXPECT_EQ(hmac_hex(bytes(text_key), m), theirs[i]) << "message " << hex(m);
  }
}

// Nothing of this allocates (the stack only).
TEST(HmacSha256, UsesNoHeap) {
  const Bytes key = repeat(0x42, 131);
  const Bytes m = repeat(0x24, 1000);
  emcp_test::NoHeapScope no_heap;
  uint8_t t[kSha256Size], u[kSha256Size];
  HmacSha256::mac(key.data(), key.size(), m.data(), m.size(), t);
  HmacSha256 h;
  h.init(key.data(), 20);
  h.update(m.data(), 3);
  h.update(m.data() + 3, m.size() - 3);
  h.finish(u);
  Sha256::hash(m.data(), m.size(), u);
  EXPECT_TRUE(equal_ct(t, t, sizeof t));
  EXPECT_EQ(no_heap.allocations(), 0u);
}

// ---- equal_ct ------------------------------------------------------------------------------------

TEST(Sha256EqualCt, EqualOnlyWhenEveryBitIs) {
  std::mt19937_64 rng(32);
  const Bytes a = random_bytes(rng, 65);
  Bytes b = a;
  EXPECT_TRUE(equal_ct(a.data(), b.data(), a.size()));
  EXPECT_TRUE(equal_ct(a.data(), a.data(), a.size()));
  EXPECT_TRUE(equal_ct(nullptr, nullptr, 0));
  EXPECT_TRUE(equal_ct(a.data(), b.data() + 1, 0));
  for (size_t i = 0; i < b.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      b[i] = uint8_t(b[i] ^ (1u << bit));
      EXPECT_FALSE(equal_ct(a.data(), b.data(), a.size())) << "byte " << i << " bit " << bit;
      // Only the first n bytes count.
      EXPECT_TRUE(equal_ct(a.data(), b.data(), i));
      b[i] = a[i];
    }
  }
  // Every difference of one byte (diff 0x01...0xFF), at an odd address.
  Bytes x(9, 0), y(9, 0);
  for (int v = 1; v < 256; ++v) {
    y[5] = uint8_t(v);
    EXPECT_FALSE(equal_ct(x.data() + 1, y.data() + 1, 8)) << v;
  }
  y[5] = 0;
  EXPECT_TRUE(equal_ct(x.data() + 1, y.data() + 1, 8));
}

// ---- SHA-1 (emcp/crypto/sha1.h) -------------------------------------------------------------------

std::string sha1_hex(const Bytes& m) {
  uint8_t d[emcp::crypto::kSha1Size];
  emcp::crypto::sha1(m.data(), m.size(), d);
  return hex(d, sizeof d);
}

std::string mbedtls_sha1_hex(const Bytes& m) {
  uint8_t d[20];
  EXPECT_EQ(mbedtls_md(mbedtls_md_info_from_type(MBEDTLS_MD_SHA1), m.data(), m.size(), d), 0);
  return hex(d, sizeof d);
}

// FIPS 180 examples ("abc", the 448-bit message whose length needs a second block, one million
// 'a') and the empty message (RFC 3174's test suite has the same).
TEST(Sha1, Fips180Examples) {
  EXPECT_EQ(sha1_hex(bytes("abc")), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha1_hex(Bytes()), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(sha1_hex(bytes("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(sha1_hex(repeat('a', 1000000)), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  uint8_t d[emcp::crypto::kSha1Size];
  emcp::crypto::sha1(nullptr, 0, d);
  EXPECT_EQ(hex(d, sizeof d), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
}

// RFC 6455 1.3's handshake: key "dGhlIHNhbXBsZSBub25jZQ==" gives "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
// through the accept key the HTTP engine computes, without the heap.
TEST(Sha1, Rfc6455HandshakeAcceptKey) {
  emcp_test::NoHeapScope no_heap;
  char out[29];
  emcp::ws::accept_key("dGhlIHNhbXBsZSBub25jZQ==", &emcp::crypto::sha1, out);
  EXPECT_STREQ(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  EXPECT_EQ(no_heap.allocations(), 0u);
}

// Against Mbed TLS: every length up to 5 blocks (each padding case), random longer ones, and
// messages at odd addresses.
TEST(Sha1, MatchesMbedTls) {
  std::mt19937_64 rng(61);
  for (size_t len = 0; len < 420; ++len) {
    const size_t n = len < 330 ? len : size_t(rng() % 20000);
    const Bytes m = random_bytes(rng, n + 1);
    const Bytes whole(m.begin(), m.end() - 1);
    ASSERT_EQ(sha1_hex(whole), mbedtls_sha1_hex(whole)) << "length " << n;
    uint8_t d[emcp::crypto::kSha1Size];
    emcp::crypto::sha1(m.data() + 1, n, d);
    ASSERT_EQ(hex(d, sizeof d), mbedtls_sha1_hex(Bytes(m.begin() + 1, m.end()))) << "odd address, length " << n;
  }
}

// Against openssl, on random data openssl makes (the lengths around every padding boundary).
TEST(Sha1, MatchesOpensslOnItsRandomData) { matches_openssl_on_its_random_data("sha1", sha1_hex); }

}  // namespace
