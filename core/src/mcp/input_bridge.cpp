// The InputBridge (emcp/mcp/input_bridge.h): a handler's questions (Inputs) to a client of
// 2024-11-05 to 2025-11-25, as server-to-client requests, and the handler run again with the
// answers once the last one is in. Linked only by an application that calls
// Server::set_input_bridge().
//
// A request's first ask takes a slot: it copies the request's `name`/`uri`, `arguments` and
// `_meta` into the slot's arena and holds the request in the server's deferred table (so
// transports keep its response open, and a notifications/cancelled finds it). Each ask is sent
// at once through the table of requests to clients. An answer that is not the round's last is
// copied into the arena; the last is read where it arrived: the request is rebuilt (the copied
// members plus `inputResponses`) and dispatched again with its own id, from inside the answer's
// callback, or from poll() when the channel was busy or the round only kept state. A refused,
// timed-out or oversize answer ends the request with an error; a closed session or a
// cancelled request ends it without one, after cancelling the other questions.
#include "input_bridge_internal.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mcp {

namespace {

// The requests that can ask (BridgeSlot::method).
constexpr const char* kMethods[] = {"tools/call", "prompts/get", "resources/read"};
constexpr uint8_t kToolsCall = 0, kPromptsGet = 1;  // 2: resources/read

// A new object node in `a` (nullptr when it does not fit).
json::Node* object_node(Arena& a, const char* key) {
  void* mem = nullptr;
  if (a.alloc(sizeof(json::Node), alignof(json::Node), &mem) != Status::kOk) return nullptr;
  json::Node* n = static_cast<json::Node*>(mem);
  memset(n, 0, sizeof *n);
  n->type = json::Type::kObject;
  if (key != nullptr) {
    n->key = key;
    n->key_len = static_cast<uint32_t>(strlen(key));
  }
  return n;
}

void append_child(json::Node* parent, json::Node** last, json::Node* child) {
  child->next = nullptr;
  if (*last != nullptr) (*last)->next = child;
  else parent->u.c.first = child;
  *last = child;
  ++parent->u.c.count;
}

}  // namespace

size_t InputBridge::in_use() const {
  size_t n = 0;
  for (uint8_t i = 0; i < count_; ++i) n += slots_[i].used ? 1 : 0;
  return n;
}

size_t InputBridge::arena_high_water() const {
  size_t most = 0;
  for (uint8_t i = 0; i < count_; ++i)
    if (slots_[i].arena->high_water() > most) most = slots_[i].arena->high_water();
  return most;
}

void Server::set_input_bridge(InputBridge& bridge) {
  if (!EMCP_LEGACY_ERA) return;  // no legacy clients to bridge to: none of input_bridge.cpp is linked
  bridge_ = &bridge;
  bridge.server_ = this;
  FeatureOps::install(*this, FeatureOps::kBridgeSlot, BridgeCode::kOps);
  // Given to this server: what it held for another (a test's earlier server) is forgotten.
  for (uint8_t i = 0; i < bridge.count_; ++i) {
    BridgeSlot& slot = bridge.slots_[i];
    slot.held = false;
    if (slot.used) BridgeCode::release(*this, slot);
  }
}

// ---- Taking and freeing a slot ------------------------------------------------------------------

BridgeSlot* BridgeCode::take(Server& sv, Inputs& in) {
  uint8_t method = 0;
  while (method < 3 && !(in.method_ == kMethods[method])) ++method;
  BridgeSlot* slot = nullptr;
  for (uint8_t i = 0; i < sv.bridge_->count_ && slot == nullptr; ++i)
    if (!sv.bridge_->slots_[i].used) slot = &sv.bridge_->slots_[i];
  if (slot == nullptr || method == 3) {
    in.no("the InputBridge's slots are all waiting for answers");
    return nullptr;
  }
  slot->used = true;
  slot->method = method;
  slot->arena->reset();
  slot->members = slot->last_member = nullptr;
  slot->round = 0;
  slot->pending = 0;
  slot->kept_len = 0;
  slot->ready = false;
  slot->held = false;
  for (const char* name : {"name", "uri", "arguments", "_meta"}) {
    const Value v = in.params_[name];
    json::Node* copy = nullptr;
    if (!v.exists()) continue;
    if (json::copy_value(*slot->arena, v, StrView(name), &copy) != Status::kOk) {
      release(sv, *slot);
      in.no("the request's arguments do not fit the InputBridge's arena");
      return nullptr;
    }
    if (slot->last_member != nullptr) slot->last_member->next = copy;
    else slot->members = copy;
    slot->last_member = copy;
  }
  slot->params_end = slot->arena->mark();
  in.slot_ = slot;
  return slot;
}

void BridgeCode::release(Server& sv, BridgeSlot& slot) {
  if (slot.held) sv.deferred_[slot.hold].used = false;
  slot.held = false;
  slot.used = false;
  slot.ready = false;
  slot.pending = 0;
  slot.kept_len = 0;
  for (BridgeAsk& a : slot.asks) {
    a.state = BridgeAsk::kFree;
    a.answer = nullptr;
  }
  slot.members = slot.last_member = nullptr;
  slot.arena->reset();
}

// The questions still out: forgotten, and cancelled at the client when `reason` is given.
void BridgeCode::drop_asks(Server& sv, BridgeSlot& slot, const char* reason) {
  for (BridgeAsk& a : slot.asks) {
    if (a.state != BridgeAsk::kPending) continue;
    a.state = BridgeAsk::kFree;
    for (Outgoing& o : sv.outgoing_) {
      if (!o.used || o.ctx != &a) continue;
      o.used = false;
      if (reason != nullptr && !o.session->open_) ServerCode::send_cancelled(sv, *o.session, o.id, reason);
    }
  }
  slot.pending = 0;
}

// ---- Asking -------------------------------------------------------------------------------------

BridgeAsk* BridgeCode::ask(Server& sv, Inputs& in, StrView key, const char* method) {
  if (!in.may_ask()) return nullptr;
  if (sv.bridge_ == nullptr) {
    in.no("the server has no InputBridge to ask clients of this revision (Server::set_input_bridge)");
    return nullptr;
  }
  if (key.empty() || key.size() > EMCP_INPUT_KEY_MAX) {
    in.no("the key is empty or longer than EMCP_INPUT_KEY_MAX");
    return nullptr;
  }
  BridgeSlot* slot = in.slot_ != nullptr ? in.slot_ : take(sv, in);
  if (slot == nullptr) return nullptr;
  BridgeAsk* ask = nullptr;
  const char* why = nullptr;
  for (BridgeAsk& a : slot->asks) {
    if (a.state == BridgeAsk::kFree && ask == nullptr) ask = &a;
    else if (a.state == BridgeAsk::kPending && StrView(a.key, a.key_len) == key) why = "that key was asked already";
  }
  if (ask == nullptr) why = "the round asks more questions than EMCP_INPUT_ASKS";
  if (why == nullptr && !slot->held) {
    // Held from the first question on: the client's answers may come before the handler ends.
    const int h = ServerCode::hold_request(sv, &in.reply_->session(), in.reply_->id(), in.reply_->peer(),
                               in.params_["_meta"]["progressToken"], nullptr);
    if (h < 0) why = "EMCP_MAX_DEFERRED requests are pending";
    else slot->hold = static_cast<uint16_t>(h);
    slot->held = h >= 0;
  }
  if (why != nullptr) {
    give_back(sv, in);
    in.no(why);
    return nullptr;
  }
  memcpy(ask->key, key.data(), key.size());
  ask->key_len = static_cast<uint8_t>(key.size());
  ask->method = method;
  ask->answer = nullptr;
  ask->state = BridgeAsk::kPending;
  ++slot->pending;
  return ask;
}

// A slot this run took for nothing is given back (a run again keeps its slot to the end).
void BridgeCode::give_back(Server& sv, Inputs& in) {
  if (in.asked_ || sv.bridge_->replaying_ == in.slot_) return;
  release(sv, *in.slot_);
  in.slot_ = nullptr;
}

// After Server::elicit(), sample() or list_roots() sent (or not) ask `a`.
bool BridgeCode::sent(Server& sv, Inputs& in, BridgeAsk* a, Status status) {
  if (status == Status::kOk) {
    in.asked_ = true;
    return true;
  }
  a->state = BridgeAsk::kFree;
  --in.slot_->pending;
  give_back(sv, in);
  return in.no(status == Status::kNotFound          ? undeclared(a->method)
               : status == Status::kInvalidArgument ? "the form is not one this client's revision takes"
               : status == Status::kNoSpace         ? "EMCP_MAX_OUTGOING requests to clients are in flight"
                                                  : "the channel cannot take the request now");
}

// A handler that asked ends: its answer waits for the client's.
bool BridgeCode::settle(Server& sv, Inputs& in) {
  BridgeSlot& slot = *in.slot_;
  if (!slot.held) {  // keep() alone: hold it now
    const int h = ServerCode::hold_request(sv, &in.reply_->session(), in.reply_->id(), in.reply_->peer(),
                               in.params_["_meta"]["progressToken"], nullptr);
    if (h < 0) {
      release(sv, slot);
      in.reply_->error(ErrorCode::kInternalError,
                       {"the server is busy: ", static_cast<long long>(EMCP_MAX_DEFERRED),
                        " requests are pending (EMCP_MAX_DEFERRED)"});
      return true;
    }
    slot.hold = static_cast<uint16_t>(h);
    slot.held = true;
  }
  slot.kept_len = in.kept_len_;
  if (in.kept_len_ != 0) memcpy(slot.kept, in.kept_, in.kept_len_);
  if (slot.pending == 0) slot.ready = true;  // kept state only: runs again from poll()
  in.reply_->suppress();
  return true;
}

// ---- Answers ------------------------------------------------------------------------------------

void BridgeCode::answer(const Response& r, void* ctx) {
  BridgeAsk& a = *static_cast<BridgeAsk*>(ctx);
  BridgeSlot& slot = *a.slot;
  Server& sv = *slot.bridge->server_;
  if (!slot.used || a.state != BridgeAsk::kPending) return;
  a.state = BridgeAsk::kAnswered;
  --slot.pending;
  const Deferred& d = sv.deferred_[slot.hold];
  if (r.outcome == Response::Outcome::kClosed || d.cancelled) {  // nobody to answer
    drop_asks(sv, slot, r.outcome == Response::Outcome::kClosed ? nullptr : "the request was cancelled");
    return release(sv, slot);
  }
  if (r.outcome != Response::Outcome::kResult) {
    drop_asks(sv, slot, "another question of the request was not answered");
    if (r.outcome == Response::Outcome::kTimeout)
      return fail(sv, slot, {"The client did not answer the ", a.method, " request in time."});
    return fail(sv, slot, {"The client refused the ", a.method, " request: ", r.message});
  }
  if (slot.pending == 0 && !d.session->open_) return replay(sv, slot, r.result, &a);
  // Not the last (or the channel is busy): kept until the round is complete.
  if (json::copy_value(*slot.arena, r.result, StrView(a.key, a.key_len), &a.answer) != Status::kOk) {
    drop_asks(sv, slot, "another question of the request could not be kept");
    return fail(sv, slot, {"The answer to the ", a.method, " request is larger than the InputBridge's arena (",
                                 static_cast<long long>(slot.arena->capacity()), " bytes)."});
  }
  if (slot.pending == 0) slot.ready = true;
}

// Ends a held request with an error: an isError result for a tool, -32603 otherwise.
void BridgeCode::fail(Server& sv, BridgeSlot& slot, std::initializer_list<TextPiece> why) {
  if (!slot.held || sv.deferred_[slot.hold].cancelled) return release(sv, slot);
  const Deferred& d = sv.deferred_[slot.hold];
  Session& s = *d.session;
  const Token token = d.id;
  const Id id = token.id();
  const Peer peer = d.peer;
  const uint8_t method = slot.method;
  release(sv, slot);
  {
    Reply r(s, peer, id, nullptr);
    const CurrentRequest current(sv, s, id);
    if (method == kToolsCall) {
      ToolCall call;
      call.server_ = &sv;
      call.session_ = &s;
      call.reply_ = &r;
      call.fail(why);
      call.finish();
    } else {
      r.error(ErrorCode::kInternalError, why);
    }
  }
  sv.send_held_now();
}

// Runs the request again with the round's answers: the copied ones and `live` (the answer to
// `live_ask`, read where it arrived; missing when every answer was copied).
void BridgeCode::replay(Server& sv, BridgeSlot& slot, Value live, BridgeAsk* live_ask) {
  Arena& a = *slot.arena;
  json::Node* root = object_node(a, nullptr);
  json::Node* responses = object_node(a, "inputResponses");
  json::Node* last = nullptr;
  bool fits = root != nullptr && responses != nullptr;
  for (BridgeAsk& ask : slot.asks) {
    if (!fits || ask.state != BridgeAsk::kAnswered) continue;
    json::Node* n = ask.answer;
    if (&ask == live_ask) {  // a node of our own for the live answer: its key is the ask's
      void* mem = nullptr;
      char* key = nullptr;
      fits = a.alloc(sizeof(json::Node), alignof(json::Node), &mem) == Status::kOk &&
             a.append(ask.key, ask.key_len, &key) == Status::kOk;
      if (!fits) break;
      n = static_cast<json::Node*>(mem);
      *n = *live.node();
      n->key = key;
      n->key_len = ask.key_len;
    }
    append_child(responses, &last, n);
  }
  if (!fits) {
    return fail(sv, slot, {"The answers are larger than the InputBridge's arena (",
                              static_cast<long long>(a.capacity()), " bytes)."});
  }
  // The request: its copied members (linked already), then inputResponses.
  root->u.c.first = slot.members != nullptr ? slot.members : responses;
  for (const json::Node* m = slot.members; m != nullptr; m = m == slot.last_member ? nullptr : m->next)
    ++root->u.c.count;  // (the last member's `next` is the previous round's inputResponses)
  if (slot.last_member != nullptr) slot.last_member->next = responses;
  ++root->u.c.count;

  Deferred& d = sv.deferred_[slot.hold];
  Session& s = *d.session;
  const Token token = d.id;
  const Id id = token.id();
  const Peer peer = d.peer;
  d.used = false;  // held again if it asks again
  slot.held = false;
  slot.ready = false;
  slot.pending = 0;
  for (BridgeAsk& ask : slot.asks) ask.state = BridgeAsk::kFree;
  ++slot.round;
  Message m;
  m.kind = Kind::kRequest;
  m.id = id;
  m.method = kMethods[slot.method];
  m.params = Value(root);
  sv.bridge_->replaying_ = &slot;
  {
    Reply r(s, peer, id, nullptr);
    const CurrentRequest current(sv, s, id);
    if (slot.method == kToolsCall) ServerCode::on_tools_call(sv, s, m, r);
    else if (const FeatureOps* f = FeatureOps::at(sv, slot.method == kPromptsGet ? FeatureOps::kPromptsSlot
                                                                                 : FeatureOps::kResourcesSlot))
      (void)f->request(sv, s, m, r);  // (installed: the request was served before)
  }
  sv.bridge_->replaying_ = nullptr;
  if (slot.used) {
    if (slot.pending == 0 && !slot.ready) release(sv, slot);  // answered
    else a.rewind(slot.params_end);                               // another round
  }
  sv.send_held_now();
}

// ---- The server's hooks -------------------------------------------------------------------------

const BridgeOps BridgeCode::kOps = {
    {
        nullptr,
        [](Server& sv, FeatureEvent e, Session* s, const Message* m) {
          InputBridge& b = *sv.bridge_;
          if (e == FeatureEvent::kMessage) {
            // notifications/cancelled: the questions of the requests it cancelled (which
            // FeatureOps::kDeferred, in an earlier slot, marked) are cancelled too.
            if (m->kind != Kind::kNotification || m->method != "notifications/cancelled") return;
            if (id_of(m->params["requestId"]).type == Id::Type::kNone) return;
            for (uint8_t i = 0; i < b.count_; ++i) {
              BridgeSlot& slot = b.slots_[i];
              if (!slot.used || !slot.held || slot.ready) continue;
              const Deferred& d = sv.deferred_[slot.hold];
              if (d.session != s || !d.cancelled) continue;
              drop_asks(sv, slot, "the request was cancelled");
              release(sv, slot);
            }
          } else if (e == FeatureEvent::kPoll) {
            // The requests whose answers are all in run again (or end, cancelled meanwhile).
            for (uint8_t i = 0; i < b.count_; ++i) {
              BridgeSlot& slot = b.slots_[i];
              if (!slot.used || !slot.ready) continue;
              if (!slot.held || sv.deferred_[slot.hold].cancelled) release(sv, slot);
              else if (!sv.deferred_[slot.hold].session->open_) replay(sv, slot, Value(), nullptr);
            }
          }
        },
    },
    [](Server& sv, Inputs& in) { return settle(sv, in); },
    [](Server& sv, Inputs& in) {
      BridgeSlot* slot = sv.bridge_->replaying_;
      if (slot == nullptr || in.slot_ != nullptr) return;
      in.slot_ = slot;
      in.responses_ = in.params_["inputResponses"];
      in.round_ = slot->round;
      in.got_len_ = slot->kept_len;
      if (slot->kept_len != 0) memcpy(in.got_, slot->kept, slot->kept_len);
    },
};

}  // namespace mcp
EMCP_NS_END
