// Wire fixtures: tests/fixtures/mcp/*.jsonl hold, line by line, what a client sends ("> ")
// and exactly what the server must write back ("< "), plus commands ("! ") for the test app.
// Every "< " line is also checked against the official JSON schema of its revision by
// tests/mcp/fixtures_schema.test.mjs. Set EMCP_UPDATE_FIXTURES=1 to rewrite the "< " lines
// from what the server writes (then review the diff).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "emcp/transport/line.h"
#include "heap_guard.h"
#include "mcp_fixture_app.h"

namespace {

struct Capture {
  char buf[1 << 20];
  size_t len = 0;
  static emcp::Status write(void* ctx, const char* p, size_t n) {
    auto* c = static_cast<Capture*>(ctx);
    if (n > sizeof c->buf - c->len) return emcp::Status::kNoSpace;
    memcpy(c->buf + c->len, p, n);
    c->len += n;
    return emcp::Status::kOk;
  }
};

std::vector<std::string> split_lines(const char* p, size_t n) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < n; ++i) {
    if (p[i] == '\n') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(p[i]);
    }
  }
  return out;
}

const std::string kDir = std::string(EMCP_TESTS_DIR) + "/fixtures/mcp";

// Runs one fixture; returns the file rewritten with the actual outputs.
std::string run_fixture(const std::string& path, std::vector<std::string>* failures) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);

  static Capture capture;
  capture.len = 0;
  auto server = std::make_unique<emcp::mcp::Server>(fixture::info(), fixture::platform());
  fixture::install(*server);
  auto transport = std::make_unique<emcp::transport::StaticLineTransport<>>(*server, &Capture::write, &capture);

  std::string rewritten;
  size_t seen = 0;  // output bytes already matched
  size_t i = 0;
  while (i < lines.size()) {
    const std::string& l = lines[i];
    if (l.rfind("> ", 0) == 0 || l.rfind("! ", 0) == 0) {
      rewritten += l + "\n";
      if (l[0] == '>') {
        const std::string input = l.substr(2) + "\n";
        emcp_test::NoHeapScope no_heap;
        (void)transport->feed(input.data(), input.size());
      } else {
        const std::string cmd = l.substr(2);
        emcp_test::NoHeapScope no_heap;
        if (cmd == "complete_slow") (void)fixture::complete_slow();
        else if (cmd.rfind("advance ", 0) == 0) fixture::advance_ms(std::strtoull(cmd.c_str() + 8, nullptr, 10));
        else if (cmd == "poll") server->poll();
        else if (cmd == "change_tables") fixture::change_tables();
        else if (cmd.rfind("updated ", 0) == 0) server->resource_updated(emcp::StrView(cmd.data() + 8, cmd.size() - 8));
        else if (cmd == "end_listens") (void)server->end_listens();
        else if (cmd == "ping_client") (void)server->ping(transport->session(), nullptr, nullptr, 1000);
        else if (cmd == "end") (void)transport->finish();
        else if (cmd.rfind("page_size ", 0) == 0) server->set_page_size(static_cast<uint16_t>(std::atoi(cmd.c_str() + 10)));
        else failures->push_back(path + ": unknown command " + cmd);
      }
      ++i;
      std::vector<std::string> expected;
      while (i < lines.size() && lines[i].rfind("< ", 0) == 0) expected.push_back(lines[i++].substr(2));
      std::vector<std::string> actual = split_lines(capture.buf + seen, capture.len - seen);
      seen = capture.len;
      for (const std::string& a : actual) rewritten += "< " + a + "\n";
      if (actual != expected) {
        std::ostringstream msg;
        msg << path << ": after \"" << l.substr(0, 120) << "\"\n  expected:\n";
        for (auto& e : expected) msg << "    " << e << "\n";
        msg << "  actual:\n";
        for (auto& a : actual) msg << "    " << a << "\n";
        failures->push_back(msg.str());
      }
    } else {
      rewritten += l + "\n";  // comments, blank lines
      ++i;
    }
  }
  return rewritten;
}

}  // namespace

TEST(McpFixtures, EveryFixtureMatches) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kDir))
    if (e.path().extension() == ".jsonl") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 6u);
  const bool update = std::getenv("EMCP_UPDATE_FIXTURES") != nullptr;
  for (const std::string& f : files) {
    std::vector<std::string> failures;
    const std::string rewritten = run_fixture(f, &failures);
    if (update) {
      std::ofstream(f) << rewritten;
      continue;
    }
    for (const std::string& m : failures) ADD_FAILURE() << m;
  }
}
