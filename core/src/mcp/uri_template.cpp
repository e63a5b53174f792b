#include "uri_template.h"

EMCP_NS_BEGIN
namespace mcp {

bool match_uri_template(StrView tmpl, StrView uri, StrView* names, StrView* values, uint8_t max,
                        uint8_t* count) {
  *count = 0;
  size_t t = 0;  // position in tmpl
  size_t u = 0;  // position in uri
  while (t < tmpl.size()) {
    if (tmpl[t] != '{') {
      if (u >= uri.size() || uri[u] != tmpl[t]) return false;
      ++t;
      ++u;
      continue;
    }
    // An expression {name} or {+name}.
    size_t close = t + 1;
    while (close < tmpl.size() && tmpl[close] != '}') ++close;
    if (close >= tmpl.size()) return false;  // unterminated
    bool reserved = false;
    size_t name_start = t + 1;
    if (name_start < close && tmpl[name_start] == '+') {
      reserved = true;
      ++name_start;
    }
    if (name_start >= close) return false;
    for (size_t i = name_start; i < close; ++i) {
      const char c = tmpl[i];
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '_' || c == '.';
      if (!ok) return false;  // another operator, or a list of variables
    }
    // The literal text that follows the expression (up to the next expression or the end).
    size_t lit_start = close + 1;
    size_t lit_end = lit_start;
    while (lit_end < tmpl.size() && tmpl[lit_end] != '{') ++lit_end;
    const StrView literal = tmpl.sub(lit_start, lit_end - lit_start);
    // The value: the shortest run (at least one char) after which the literal matches; at the
    // end of the template, the rest of the URI.
    size_t end = u;
    bool found = false;
    for (size_t e = u + 1; e <= uri.size(); ++e) {
      const char c = uri[e - 1];
      if (!reserved && (c == '/' || c == '?' || c == '#')) break;
      if (literal.empty()) {
        if (lit_end >= tmpl.size() && e != uri.size()) continue;  // take the rest
        end = e;
        found = true;
        if (lit_end >= tmpl.size()) break;
        break;
      }
      if (uri.sub(e, literal.size()) == literal) {
        end = e;
        found = true;
        break;
      }
    }
    if (!found) return false;
    if (*count < max) {
      names[*count] = tmpl.sub(name_start, close - name_start);
      values[*count] = uri.sub(u, end - u);
      ++*count;
    } else {
      return false;  // more variables than the caller can take
    }
    u = end;
    t = close + 1;
  }
  return u == uri.size();
}

}  // namespace mcp
EMCP_NS_END
