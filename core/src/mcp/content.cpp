// Outbound messages, answers, text formatting and content blocks.
#include <string.h>

#include "emcp/json/number.h"
#include "reply.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- Outbound -----------------------------------------------------------------------------------

bool Outbound::open() {
  if (writer_ != nullptr) return !failed_;
  json::Sink* sink = nullptr;
  if (!session_.open_ && session_.channel_.open != nullptr) {
    sink = session_.channel_.open(session_.channel_.ctx, message_);
  }
  if (sink != nullptr) {
    session_.open_ = true;
    owns_channel_ = true;
  } else {
    failed_ = true;
    sink = &discard_;
  }
  writer_ = new (storage_) json::Writer(*sink);  // placement: no heap
  return !failed_;
}

Status Outbound::close() {
  if (writer_ == nullptr) return Status::kOk;
  writer_ = nullptr;
  if (!owns_channel_) return Status::kClosed;
  owns_channel_ = false;
  session_.open_ = false;
  return session_.channel_.close != nullptr ? session_.channel_.close(session_.channel_.ctx)
                                            : Status::kOk;
}

// ---- Batches ------------------------------------------------------------------------------------

json::Sink& BatchOut::element() {
  if (!started) {
    started = true;
    if (!session.open_ && session.channel_.open != nullptr) {
      OutMessage m;
      m.kind = OutMessage::Kind::kResponse;
      m.batch = true;
      sink = session.channel_.open(session.channel_.ctx, m);
    }
    if (sink == nullptr) {
      failed = true;
      return discard;
    }
    session.open_ = true;
    sink->put('[');
    return *sink;
  }
  if (failed) return discard;
  sink->put(',');
  return *sink;
}

void BatchOut::finish() {
  if (!started || failed) return;
  sink->put(']');
  session.open_ = false;
  if (session.channel_.close != nullptr) (void)session.channel_.close(session.channel_.ctx);
}

// ---- Reply --------------------------------------------------------------------------------------

json::Writer& Reply::start() {
  begun_ = true;
  if (batch_ != nullptr) {
    element_writer_ = new (storage_) json::Writer(batch_->element());
    return *element_writer_;
  }
  (void)out_.open();
  return out_.w();
}

json::Writer& Reply::result() {
  if (ended_ || suppressed_) return dead_;
  if (begun_) return element_writer_ ? *element_writer_ : out_.w();
  json::Writer& w = start();
  jsonrpc::begin_response(w, id_);
  return w;
}

json::Writer& Reply::error_with_data(jsonrpc::ErrorCode code,
                                     std::initializer_list<TextPiece> message) {
  json::Writer& w = start();
  jsonrpc::begin_error_message(w, id_, code, false);
  write_text_pieces(w, message);
  w.string_end();
  w.key("data");
  return w;
}

void Reply::error(jsonrpc::ErrorCode code, std::initializer_list<TextPiece> message) {
  error_message(code, false, message);
}

void Reply::reject(jsonrpc::ErrorCode code, std::initializer_list<TextPiece> detail) {
  error_message(code, true, detail);
}

void Reply::error_message(jsonrpc::ErrorCode code, bool standard,
                          std::initializer_list<TextPiece> pieces) {
  if (begun_ || suppressed_) return;
  json::Writer& w = start();
  jsonrpc::begin_error_message(w, id_, code, standard);
  if (standard) w.string_part(": ");
  write_text_pieces(w, pieces);
  w.string_end();
  w.end_object();
  w.end_object();
  ended_ = true;
  if (batch_ == nullptr) (void)out_.close();
}

void Reply::invalid(const jsonrpc::Message& m) {
  if (begun_) return;
  json::Writer& w = start();
  jsonrpc::Message copy = m;
  copy.id = id_;  // the id as this session writes unknown ids
  jsonrpc::write_invalid(w, copy);
  ended_ = true;
  if (batch_ == nullptr) (void)out_.close();
}

void Reply::end() {
  if (!begun_ || ended_) return;
  ended_ = true;
  json::Writer& w = element_writer_ ? *element_writer_ : out_.w();
  // Close whatever the handler left open (a string, a result object), then the envelope, so
  // the client always gets well-formed JSON.
  w.close_to(1);
  w.end_object();
  if (batch_ == nullptr) (void)out_.close();
}

// ---- Text ---------------------------------------------------------------------------------------

size_t TextPiece::format_int(const TextPiece& p, char* out) { return json::format_int64(p.i, out); }

size_t TextPiece::format_shortest(const TextPiece& p, char* out) {
  return json::format_double(p.d, out);
}

namespace {
// The k decimal digits of an integer with a point `places` digits from the end, padded with
// zeros on the left as needed ("5" with 2 places: "0.05"; k >= 1); returns the length written.
size_t write_point(const char* digits, size_t k, size_t places, char* out) {
  size_t n = 0;
  if (k <= places) {
    out[n++] = '0';
    out[n++] = '.';
    for (size_t i = k; i < places; ++i) out[n++] = '0';
    memcpy(out + n, digits, k);
    return n + k;
  }
  memcpy(out, digits, k - places);
  n = k - places;
  if (places != 0) {
    out[n++] = '.';
    memcpy(out + n, digits + k - places, places);
    n += places;
  }
  return n;
}
}  // namespace

// `places` digits after the point, rounding half away from zero, with integer arithmetic once
// scaled: no Grisu tables. Places are given up when the scaled value would leave the range
// where doubles hold every integer (9e15); integers up to 1.8e19 are exact; beyond, the value
// keeps 12 significant digits.
size_t TextPiece::format_fixed(const TextPiece& p, char* out) {
  int places = p.decimals < 0 ? 0 : p.decimals > 9 ? 9 : p.decimals;
  const double d = p.d;
  if (!(d - d == 0)) return 0;  // NaN or infinity
  const double mag0 = d < 0 ? -d : d;
  double scale = 1;
  for (int i = 0; i < places; ++i) scale *= 10;
  while (places > 0 && !(mag0 * scale < 9.0e15)) {
    --places;
    scale /= 10;
  }
  double mag = mag0 * scale;
  uint32_t zeros = 0;
  if (!(mag < 1.8e19)) {  // beyond uint64: 12 significant digits, few divisions, exact enough
    for (; mag >= 1e34; zeros += 22) mag /= 1e22;  // 1e22 is exact, one rounding per step
    for (; mag >= 1e12; ++zeros) mag /= 10;
  }
  // Half away from zero without adding 0.5 (mag + 0.5 itself rounds: to even from 2^52 up,
  // and 0.49999999999999994 + 0.5 is 1).
  uint64_t r = static_cast<uint64_t>(mag);
  if (mag - static_cast<double>(r) >= 0.5) ++r;
  // Digits as text from here on: no 64-bit division (a library routine on 32-bit cores).
  char digits[24];
  size_t k = json::format_uint64(r, digits);
  size_t n = 0;
  if (d < 0 && r != 0) out[n++] = '-';
  if (zeros == 0) return n + write_point(digits, k, static_cast<size_t>(places), out + n);
  while (k > 1 && digits[k - 1] == '0') {
    --k;
    ++zeros;
  }
  const uint32_t exp = zeros + static_cast<uint32_t>(k) - 1u;
  if (exp < 21) {  // plain digits and zeros, as toFixed writes them below 1e21
    memcpy(out + n, digits, k);
    n += k;
    for (uint32_t i = static_cast<uint32_t>(k); i <= exp; ++i) out[n++] = '0';
    return n;
  }
  out[n++] = digits[0];
  if (k > 1) {
    out[n++] = '.';
    memcpy(out + n, digits + 1, k - 1);
    n += k - 1;
  }
  out[n++] = 'e';
  out[n++] = '+';
  return n + json::format_uint64(exp, out + n);
}

size_t TextPiece::format_scaled(const TextPiece& p, char* out) {
  char digits[24];
  const uint64_t mag = p.i < 0 ? 0u - static_cast<uint64_t>(p.i) : static_cast<uint64_t>(p.i);
  const size_t k = json::format_uint64(mag, digits);
  size_t n = 0;
  if (p.i < 0) out[n++] = '-';
  return n + write_point(digits, k, static_cast<size_t>(p.decimals), out + n);
}

StrView TextPiece::render(char (&buf)[kMaxChars]) const {
  static_assert(kMaxChars >= json::kMaxDoubleChars && kMaxChars >= 28, "room for any number");
  if (format == nullptr) return s;
  const size_t n = format(*this, buf);
  return n == 0 ? StrView("NaN") : StrView(buf, n);
}

void write_text_pieces(json::Writer& w, std::initializer_list<TextPiece> pieces) {
  char buf[TextPiece::kMaxChars];
  for (const TextPiece& p : pieces) w.string_part(p.render(buf));
}

size_t format_text(char* out, size_t cap, std::initializer_list<TextPiece> pieces) {
  if (cap == 0) return 0;
  char buf[TextPiece::kMaxChars];
  size_t n = 0;
  for (const TextPiece& p : pieces) {
    const StrView v = p.render(buf);
    size_t k = v.size();
    if (k > cap - 1 - n) {
      k = cap - 1 - n;
      // Cut before a UTF-8 continuation byte, never inside a character.
      while (k > 0 && (static_cast<uint8_t>(v[k]) & 0xC0) == 0x80) --k;
      memcpy(out + n, v.data(), k);
      n += k;
      break;
    }
    memcpy(out + n, v.data(), k);
    n += k;
  }
  out[n] = '\0';
  return n;
}

// ---- Content blocks -----------------------------------------------------------------------------

void ContentWriter::text(StrView s) {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "text");
  w_->member_str("text", s);
  w_->end_object();
}

void ContentWriter::text(std::initializer_list<TextPiece> pieces) {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "text");
  w_->key("text");
  w_->string_begin();
  write_text_pieces(*w_, pieces);
  w_->string_end();
  w_->end_object();
}

void ContentWriter::blob(const char* type, const void* data, size_t n, StrView mime_type) {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", type);
  w_->key("data");
  w_->base64_begin();
  w_->base64_part(data, n);
  w_->base64_end();
  w_->member_str("mimeType", mime_type);
  w_->end_object();
}

bool ContentWriter::begin_block() {
  if (w_ == nullptr || open_ != 0) return false;
  if (max_blocks_ != 0 && blocks_ >= max_blocks_) return false;
  ++blocks_;
  return true;
}

json::Writer* ContentWriter::writer() { return begin_block() ? w_ : nullptr; }

void ContentWriter::text_begin() {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "text");
  w_->key("text");
  w_->string_begin();
  open_ = 1;
}

void ContentWriter::resource_text_begin(StrView uri, StrView mime_type) {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "resource");
  w_->key("resource");
  w_->begin_object();
  w_->member_str("uri", uri);
  if (!mime_type.empty()) w_->member_str("mimeType", mime_type);
  w_->key("text");
  w_->string_begin();
  open_ = 2;
}

void ContentWriter::text_part(StrView s) {
  if (open_ != 0) w_->string_part(s);
}

void ContentWriter::text_part(std::initializer_list<TextPiece> pieces) {
  if (open_ != 0) write_text_pieces(*w_, pieces);
}

void ContentWriter::text_end() {
  if (open_ == 0) return;
  w_->string_end();
  if (open_ == 2) w_->end_object();
  w_->end_object();
  open_ = 0;
}

void ContentWriter::image(const void* data, size_t n, StrView mime_type) {
  blob("image", data, n, mime_type);
}

void ContentWriter::audio(const void* data, size_t n, StrView mime_type) {
  if (version_ < Version::k2025_03_26) {
    text({"[audio content (", mime_type, ", ", static_cast<long long>(n),
          " bytes) left out: it needs protocol revision 2025-03-26 or later]"});
    return;
  }
  blob("audio", data, n, mime_type);
}

void ContentWriter::resource_link(StrView uri, StrView name, StrView mime_type,
                                  StrView description) {
  if (version_ < Version::k2025_06_18) {
    text({"Resource: ", name, " <", uri, ">"});
    return;
  }
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "resource_link");
  w_->member_str("uri", uri);
  w_->member_str("name", name);
  if (!mime_type.empty()) w_->member_str("mimeType", mime_type);
  if (!description.empty()) w_->member_str("description", description);
  w_->end_object();
}

void ContentWriter::resource_text(StrView uri, StrView mime_type, StrView text) {
  resource_text_begin(uri, mime_type);
  text_part(text);
  text_end();
}

void ContentWriter::resource_blob(StrView uri, StrView mime_type, const void* data, size_t n) {
  if (!begin_block()) return;
  w_->begin_object();
  w_->member_str("type", "resource");
  w_->key("resource");
  w_->begin_object();
  w_->member_str("uri", uri);
  if (!mime_type.empty()) w_->member_str("mimeType", mime_type);
  w_->key("blob");
  w_->base64_begin();
  w_->base64_part(data, n);
  w_->base64_end();
  w_->end_object();
  w_->end_object();
}

}  // namespace mcp
EMCP_NS_END
