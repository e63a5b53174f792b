// Input from the client during a request at 2026-07-28: multi round-trip requests
// (basic/patterns/mrtr.mdx). A handler asks (Inputs::elicit, sample, list_roots, keep); its
// answer becomes an InputRequiredResult, streamed as it asks: resultType "input_required",
// `inputRequests` (key -> {method, params}) and `requestState`. The state is the server's own
// token, carried by the client: base64url of
//   format (1) | round (1) | expiry, seconds of the platform's clock (4, big-endian) |
//   request digest (8: SHA-256 of method, 0, name or uri) | n (1) | kept bytes (n) |
//   HMAC-SHA256 tag, first 16 bytes
// under the application's key (Server::set_request_state_key) or one drawn from the platform's
// random source at first use. A state whose tag, format,
// expiry or digest does not hold is refused with -32602 before the handler runs: a tampered
// state, an old one, or one from another request is never trusted.
#include "input_bridge_internal.h"

#include <string.h>

#include "emcp/crypto/sha256.h"
#include "../util/base64url.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr uint8_t kStateFormat = 1;
constexpr size_t kTagLen = 16;
constexpr size_t kHeadLen = 1 + 1 + 4 + 8 + 1;
constexpr size_t kStateMax = kHeadLen + EMCP_REQUEST_STATE_MAX + kTagLen;
constexpr size_t kStateTextMax = (kStateMax * 4 + 2) / 3;

void request_digest(StrView method, StrView name, uint8_t out[8]) {
  crypto::Sha256 h;
  h.update(method.data(), method.size());
  h.update("", 1);
  h.update(name.data(), name.size());
  uint8_t d[crypto::kSha256Size];
  h.finish(d);
  memcpy(out, d, 8);
}

void tag(const uint8_t key[32], const uint8_t* data, size_t n, uint8_t out[kTagLen]) {
  uint8_t t[crypto::kSha256Size];
  crypto::HmacSha256::mac(key, 32, data, n, t);
  memcpy(out, t, kTagLen);
}

uint32_t now_s(const Server& s) { return static_cast<uint32_t>(s.now() / 1000); }

}  // namespace

// One key for the image's servers: the application's (a fleet's instances share it), or drawn
// when a state is first written or checked.
namespace {
uint8_t g_state_key[32];
bool g_keyed = false;
}  // namespace

const uint8_t* ServerCode::state_key(Server& sv) {
  if (!g_keyed && sv.platform_.random != nullptr && sv.platform_.random(g_state_key, sizeof g_state_key)) g_keyed = true;
  return g_keyed ? g_state_key : nullptr;
}

// ---- The request's answers and state ----------------------------------------------------------

bool Inputs::begin(Server& server, Reply& r, const Message& m) {
  server_ = &server;
  reply_ = &r;
  method_ = m.method;
  params_ = m.params;
  if (!EMCP_MODERN_ERA || !r.peer().modern()) {
    // A legacy client's request the InputBridge runs again finds its answers here.
    if (const BridgeOps* bridge = BridgeCode::ops(server)) bridge->resume(server, *this);
    return true;
  }
  name_ = m.params[name_field(m.method)].as_string().value_or(StrView());
  const Value responses = m.params["inputResponses"];
  if (responses.exists() && !responses.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"inputResponses must be an object (input key -> the client's result)"});
    return false;
  }
  responses_ = responses;
  const Value state = m.params["requestState"];
  if (!state.exists()) return true;
  const Result<StrView> text = state.as_string();
  const char* why = "it is not a string";
  // Verified only by code an application that asks links (StateOps): a server that has not
  // asked since it started issued no state.
  if (text.ok()) {
    why = "this server issued none since it started";
    const auto* ops = static_cast<const StateOps*>(FeatureOps::at(server, FeatureOps::kStateSlot));
    if (ops != nullptr && ops->verify(*this, text.value(), &why)) return true;
  }
  r.reject(ErrorCode::kInvalidParams, {"requestState refused: ", why});
  return false;
}

// StateOps::verify: the tag, format, expiry, request and round of a state.
bool verify_state(Inputs& in, StrView text, const char** why) {
  Server& server = *in.server_;
  uint8_t raw[kStateMax];
  size_t n = 0;
  if (!util::b64url_valid(text) || util::b64url_decoded_size(text.size()) > sizeof raw ||
      (n = util::b64url_decode_valid(text.data(), text.size(), raw)) < kHeadLen + kTagLen || raw[0] != kStateFormat ||
      raw[kHeadLen - 1] != n - kHeadLen - kTagLen) {
    *why = "it is not one of this server's";
    return false;
  }
  uint8_t expect[kTagLen];
  const uint8_t* key = ServerCode::state_key(server);
  if (key == nullptr) {
    *why = "this server has no key to check it";
    return false;
  }
  tag(key, raw, n - kTagLen, expect);
  if (!crypto::equal_ct(expect, raw + n - kTagLen, kTagLen)) {
    *why = "its authentication failed";
    return false;
  }
  const uint32_t expiry = (static_cast<uint32_t>(raw[2]) << 24) | (static_cast<uint32_t>(raw[3]) << 16) |
                          (static_cast<uint32_t>(raw[4]) << 8) | raw[5];
  uint8_t digest[8];
  request_digest(in.method_, in.name_, digest);
  if (now_s(server) > expiry) *why = "it expired";
  else if (memcmp(raw + 6, digest, 8) != 0) *why = "it belongs to another request";
  else if (raw[1] + 1 >= EMCP_MAX_INPUT_ROUNDS) *why = "the request took too many rounds";
  else *why = nullptr;
  if (*why != nullptr) return false;
  in.round_ = static_cast<uint8_t>(raw[1] + 1);
  in.got_len_ = raw[kHeadLen - 1];
  if (in.got_len_ > sizeof in.got_) in.got_len_ = 0;  // (EMCP_MODERN_ERA off: never reached)
  if (in.got_len_ != 0) memcpy(in.got_, raw + kHeadLen, in.got_len_);
  return true;
}

// StateOps::write: the state of the round that ends.
void write_state(Inputs& in, json::Writer& w) {
  Server& server = *in.server_;
  const uint8_t* key = ServerCode::state_key(server);
  if (key == nullptr) return;  // no random source: the retry carries answers only
  uint8_t raw[kStateMax];
  const uint32_t expiry = now_s(server) + EMCP_REQUEST_STATE_TTL_S;
  raw[0] = kStateFormat;
  raw[1] = in.round_;
  raw[2] = static_cast<uint8_t>(expiry >> 24);
  raw[3] = static_cast<uint8_t>(expiry >> 16);
  raw[4] = static_cast<uint8_t>(expiry >> 8);
  raw[5] = static_cast<uint8_t>(expiry);
  request_digest(in.method_, in.name_, raw + 6);
  raw[kHeadLen - 1] = in.kept_len_;
  if (in.kept_len_ != 0) memcpy(raw + kHeadLen, in.kept_, in.kept_len_);
  const size_t n = kHeadLen + in.kept_len_;
  tag(key, raw, n, raw + n);
  char text[kStateTextMax];
  w.member_str("requestState", StrView(text, util::b64url_encode(raw, n + kTagLen, text)));
}

namespace {
const StateOps kStateOps = {{nullptr, nullptr}, &verify_state, &write_state};
}  // namespace

void Inputs::install() { FeatureOps::install(*server_, FeatureOps::kStateSlot, kStateOps); }

// The fleet's key; the states other instances issued are checked from now on.
void Server::set_request_state_key(const uint8_t (&key)[32]) {
  memcpy(g_state_key, key, sizeof g_state_key);
  g_keyed = true;
  FeatureOps::install(*this, FeatureOps::kStateSlot, kStateOps);
}

Value Inputs::answer(StrView key) const { return responses_[key]; }

Value Inputs::accepted(StrView key) const {
  const Value a = responses_[key];
  const Value content = a["content"];
  if (!(a["action"].as_string().value_or(StrView()) == "accept") || !content.is_object()) return Value();
  return content;
}

// ---- Asking ------------------------------------------------------------------------------------

// A legacy client's request asks through the InputBridge; a task's run keeps its questions
// in the task whatever the client's era (tasks.cpp).
bool Inputs::legacy() const { return reply_ != nullptr && !reply_->peer().modern() && !in_task_; }

bool Inputs::may_ask() {
  if (reply_ == nullptr) return no("input can be asked only while the handler runs");
  if (refused_) return no("the request was already answered with -32021");
  if (!asked_ && reply_->begun()) return no("the answer has started");
  if (round_ + 1 >= EMCP_MAX_INPUT_ROUNDS) return no("the request took its rounds (EMCP_MAX_INPUT_ROUNDS)");
  return true;
}

bool Inputs::begin_ask(StrView key, const char* method, bool declared) {
  if (!may_ask()) return false;
  if (!declared) return no(undeclared(method));
  json::Writer& w = asked_ ? reply_->result() : reply_->result_object(true);
  asked_ = true;
  install();
  if (!listed_) {
    listed_ = true;
    w.key("inputRequests");
    w.begin_object();
  }
  w.key(key);
  w.begin_object();
  w.member_str("method", method);
  return true;
}

bool Inputs::elicit(StrView key, StrView message, Span<const Param> schema) {
  if (legacy()) {
    BridgeAsk* a = BridgeCode::ask(*server_, *this, key, "elicitation/create");
    return a != nullptr &&
           BridgeCode::sent(*server_, *this, a,
                                server_->elicit(reply_->session(), message, schema, &BridgeCode::answer, a));
  }
  if (!elicit_schema_ok(schema, reply_ != nullptr ? reply_->peer().version : kModernVersion))
    return no("the schema is not a flat form");
  if (!begin_ask(key, "elicitation/create", reply_ != nullptr && reply_->peer().caps.elicitation_form)) return false;
  json::Writer& w = reply_->result();
  w.key("params");
  w.begin_object();
  w.member_str("mode", "form");
  w.member_str("message", message);
  w.key("requestedSchema");
  write_object_schema(w, schema);
  w.end_object();
  w.end_object();
  return true;
}

bool Inputs::sample(StrView key, ParamsFn params, const void* params_ctx) {
  if (params == nullptr) return no("no params writer");
  if (legacy()) {
    BridgeAsk* a = BridgeCode::ask(*server_, *this, key, "sampling/createMessage");
    return a != nullptr &&
           BridgeCode::sent(*server_, *this, a,
                                server_->sample(reply_->session(), params, params_ctx, &BridgeCode::answer, a));
  }
  if (!begin_ask(key, "sampling/createMessage", reply_ != nullptr && reply_->peer().caps.sampling)) return false;
  json::Writer& w = reply_->result();
  w.key("params");
  params(w, params_ctx);
  w.end_object();
  return true;
}

bool Inputs::list_roots(StrView key) {
  if (legacy()) {
    BridgeAsk* a = BridgeCode::ask(*server_, *this, key, "roots/list");
    return a != nullptr &&
           BridgeCode::sent(*server_, *this, a, server_->list_roots(reply_->session(), &BridgeCode::answer, a));
  }
  if (!begin_ask(key, "roots/list", reply_ != nullptr && reply_->peer().caps.roots)) return false;
  json::Writer& w = reply_->result();
  w.key("params");
  w.begin_object();
  w.end_object();
  w.end_object();
  return true;
}

bool Inputs::keep(const void* data, size_t n) {
  if (n > EMCP_REQUEST_STATE_MAX || n > sizeof kept_) return no("the state is larger than EMCP_REQUEST_STATE_MAX");
  if (!may_ask()) return false;
  if (legacy()) {
    // Kept on the server, in the request's InputBridge slot.
    if (slot_ == nullptr && (server_->bridge_ == nullptr || BridgeCode::take(*server_, *this) == nullptr))
      return no(server_->bridge_ == nullptr ? "the server has no InputBridge for this client's revision"
                                            : "the InputBridge is full");
  } else {
    if (server_ == nullptr || ServerCode::state_key(*server_) == nullptr) return no("the platform has no random source to key the state");
    install();
    if (!asked_) (void)reply_->result_object(true);
  }
  asked_ = true;
  if (n != 0) memcpy(kept_, data, n);
  kept_len_ = static_cast<uint8_t>(n);
  return true;
}

bool Inputs::missing_capability(StrView name) {
  if (reply_ == nullptr || !reply_->peer().modern() || reply_->begun()) return false;
  refused_ = true;
  json::Writer& w = reply_->refusing().error_with_data(
      ErrorCode::kMissingClientCapability,
      {"the request needs client capability \"", name, "\", which its _meta did not declare"});
  w.begin_object();
  w.key("requiredCapabilities");
  w.begin_object();
  w.key(name);
  w.begin_object();
  w.end_object();
  w.end_object();
  w.end_object();
  reply_->end();
  return true;
}

// Ends the input-required result: what was asked, and the state for the retry.
bool Inputs::settle() {
  if (!asked_) return refused_;
  if (legacy()) return BridgeCode::ops(*server_)->settle(*server_, *this);  // (asked_: there is a bridge)
  json::Writer& w = reply_->result();
  if (listed_) w.end_object();  // inputRequests (absent when only keep() was called)
  const auto* ops = static_cast<const StateOps*>(FeatureOps::at(*server_, FeatureOps::kStateSlot));
  if (ops != nullptr) ops->write(*this, w);
  w.end_object();
  reply_->end();
  return true;
}

}  // namespace mcp
EMCP_NS_END
