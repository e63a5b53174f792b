#include "emcp/jsonrpc/decoder.h"

#include <new>
#include <string.h>

EMCP_NS_BEGIN
namespace jsonrpc {

using json::Event;

Decoder::Decoder(json::Reader& reader, Arena& arena)
    : reader_(reader), arena_(arena), base_(arena.mark()), builder_(arena) {
  begin();
}

void Decoder::begin() {
  reader_.reset();
  arena_.rewind(base_);
  builder_.begin();
  phase_ = kTop;
  skip_return_ = kTop;
  skip_depth_ = 0;
  field_ = kOther;
  batch_ = false;
  top_invalid_ = false;
  too_large_ = false;
  el_ = Element{};
  id_len_ = 0;
  last_ = nullptr;
  decoded_ = Decoded{};
}

void Decoder::feed(const void* data, size_t n) {
  reader_.feed(data, n);
  pump();
}

void Decoder::pump() {
  for (;;) {
    const Event e = reader_.next();
    if (e == Event::kNeedInput || e == Event::kError || e == Event::kDocumentEnd) return;
    on_event(e);
  }
}

void Decoder::skip_from(Event e, Phase then) {
  if (json::completes_value(e)) {  // a scalar or a whole string: nothing more to skip
    phase_ = then;
    return;
  }
  // A container (its begin event raised the depth) or a string still coming in parts.
  skip_depth_ = e == Event::kStringPart ? reader_.depth() : reader_.depth() - 1;
  skip_return_ = then;
  phase_ = kSkip;
}

void Decoder::start_element() {
  el_ = Element{};
  id_len_ = 0;
}

void Decoder::on_event(Event e) {
  switch (phase_) {
    case kTop:
      if (e == Event::kObjectBegin) {
        start_element();
        phase_ = kMember;
      } else if (e == Event::kArrayBegin) {
        batch_ = true;
        phase_ = kBatch;
      } else {
        top_invalid_ = true;
        skip_from(e, kAfterTop);
      }
      return;
    case kBatch:
      if (e == Event::kArrayEnd) {
        phase_ = kAfterTop;
      } else if (e == Event::kObjectBegin) {
        start_element();
        phase_ = kMember;
      } else {
        Message* m = nullptr;
        if (alloc_message(&m)) {
          m->kind = Kind::kInvalid;
          m->id = Id::null();
          m->invalid_code = ErrorCode::kInvalidRequest;
          m->reason = EMCP_ERRTEXT("batch element is not an object");
          add_message(m);
        }
        skip_from(e, kBatch);
      }
      return;
    case kMember:
      if (e == Event::kKey) {
        const StrView k = reader_.text();
        Field f = kOther;
        if (k == "jsonrpc") f = kJsonrpc;
        else if (k == "id") f = kId;
        else if (k == "method") f = kMethod;
        else if (k == "params") f = kParams;
        else if (k == "result") f = kResult;
        else if (k == "error") f = kError;
        if (f != kOther) {
          const uint8_t bit = static_cast<uint8_t>(1u << f);
          if (el_.seen & bit) {
            note_problem(EMCP_ERRTEXT("duplicate member"));
            f = kOther;  // skip the second value
          }
          el_.seen = static_cast<uint8_t>(el_.seen | bit);
        }
        field_ = f;
        phase_ = kValue;
      } else if (e == Event::kObjectEnd) {
        end_element();
        phase_ = batch_ ? kBatch : kAfterTop;
      }
      return;
    case kValue:
      on_value(e);
      return;
    case kCapture:
      capture(e);
      return;
    case kSkip:
      if (json::completes_value(e) && reader_.depth() == skip_depth_) phase_ = skip_return_;
      return;
    case kAfterTop:
      return;
  }
}

void Decoder::on_value(Event e) {
  switch (field_) {
    case kJsonrpc:
      if (e == Event::kStringPart || e == Event::kString) {
        const StrView t = reader_.text();
        el_.jsonrpc_string = true;
        if (t.size() <= sizeof el_.jsonrpc - el_.jsonrpc_len) {
          memcpy(el_.jsonrpc + el_.jsonrpc_len, t.data(), t.size());
          el_.jsonrpc_len = static_cast<uint8_t>(el_.jsonrpc_len + t.size());
        } else {
          el_.jsonrpc_len = sizeof el_.jsonrpc;  // too long: cannot be "2.0"
        }
        if (e == Event::kString) phase_ = kMember;
        return;
      }
      skip_from(e, kMember);
      return;
    case kMethod:
      el_.has_method = true;
      if (e == Event::kStringPart || e == Event::kString) {
        const StrView t = reader_.text();
        el_.method_string = true;
        if (!too_large_) {
          char* p = nullptr;
          if (arena_.append(t.data(), t.size(), &p) != Status::kOk) {
            too_large_ = true;
          } else {
            if (el_.method == nullptr) el_.method = p;
            el_.method_len += static_cast<uint32_t>(t.size());
          }
        }
        if (e == Event::kString) phase_ = kMember;
        return;
      }
      skip_from(e, kMember);
      return;
    case kId:
      el_.has_id = true;
      switch (e) {
        case Event::kInt:
          el_.id = Id::of(reader_.int_value());
          break;
        case Event::kNull:
          el_.id = Id::null();
          break;
        case Event::kStringPart:
        case Event::kString: {
          const StrView t = reader_.text();
          if (el_.id_problem == nullptr) {
            if (t.size() > sizeof id_buf_ - id_len_) {
              el_.id_problem = EMCP_ERRTEXT("id too long");
            } else {
              memcpy(id_buf_ + id_len_, t.data(), t.size());
              id_len_ = static_cast<uint16_t>(id_len_ + t.size());
            }
          }
          if (e == Event::kStringPart) return;  // more to come
          if (el_.id_problem == nullptr) el_.id = Id::of(StrView(id_buf_, id_len_));
          break;
        }
        default:
          // Numbers with a fraction or exponent (even 1.0) and integers beyond int64 are not
          // taken: converting them could answer with an id the client never sent.
          el_.id_problem = EMCP_ERRTEXT("id must be a string or an integer");
          skip_from(e, kMember);
          return;
      }
      phase_ = kMember;
      return;
    case kParams:
    case kResult:
    case kError:
      if (field_ == kError) el_.error_object = e == Event::kObjectBegin;
      builder_.begin();
      phase_ = kCapture;
      capture(e);
      return;
    case kOther:
      skip_from(e, kMember);
      return;
  }
}

// An event of params / result / error: into the tree.
void Decoder::capture(Event e) {
  const Status s = builder_.on_event(e, reader_);
  if (s == Status::kNoSpace) too_large_ = true;
  if (s == Status::kDepthLimit) note_problem(EMCP_ERRTEXT("nesting too deep"));
  if (builder_.complete()) store_capture();
}

void Decoder::store_capture() {
  phase_ = kMember;
  if (builder_.status() == Status::kInvalidArgument) {
    note_problem(EMCP_ERRTEXT("duplicate key"));
    return;
  }
  const json::Value v = builder_.root();
  switch (field_) {
    case kParams:
      el_.has_params = true;
      el_.params = v;
      break;
    case kResult:
      el_.has_result = true;
      el_.result = v;
      break;
    case kError:
      el_.has_error = true;
      el_.error = v;
      break;
    default:
      break;
  }
}

bool Decoder::alloc_message(Message** out) {
  *out = nullptr;
  if (too_large_) return false;
  void* mem = nullptr;
  if (arena_.alloc(sizeof(Message), alignof(Message), &mem) != Status::kOk) {
    too_large_ = true;
    return false;
  }
  *out = new (mem) Message();  // placement: constructs in the arena, no heap
  return true;
}

void Decoder::add_message(Message* m) {
  if (last_ == nullptr) decoded_.first = m;
  else last_->next = m;
  last_ = m;
  ++decoded_.count;
}

void Decoder::end_element() {
  Message* m = nullptr;
  if (!alloc_message(&m)) return;
  Element& el = el_;
  // The id to answer with: a usable id, else null.
  Id id = Id::null();
  if (el.has_id && el.id_problem == nullptr) {
    id = el.id;
    if (id.type == Id::Type::kString) {
      char* copy = nullptr;
      if (arena_.append(id.str.data(), id.str.size(), &copy) != Status::kOk) {
        too_large_ = true;
        return;
      }
      id.str = StrView(copy, id.str.size());
    }
  }
  m->id = id;
  const char* why = el.problem;
  if (why == nullptr && !el.jsonrpc_ok()) why = EMCP_ERRTEXT("jsonrpc must be \"2.0\"");
  if (why == nullptr && el.id_problem != nullptr) why = el.id_problem;
  if (why == nullptr) {
    if (el.has_method) {
      if (!el.method_string) why = EMCP_ERRTEXT("method must be a string");
      else if (el.has_result || el.has_error) why = EMCP_ERRTEXT("a request has no result or error");
      else if (el.has_params && !el.params.is_object() && !el.params.is_array())
        why = EMCP_ERRTEXT("params must be an object or an array");
      else if (el.has_id && el.id.type == Id::Type::kNull)
        why = EMCP_ERRTEXT("id must not be null");
    } else if (el.has_result && el.has_error) {
      why = EMCP_ERRTEXT("both result and error");
    } else if (el.has_result) {
      if (!el.has_id || el.id.type == Id::Type::kNull) why = EMCP_ERRTEXT("response without id");
    } else if (el.has_error) {
      if (!el.has_id) why = EMCP_ERRTEXT("error response without id");
      else if (!el.error["code"].is_int() || !el.error["message"].is_string())
        why = EMCP_ERRTEXT("error must have an integer code and a string message");
    } else {
      why = EMCP_ERRTEXT("missing method");
    }
  }
  if (why != nullptr) {
    m->kind = Kind::kInvalid;
    m->invalid_code = ErrorCode::kInvalidRequest;
    m->reason = why;
    // A malformed response carries an id of the server's requests: answering with it would
    // make the client match the error to its own request of that number.
    if (!el.has_method && (el.has_result || el.has_error)) m->id = Id::null();
  } else if (el.has_method) {
    m->kind = el.has_id ? Kind::kRequest : Kind::kNotification;
    m->method = el.method != nullptr ? StrView(el.method, el.method_len) : StrView();
    m->params = el.params;
  } else if (el.has_result) {
    m->kind = Kind::kResponse;
    m->result = el.result;
  } else {
    m->kind = Kind::kErrorResponse;
    m->error.code = el.error["code"].as_int().value();
    m->error.message = el.error["message"].as_string().value();
    m->error.data = el.error["data"];
  }
  if (m->kind == Kind::kNotification) m->id = Id{};  // notifications carry no id
  add_message(m);
}

Message& Decoder::whole_error(ErrorCode code, const char* reason, Status cause, int64_t offset, Id id) {
  error_ = Message{};
  error_.kind = Kind::kInvalid;
  error_.id = id;
  error_.invalid_code = code;
  error_.reason = reason;
  error_.cause = cause;
  error_.offset = offset;
  decoded_.first = &error_;
  decoded_.count = 1;
  decoded_.batch = false;
  return error_;
}

Id Decoder::known_id() const {
  // Only a request's id: answering a response or error response with its id would make the
  // client match our error to a request it never sent.
  if (!batch_ && el_.has_id && el_.id_problem == nullptr && el_.id.type != Id::Type::kNone &&
      el_.saw(kMethod) && !el_.responds())
    return el_.id;
  return Id::null();
}

bool (*Decoder::lost_)(Decoder& d, Lost why) = nullptr;

void Decoder::keep_lost_responses() { lost_ = &Decoder::make_lost_response; }

// Only what would have been a valid response had it fit: "jsonrpc":"2.0", an intact id, result
// or error (not both, an error object), no method, no duplicate member, and no syntax error
// so far (a limit is fine: that is why it could not be kept).
bool Decoder::make_lost_response(Decoder& d, Lost lost) {
  const Element& el = d.el_;
  const Status rs = d.reader_.status();
  if (d.batch_ || !el.has_id || el.id_problem != nullptr || el.saw(kMethod) ||
      el.saw(kResult) == el.saw(kError) || (el.saw(kError) && !el.error_object) || el.problem != nullptr || !el.jsonrpc_ok() ||
      (rs != Status::kOk && !is_json_limit_error(rs)) ||
      (el.id.type != Id::Type::kInt && el.id.type != Id::Type::kString))
    return false;
  // The texts live here, linked only with keep_lost_responses().
  const char* why = lost == Lost::kArena         ? EMCP_ERRTEXT("response too large for the arena (EMCP_ARENA_SIZE)")
                    : lost == Lost::kReaderLimit ? EMCP_ERRTEXT("response beyond a JSON reader limit")
                    : lost == Lost::kLineLimit   ? EMCP_ERRTEXT("response longer than the line limit (EMCP_MAX_MESSAGE_LEN)")
                                                 : EMCP_ERRTEXT("response damaged: input lost");
  Message& m = d.whole_error(ErrorCode::kInternalError, why, Status::kOk, -1, el.id);
  m.kind = Kind::kErrorResponse;
  m.lost = true;
  m.error.code = static_cast<int64_t>(ErrorCode::kInternalError);
  m.error.message = why;
  return true;
}

const Decoded& Decoder::finish() {
  reader_.finish();
  pump();
  // Answers to whole-input failures that are not parse errors carry the id when it was read
  // intact, so the client can match them.
  const Id known = known_id();
  const Status rs = reader_.status();
  if (rs != Status::kOk) {
    const int64_t at = static_cast<int64_t>(reader_.offset());
    if (is_json_limit_error(rs)) {
      if (!lost_response(Lost::kReaderLimit))
        whole_error(ErrorCode::kInvalidRequest, "", rs, at, known);
    } else {
      whole_error(ErrorCode::kParseError, "", rs, at, Id::null());
    }
  } else if (too_large_) {
    if (!lost_response(Lost::kArena))
      whole_error(ErrorCode::kInvalidRequest, EMCP_ERRTEXT("message too large for the arena"),
                  Status::kOk, -1, known);
  } else if (top_invalid_) {
    whole_error(ErrorCode::kInvalidRequest,
                EMCP_ERRTEXT("expected a JSON-RPC object or a batch array"), Status::kOk, -1,
                Id::null());
  } else if (batch_ && decoded_.count == 0) {
    whole_error(ErrorCode::kInvalidRequest, EMCP_ERRTEXT("empty batch"), Status::kOk, -1,
                Id::null());
  } else {
    decoded_.batch = batch_;
  }
  return decoded_;
}

}  // namespace jsonrpc
EMCP_NS_END
