// emcp_json_bench - emcp's streaming JSON reader and JSON-RPC decoder against RapidJSON, yajl,
// cJSON and nlohmann::json, on an MCP tools/call request and a tools/list response.
//
// Modes (see bench/README.md for the method):
//   emcp_json_bench [--ir FILE] [--reps R] [--rep-ms MS] [--note TEXT] [--data FILE]
//       cross-check, then throughput (MB/s, best of R repetitions), then one Markdown table;
//       with --ir, the table also has instructions per byte (lines "PARSER INPUT VALUE" in
//       FILE, as scripts/bench writes them from callgrind) and the ratios to the peers.
//       --data FILE: also writes what it found and measured, one fact per line, for
//       bench/report.py (which writes the documents' figures):
//         parser ID IS_EMCP IS_DOM CHECKS_UTF8 LABEL
//         input ID BYTES SCALARS CONTAINERS KEYS        (as the reference parser counts them)
//         arena PARSER INPUT HIGH_WATER CAPACITY        (the emcp decoder rows)
//         mbps PARSER INPUT VALUE
//   emcp_json_bench --check       the cross-check only
//   emcp_json_bench --list        parser ids
//   emcp_json_bench --size INPUT  input size in bytes (INPUT: call or list)
//   emcp_json_bench --dump INPUT  the input text
//   emcp_json_bench --run PARSER INPUT N
//       parses INPUT N times with PARSER and nothing else (for callgrind's difference method)
//
// It prints figures; it never asserts timings. It exits non-zero only for correctness: a
// parser rejected an input, or found a different number of values than RapidJSON's SAX reader.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "inputs.h"
#include "parsers.h"

namespace {

using bench::Parser;
using bench::Tally;

struct Input {
  const char* id;     // command-line name
  const char* title;  // column title
  std::string text;
};

std::vector<Input> make_inputs() {
  std::vector<Input> in;
  in.push_back({"call", "tools/call", bench::make_tools_call()});
  in.push_back({"list", "tools/list", bench::make_tools_list()});
  return in;
}

std::vector<Parser> make_parsers() {
  std::vector<Parser> p;
  bench::add_emcp_parsers(&p);
  bench::add_peer_parsers(&p);
  return p;
}

const Parser* find_parser(const std::vector<Parser>& ps, const char* id) {
  for (const Parser& p : ps)
    if (strcmp(p.id, id) == 0) return &p;
  return nullptr;
}

const Input* find_input(const std::vector<Input>& ins, const char* id) {
  for (const Input& i : ins)
    if (strcmp(i.id, id) == 0) return &i;
  return nullptr;
}

volatile uint64_t g_sink;  // keeps every parse's result alive
FILE* g_data = nullptr;    // --data: machine-readable facts (see the top of this file)

// ---- cross-check -----------------------------------------------------------------------------

bool same(const Tally& a, const Tally& b) {
  return a.containers == b.containers && a.scalars == b.scalars && a.keys == b.keys &&
         a.key_bytes == b.key_bytes && a.string_bytes == b.string_bytes &&
         fabs(a.num_sum - b.num_sum) <= 1e-9 * fabs(b.num_sum);
}

// Every parser must accept both inputs and find the same document as RapidJSON's SAX reader.
bool cross_check(const std::vector<Parser>& ps, const std::vector<Input>& ins) {
  const Parser* ref = find_parser(ps, "rapidjson-sax");
  bool ok = true;
  printf("## Cross-check (reference: %s)\n\n", ref->label);
  for (const Input& in : ins) {
    Tally want;
    if (!ref->count(in.text, &want)) {
      printf("%s: the reference parser REJECTED the input\n", in.title);
      ok = false;
      continue;
    }
    printf("%s (%zu bytes):\n", in.title, in.text.size());
    if (g_data != nullptr)
      fprintf(g_data, "input %s %zu %llu %llu %llu\n", in.id, in.text.size(),
              static_cast<unsigned long long>(want.scalars),
              static_cast<unsigned long long>(want.containers),
              static_cast<unsigned long long>(want.keys));
    printf("  %-44s %6s %7s %5s %9s %9s %14s  %s\n", "parser", "values", "contnrs", "keys",
           "key bytes", "str bytes", "sum of numbers", "verdict");
    for (const Parser& p : ps) {
      Tally t;
      bench::emcp_arena_reset_high_water();
      const bool accepted = p.count(in.text, &t);
      const bool match = accepted && same(t, want);
      if (!match) ok = false;
      printf("  %-44s %6llu %7llu %5llu %9llu %9llu %14.6f  %s\n", p.label,
             static_cast<unsigned long long>(t.scalars + t.containers),
             static_cast<unsigned long long>(t.containers),
             static_cast<unsigned long long>(t.keys),
             static_cast<unsigned long long>(t.key_bytes),
             static_cast<unsigned long long>(t.string_bytes), t.num_sum,
             !accepted ? "REJECTED" : match ? "ok" : "MISMATCH");
      if (accepted && p.is_emcp && p.is_dom) {
        printf("  %-44s arena high water %zu of %zu bytes\n", "", bench::emcp_arena_high_water(),
               bench::emcp_arena_capacity());
        if (g_data != nullptr)
          fprintf(g_data, "arena %s %s %zu %zu\n", p.id, in.id, bench::emcp_arena_high_water(),
                  bench::emcp_arena_capacity());
      }
    }
    printf("\n");
  }
  printf("cross-check: %s\n\n", ok ? "all parsers accept both inputs and agree" : "FAILED");
  return ok;
}

// ---- timing ----------------------------------------------------------------------------------

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Seconds for `iters` parses, or a negative value if a parse failed.
double time_run(const Parser& p, const std::string& in, uint64_t iters) {
  uint64_t sink = 0;
  const double t0 = seconds_now();
  const bool ok = p.run(in, iters, &sink);
  const double t1 = seconds_now();
  g_sink = g_sink + sink;
  return ok ? t1 - t0 : -1.0;
}

// Iterations for one repetition of about `rep_s` seconds (doubling until a run takes a quarter
// of that, which also warms caches, branch predictors and the allocator); 0 if a parse failed.
uint64_t calibrate(const Parser& p, const std::string& in, double rep_s) {
  uint64_t iters = 1;
  double t = 0;
  for (;;) {
    t = time_run(p, in, iters);
    if (t < 0) return 0;
    if (t >= rep_s / 4 || iters >= (1ull << 40)) break;
    iters *= 2;
  }
  const uint64_t n = static_cast<uint64_t>(ceil(static_cast<double>(iters) * rep_s / t));
  return n == 0 ? 1 : n;
}

// ---- instructions per byte (from scripts/bench) ----------------------------------------------

using IrMap = std::map<std::string, double>;  // "parser input" -> instructions per byte

bool read_ir(const char* path, IrMap* out) {
  FILE* f = fopen(path, "r");
  if (f == nullptr) {
    fprintf(stderr, "cannot open %s\n", path);
    return false;
  }
  char line[512];
  while (fgets(line, sizeof line, f) != nullptr) {
    char parser[128], input[32];
    double v = 0;
    if (line[0] == '#') continue;
    if (sscanf(line, "%127s %31s %lf", parser, input, &v) == 3)
      (*out)[std::string(parser) + " " + input] = v;
  }
  fclose(f);
  return true;
}

const double* ir_of(const IrMap& ir, const Parser& p, const Input& in) {
  auto it = ir.find(std::string(p.id) + " " + in.id);
  return it == ir.end() ? nullptr : &it->second;
}

std::string fmt_mbps(double v) {
  char b[32];
  if (v < 0) return "FAILED";
  snprintf(b, sizeof b, v >= 100 ? "%.0f" : "%.1f", v);
  return b;
}

std::string fmt_ir(const double* v) {
  if (v == nullptr) return "n/a";
  char b[32];
  snprintf(b, sizeof b, "%.1f", *v);
  return b;
}

// emcp row `ours` against the best (lowest instructions per byte) peer row that `eligible`
// admits.
template <typename Pred>
void print_ratio(const std::vector<Parser>& ps, const IrMap& ir, const Input& in,
                 const char* ours, const char* what, Pred eligible) {
  const Parser* me = find_parser(ps, ours);
  const double* mine = ir_of(ir, *me, in);
  const Parser* best = nullptr;
  const double* best_v = nullptr;
  for (const Parser& p : ps) {
    if (p.is_emcp || !eligible(p)) continue;
    const double* v = ir_of(ir, p, in);
    if (v != nullptr && (best_v == nullptr || *v < *best_v)) {
      best = &p;
      best_v = v;
    }
  }
  if (mine == nullptr || best_v == nullptr) return;
  const double ratio = *mine / *best_v;
  printf("- %s, %s: %s / %s = %.1f / %.1f = **%.2fx** (%s)\n", in.title, what, me->label,
         best->label, *mine, *best_v, ratio, ratio <= 2.0 ? "within the 2x target" : "MISSES the 2x target");
}

int usage() {
  fprintf(stderr,
          "usage: emcp_json_bench [--ir FILE] [--reps R] [--rep-ms MS] [--note TEXT] [--data FILE]\n"
          "       emcp_json_bench --check | --list | --size INPUT | --dump INPUT\n"
          "       emcp_json_bench --run PARSER INPUT N      (INPUT: call or list)\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Input> inputs = make_inputs();
  const std::vector<Parser> parsers = make_parsers();

  if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
    for (const Parser& p : parsers) printf("%s\n", p.id);
    return 0;
  }
  if (argc == 3 && (strcmp(argv[1], "--size") == 0 || strcmp(argv[1], "--dump") == 0)) {
    const Input* in = find_input(inputs, argv[2]);
    if (in == nullptr) return usage();
    if (argv[1][2] == 's')
      printf("%zu\n", in->text.size());
    else
      printf("%s\n", in->text.c_str());
    return 0;
  }
  if (argc >= 2 && strcmp(argv[1], "--run") == 0) {
    if (argc != 5) return usage();
    const Parser* p = find_parser(parsers, argv[2]);
    const Input* in = find_input(inputs, argv[3]);
    const uint64_t n = strtoull(argv[4], nullptr, 10);
    if (p == nullptr || in == nullptr || n == 0) return usage();
    uint64_t sink = 0;
    if (!p->run(in->text, n, &sink)) {
      fprintf(stderr, "%s rejected %s\n", p->id, in->id);
      return 1;
    }
    printf("%llu\n", static_cast<unsigned long long>(sink));
    return 0;
  }

  bool check_only = false;
  const char* ir_path = nullptr;
  const char* note = nullptr;
  int reps = 7;
  double rep_s = 0.05;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--check") == 0) {
      check_only = true;
    } else if (strcmp(argv[i], "--ir") == 0 && i + 1 < argc) {
      ir_path = argv[++i];
    } else if (strcmp(argv[i], "--note") == 0 && i + 1 < argc) {
      note = argv[++i];
    } else if (strcmp(argv[i], "--data") == 0 && i + 1 < argc) {
      g_data = fopen(argv[++i], "w");
      if (g_data == nullptr) {
        fprintf(stderr, "cannot write %s\n", argv[i]);
        return 1;
      }
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--rep-ms") == 0 && i + 1 < argc) {
      rep_s = atof(argv[++i]) / 1000.0;
    } else {
      return usage();
    }
  }
  if (reps < 1 || rep_s <= 0) return usage();

  if (g_data != nullptr)
    for (const Parser& p : parsers)
      fprintf(g_data, "parser %s %d %d %d %s\n", p.id, p.is_emcp ? 1 : 0, p.is_dom ? 1 : 0,
              p.checks_utf8 ? 1 : 0, p.label);
  printf("# emcp JSON benchmark\n\n");
  if (note != nullptr) printf("%s\n\n", note);
  for (const Input& in : inputs) printf("- input %s: %zu bytes\n", in.title, in.text.size());
  printf("\n");
  if (!cross_check(parsers, inputs)) return 1;
  if (check_only) return 0;

  IrMap ir;
  if (ir_path != nullptr && !read_ir(ir_path, &ir)) return 1;

  // Throughput in MB/s (10^6 bytes per second of wall clock), the best (fastest) of `reps`
  // repetitions. The repetitions go round robin over all parsers and inputs, so a burst of load
  // from another process costs every row a repetition rather than one row all of them.
  fprintf(stderr, "timing: best of %d round-robin repetitions of ~%.0f ms per parser and input\n",
          reps, rep_s * 1000);
  struct Cell {
    const Parser* p;
    const Input* in;
    uint64_t iters;
    double best;  // seconds per parse
  };
  std::vector<Cell> cells;
  for (const Parser& p : parsers)
    for (const Input& in : inputs) cells.push_back({&p, &in, calibrate(p, in.text, rep_s), 1e300});
  bool failed = false;
  for (int r = 0; r < reps; ++r) {
    for (Cell& c : cells) {
      if (c.iters == 0) continue;
      const double s = time_run(*c.p, c.in->text, c.iters);
      if (s < 0) {
        c.iters = 0;
        continue;
      }
      const double per = s / static_cast<double>(c.iters);
      if (per < c.best) c.best = per;
    }
  }
  std::map<std::string, double> mbps;
  for (const Cell& c : cells) {
    const double v = c.iters == 0 ? -1.0 : static_cast<double>(c.in->text.size()) / c.best / 1e6;
    if (v < 0) failed = true;
    mbps[std::string(c.p->id) + " " + c.in->id] = v;
    if (g_data != nullptr) fprintf(g_data, "mbps %s %s %.3f\n", c.p->id, c.in->id, v);
    fprintf(stderr, "  %-20s %-5s %10s MB/s\n", c.p->id, c.in->id, fmt_mbps(v).c_str());
  }

  printf("## Results\n\n");
  printf("MB/s = 10^6 bytes per second, wall clock, best of %d; instr/byte from callgrind, "
         "(Ir(2N) - Ir(N)) / (N * bytes).\n", reps);
  // Wall-clock figures are only as good as the machine was quiet: say how busy it was.
  if (FILE* f = fopen("/proc/loadavg", "r")) {
    double l1 = 0, l5 = 0;
    if (fscanf(f, "%lf %lf", &l1, &l5) == 2)
      printf("Load average when the timing ended: %.2f (1 min), %.2f (5 min).\n", l1, l5);
    fclose(f);
  }
  printf("\n");
  printf("| parser | kind | %s MB/s | %s instr/byte | %s MB/s | %s instr/byte |\n",
         inputs[0].title, inputs[0].title, inputs[1].title, inputs[1].title);
  printf("|---|---|---:|---:|---:|---:|\n");
  for (const Parser& p : parsers) {
    printf("| %s | %s |", p.label, p.kind);
    for (const Input& in : inputs)
      printf(" %s | %s |", fmt_mbps(mbps[std::string(p.id) + " " + in.id]).c_str(),
             fmt_ir(ir_of(ir, p, in)).c_str());
    printf("\n");
  }
  printf("\n");

  if (!ir.empty()) {
    printf("## Ratios in instructions per byte (target: emcp within 2x of the best peer)\n\n");
    for (const Input& in : inputs) {
      print_ratio(parsers, ir, in, "emcp-reader", "reader vs best peer",
                  [](const Parser&) { return true; });
      print_ratio(parsers, ir, in, "emcp-reader", "reader vs best UTF-8-checking peer",
                  [](const Parser& p) { return p.checks_utf8; });
      print_ratio(parsers, ir, in, "emcp-decoder", "decoder vs best DOM peer",
                  [](const Parser& p) { return p.is_dom; });
      print_ratio(parsers, ir, in, "emcp-decoder", "decoder vs best UTF-8-checking DOM peer",
                  [](const Parser& p) { return p.is_dom && p.checks_utf8; });
    }
    printf("\n");
  }
  if (g_data != nullptr && fclose(g_data) != 0) failed = true;
  return failed ? 1 : 0;
}
