// tools/bridge/gateway_json.h - JSON text for the HTTP gateway (gateway.h): the messages it
// sends the board and the errors it answers, written with the core's JSON writer from what the
// core's decoder read (never a client's text); ids as canonical JSON text (the keys of its
// tables); and the spans of values inside a board line, to put a client's id or progressToken
// in place of the wire one while leaving the rest of the line as the board wrote it.
#ifndef EMCP_TOOLS_BRIDGE_GATEWAY_JSON_H
#define EMCP_TOOLS_BRIDGE_GATEWAY_JSON_H

#include <stddef.h>

#include <initializer_list>
#include <string>

#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/message.h"

namespace bridge {
namespace gateway {

// ---- Spans of values in JSON text (the board's own writer: keys are plain)

/// The span [*vb, *ve) of member `key` of the object starting at `obj` of `s`.
bool member(const std::string& s, size_t obj, const char* key, size_t* vb, size_t* ve);
/// The span of the member at `keys` (one key per level), from the top object.
bool path(const std::string& s, std::initializer_list<const char*> keys, size_t* vb, size_t* ve);
/// `s` with [b, e) replaced by `with`.
std::string replaced(const std::string& s, size_t b, size_t e, const std::string& with);

// ---- JSON text written with the core's writer

/// A json::Sink that collects what is written (JSON, or an HTTP head through emcp/http/http.h's
/// writers) in a std::string.
class StringSink : public emcp::json::Sink {
 public:
  StringSink() : Sink(storage_, sizeof storage_, &drain_to_text, true) {}
  /// What was written so far; the sink starts empty again.
  std::string take();

 private:
  static emcp::Status drain_to_text(Sink& s);
  char storage_[512];
  std::string text_;
};

/// The text `write` writes through a json::Writer.
std::string written(void (*write)(emcp::json::Writer&, const void*), const void* arg);
template <typename F>
std::string written(const F& f) {
  return written([](emcp::json::Writer& w, const void* a) { (*static_cast<const F*>(a))(w); }, &f);
}

/// {"jsonrpc":"2.0","id":<id>,"error":{"code":..,"message":..}}; `id` is JSON text, "" for no
/// id member at all (2026-07-28 leaves an unknown id out).
std::string rpc_error(const std::string& id, int code, const std::string& message);
/// An id as JSON text, canonical (the same id always the same text): "" when none.
std::string id_json(const emcp::jsonrpc::Id& id);
/// A value as JSON text.
std::string value_json(emcp::json::Value v);
/// A client's request or notification re-written from what the decoder read: `id` and the
/// progressToken `token` as JSON text ("": none).
std::string message_line(const emcp::jsonrpc::Message& m, const std::string& id, const std::string& token);
/// A client's response to one of the board's requests, re-written.
std::string response_line(const emcp::jsonrpc::Message& m);
/// notifications/cancelled for the request `wire` (JSON text), with `*reason` (nullptr: none).
std::string cancel_line(const std::string& wire, const emcp::StrView* reason);
/// The decoder's error answer for an invalid message (jsonrpc::write_invalid).
std::string invalid_json(const emcp::jsonrpc::Message& m);

}  // namespace gateway
}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_GATEWAY_JSON_H
