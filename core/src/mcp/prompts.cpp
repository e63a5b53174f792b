// Prompts: prompts/list, prompts/get (PromptGet).
#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- PromptGet ----------------------------------------------------------------------------------

StrView PromptGet::arg(StrView name, StrView fallback) const {
  return args_[name].as_string().value_or(fallback);
}

ContentWriter& PromptGet::message(Role role) {
  if (failed_ || inputs_.owns_answer()) {
    content_ = ContentWriter();  // after invalid_params(): nothing more is written
    return content_;
  }
  json::Writer& w = reply_->result();
  if (!started_) {
    (void)reply_->result_object();
    if (prompt_->description) w.member_str("description", prompt_->description);
    w.key("messages");
    w.begin_array();
    started_ = true;
  }
  end_message();
  w.begin_object();
  w.member_str("role", role == Role::kUser ? "user" : "assistant");
  w.key("content");
  in_message_ = true;
  content_ = ContentWriter(w, reply_->peer().version, 1);
  return content_;
}

void PromptGet::end_message() {
  if (!in_message_) return;
  content_.text_end();
  if (content_.blocks() == 0) content_.text("");  // a message needs its one content block
  reply_->result().end_object();
  in_message_ = false;
}

void PromptGet::invalid_params(StrView message) {
  if (started_ || inputs_.owns_answer()) return;
  reply_->error(ErrorCode::kInvalidParams, {message});
  failed_ = true;
}

const FeatureOps FeatureOps::kPrompts = {&ServerCode::prompt_methods, nullptr};

// For a peer offered prompts; also completion/complete (2024-11-05 had it before the
// `completions` capability) when resources.cpp has not answered it.
bool ServerCode::prompt_methods(Server& sv, Session& s, const Message& m, Reply& r) {
  if (!r.peer().prompts) return false;
  const StrView method = m.method;
  // Every other method (tools/call the most frequent) told apart by its first letter.
  if (method.empty() || (method[0] != 'p' && method[0] != 'c')) return false;
  if (method == "prompts/list") on_prompts_list(sv, s, m, r);
  else if (method == "prompts/get") on_prompts_get(sv, s, m, r);
  else if (method == "completion/complete") on_complete(sv, s, m, r);
  else return false;
  return true;
}

void ServerCode::on_prompts_list(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, sv.prompts_.size(), &start)) return;
  json::Writer& w = begin_page(r, "prompts");
  size_t i = start;
  const Version v = r.peer().version;
  for (; i < sv.prompts_.size() && i < start + sv.page_size_; ++i) {
    const Prompt& p = sv.prompts_[i];
    w.begin_object();
    w.member_str("name", p.name);
    if (p.title && supports(v, Feature::kTitles)) w.member_str("title", p.title);
    if (p.description) w.member_str("description", p.description);
    if (!p.args.empty()) {
      w.key("arguments");
      w.begin_array();
      for (const PromptArg& a : p.args) {
        w.begin_object();
        w.member_str("name", a.name);
        if (a.title && supports(v, Feature::kTitles)) w.member_str("title", a.title);
        if (a.description) w.member_str("description", a.description);
        if (a.is_required) w.member_bool("required", true);
        w.end_object();
      }
      w.end_array();
    }
    if (supports(v, Feature::kIcons)) p.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, sv.prompts_.size());
}

void ServerCode::on_prompts_get(Server& sv, Session& s, const Message& m, Reply& r) {
  const Result<StrView> name = m.params["name"].as_string();
  if (!name.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"name must be a string"});
    return;
  }
  const Prompt* prompt = prompt_named(sv, name.value());
  if (prompt == nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"unknown prompt \"", name.value(), "\""});
    return;
  }
  const Value args = m.params["arguments"];
  if (args.exists() && !args.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"arguments must be an object"});
    return;
  }
  for (const PromptArg& a : prompt->args) {
    const Value v = args[a.name];
    if (!v.exists()) {
      if (a.is_required) {
        r.reject(ErrorCode::kInvalidParams,
                {"argument \"", a.name, "\" of prompt \"", prompt->name, "\" is required"});
        return;
      }
    } else if (!v.is_string()) {
      r.reject(ErrorCode::kInvalidParams, {"argument \"", a.name, "\" must be a string"});
      return;
    }
  }
  PromptGet get;
  get.server_ = &sv;
  get.session_ = &s;
  get.prompt_ = prompt;
  get.args_ = args;
  get.reply_ = &r;
  if (!get.inputs_.begin(sv, r, m)) return;  // inputResponses or requestState refused
  if (prompt->get) prompt->get(get);
  if (get.failed_ || get.inputs_.settle()) return;
  json::Writer& w = r.result();
  if (!get.started_) {
    (void)r.result_object();
    if (prompt->description) w.member_str("description", prompt->description);
    w.key("messages");
    w.begin_array();
  }
  get.end_message();
  w.end_array();
  w.end_object();
  r.end();
}

}  // namespace mcp
EMCP_NS_END
