// Compiled with a different EMCP_JSON_MAX_DEPTH than the core library: the inline ABI
// namespace must make this program fail to link (test abi_mismatch_fails_to_link), instead of
// silently using a Reader whose layout differs from the library's.
#include "emcp/json/reader.h"

int main() {
  emcp::json::StaticReader<> r;
  r.feed("[]", 2);
  r.finish();
  return r.next() == emcp::json::Event::kArrayBegin ? 0 : 1;
}
