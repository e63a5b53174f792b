// Content blocks (text, image, audio, resource links, embedded resources) and icons, shaped by
// the session's revision.
#include "emcp/mcp/server.h"

EMCP_NS_BEGIN
namespace mcp {

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
  if (!supports(version_, Feature::kAudioContent)) {
    text({"[audio content (", mime_type, ", ", static_cast<long long>(n),
          " bytes) left out: it needs protocol revision 2025-03-26 or later]"});
    return;
  }
  blob("audio", data, n, mime_type);
}

void ContentWriter::resource_link(StrView uri, StrView name, StrView mime_type,
                                  StrView description) {
  if (!supports(version_, Feature::kResourceLinks)) {
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

void write_icons(json::Writer& w, Span<const Icon> icons) {
  if (icons.empty()) return;
  w.key("icons");
  w.begin_array();
  for (const Icon& i : icons) {
    w.begin_object();
    w.member_str("src", i.src);
    if (i.mime_type) w.member_str("mimeType", i.mime_type);
    if (i.sizes) {
      w.key("sizes");
      w.begin_array();
      w.string(i.sizes);
      w.end_array();
    }
    if (i.theme) w.member_str("theme", i.theme);
    w.end_object();
  }
  w.end_array();
}

}  // namespace mcp
EMCP_NS_END
