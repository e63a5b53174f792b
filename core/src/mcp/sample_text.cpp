// Inputs::sample_text() and Server::sample_text(): the sampling request most tools need, without a
// params writer of their own. In its own file: an image that never asks a model links none of it.
#include "emcp/mcp/handlers.h"
#include "emcp/mcp/server.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

struct TextQuestion {
  StrView question;
  StrView system_prompt;
  uint32_t max_tokens;
};

// CreateMessageRequest params (schema.json, every revision since 2024-11-05): messages, maxTokens
// required; systemPrompt optional.
void write_text_question(json::Writer& w, const void* ctx) {
  const auto* q = static_cast<const TextQuestion*>(ctx);
  w.begin_object();
  w.key("messages");
  w.begin_array();
  w.begin_object();
  w.member_str("role", "user");
  w.key("content");
  w.begin_object();
  w.member_str("type", "text");
  w.member_str("text", q->question);
  w.end_object();
  w.end_object();
  w.end_array();
  if (!q->system_prompt.empty()) w.member_str("systemPrompt", q->system_prompt);
  w.member_int("maxTokens", q->max_tokens);
  w.end_object();
}

}  // namespace

bool Inputs::sample_text(StrView key, StrView question, uint32_t max_tokens, StrView system_prompt) {
  const TextQuestion q{question, system_prompt, max_tokens};
  return sample(key, &write_text_question, &q);
}

Status Server::sample_text(Session& s, StrView question, uint32_t max_tokens, ResponseFn done, void* ctx,
                           StrView system_prompt, uint32_t timeout_ms) {
  const TextQuestion q{question, system_prompt, max_tokens};  // written before sample() returns
  return sample(s, &write_text_question, &q, done, ctx, timeout_ms);
}

}  // namespace mcp
EMCP_NS_END
