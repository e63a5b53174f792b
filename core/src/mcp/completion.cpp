// Completion: completion/complete for prompt arguments and resource template variables.
#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- Completion ---------------------------------------------------------------------------------

StrView Completion::context(StrView name) const {
  return context_[name].as_string().value_or(StrView());
}

void Completion::add(StrView value) {
  if (count_ >= 100) {
    more_ = true;
    return;
  }
  w_->string(value);
  ++count_;
}

void Completion::add_matching(Span<const char* const> values) {
  for (const char* v : values)
    if (StrView(v).starts_with(prefix_)) add(v);
}

void ServerCode::on_complete(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  const Value ref = m.params["ref"];
  const Value arg = m.params["argument"];
  const Result<StrView> type = ref["type"].as_string();
  const Result<StrView> arg_name = arg["name"].as_string();
  const Result<StrView> arg_value = arg["value"].as_string();
  if (!type.ok() || !arg_name.ok() || !arg_value.ok()) {
    r.reject(ErrorCode::kInvalidParams,
            {"ref.type, argument.name and argument.value must be strings"});
    return;
  }
  CompleteFn fn = nullptr;
  if (type.value() == "ref/prompt") {
    const StrView name = ref["name"].as_string().value_or(StrView());
    const Prompt* prompt = prompt_named(sv, name);
    if (prompt == nullptr) {
      r.reject(ErrorCode::kInvalidParams, {"unknown prompt \"", name, "\""});
      return;
    }
    for (const PromptArg& a : prompt->args)
      if (arg_name.value().equals(a.name)) fn = a.complete;
  } else if (type.value() == "ref/resource") {
    const StrView uri = ref["uri"].as_string().value_or(StrView());
    const ResourceTemplate* tmpl = nullptr;
    for (const ResourceTemplate& t : sv.templates_)
      if (uri.equals(t.uri_template)) tmpl = &t;
    if (tmpl == nullptr) {
      r.reject(ErrorCode::kInvalidParams, {"unknown resource template \"", uri, "\""});
      return;
    }
    fn = tmpl->complete;
  } else {
    r.reject(ErrorCode::kInvalidParams, {"unknown reference type \"", type.value(), "\""});
    return;
  }
  json::Writer& w = r.result_object();
  w.key("completion");
  w.begin_object();
  w.key("values");
  w.begin_array();
  Completion c;
  c.w_ = &w;
  c.name_ = arg_name.value();
  c.prefix_ = arg_value.value();
  c.context_ = supports(r.peer().version, Feature::kCompletionContext) ? m.params["context"]["arguments"] : Value();
  if (fn) fn(c);
  w.end_array();
  if (c.more_) w.member_bool("hasMore", true);
  w.end_object();
  w.end_object();
  r.end();
}

}  // namespace mcp
EMCP_NS_END
