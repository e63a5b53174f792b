// bench/parsers.h - one uniform interface over every parser the benchmark compares.
#ifndef EMCP_BENCH_PARSERS_H
#define EMCP_BENCH_PARSERS_H

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace bench {

/// What a parser found in a document. The cross-check compares these between parsers.
struct Tally {
  uint64_t containers = 0;    ///< objects + arrays
  uint64_t scalars = 0;       ///< strings, numbers, booleans, nulls (keys not included)
  uint64_t keys = 0;          ///< object member names
  uint64_t key_bytes = 0;     ///< bytes of all keys, escapes decoded
  uint64_t string_bytes = 0;  ///< bytes of all string values, escapes decoded
  double num_sum = 0;         ///< sum of all numbers, in document order

  /// Mixes everything into one number (a sink that keeps the work from being optimised away).
  uint64_t mix() const {
    return containers * 1000003u ^ scalars * 10007u ^ keys * 101u ^ key_bytes ^
           (string_bytes << 20) ^ static_cast<uint64_t>(static_cast<int64_t>(num_sum));
  }
};

struct Parser {
  const char* id;     ///< command-line name (for --run)
  const char* label;  ///< table row label
  const char* kind;   ///< how it works: streaming/SAX/DOM, heap or not, UTF-8 validation
  bool is_emcp;       ///< one of ours (the rest are the peers)
  bool is_dom;        ///< builds a tree (emcp: the JSON-RPC decoder)
  bool checks_utf8;   ///< rejects invalid UTF-8 in strings
  /// Parses `in` once and fills `out` with what it found (untimed: DOM parsers walk their tree
  /// here). Returns false when the parser rejected the input.
  bool (*count)(const std::string& in, Tally* out);
  /// The measured loop: parses `in` `iters` times, doing the minimal per-value work of the
  /// parser's style (SAX/streaming: count values and sum lengths and numbers, as in count();
  /// DOM: build the tree, look at its root, free it). Adds a value derived from every parse to
  /// `*sink`. Returns false when a parse failed.
  bool (*run)(const std::string& in, uint64_t iters, uint64_t* sink);
};

/// emcp's reader (whole input and 256-byte chunks) and JSON-RPC decoder (same).
void add_emcp_parsers(std::vector<Parser>* out);
/// RapidJSON, yajl, cJSON, nlohmann::json.
void add_peer_parsers(std::vector<Parser>* out);

/// Arena of the emcp decoder rows: capacity and the largest use since the last reset.
size_t emcp_arena_capacity();
size_t emcp_arena_high_water();
void emcp_arena_reset_high_water();

}  // namespace bench

#endif  // EMCP_BENCH_PARSERS_H
