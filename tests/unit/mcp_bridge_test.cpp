// The InputBridge: one handler asks clients of both eras through Inputs. A 2025-11-25 client is
// asked with server-to-client requests and the handler runs again with the answers; a
// 2026-07-28 client gets input-required results. Each test runs the server inside a
// NoHeapScope; the exact bytes each era's client sees are asserted, and the handler's final
// answer must be the same for both eras.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gtest/gtest.h>
#include <mbedtls/md.h>

#include <string>
#include <string_view>

#include "emcp/mcp/input_bridge.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "heap_guard.h"
#include "mcp_fixture_app.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::StrView;
using emcp::mcp::Inputs;
using emcp::mcp::Param;
using emcp::mcp::Prompt;
using emcp::mcp::PromptGet;
using emcp::mcp::ResourceRead;
using emcp::mcp::ResourceTemplate;
using emcp::mcp::Server;
using emcp::mcp::Tool;
using emcp::mcp::ToolCall;
using emcp::json::Value;
using namespace std::string_view_literals;

namespace {

using Out = emcp_test::FixedText<1 << 15>;

void feed(emcp::transport::LineTransport& t, std::string_view s) {
  emcp_test::NoHeapScope no_heap;
  (void)t.feed(s.data(), s.size());
}

constexpr Param kNameForm[] = {Param::string("name").required()};

// A clock of this file's own (the fixture's is shared with other tests), the fixture's random
// bytes (the requestState key is drawn once per process: the wire fixtures expect theirs).
uint64_t g_now = 1000;
const emcp::Platform kPlatform{[] { return g_now; }, fixture::platform().random};

// greet: one question, and a marker kept for the next round.
void greet(ToolCall& c) {
  const Value name = c.input().accepted("who")["name"];
  const bool marked = c.input().state().size() == 4 && memcmp(c.input().state().data(), "mark", 4) == 0;
  if (name.is_string() && marked)
    return c.text({"Hello, ", name.as_string().value(), " from ", c.str("place", "nowhere"), " (round ",
                   static_cast<long long>(c.input().round()), ")"});
  if (!c.input().elicit("who", "Whom to greet?", kNameForm) || !c.input().keep("mark", 4))
    return c.fail({"cannot ask: ", c.input().why_not()});
}
// survey: three questions in one round, then a fourth in a second round.
void survey(ToolCall& c) {
  Inputs& in = c.input();
  if (in.round() == 0) {
    if (!in.elicit("who", "Your name?", kNameForm) || !in.list_roots("roots") || !in.sample("model", &fixture::write_ask_params, nullptr))
      c.fail({"cannot ask: ", in.why_not()});
    return;
  }
  if (in.round() == 1) {
    const bool ok = in.accepted("who")["name"].is_string() && in.answer("roots")["roots"].is_array() &&
                    in.answer("model")["content"]["text"].is_string();
    if (!ok) return c.fail("the answers are incomplete");
    char keep[40];
    const size_t n = emcp::mcp::format_text(
        keep, sizeof keep, {in.accepted("who")["name"].as_string().value(), "/",
                            static_cast<long long>(in.answer("roots")["roots"].size())});
    if (!in.keep(keep, n) || !in.elicit("sure", "Sure?", kNameForm)) c.fail({"cannot ask again: ", in.why_not()});
    return;
  }
  c.text({StrView(reinterpret_cast<const char*>(in.state().data()), in.state().size()), " ",
          in.answer("sure")["action"].as_string().value_or("?"), " ",
          static_cast<long long>(in.round())});
}
// noisy: asks the user, nothing else (the answer ends up too large to keep, or is refused).
void noisy(ToolCall& c) {
  if (c.input().answer("a").exists() && c.input().answer("b").exists()) return c.text("both");
  if (!c.input().list_roots("a") || !c.input().list_roots("b")) c.fail({"cannot ask: ", c.input().why_not()});
}
constexpr Param kGreetParams[] = {Param::string("place"), Param::string("pad")};
constexpr Tool kTools[] = {
    Tool::make("greet", &greet).with_params(kGreetParams),
    Tool::make("survey", &survey),
    Tool::make("noisy", &noisy),
};

void ask_prompt(PromptGet& p) {
  const Value name = p.input().accepted("who")["name"];
  if (!name.is_string()) {
    if (!p.input().elicit("who", "Whom?", kNameForm)) p.user({"nobody: ", p.input().why_not()});
    return;
  }
  p.user({"Greet ", name.as_string().value()});
}
constexpr Prompt kPrompts[] = {Prompt::make("ask", &ask_prompt)};

void read_root(ResourceRead& r) {
  const Value roots = r.input().answer("roots")["roots"];
  if (!roots.is_array()) {
    if (!r.input().list_roots("roots")) r.text({"no roots: ", r.input().why_not()});
    return;
  }
  r.text({"first root ", roots.at(0)["uri"].as_string().value_or("?"), " for ", r.var("n")});
}
constexpr ResourceTemplate kTemplates[] = {ResourceTemplate::make("root://{n}", "root", &read_root)};

constexpr std::string_view kInit =
    R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"t","version":"1"}}})" "\n"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n";

// A server with the bridge (2 slots of 1 KiB) and a 2025-11-25 stdio session.
struct Rig {
  Out out;
  emcp::mcp::StaticInputBridge<2, 1024> bridge;
  Server server{fixture::info(), kPlatform};
  emcp::transport::StaticLineTransport<> t{server, &Out::write, &out};
  explicit Rig(bool with_bridge = true, std::string_view init = kInit) {
    server.set_tools(kTools);
    server.set_prompts(kPrompts);
    server.set_templates(kTemplates);
    if (with_bridge) server.set_input_bridge(bridge);
    feed(t, init);
    (void)out.take();
  }
  std::string_view send(std::string_view line) {
    feed(t, line);
    return out.take();
  }
};

// A 2026-07-28 request's _meta with every capability.
#define MODERN_META                                                                                  \
  R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":)" \
  R"({"elicitation":{},"sampling":{},"roots":{}}})"

// The text of a tool result's first block.
std::string_view text_of(std::string_view out) {
  const size_t at = out.find(R"("text":")");
  if (at == std::string_view::npos) return "";
  return out.substr(at + 8, out.find('"', at + 8) - at - 8);
}

}  // namespace

TEST(McpBridge, ALegacyClientIsAskedAndTheHandlerRunsAgain) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":"g","method":"tools/call","params":{"name":"greet","arguments":{"place":"Paris"},"_meta":{"progressToken":7}}})" "\n"),
            R"({"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"form","message":"Whom to greet?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 1u);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Ada"}}})" "\n"),
            R"x({"jsonrpc":"2.0","id":"g","result":{"content":[{"type":"text","text":"Hello, Ada from Paris (round 1)"}]}})x" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
  // The same handler, a 2026-07-28 client: the same answer after its retry.
  const std::string_view first = rig.send(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"place":"Paris"},)" MODERN_META "}}\n");
  ASSERT_NE(first.find(R"("resultType":"input_required")"), std::string_view::npos) << first;
  const size_t at = first.find(R"("requestState":")");
  ASSERT_NE(at, std::string_view::npos);
  emcp_test::FixedText<1024> retry;
  retry.append(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"place":"Paris"},)"
               R"("inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"requestState":")");
  retry.append(first.substr(at + 16, first.find('"', at + 16) - at - 16));
  retry.append(R"(",)" MODERN_META "}}\n");
  EXPECT_EQ(text_of(rig.send(retry.view())), "Hello, Ada from Paris (round 1)");
}

TEST(McpBridge, QuestionsOfARoundAnsweredInAnyOrderThenASecondRound) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"survey"}})" "\n"),
            R"({"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{"mode":"form","message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}})" "\n"
            R"({"jsonrpc":"2.0","id":2,"method":"roots/list"})" "\n"
            R"({"jsonrpc":"2.0","id":3,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Say something"}}],"maxTokens":10}})" "\n"sv);
  // The last answer first; nothing is answered until all three are in.
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":3,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}})" "\n"), ""sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":2,"result":{"roots":[{"uri":"file:///a"},{"uri":"file:///b"}]}})" "\n"), ""sv);
  // The last one runs round 1, which keeps state and asks again.
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Bo"}}})" "\n"),
            R"({"jsonrpc":"2.0","id":4,"method":"elicitation/create","params":{"mode":"form","message":"Sure?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 1u);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":4,"result":{"action":"decline"}})" "\n"),
            R"({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"Bo/2 decline 2"}]}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
  EXPECT_GT(rig.bridge.arena_high_water(), 0u);
}

TEST(McpBridge, ARefusedOrUnansweredQuestionEndsTheCallAndCancelsTheOthers) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  (void)rig.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"survey"}})" "\n");
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no roots here"}})" "\n"),
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"another question of the request was not answered"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"another question of the request was not answered"}})" "\n"
            R"({"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"The client refused the roots/list request: no roots here"}],"isError":true}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
  // Late answers to the cancelled questions are ignored.
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Bo"}}})" "\n"), ""sv);
  // Timeout (the elicitation's, 300 s): the call ends with an error.
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet"}})" "\n").substr(0, 40),
            R"({"jsonrpc":"2.0","id":4,"method":"elicit)"sv);
  g_now += 300001;
  rig.server.poll();
  EXPECT_EQ(rig.out.take(),
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4,"reason":"timeout"}})" "\n"
            R"({"jsonrpc":"2.0","id":6,"result":{"content":[{"type":"text","text":"The client did not answer the elicitation/create request in time."}],"isError":true}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
}

TEST(McpBridge, TheClientCancelsTheCall) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  (void)rig.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"survey"}})" "\n");
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Bo"}}})" "\n"), ""sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})" "\n"),
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the request was cancelled"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"the request was cancelled"}})" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":2,"result":{"roots":[]}})" "\n"), ""sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":9,"method":"ping"})" "\n"), R"({"jsonrpc":"2.0","id":9,"result":{}})" "\n"sv);
}

TEST(McpBridge, PromptsAndResourcesAskToo) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":7,"method":"prompts/get","params":{"name":"ask"}})" "\n").substr(0, 56),
            R"({"jsonrpc":"2.0","id":1,"method":"elicitation/create","p)"sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"Cy"}}})" "\n"),
            R"({"jsonrpc":"2.0","id":7,"result":{"messages":[{"role":"user","content":{"type":"text","text":"Greet Cy"}}]}})" "\n"sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":8,"method":"resources/read","params":{"uri":"root://4"}})" "\n"),
            R"({"jsonrpc":"2.0","id":2,"method":"roots/list"})" "\n"sv);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":2,"result":{"roots":[{"uri":"file:///r"}]}})" "\n"),
            R"({"jsonrpc":"2.0","id":8,"result":{"contents":[{"uri":"root://4","text":"first root file:///r for 4"}]}})" "\n"sv);
  // A refusal is -32603 for them.
  (void)rig.send(R"({"jsonrpc":"2.0","id":9,"method":"prompts/get","params":{"name":"ask"}})" "\n");
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"user said no"}})" "\n"),
            R"({"jsonrpc":"2.0","id":9,"error":{"code":-32603,"message":"The client refused the elicitation/create request: user said no"}})" "\n"sv);
}

TEST(McpBridge, LimitsGiveClearAnswers) {
  const std::string pad(1100, 'x');
  const std::string big_call = R"({"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"name":"greet","arguments":{"pad":")" + pad + R"("}}})" "\n";
  const std::string big_roots = R"({"jsonrpc":"2.0","id":3,"result":{"roots":[{"uri":"file:///)" + pad + R"("}]}})" "\n";
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  // Arguments beyond the slot's arena: the ask returns false, the handler says why.
  EXPECT_EQ(text_of(rig.send(big_call)), "cannot ask: the request's arguments do not fit the InputBridge's arena");
  // Both slots taken: a third request cannot ask.
  (void)rig.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}})" "\n");
  (void)rig.send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"noisy"}})" "\n");
  EXPECT_EQ(rig.bridge.in_use(), 2u);
  EXPECT_EQ(text_of(rig.send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet"}})" "\n")),
            "cannot ask: the InputBridge's slots are all waiting for answers");
  // An answer that is not the round's last and does not fit: the call ends with the reason.
  EXPECT_EQ(rig.send(big_roots),
            R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"another question of the request could not be kept"}})" "\n"
            R"x({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"The answer to the roots/list request is larger than the InputBridge's arena (1024 bytes)."}],"isError":true}})x" "\n"sv);
  EXPECT_EQ(rig.bridge.in_use(), 1u);
  // What the client did not declare is not asked.
  Rig no_roots(true, R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})" "\n"
                     R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n");
  EXPECT_EQ(text_of(no_roots.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noisy"}})" "\n")),
            "cannot ask: the client did not declare the roots capability");
  EXPECT_EQ(no_roots.bridge.in_use(), 0u);
  // Without a bridge a legacy client cannot be asked.
  Rig bare(false);
  EXPECT_EQ(text_of(bare.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"greet"}})" "\n")),
            "cannot ask: the server has no InputBridge to ask clients of this revision (Server::set_input_bridge)");
}

TEST(McpBridge, ASessionThatEndsFreesItsSlots) {
  emcp_test::NoHeapScope no_heap;
  Rig rig;
  (void)rig.send(R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"survey"}})" "\n");
  EXPECT_EQ(rig.bridge.in_use(), 1u);
  // A new initialize ends the session's work: its questions and the held call.
  (void)rig.send(kInit);
  EXPECT_EQ(rig.bridge.in_use(), 0u);
  EXPECT_EQ(rig.send(R"({"jsonrpc":"2.0","id":2,"result":{"roots":[]}})" "\n"), ""sv);
  EXPECT_EQ(text_of(rig.send(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"noisy"}})" "\n")), "");
  EXPECT_EQ(rig.bridge.in_use(), 1u);
}

// Server::set_request_state_key: instances that share the key take each other's retries (a fleet
// behind a load balancer, docs/deploy.md); under another key the state is refused. The state's
// tag is checked with Mbed TLS's HMAC-SHA256 over the bytes the format (inputs.cpp) names. The
// key is the process's: the checks run in a child process (EXPECT_EXIT), so that the other
// tests' states, drawn from the fixture's random bytes, stay what their fixtures expect.
namespace {
std::string b64url_decode(std::string_view text) {
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char ch : text) {
    int v = ch >= 'A' && ch <= 'Z' ? ch - 'A' : ch >= 'a' && ch <= 'z' ? ch - 'a' + 26 : ch >= '0' && ch <= '9' ? ch - '0' + 52
          : ch == '-' ? 62 : ch == '_' ? 63 : -1;
    if (v < 0) return "";
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

int shared_key_checks() {
  int failed = 0;
  const auto expect = [&](bool ok, const char* what) {
    if (!ok) {
      fprintf(stderr, "FAILED: %s\n", what);
      ++failed;
    }
  };
  uint8_t key[32];
  for (size_t i = 0; i < sizeof key; ++i) key[i] = static_cast<uint8_t>(0xA0 + i);
  Rig a, b;  // two instances of one fleet (b has asked nothing yet)
  a.server.set_request_state_key(key);
  b.server.set_request_state_key(key);
  const std::string first(a.send(
      R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"place":"Paris"},)" MODERN_META "}}\n"));
  const size_t at = first.find(R"("requestState":")");
  if (at == std::string::npos) {
    fprintf(stderr, "FAILED: no requestState in %s\n", first.c_str());
    return 1;
  }
  const std::string state = first.substr(at + 16, first.find('"', at + 16) - at - 16);
  // The tag: the first 16 bytes of HMAC-SHA256 under the key set, over the bytes before it.
  const std::string raw = b64url_decode(state);
  uint8_t mac[32];
  expect(raw.size() > 16 && mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key, sizeof key,
                                            reinterpret_cast<const unsigned char*>(raw.data()), raw.size() - 16, mac) == 0 &&
             memcmp(mac, raw.data() + raw.size() - 16, 16) == 0,
         "the state's tag is HMAC-SHA256 under the key set");
  const std::string retry =
      std::string(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"place":"Paris"},)"
                  R"("inputResponses":{"who":{"action":"accept","content":{"name":"Ada"}}},"requestState":")") +
      state + R"(",)" MODERN_META "}}\n";
  expect(text_of(b.send(retry)) == "Hello, Ada from Paris (round 1)", "the other instance takes the retry");
  // An instance under another key refuses it.
  key[0] ^= 1;
  b.server.set_request_state_key(key);
  const std::string refused(b.send(retry));
  expect(refused.find(R"("code":-32602)") != std::string::npos &&
             refused.find("requestState refused: its authentication failed") != std::string::npos,
         "under another key the state is refused (-32602)");
  if (failed != 0) fprintf(stderr, "answers: %s | %s\n", first.c_str(), refused.c_str());
  return failed;
}
}  // namespace

TEST(McpBridgeDeathTest, InstancesSharingTheStateKeyTakeEachOthersRetries) {
  EXPECT_EXIT(
      {
        const int failed = shared_key_checks();
        if (failed == 0) fprintf(stderr, "shared state key: every check passed\n");
        _exit(failed == 0 ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "shared state key: every check passed");
}
