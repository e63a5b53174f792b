#include "emcp/http/http.h"

#include <stddef.h>
#include <string.h>

#include "emcp/json/number.h"

EMCP_NS_BEGIN
namespace http {

namespace {

uint8_t lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? static_cast<uint8_t>(c | 0x20) : c; }

// The headers the parser keeps (index into the switch in store_value / end_header).
enum Kept : uint8_t {
  kNone = 0, kHost, kOrigin, kContentType, kAccept, kSessionId, kProtocolVersion, kLastEventId,
  kAuthorization, kUpgrade, kWsKey, kWsVersion, kWsProtocol, kContentLength, kTransferEncoding, kConnection,
  kExpect, kMcpMethod, kMcpName, kMcpParam,
};

// The names as views, their lengths counted by the compiler: each header line is compared with
// every name (a name of another length is told apart at once), where a table of C strings had
// the lengths measured at run time, for every line (bench/target: a fifth of an HTTP request).
struct Known {
  StrView name;
  Kept which;
};
constexpr Known kKnown[] = {
    {"host", kHost},
    {"origin", kOrigin},
    {"content-type", kContentType},
    {"accept", kAccept},
    {"mcp-session-id", kSessionId},
    {"mcp-protocol-version", kProtocolVersion},
    {"last-event-id", kLastEventId},
    {"authorization", kAuthorization},
    {"upgrade", kUpgrade},
    {"sec-websocket-key", kWsKey},
    {"sec-websocket-version", kWsVersion},
    {"sec-websocket-protocol", kWsProtocol},
    {"content-length", kContentLength},
    {"transfer-encoding", kTransferEncoding},
    {"connection", kConnection},
    {"expect", kExpect},
    {"mcp-method", kMcpMethod},
    {"mcp-name", kMcpName},
};
constexpr StrView kMcpParamPrefix("mcp-param-", 10);

// Where each kept header's buffer lies in a Request: the offset of its bytes, their capacity,
// and the offset of its length (a uint16_t), which its present and repeated flags follow (the
// layout of HeaderBuf, checked below). One table for every buffer, where code per buffer type
// (a template per HeaderBuf<N>) cost flash for each of them. cap 0: a value parsed in value_.
struct Slot {
  uint16_t at;
  uint16_t cap;
  uint16_t len;
};
#define EMCP_HTTP_SLOT(m)                                                      \
  Slot {                                                                       \
    static_cast<uint16_t>(offsetof(Request, m)), static_cast<uint16_t>(sizeof(Request::m.data)), \
        static_cast<uint16_t>(offsetof(Request, m) + offsetof(decltype(Request::m), len))       \
  }
constexpr Slot kSlots[] = {
    {0, 0, 0},  // kNone
    EMCP_HTTP_SLOT(host), EMCP_HTTP_SLOT(origin), EMCP_HTTP_SLOT(content_type), EMCP_HTTP_SLOT(accept),
    EMCP_HTTP_SLOT(session_id), EMCP_HTTP_SLOT(protocol_version), EMCP_HTTP_SLOT(last_event_id),
    EMCP_HTTP_SLOT(authorization), EMCP_HTTP_SLOT(upgrade), EMCP_HTTP_SLOT(ws_key), EMCP_HTTP_SLOT(ws_version),
    EMCP_HTTP_SLOT(ws_protocol),
    {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},  // kContentLength, kTransferEncoding, kConnection, kExpect
    EMCP_HTTP_SLOT(mcp_method), EMCP_HTTP_SLOT(mcp_name), EMCP_HTTP_SLOT(mcp_params),
};
#undef EMCP_HTTP_SLOT
static_assert(sizeof kSlots / sizeof kSlots[0] == kMcpParam + 1, "a slot for every kept header");
static_assert(sizeof(Request) <= UINT16_MAX, "kSlots' offsets are 16-bit: a Request this large needs wider ones");
// The flags right after the length, in every HeaderBuf (the layout kSlots relies on).
template <size_t N>
constexpr bool flags_follow_length() {
  return offsetof(HeaderBuf<N>, data) == 0 && offsetof(HeaderBuf<N>, present) == offsetof(HeaderBuf<N>, len) + 2 &&
         offsetof(HeaderBuf<N>, repeated) == offsetof(HeaderBuf<N>, len) + 3;
}
static_assert(flags_follow_length<1>() && flags_follow_length<2>() && flags_follow_length<EMCP_HTTP_MAX_AUTH>() &&
                  flags_follow_length<EMCP_HTTP_MAX_MCP_NAME>() && flags_follow_length<EMCP_HTTP_MAX_MCP_PARAMS>(),
              "HeaderBuf: data, then len, present, repeated");

// Calls fn(token) for each comma-separated token of a header value, trimmed.
template <typename Fn>
void for_each_token(StrView v, Fn fn) {
  size_t i = 0;
  while (i < v.size()) {
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t' || v[i] == ',')) ++i;
    size_t j = i;
    while (j < v.size() && v[j] != ',') ++j;
    size_t k = j;
    while (k > i && (v[k - 1] == ' ' || v[k - 1] == '\t')) --k;
    if (k > i) fn(v.sub(i, k - i));
    i = j;
  }
}

}  // namespace

namespace {
// RFC 9110's tchar as a bit per byte (32 bytes of flash): the parser tests every byte of a
// method and a header name.
struct TcharTable {
  uint8_t bits[32];
};
constexpr bool tchar_by_rule(int c) {
  if (c >= '0' && c <= '9') return true;
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+': case '-':
    case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}
constexpr TcharTable make_tchar_table() {
  TcharTable t{};
  for (int c = 0; c < 256; ++c)
    if (tchar_by_rule(c)) t.bits[c >> 3] = static_cast<uint8_t>(t.bits[c >> 3] | (1u << (c & 7)));
  return t;
}
constexpr TcharTable kTchar = make_tchar_table();
inline bool tchar(uint8_t c) { return (kTchar.bits[c >> 3] >> (c & 7)) & 1u; }

// A byte a header value may hold (field-vchar, obs-text, SP, HTAB): anything but the controls
// and DEL.
bool value_byte(uint8_t c) { return (c >= 0x20 && c != 0x7F) || c == '\t'; }
}  // namespace

bool is_tchar(uint8_t c) { return tchar(c); }

bool ascii_iequal(StrView a, StrView b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto x = static_cast<uint8_t>(a[i]), y = static_cast<uint8_t>(b[i]);
    // Equal bytes (the common case) cost one comparison; else they may differ in case only.
    if (x != y && ((x ^ y) != 0x20 || lower(x) != lower(y))) return false;
  }
  return true;
}

bool has_token(StrView list, StrView token) {
  bool found = false;
  for_each_token(list, [&](StrView tok) { found = found || ascii_iequal(tok, token); });
  return found;
}

StrView Request::path() const {
  const StrView t = target.view();
  size_t q = 0;
  while (q < t.size() && t[q] != '?') ++q;
  return t.sub(0, q);
}

StrView Request::query() const {
  const StrView t = target.view();
  size_t q = 0;
  while (q < t.size() && t[q] != '?') ++q;
  return q < t.size() ? t.sub(q + 1) : StrView();
}

StrView Request::query_param(StrView name) const {
  const StrView q = query();
  size_t i = 0;
  while (i < q.size()) {
    size_t amp = i;
    while (amp < q.size() && q[amp] != '&') ++amp;
    const StrView pair = q.sub(i, amp - i);
    size_t eq = 0;
    while (eq < pair.size() && pair[eq] != '=') ++eq;
    if (pair.sub(0, eq) == name) return eq < pair.size() ? pair.sub(eq + 1) : StrView();
    i = amp + 1;
  }
  return StrView();
}

bool Request::accepts(StrView type) const {
  size_t slash = 0;
  while (slash < type.size() && type[slash] != '/') ++slash;
  const StrView major = type.sub(0, slash);
  // Each comma-separated entry's media range (before its parameters), trimmed: one pass over
  // the kept list (every POST asks twice: JSON and the event stream).
  const char* p = accept.data;
  const char* const end = p + accept.len;
  while (p != end) {
    while (p != end && (*p == ' ' || *p == '\t' || *p == ',')) ++p;
    const char* const start = p;
    while (p != end && *p != ',' && *p != ';') ++p;
    const char* stop = p;
    while (stop != start && (stop[-1] == ' ' || stop[-1] == '\t')) --stop;
    const StrView media(start, static_cast<size_t>(stop - start));
    if (media.empty()) {  // an empty entry (",,", a trailing comma) lists nothing
    } else if (ascii_iequal(media, type) || media == "*/*") {
      return true;
    } else if (media.size() == major.size() + 2 && ascii_iequal(media.sub(0, major.size()), major) &&
               media.sub(major.size()) == "/*") {
      return true;
    }
    while (p != end && *p != ',') ++p;  // the entry's parameters
  }
  return false;
}

bool Request::content_type_is(StrView type) const {
  StrView v = content_type.view();
  size_t semi = 0;
  while (semi < v.size() && v[semi] != ';') ++semi;
  v = v.sub(0, semi);
  while (!v.empty() && (v[v.size() - 1] == ' ' || v[v.size() - 1] == '\t')) v = v.sub(0, v.size() - 1);
  return ascii_iequal(v, type);
}

void RequestParser::reset() {
  req_ = Request{};
  state_ = kMethod;
  error_ = 0;
  reason_ = "";
  head_bytes_ = 0;
  headers_ = 0;
  token_len_ = 0;
  token_long_ = false;
  version_len_ = 0;
  which_ = kNone;
  value_overflow_ = false;
  seen_length_ = false;
  seen_te_ = false;
  value_len_ = 0;
  remaining_ = 0;
  body_seen_ = 0;
  chunk_digits_ = 0;
  body_ = StrView();
}

RequestParser::Event RequestParser::fail(int status, const char* reason) {
  error_ = status;
  reason_ = reason;
  state_ = kFailed;
  return Event::kError;
}

void RequestParser::store_value(const uint8_t* bytes, size_t n) {
  if (which_ == kNone) return;
  const Slot& slot = kSlots[which_];
  char* data = value_;  // Content-Length, Transfer-Encoding, Connection, Expect: parsed here
  size_t cap = sizeof value_;
  uint16_t len = value_len_;
  char* const req = reinterpret_cast<char*>(&req_);
  if (slot.cap != 0) {
    data = req + slot.at;
    cap = slot.cap;
    memcpy(&len, req + slot.len, sizeof len);
  }
  const size_t k = n < cap - len ? n : cap - len;
  memcpy(data + len, bytes, k);
  len = static_cast<uint16_t>(len + k);
  if (slot.cap != 0) memcpy(req + slot.len, &len, sizeof len);
  else value_len_ = len;
  if (k < n) value_overflow_ = true;
}

// Finishes the header just read: trims kept values, interprets the framing headers. Returns
// false after fail().
bool RequestParser::end_header() {
  const StrView v = [&] {
    size_t n = value_len_;
    while (n > 0 && (value_[n - 1] == ' ' || value_[n - 1] == '\t')) --n;
    return StrView(value_, n);
  }();
  switch (which_) {
    case kNone:
      return true;
    case kContentLength: {
      if (value_overflow_ || v.empty()) return fail(400, "bad Content-Length"), false;
      uint64_t n = 0;
      for (char ch : v) {
        if (ch < '0' || ch > '9' || n > (UINT64_MAX - 9) / 10) return fail(400, "bad Content-Length"), false;
        n = n * 10 + static_cast<uint64_t>(ch - '0');
      }
      if (seen_length_ && static_cast<uint64_t>(req_.content_length) != n)
        return fail(400, "conflicting Content-Length headers"), false;
      seen_length_ = true;
      req_.content_length = n > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(n);
      return true;
    }
    case kTransferEncoding:
      if (seen_te_ || value_overflow_ || !ascii_iequal(v, "chunked"))
        return fail(501, "only Transfer-Encoding: chunked is supported"), false;
      seen_te_ = true;
      req_.chunked = true;
      return true;
    case kConnection:
      // Only the tokens matter; a long list is scanned as far as it was kept.
      for_each_token(v, [&](StrView tok) {
        if (ascii_iequal(tok, "close")) req_.keep_alive = false;
        if (ascii_iequal(tok, "keep-alive")) req_.keep_alive = true;
        if (ascii_iequal(tok, "upgrade")) req_.connection_upgrade = true;
      });
      return true;
    case kExpect:
      req_.expect_continue = ascii_iequal(v, "100-continue");
      return true;
    default:
      break;
  }
  if (value_overflow_) return fail(431, "a header value is too long"), false;
  if (which_ == kMcpParam) {
    // "name:value\n": trimmed back to the colon at most, then the entry's end.
    while (req_.mcp_params.data[req_.mcp_params.len - 1] == ' ' ||
           req_.mcp_params.data[req_.mcp_params.len - 1] == '\t')
      --req_.mcp_params.len;
    if (req_.mcp_params.len == sizeof req_.mcp_params.data) return fail(431, "Mcp-Param-* headers too long"), false;
    req_.mcp_params.data[req_.mcp_params.len++] = '\n';
    req_.mcp_params.present = true;
    return true;
  }
  // A kept header is in: trimmed, present, and marked repeated when it came before.
  const Slot& slot = kSlots[which_];
  char* const req = reinterpret_cast<char*>(&req_);
  const char* const data = req + slot.at;
  uint16_t len;
  memcpy(&len, req + slot.len, sizeof len);
  while (len > 0 && (data[len - 1] == ' ' || data[len - 1] == '\t')) --len;
  memcpy(req + slot.len, &len, sizeof len);
  bool present, repeated;
  memcpy(&present, req + slot.len + 2, 1);
  memcpy(&repeated, req + slot.len + 3, 1);
  repeated = repeated || present;
  present = true;
  memcpy(req + slot.len + 2, &present, 1);
  memcpy(req + slot.len + 3, &repeated, 1);
  return true;
}

RequestParser::Event RequestParser::head_done() {
  if (req_.version_minor >= 1 && !req_.host.present) return fail(400, "Host header missing");
  if (req_.chunked && seen_length_) return fail(400, "both Content-Length and Transfer-Encoding");
  const bool has_body = req_.chunked || (seen_length_ && req_.content_length > 0);
  if ((req_.method == Method::kPost || req_.method == Method::kPut) && !req_.chunked && !seen_length_)
    return fail(411, "Content-Length required");
  if (seen_length_ && static_cast<uint64_t>(req_.content_length) > max_body_)
    return fail(413, "body too large");
  if (req_.chunked) state_ = kChunkSize;
  else if (has_body) {
    state_ = kBodyLength;
    remaining_ = static_cast<uint64_t>(req_.content_length);
  } else {
    state_ = kFinished;
  }
  return Event::kHead;
}

// The request line and the headers, byte by byte (every byte counts towards the head's limit):
// the event that ends this push (kHead once the blank line is in, or an error), or kNeedInput
// when the input ran out first.
RequestParser::Event RequestParser::parse_head(const uint8_t*& p, const uint8_t* end) {
  for (; p != end; ++p) {
    const uint8_t c = *p;
    if (++head_bytes_ > EMCP_HTTP_MAX_HEAD) return fail(431, "request head too large");
    switch (state_) {
      case kMethod:
        if (c == ' ') {
          const StrView m(token_, token_len_);
          if (token_len_ == 0 || token_long_) return fail(400, "bad method");
          if (m == "GET") req_.method = Method::kGet;
          else if (m == "POST") req_.method = Method::kPost;
          else if (m == "DELETE") req_.method = Method::kDelete;
          else if (m == "HEAD") req_.method = Method::kHead;
          else if (m == "PUT") req_.method = Method::kPut;
          else if (m == "OPTIONS") req_.method = Method::kOptions;
          else req_.method = Method::kOther;
          state_ = kTarget;
        } else if (tchar(c)) {
          if (token_len_ < sizeof token_) token_[token_len_++] = static_cast<char>(c);
          else token_long_ = true;
        } else {
          return fail(400, "bad request line");
        }
        break;
      case kTarget:
        if (c == ' ') {
          if (req_.target.len == 0) return fail(400, "empty request target");
          state_ = kVersion;
        } else if (c <= 0x20 || c == 0x7F) {
          return fail(400, "bad request target");
        } else if (req_.target.len < sizeof req_.target.data) {
          req_.target.data[req_.target.len++] = static_cast<char>(c);
        } else {
          return fail(414, "request target too long");
        }
        break;
      case kVersion:
        if (c == '\r' || c == '\n') {
          const StrView v(version_, version_len_);
          if (v == "HTTP/1.1") req_.version_minor = 1;
          else if (v == "HTTP/1.0") req_.version_minor = 0;
          else if (v.starts_with("HTTP/")) return fail(505, "HTTP version not supported");
          else return fail(400, "bad request line");
          if (req_.version_minor == 0) req_.keep_alive = false;
          req_.target.present = true;
          state_ = c == '\r' ? kRequestLineLf : kHeaderStart;
        } else if (version_len_ < sizeof version_) {
          version_[version_len_++] = static_cast<char>(c);
        } else {
          return fail(400, "bad request line");
        }
        break;
      case kRequestLineLf:
      case kHeaderLf:
        if (c != '\n') return fail(400, "bare CR");
        if (state_ == kHeaderLf && !end_header()) return Event::kError;
        state_ = kHeaderStart;
        break;
      case kHeaderStart:
        if (c == '\r') {
          state_ = kHeadLf;
        } else if (c == '\n') {
          ++p;
          return head_done();
        } else if (c == ' ' || c == '\t') {
          return fail(400, "obsolete header line folding");
        } else if (tchar(c)) {
          if (++headers_ > EMCP_HTTP_MAX_HEADERS) return fail(431, "too many headers");
          token_len_ = 0;
          token_long_ = false;
          token_[token_len_++] = static_cast<char>(lower(c));
          state_ = kHeaderName;
        } else {
          return fail(400, "bad header name");
        }
        break;
      case kHeaderName:
        if (c == ':') {
          which_ = kNone;
          value_overflow_ = false;
          if (!token_long_) {
            const StrView name(token_, token_len_);
            for (const Known& k : kKnown) {
              if (name.size() == k.name.size() && name == k.name) {  // (most differ in length: no call)
                which_ = k.which;
                break;
              }
            }
            if (name.size() > kMcpParamPrefix.size() && name.starts_with(kMcpParamPrefix)) {
              // Kept as "name:" now, the value next (store_value), "\n" at its end.
              which_ = kMcpParam;
              const StrView param = name.sub(kMcpParamPrefix.size());
              store_value(reinterpret_cast<const uint8_t*>(param.data()), param.size());
              store_value(reinterpret_cast<const uint8_t*>(":"), 1);
            }
          }
          value_len_ = 0;
          // Repeated Accept headers append ", ..." to the kept list.
          if (which_ == kAccept && req_.accept.present && static_cast<size_t>(req_.accept.len) + 2u <= sizeof req_.accept.data) {
            req_.accept.data[req_.accept.len++] = ',';
            req_.accept.data[req_.accept.len++] = ' ';
          }
          state_ = kHeaderValueSkipWs;
        } else if (tchar(c)) {
          // This byte and the name's bytes after it in the input: found, then kept lower-cased
          // as far as the token holds.
          const uint8_t* q = p + 1;
          while (q != end && tchar(*q)) ++q;
          head_bytes_ += static_cast<uint32_t>(q - p - 1);
          if (head_bytes_ > EMCP_HTTP_MAX_HEAD) return fail(431, "request head too large");
          size_t n = static_cast<size_t>(q - p);
          if (n > sizeof token_ - token_len_) {
            n = sizeof token_ - token_len_;
            token_long_ = true;
          }
          for (size_t i = 0; i < n; ++i) token_[token_len_ + i] = static_cast<char>(lower(p[i]));
          token_len_ = static_cast<uint8_t>(token_len_ + n);
          p = q - 1;
        } else {
          return fail(400, "bad header name");
        }
        break;
      case kHeaderValueSkipWs:
        if (c == ' ' || c == '\t') break;
        state_ = kHeaderValue;
        [[fallthrough]];
      case kHeaderValue:
        if (c == '\r') {
          state_ = kHeaderLf;
        } else if (c == '\n') {
          if (!end_header()) return Event::kError;
          state_ = kHeaderStart;
        } else if (!value_byte(c)) {
          return fail(400, "control character in a header value");
        } else {
          // This byte and the value's bytes after it in the input, stored at once.
          const uint8_t* q = p + 1;
          while (q != end && value_byte(*q)) ++q;
          head_bytes_ += static_cast<uint32_t>(q - p - 1);
          if (head_bytes_ > EMCP_HTTP_MAX_HEAD) return fail(431, "request head too large");
          store_value(p, static_cast<size_t>(q - p));
          p = q - 1;
        }
        break;
      case kHeadLf:
        if (c != '\n') return fail(400, "bare CR");
        ++p;
        return head_done();
      default:
        return Event::kError;  // not a state of the head: push() dispatches by state
    }
  }
  return Event::kNeedInput;
}

// Body bytes of a Content-Length body or of a chunk, as many as the input holds and the length
// or chunk allows: kBody with body() viewing them.
RequestParser::Event RequestParser::take_body(const uint8_t*& p, const uint8_t* end) {
  const uint64_t avail = static_cast<uint64_t>(end - p);
  const size_t take = static_cast<size_t>(avail < remaining_ ? avail : remaining_);
  body_ = StrView(reinterpret_cast<const char*>(p), take);
  p += take;
  remaining_ -= take;
  body_seen_ += take;
  if (remaining_ == 0) state_ = state_ == kBodyLength ? kFinished : kChunkDataCr;
  return Event::kBody;
}

// The chunked framing around the chunks' data: sizes, extensions, line ends, trailers. A chunk's
// data is taken as it starts (kBody); the last chunk's trailers end the request (kDone).
RequestParser::Event RequestParser::parse_chunked(const uint8_t*& p, const uint8_t* end) {
  while (p != end) {
    const uint8_t c = *p;
    switch (state_) {
      case kChunkSize: {
        uint8_t d = 255;
        if (c >= '0' && c <= '9') d = static_cast<uint8_t>(c - '0');
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = static_cast<uint8_t>((c | 0x20) - 'a' + 10);
        if (d != 255) {
          if (++chunk_digits_ > 8) return fail(400, "chunk size too long");
          remaining_ = remaining_ * 16 + d;
        } else if (chunk_digits_ == 0) {
          return fail(400, "bad chunk size");
        } else if (c == ';' || c == ' ' || c == '\t') {
          state_ = kChunkExt;
        } else if (c == '\r') {
          state_ = kChunkSizeLf;
        } else if (c == '\n') {
          state_ = kChunkSizeLf;
          continue;  // handle as the LF below without consuming twice
        } else {
          return fail(400, "bad chunk size");
        }
        break;
      }
      case kChunkExt:
        if (c == '\r') state_ = kChunkSizeLf;
        else if (c == '\n') {
          state_ = kChunkSizeLf;
          continue;
        } else if (++head_bytes_ > EMCP_HTTP_MAX_HEAD) {
          return fail(431, "chunk extensions too long");
        }
        break;
      case kChunkSizeLf:
        if (c != '\n') return fail(400, "bad chunk size line");
        chunk_digits_ = 0;
        if (body_seen_ + remaining_ > max_body_) return fail(413, "body too large");
        state_ = remaining_ == 0 ? kTrailerStart : kChunkData;
        break;
      case kChunkDataCr:
        if (c == '\r') state_ = kChunkDataLf;
        else if (c == '\n') state_ = kChunkSize;
        else return fail(400, "chunk data longer than its size");
        break;
      case kChunkDataLf:
        if (c != '\n') return fail(400, "bad chunk end");
        state_ = kChunkSize;
        break;
      case kTrailerStart:
        if (c == '\r') {
          state_ = kTrailerLf;
        } else if (c == '\n') {
          ++p;
          return finish();
        } else {
          state_ = kTrailerLine;
        }
        break;
      case kTrailerLine:
        if (++head_bytes_ > EMCP_HTTP_MAX_HEAD) return fail(431, "trailers too large");
        if (c == '\n') state_ = kTrailerStart;
        break;
      case kTrailerLf:
        if (c != '\n') return fail(400, "bad trailer end");
        ++p;
        return finish();
      case kChunkData:
        return take_body(p, end);
      default:
        return Event::kError;  // not a state of the framing: push() dispatches by state
    }
    ++p;
  }
  return Event::kNeedInput;
}

RequestParser::Event RequestParser::push(const void* data, size_t n, size_t* used) {
  const uint8_t* const start = static_cast<const uint8_t*>(data);
  const uint8_t* p = start;
  const uint8_t* const end = p + n;
  Event e = Event::kNeedInput;
  // kDone is reported once; then nothing is parsed until reset().
  if (state_ == kFinished) e = finish();
  else if (state_ == kEnded) e = Event::kNeedInput;
  else if (state_ == kFailed) e = Event::kError;
  else if (p == end) e = Event::kNeedInput;
  else if (state_ < kBodyLength) e = parse_head(p, end);
  else if (state_ == kBodyLength || state_ == kChunkData) e = take_body(p, end);
  else e = parse_chunked(p, end);
  *used = static_cast<size_t>(p - start);
  return e;
}

RequestParser::Event RequestParser::finish() {
  body_ = StrView();
  state_ = kEnded;
  return Event::kDone;
}

const char* status_reason(int status) {
  switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 426: return "Upgrade Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void write_status_line(json::Sink& out, int status) {
  char num[24];
  out.write("HTTP/1.1 ", 9);
  out.write(num, json::format_int64(status, num));
  out.put(' ');
  out.write(StrView(status_reason(status)));
  out.write("\r\n", 2);
}

void write_header(json::Sink& out, StrView name, StrView value) {
  out.write(name);
  out.write(": ", 2);
  out.write(value);
  out.write("\r\n", 2);
}

void write_header(json::Sink& out, StrView name, uint64_t value) {
  char num[24];
  write_header(out, name, StrView(num, json::format_uint64(value, num)));
}

void write_end_head(json::Sink& out) { out.write("\r\n", 2); }

}  // namespace http
EMCP_NS_END
