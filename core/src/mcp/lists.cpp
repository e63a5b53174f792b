// Pagination of the */list results: cursors and pages.
#include "server_internal.h"

#include "emcp/json/number.h"

EMCP_NS_BEGIN
namespace mcp {

bool ServerCode::page_start(const Message& m, Reply& r, size_t total, size_t* start) {
  *start = 0;
  const Value c = m.params["cursor"];
  if (!c.exists() || c.is_null()) return true;
  const Result<StrView> cs = c.as_string();
  // "p" and at most 9 digits: no overflow even with a 32-bit size_t.
  bool ok = cs.ok() && cs.value().size() >= 2 && cs.value().size() <= 10 && cs.value()[0] == 'p';
  size_t n = 0;
  if (ok) {
    for (size_t i = 1; i < cs.value().size() && ok; ++i) {
      const char ch = cs.value()[i];
      ok = ch >= '0' && ch <= '9';
      n = n * 10 + static_cast<size_t>(ch - '0');
    }
  }
  if (!ok || n > total) {
    r.reject(ErrorCode::kInvalidParams, {"unknown cursor"});
    return false;
  }
  *start = n;
  return true;
}

// {"<key>":[ ... the caller writes entries ... then end_page()
json::Writer& begin_page(Reply& r, const char* key) {
  json::Writer& w = r.result_object();
  w.key(key);
  w.begin_array();
  return w;
}

void end_page(Reply& r, json::Writer& w, size_t next, size_t total) {
  w.end_array();
  if (next < total) {
    char buf[24];
    buf[0] = 'p';
    const size_t n = json::format_uint64(next, buf + 1);
    w.member_str("nextCursor", StrView(buf, n + 1));
  }
  r.cache_hints(Reply::Cacheable::kList);
  w.end_object();
  r.end();
}

}  // namespace mcp
EMCP_NS_END
