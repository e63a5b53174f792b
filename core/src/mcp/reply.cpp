// Outbound messages and answers: one message on a session's channel, a batch's answer array,
// the envelope of one answer (result or error).
#include "server_internal.h"

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

json::Writer& Reply::start(jsonrpc::ErrorCode error) {
  begun_ = true;
  out_.set_error(error, refused_);
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

json::Writer& Reply::result_object(bool input_required) {
  json::Writer& w = result();
  w.begin_object();
  if (peer_.modern()) {
    w.member_str("resultType", input_required ? "input_required" : "complete");
    if (session_.server_ != nullptr) write_server_meta(w, session_.server_->info());
  }
  return w;
}

void Reply::cache_hints(Cacheable kind) {
  if (!peer_.modern() || session_.server_ == nullptr) return;
  const CachePolicy& policy = session_.server_->cache_policy();
  json::Writer& w = result();
  w.member_int("ttlMs", kind == Cacheable::kList ? policy.list_ttl_ms : policy.read_ttl_ms);
  w.member_str("cacheScope", policy.private_scope ? "private" : "public");
}

json::Writer& Reply::error_with_data(jsonrpc::ErrorCode code,
                                     std::initializer_list<TextPiece> message) {
  json::Writer& w = start(code);
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
  json::Writer& w = start(code);
  jsonrpc::begin_error_message(w, id_, code, standard);
  if (standard) w.string_part(": ");
  write_text_pieces(w, pieces);
  w.string_end();
  w.end_object();
  w.end_object();
  ended_ = true;
  if (batch_ == nullptr) (void)out_.close();
}

void Reply::error_object(jsonrpc::ErrorCode code, StrView object) {
  if (begun_ || suppressed_) return;
  json::Writer& w = start(code);
  w.begin_object();
  w.member_str("jsonrpc", "2.0");
  jsonrpc::write_id_member(w, id_);
  w.key("error");
  w.raw(object);
  w.end_object();
  ended_ = true;
  if (batch_ == nullptr) (void)out_.close();
}

void Reply::invalid(const jsonrpc::Message& m) {
  if (begun_) return;
  json::Writer& w = start(m.invalid_code);
  jsonrpc::Message copy = m;
  copy.id = id_;  // the id as this session writes unknown ids
  jsonrpc::write_invalid(w, copy);
  ended_ = true;
  if (batch_ == nullptr) (void)out_.close();
}

Reply::~Reply() {
  end();
  if (!suppressed_) ServerCode::request_event(session_, id_, Channel::RequestEvent::kDone);
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

}  // namespace mcp
EMCP_NS_END
