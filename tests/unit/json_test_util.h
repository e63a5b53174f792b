// Test support: drive a json::Reader over input cut into pieces and record its events in a
// canonical text form, without allocating (so it can run inside a NoHeapScope).
#ifndef EMCP_TESTS_JSON_TEST_UTIL_H
#define EMCP_TESTS_JSON_TEST_UTIL_H

#include <stdint.h>
#include <string.h>

#include <string>
#include <vector>

#include "emcp/json/reader.h"

namespace emcp_test {

/// Fixed-size text log (no heap).
struct EventLog {
  char buf[1 << 16];
  size_t len = 0;
  bool overflow = false;

  void clear() {
    len = 0;
    overflow = false;
  }
  void put(const char* s, size_t n) {
    if (n > sizeof(buf) - len) {
      overflow = true;
      n = sizeof(buf) - len;
    }
    memcpy(buf + len, s, n);
    len += n;
  }
  void put(const char* s) { put(s, strlen(s)); }
  void put_char(char c) { put(&c, 1); }
  void put_int(int64_t v) {
    char tmp[24];
    size_t n = 0;
    uint64_t u = v < 0 ? 0u - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    do {
      tmp[n++] = static_cast<char>('0' + u % 10);
      u /= 10;
    } while (u != 0);
    if (v < 0) put_char('-');
    while (n != 0) put_char(tmp[--n]);
  }
  void put_hex(uint64_t v) {
    static const char kHex[] = "0123456789abcdef";
    for (int shift = 60; shift >= 0; shift -= 4) put_char(kHex[(v >> shift) & 15]);
  }
  std::string str() const { return std::string(buf, len); }
};

struct Outcome {
  bool accepted = false;        // kDocumentEnd reached
  emcp::Status status = emcp::Status::kOk;
  uint64_t offset = 0;          // reader offset at the end (error position on failure)
  size_t events = 0;
};

/// Feeds `data` to `r` in pieces ending at each of `cuts` (ascending, < n), then the rest,
/// then finish(); logs every event. Does not allocate.
inline Outcome run_reader(emcp::json::Reader& r, const uint8_t* data, size_t n, const size_t* cuts,
                          size_t ncuts, EventLog& log) {
  using emcp::json::Event;
  r.reset();
  log.clear();
  Outcome out;
  bool in_string = false;
  size_t start = 0;
  for (size_t piece = 0; piece <= ncuts + 1; ++piece) {
    if (piece <= ncuts) {
      size_t stop = piece < ncuts ? cuts[piece] : n;
      r.feed(data + start, stop - start);
      start = stop;
    } else {
      r.finish();
    }
    for (;;) {
      Event e = r.next();
      if (e == Event::kNeedInput) break;
      ++out.events;
      if (e == Event::kError) {
        out.status = r.status();
        out.offset = r.offset();
        return out;
      }
      if (e == Event::kDocumentEnd) {
        out.accepted = true;
        out.offset = r.offset();
        return out;
      }
      switch (e) {
        case Event::kObjectBegin: log.put("{"); break;
        case Event::kObjectEnd: log.put("}"); break;
        case Event::kArrayBegin: log.put("["); break;
        case Event::kArrayEnd: log.put("]"); break;
        case Event::kKey:
          log.put("k\"");
          log.put(r.text().data(), r.text().size());
          log.put("\":");
          break;
        case Event::kStringPart:
        case Event::kString:
          if (!in_string) log.put("s\"");
          in_string = e == Event::kStringPart;
          log.put(r.text().data(), r.text().size());
          if (!in_string) log.put("\" ");
          break;
        case Event::kInt:
          log.put("i");
          log.put_int(r.int_value());
          log.put(" ");
          break;
        case Event::kDouble: {
          double d = r.double_value();
          uint64_t bits;
          memcpy(&bits, &d, sizeof bits);
          log.put("d");
          log.put_hex(bits);
          log.put(" ");
          break;
        }
        case Event::kTrue: log.put("T "); break;
        case Event::kFalse: log.put("F "); break;
        case Event::kNull: log.put("N "); break;
        default: log.put("?"); break;
      }
    }
  }
  out.status = emcp::Status::kInvalidState;  // the reader never finished: a bug
  return out;
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::vector<uint8_t> data;
  FILE* f = fopen(path.c_str(), "rb");
  if (!f) return data;
  uint8_t tmp[4096];
  size_t n;
  while ((n = fread(tmp, 1, sizeof tmp, f)) > 0) data.insert(data.end(), tmp, tmp + n);
  fclose(f);
  return data;
}


}  // namespace emcp_test

#endif
