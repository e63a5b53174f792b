// The established parsers, as Debian ships them: RapidJSON (SAX Reader and DOM Document),
// yajl (C streaming push parser), cJSON (C DOM) and nlohmann::json (DOM and SAX).
//
// Each streaming/SAX row does the same minimal per-value work as the emcp reader row (count
// values, sum key and string lengths and numbers); each DOM row builds its tree, looks at the
// root and frees it. Nothing is reused across parses that a fresh request would not have
// (RapidJSON's Reader and its small parse stack are reused, as a server would).
#include <cjson/cJSON.h>
#include <string.h>
#include <yajl/yajl_parse.h>

#include <nlohmann/json.hpp>
#include <rapidjson/document.h>
#include <rapidjson/reader.h>

#include "parsers.h"

namespace bench {

namespace {

// ---- RapidJSON -------------------------------------------------------------------------------

struct RjHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, RjHandler> {
  Tally* t;
  explicit RjHandler(Tally* tally) : t(tally) {}
  bool Null() { return ++t->scalars, true; }
  bool Bool(bool) { return ++t->scalars, true; }
  bool Int(int i) { return num(static_cast<double>(i)); }
  bool Uint(unsigned u) { return num(static_cast<double>(u)); }
  bool Int64(int64_t i) { return num(static_cast<double>(i)); }
  bool Uint64(uint64_t u) { return num(static_cast<double>(u)); }
  bool Double(double d) { return num(d); }
  bool String(const char*, rapidjson::SizeType len, bool) {
    ++t->scalars;
    t->string_bytes += len;
    return true;
  }
  bool Key(const char*, rapidjson::SizeType len, bool) {
    ++t->keys;
    t->key_bytes += len;
    return true;
  }
  bool StartObject() { return ++t->containers, true; }
  bool EndObject(rapidjson::SizeType) { return true; }
  bool StartArray() { return ++t->containers, true; }
  bool EndArray(rapidjson::SizeType) { return true; }
  bool num(double d) {
    ++t->scalars;
    t->num_sum += d;
    return true;
  }
};

rapidjson::Reader g_rj_reader;

template <unsigned Flags>
bool rj_sax_parse(const std::string& in, Tally* t) {
  RjHandler h(t);
  rapidjson::StringStream ss(in.c_str());  // the NUL after the text ends the stream
  return !g_rj_reader.Parse<Flags>(ss, h).IsError();
}

template <unsigned Flags>
bool rj_sax_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    Tally t;
    if (!rj_sax_parse<Flags>(in, &t)) return false;
    *sink += t.mix();
  }
  return true;
}

void rj_walk(const rapidjson::Value& v, Tally* t) {
  if (v.IsObject()) {
    ++t->containers;
    for (auto it = v.MemberBegin(); it != v.MemberEnd(); ++it) {
      ++t->keys;
      t->key_bytes += it->name.GetStringLength();
      rj_walk(it->value, t);
    }
  } else if (v.IsArray()) {
    ++t->containers;
    for (const rapidjson::Value& e : v.GetArray()) rj_walk(e, t);
  } else if (v.IsString()) {
    ++t->scalars;
    t->string_bytes += v.GetStringLength();
  } else if (v.IsNumber()) {
    ++t->scalars;
    t->num_sum += v.IsInt64() ? static_cast<double>(v.GetInt64()) : v.GetDouble();
  } else {
    ++t->scalars;
  }
}

template <unsigned Flags>
bool rj_dom_count(const std::string& in, Tally* t) {
  rapidjson::Document d;
  d.Parse<Flags>(in.data(), in.size());
  if (d.HasParseError()) return false;
  rj_walk(d, t);
  return true;
}

template <unsigned Flags>
bool rj_dom_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    rapidjson::Document d;  // a fresh document (and memory pool) per message
    d.Parse<Flags>(in.data(), in.size());
    if (d.HasParseError() || !d.IsObject()) return false;
    *sink += d.MemberCount();
  }
  return true;
}

// ---- yajl ------------------------------------------------------------------------------------

Tally* yt(void* ctx) { return static_cast<Tally*>(ctx); }
int y_null(void* c) { return ++yt(c)->scalars, 1; }
int y_bool(void* c, int) { return ++yt(c)->scalars, 1; }
int y_int(void* c, long long i) {
  ++yt(c)->scalars;
  yt(c)->num_sum += static_cast<double>(i);
  return 1;
}
int y_double(void* c, double d) {
  ++yt(c)->scalars;
  yt(c)->num_sum += d;
  return 1;
}
int y_string(void* c, const unsigned char*, size_t len) {
  ++yt(c)->scalars;
  yt(c)->string_bytes += len;
  return 1;
}
int y_key(void* c, const unsigned char*, size_t len) {
  ++yt(c)->keys;
  yt(c)->key_bytes += len;
  return 1;
}
int y_start(void* c) { return ++yt(c)->containers, 1; }
int y_end(void*) { return 1; }

const yajl_callbacks kYajlCallbacks = {
    y_null, y_bool, y_int, y_double, nullptr /* yajl_number: use integer/double */,
    y_string, y_start, y_key, y_end, y_start, y_end,
};

// A yajl handle cannot be reset, so each document gets a fresh one (yajl_alloc: heap).
// UTF-8 validation is on (yajl's default).
bool yajl_parse_doc(const std::string& in, Tally* t) {
  yajl_handle h = yajl_alloc(&kYajlCallbacks, nullptr, t);
  if (h == nullptr) return false;
  bool ok = yajl_parse(h, reinterpret_cast<const unsigned char*>(in.data()), in.size()) ==
                yajl_status_ok &&
            yajl_complete_parse(h) == yajl_status_ok;
  yajl_free(h);
  return ok;
}

bool yajl_count(const std::string& in, Tally* t) { return yajl_parse_doc(in, t); }

bool yajl_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    Tally t;
    if (!yajl_parse_doc(in, &t)) return false;
    *sink += t.mix();
  }
  return true;
}

// ---- cJSON -----------------------------------------------------------------------------------

void cj_walk(const cJSON* v, Tally* t) {
  if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
    ++t->containers;
    const bool obj = cJSON_IsObject(v);
    for (const cJSON* c = v->child; c != nullptr; c = c->next) {
      if (obj) {
        ++t->keys;
        t->key_bytes += strlen(c->string);
      }
      cj_walk(c, t);
    }
  } else if (cJSON_IsString(v)) {
    ++t->scalars;
    t->string_bytes += strlen(v->valuestring);
  } else if (cJSON_IsNumber(v)) {
    ++t->scalars;
    t->num_sum += v->valuedouble;
  } else {
    ++t->scalars;
  }
}

bool cjson_count(const std::string& in, Tally* t) {
  cJSON* root = cJSON_ParseWithLength(in.data(), in.size());
  if (root == nullptr) return false;
  cj_walk(root, t);
  cJSON_Delete(root);
  return true;
}

bool cjson_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    cJSON* root = cJSON_ParseWithLength(in.data(), in.size());
    if (root == nullptr || !cJSON_IsObject(root)) return false;
    *sink += reinterpret_cast<uintptr_t>(root->child) & 0xff;
    cJSON_Delete(root);
  }
  return true;
}

// ---- nlohmann::json --------------------------------------------------------------------------

using nlohmann::json;

void nl_walk(const json& v, Tally* t) {
  if (v.is_object()) {
    ++t->containers;
    for (auto it = v.begin(); it != v.end(); ++it) {
      ++t->keys;
      t->key_bytes += it.key().size();
      nl_walk(it.value(), t);
    }
  } else if (v.is_array()) {
    ++t->containers;
    for (const json& e : v) nl_walk(e, t);
  } else if (v.is_string()) {
    ++t->scalars;
    t->string_bytes += v.get_ref<const std::string&>().size();
  } else if (v.is_number()) {
    ++t->scalars;
    t->num_sum += v.get<double>();
  } else {
    ++t->scalars;
  }
}

bool nl_dom_count(const std::string& in, Tally* t) {
  json j = json::parse(in.begin(), in.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return false;
  nl_walk(j, t);
  return true;
}

bool nl_dom_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    json j = json::parse(in.begin(), in.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return false;
    *sink += j.size();
  }
  return true;
}

struct NlSax {
  Tally* t;
  bool null() { return ++t->scalars, true; }
  bool boolean(bool) { return ++t->scalars, true; }
  bool number_integer(json::number_integer_t i) { return num(static_cast<double>(i)); }
  bool number_unsigned(json::number_unsigned_t u) { return num(static_cast<double>(u)); }
  bool number_float(json::number_float_t d, const json::string_t&) { return num(d); }
  bool string(json::string_t& s) {
    ++t->scalars;
    t->string_bytes += s.size();
    return true;
  }
  bool binary(json::binary_t&) { return false; }
  bool start_object(std::size_t) { return ++t->containers, true; }
  bool key(json::string_t& k) {
    ++t->keys;
    t->key_bytes += k.size();
    return true;
  }
  bool end_object() { return true; }
  bool start_array(std::size_t) { return ++t->containers, true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }
  bool num(double d) {
    ++t->scalars;
    t->num_sum += d;
    return true;
  }
};

bool nl_sax_parse(const std::string& in, Tally* t) {
  NlSax sax{t};
  return json::sax_parse(in.begin(), in.end(), &sax);
}

bool nl_sax_count(const std::string& in, Tally* t) { return nl_sax_parse(in, t); }

bool nl_sax_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    Tally t;
    if (!nl_sax_parse(in, &t)) return false;
    *sink += t.mix();
  }
  return true;
}

constexpr unsigned kRjDefault = rapidjson::kParseDefaultFlags;
constexpr unsigned kRjValidate = rapidjson::kParseDefaultFlags | rapidjson::kParseValidateEncodingFlag;

}  // namespace

void add_peer_parsers(std::vector<Parser>* out) {
  //              id, label, kind, is_emcp, is_dom, checks_utf8, count, run
  out->push_back({"rapidjson-sax", "RapidJSON SAX Reader (default flags)",
                  "SAX pull over whole input, heap scratch, no UTF-8 check", false, false, false,
                  rj_sax_parse<kRjDefault>, rj_sax_run<kRjDefault>});
  out->push_back({"rapidjson-sax-utf8", "RapidJSON SAX Reader + ValidateEncoding",
                  "SAX pull over whole input, heap scratch, UTF-8 checked", false, false, true,
                  rj_sax_parse<kRjValidate>, rj_sax_run<kRjValidate>});
  out->push_back({"rapidjson-dom", "RapidJSON Document::Parse (default flags)",
                  "DOM, heap, no UTF-8 check", false, true, false, rj_dom_count<kRjDefault>,
                  rj_dom_run<kRjDefault>});
  out->push_back({"rapidjson-dom-utf8", "RapidJSON Document::Parse + ValidateEncoding",
                  "DOM, heap, UTF-8 checked", false, true, true, rj_dom_count<kRjValidate>,
                  rj_dom_run<kRjValidate>});
  out->push_back({"yajl", "yajl 2 yajl_parse (callbacks)", "streaming push, heap, UTF-8 checked",
                  false, false, true, yajl_count, yajl_run});
  out->push_back({"cjson", "cJSON cJSON_ParseWithLength", "DOM, heap, no UTF-8 check", false,
                  true, false, cjson_count, cjson_run});
  out->push_back({"nlohmann-dom", "nlohmann::json::parse", "DOM, heap, UTF-8 checked", false,
                  true, true, nl_dom_count, nl_dom_run});
  out->push_back({"nlohmann-sax", "nlohmann::json::sax_parse",
                  "SAX pull over whole input, heap, UTF-8 checked", false, false, true,
                  nl_sax_count, nl_sax_run});
}

}  // namespace bench
