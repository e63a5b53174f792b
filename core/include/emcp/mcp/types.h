// emcp/mcp/types.h - what an application declares: tools, resources, resource templates,
// prompts, and the server's identity. All of it is constant data (flash); build entries with
// the constexpr factories and modifiers, so a table reads like a declaration:
//
//   constexpr emcp::mcp::Tool kTools[] = {
//       emcp::mcp::Tool::make("read_temperature", &read_temperature)
//           .describe("Reads the die temperature in degrees Celsius")
//           .with_params(kReadParams)
//           .read_only(),
//   };
//
// Context: pure data; any context.
#ifndef EMCP_MCP_TYPES_H
#define EMCP_MCP_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/schema.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace mcp {

/// MCP protocol revisions emcp speaks, oldest first. The first four are the legacy era (a
/// session opened by initialize); 2026-07-28 is the modern, stateless era (each request says its
/// revision and the client's capabilities in `_meta`): emcp/mcp/revision.h.
enum class Version : uint8_t { k2024_11_05, k2025_03_26, k2025_06_18, k2025_11_25, k2026_07_28 };
/// The newest revision initialize can negotiate (and what it answers to an unknown one).
constexpr Version kLatestVersion = Version::k2025_11_25;
/// The newest revision of all (the modern era's).
constexpr Version kModernVersion = Version::k2026_07_28;
/// "2025-11-25" etc.
const char* version_str(Version v);
/// True (and *out set) for a revision emcp supports.
bool parse_version(StrView s, Version* out);

/// Log severities of RFC 5424, as MCP names them (lowest first).
enum class LogLevel : uint8_t { kDebug, kInfo, kNotice, kWarning, kError, kCritical, kAlert, kEmergency };
const char* log_level_str(LogLevel l);
/// The lists whose changes the server announces (notifications/<list>/list_changed).
enum class ListKind : uint8_t { kTools, kResources, kPrompts };
bool parse_log_level(StrView s, LogLevel* out);

enum class Role : uint8_t { kUser, kAssistant };

/// An icon a client may show (MCP 2025-11-25; left out for older clients).
struct Icon {
  const char* src;                 ///< URL or data: URI
  const char* mime_type = nullptr;
  const char* sizes = nullptr;     ///< e.g. "48x48", or "any"
  const char* theme = nullptr;     ///< "light" or "dark"
};

/// Writes "icons":[...] (nothing for an empty list).
void write_icons(json::Writer& w, Span<const Icon> icons);

/// Icons of a server, tool, resource, template or prompt, and the code that writes them:
/// Icons::of() sets both, so firmware without icons links no icon writer.
struct Icons {
  Span<const Icon> list;
  void (*write)(json::Writer& w, Span<const Icon> icons) = nullptr;
  template <size_t N>
  static constexpr Icons of(const Icon (&i)[N]) {
    return Icons{Span<const Icon>(i, N), &write_icons};
  }
  void write_to(json::Writer& w) const {
    if (write != nullptr) write(w, list);
  }
};

/// Optional annotations of content and resources (audience, priority, lastModified).
struct Annotations {
  double priority = -1;            ///< 0..1, negative: not given
  const char* last_modified = nullptr;  ///< ISO 8601 (2025-06-18 and later)
  bool for_user = false;           ///< audience includes "user"
  bool for_assistant = false;      ///< audience includes "assistant"
  bool any() const { return for_user || for_assistant || priority >= 0 || last_modified; }
};

/// The server's name and version, and what it tells clients at initialize.
struct ServerInfo {
  constexpr ServerInfo() = default;
  constexpr ServerInfo(const char* n, const char* v) : name(n), version(v) {}

  const char* name = "emcp";
  const char* version = "0.0.0";
  const char* title = nullptr;         ///< 2025-06-18 and later
  const char* description = nullptr;   ///< 2025-11-25
  const char* website_url = nullptr;   ///< 2025-11-25
  Icons icons;                         ///< 2025-11-25 (Icons::of(kIcons))
  const char* instructions = nullptr;  ///< hints for the model
};

class ToolCall;
class ResourceRead;
class PromptGet;
class Completion;

using ToolFn = void (*)(ToolCall& call);
using ReadFn = void (*)(ResourceRead& read);
using PromptFn = void (*)(PromptGet& get);
/// Offers completions for one argument or template variable (completion/complete).
using CompleteFn = void (*)(Completion& c);

enum class Hint : uint8_t { kUnset, kFalse, kTrue };

/// Whether a tool's calls may run as MCP tasks (Server::set_tasks(), emcp/mcp/tasks.h): never
/// (the default), when the client allows it, or only as a task (a client that cannot take one
/// is refused: -32021 at 2026-07-28, -32601 at 2025-11-25).
enum class TaskSupport : uint8_t { kForbidden, kOptional, kRequired };

struct Tool {
  const char* name = "";
  ToolFn handler = nullptr;
  const char* title = nullptr;
  const char* description = nullptr;
  const char* scope = nullptr;  ///< scopes a token must grant to use it (nullptr: none)
  Span<const Param> params;             ///< inputSchema properties (validated before the call);
                                        ///< set them with with_params(), which also sets `schema`
  Span<const Param> output;             ///< outputSchema properties (2025-06-18 and later)
  const char* input_schema_json = nullptr;   ///< raw inputSchema instead of `params`
  const char* output_schema_json = nullptr;  ///< raw outputSchema instead of `output`
  const char* annotation_title = nullptr;
  Hint read_only_hint = Hint::kUnset;
  Hint destructive_hint = Hint::kUnset;
  Hint idempotent_hint = Hint::kUnset;
  Hint open_world_hint = Hint::kUnset;
  TaskSupport task_support = TaskSupport::kForbidden;  ///< runs_as_task()
  Icons icons;
  const void* user = nullptr;           ///< application data for the handler (ToolCall::tool())
  const ParamSchema* schema = nullptr;  ///< set by with_params / with_output (see ParamSchema)

  static constexpr Tool make(const char* name, ToolFn fn) {
    Tool t;
    t.name = name;
    t.handler = fn;
    return t;
  }
  constexpr Tool describe(const char* d) const { Tool t = *this; t.description = d; return t; }
  /// Scopes a caller's token must grant (space-separated; emcp/auth/resource_server.h).
  constexpr Tool scoped(const char* sc) const { Tool t = *this; t.scope = sc; return t; }
  constexpr Tool titled(const char* s) const { Tool t = *this; t.title = s; return t; }
  template <size_t N>
  constexpr Tool with_params(const Param (&p)[N]) const {
    Tool t = *this;
    t.params = Span<const Param>(p, N);
    t.schema = &kParamSchema;
    return t;
  }
  template <size_t N>
  constexpr Tool with_output(const Param (&p)[N]) const {
    Tool t = *this;
    t.output = Span<const Param>(p, N);
    t.schema = &kParamSchema;
    return t;
  }
  constexpr Tool with_input_schema(const char* json) const { Tool t = *this; t.input_schema_json = json; return t; }
  constexpr Tool with_output_schema(const char* json) const { Tool t = *this; t.output_schema_json = json; return t; }
  /// Its calls may run as tasks: a call whose handler defers (ToolCall::defer()) becomes a
  /// task when the client allows it (emcp/mcp/tasks.h).
  constexpr Tool runs_as_task(TaskSupport s = TaskSupport::kOptional) const { Tool t = *this; t.task_support = s; return t; }
  /// The behaviour hints of its annotations (hints a client may show, never trust): readOnlyHint
  /// true (and so not destructive);
  constexpr Tool read_only() const { Tool t = *this; t.read_only_hint = Hint::kTrue; return t; }
  /// or it changes its environment (readOnlyHint false), destructively (destructiveHint: the
  /// protocol's default when not said) or not,
  constexpr Tool destructive(bool v = true) const {
    Tool t = *this;
    t.read_only_hint = Hint::kFalse;
    t.destructive_hint = v ? Hint::kTrue : Hint::kFalse;
    return t;
  }
  /// and calling it again with the same arguments has no further effect (idempotentHint) or not;
  constexpr Tool idempotent(bool v = true) const {
    Tool t = *this;
    t.read_only_hint = Hint::kFalse;
    t.idempotent_hint = v ? Hint::kTrue : Hint::kFalse;
    return t;
  }
  /// it reaches an open world (the internet) rather than a closed one (the device) or not.
  constexpr Tool open_world(bool v = true) const { Tool t = *this; t.open_world_hint = v ? Hint::kTrue : Hint::kFalse; return t; }
  constexpr Tool annotation_titled(const char* s) const { Tool t = *this; t.annotation_title = s; return t; }
  template <size_t N>
  constexpr Tool with_icons(const Icon (&i)[N]) const {
    Tool t = *this;
    t.icons = Icons::of(i);
    return t;
  }
  constexpr Tool with_user(const void* u) const { Tool t = *this; t.user = u; return t; }
};

struct Resource {
  const char* uri = "";
  const char* name = "";
  ReadFn read = nullptr;
  const char* title = nullptr;
  const char* description = nullptr;
  const char* scope = nullptr;  ///< scopes a token must grant to use it (nullptr: none)
  const char* mime_type = nullptr;
  int64_t size = -1;                    ///< bytes before encoding, negative: unknown
  Annotations annotations;
  Icons icons;
  const void* user = nullptr;

  static constexpr Resource make(const char* uri, const char* name, ReadFn fn) {
    Resource r;
    r.uri = uri;
    r.name = name;
    r.read = fn;
    return r;
  }
  constexpr Resource describe(const char* d) const { Resource r = *this; r.description = d; return r; }
  constexpr Resource scoped(const char* sc) const { Resource r = *this; r.scope = sc; return r; }
  constexpr Resource titled(const char* s) const { Resource r = *this; r.title = s; return r; }
  constexpr Resource mime(const char* m) const { Resource r = *this; r.mime_type = m; return r; }
  constexpr Resource sized(int64_t n) const { Resource r = *this; r.size = n; return r; }
  constexpr Resource annotated(Annotations a) const { Resource r = *this; r.annotations = a; return r; }
  template <size_t N>
  constexpr Resource with_icons(const Icon (&i)[N]) const {
    Resource r = *this;
    r.icons = Icons::of(i);
    return r;
  }
  constexpr Resource with_user(const void* u) const { Resource r = *this; r.user = u; return r; }
};

/// A family of resources named by an RFC 6570 template with simple {var} expressions, e.g.
/// "sensor://{id}/reading". resources/read of a matching URI calls `read` with the variables.
struct ResourceTemplate {
  const char* uri_template = "";
  const char* name = "";
  ReadFn read = nullptr;
  const char* title = nullptr;
  const char* description = nullptr;
  const char* scope = nullptr;  ///< scopes a token must grant to use it (nullptr: none)
  const char* mime_type = nullptr;
  Annotations annotations;
  CompleteFn complete = nullptr;        ///< completions for the template's variables
  Icons icons;
  const void* user = nullptr;

  static constexpr ResourceTemplate make(const char* tmpl, const char* name, ReadFn fn) {
    ResourceTemplate r;
    r.uri_template = tmpl;
    r.name = name;
    r.read = fn;
    return r;
  }
  constexpr ResourceTemplate describe(const char* d) const { ResourceTemplate r = *this; r.description = d; return r; }
  constexpr ResourceTemplate scoped(const char* sc) const { ResourceTemplate r = *this; r.scope = sc; return r; }
  constexpr ResourceTemplate titled(const char* s) const { ResourceTemplate r = *this; r.title = s; return r; }
  constexpr ResourceTemplate mime(const char* m) const { ResourceTemplate r = *this; r.mime_type = m; return r; }
  constexpr ResourceTemplate completed_by(CompleteFn f) const { ResourceTemplate r = *this; r.complete = f; return r; }
  template <size_t N>
  constexpr ResourceTemplate with_icons(const Icon (&i)[N]) const {
    ResourceTemplate r = *this;
    r.icons = Icons::of(i);
    return r;
  }
  constexpr ResourceTemplate with_user(const void* u) const { ResourceTemplate r = *this; r.user = u; return r; }
};

struct PromptArg {
  const char* name = "";
  const char* description = nullptr;
  bool is_required = false;             ///< required()
  const char* title = nullptr;
  CompleteFn complete = nullptr;        ///< completions for this argument

  static constexpr PromptArg make(const char* name, const char* description = nullptr) {
    PromptArg a;
    a.name = name;
    a.description = description;
    return a;
  }
  /// The client must give it (as Param::required()).
  constexpr PromptArg required() const { PromptArg a = *this; a.is_required = true; return a; }
  constexpr PromptArg titled(const char* s) const { PromptArg a = *this; a.title = s; return a; }
  constexpr PromptArg completed_by(CompleteFn f) const { PromptArg a = *this; a.complete = f; return a; }
};

struct Prompt {
  const char* name = "";
  PromptFn get = nullptr;
  const char* title = nullptr;
  const char* description = nullptr;
  const char* scope = nullptr;  ///< scopes a token must grant to use it (nullptr: none)
  Span<const PromptArg> args;
  Icons icons;
  const void* user = nullptr;

  static constexpr Prompt make(const char* name, PromptFn fn) {
    Prompt p;
    p.name = name;
    p.get = fn;
    return p;
  }
  constexpr Prompt describe(const char* d) const { Prompt p = *this; p.description = d; return p; }
  constexpr Prompt scoped(const char* sc) const { Prompt p = *this; p.scope = sc; return p; }
  constexpr Prompt titled(const char* s) const { Prompt p = *this; p.title = s; return p; }
  template <size_t N>
  constexpr Prompt with_args(const PromptArg (&a)[N]) const {
    Prompt p = *this;
    p.args = Span<const PromptArg>(a, N);
    return p;
  }
  template <size_t N>
  constexpr Prompt with_icons(const Icon (&i)[N]) const {
    Prompt p = *this;
    p.icons = Icons::of(i);
    return p;
  }
  constexpr Prompt with_user(const void* u) const { Prompt p = *this; p.user = u; return p; }
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_TYPES_H
