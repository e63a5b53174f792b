// Channel::request: the server tells a transport that a request outlives the handle() that
// brought it (kHeld) and that it has ended (kDone: answered, or cancelled), so Streamable HTTP
// keeps a POST's stream open exactly as long as its requests are pending, without asking the
// server. Each test records the events in order together with where the output stood when each
// came, so "done after its answer" and "done with no answer" are told apart.
#include <gtest/gtest.h>
#include <stdio.h>

#include <string>
#include <string_view>

#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "mcp_fixture_app.h"

using emcp::Status;
using emcp::StrView;
using emcp::jsonrpc::Id;
using emcp::mcp::Channel;
using emcp::mcp::OutMessage;
using emcp::mcp::Server;
using emcp::mcp::Session;

namespace {

// A transport of the test's own: every message goes to `out` (one per line); every event to
// `log` as "held:<id>" or "done:<id>", followed by "@<messages written so far>".
struct Harness {
  Server server{fixture::info(), fixture::platform()};
  Session session{Channel{&open, &close, this, nullptr, &request}};
  emcp::json::StaticReader<> reader;
  emcp::StaticArena<8192> arena;
  emcp::jsonrpc::Decoder decoder{reader, arena};
  char buf[8192];
  emcp::json::BufferSink sink{buf, sizeof buf};
  std::string out, log;
  int messages = 0;
  bool busy = false;  // open() refuses: the answer cannot go out

  Harness() {
    fixture::install(server);
    send(R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25",)"
         R"("capabilities":{"elicitation":{},"sampling":{},"roots":{}},"clientInfo":{"name":"t","version":"1"}}})");
    send(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    out.clear();
    log.clear();
    messages = 0;
  }
  ~Harness() {
    while (fixture::pending_slow() != 0) (void)fixture::complete_slow();
  }
  void send(std::string_view json) {
    decoder.begin();
    decoder.feed(json.data(), json.size());
    server.handle(session, decoder.finish());
  }
  static emcp::json::Sink* open(void* ctx, const OutMessage&) {
    Harness& h = *static_cast<Harness*>(ctx);
    if (h.busy) return nullptr;
    h.sink.reset();
    return &h.sink;
  }
  static Status close(void* ctx) {
    Harness& h = *static_cast<Harness*>(ctx);
    h.out.append(h.sink.view().data(), h.sink.view().size());
    h.out.push_back('\n');
    ++h.messages;
    return Status::kOk;
  }
  static void request(void* ctx, const Id& id, Channel::RequestEvent event) {
    Harness& h = *static_cast<Harness*>(ctx);
    h.log += event == Channel::RequestEvent::kHeld ? "held:" : "done:";
    if (id.type == Id::Type::kInt) h.log += std::to_string(id.num);
    else h.log.append(id.str.data(), id.str.size());
    h.log += "@" + std::to_string(h.messages) + " ";
  }
};

TEST(McpRequestEvents, ASynchronousAnswerIsDoneAfterItIsWritten) {
  Harness h;
  h.send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  h.send(R"({"jsonrpc":"2.0","id":"two","method":"tools/list"})");
  EXPECT_EQ(h.log, "done:1@1 done:two@2 ");
  // Notifications and responses are no requests; an input without a usable id has no id to name.
  h.send(R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  h.send(R"({"jsonrpc":"2.0","id":9,"result":{}})");
  h.send(R"({"jsonrpc":"2.0","method":7})");
  EXPECT_EQ(h.log, "done:1@1 done:two@2 ");
  // An invalid request that has an id is answered, so it is done.
  h.send(R"({"jsonrpc":"2.0","id":3,"method":7})");
  EXPECT_EQ(h.log, "done:1@1 done:two@2 done:3@4 ");
}

TEST(McpRequestEvents, AnAnswerThatCannotGoOutStillEndsTheRequest) {
  Harness h;
  h.busy = true;
  h.send(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
  EXPECT_EQ(h.out, "");
  EXPECT_EQ(h.log, "done:1@0 ");
}

TEST(McpRequestEvents, ADeferredCallIsHeldThenDoneAfterItsAnswer) {
  Harness h;
  h.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}})");
  EXPECT_EQ(h.log, "held:5@0 ");
  EXPECT_EQ(h.out, "");
  ASSERT_EQ(fixture::complete_slow(), Status::kOk);
  EXPECT_NE(h.out.find(R"("id":5,"result")"), std::string::npos) << h.out;
  EXPECT_EQ(h.log, "held:5@0 done:5@1 ");
}

TEST(McpRequestEvents, ACancelledCallIsDoneAtOnceAndNeverAnswered) {
  Harness h;
  h.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}})");
  h.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})");
  EXPECT_EQ(h.log, "held:5@0 done:5@0 ");
  // A second cancellation of it, and its completion, say nothing more.
  h.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}})");
  EXPECT_EQ(fixture::complete_slow(), Status::kClosed);
  EXPECT_EQ(h.out, "");
  EXPECT_EQ(h.log, "held:5@0 done:5@0 ");
}

TEST(McpRequestEvents, ABatchTellsOfEachOfItsRequests) {
  Harness h;
  // Batches are of 2025-03-26.
  h.send(R"({"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26",)"
         R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  h.log.clear();
  h.messages = 0;
  h.send(R"([{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}},)"
         R"({"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","id":3,"method":"ping"}])");
  // The two pings are done inside the batch's answer (one message, closed after them).
  EXPECT_EQ(h.log, "done:1@0 held:2@0 done:3@0 ");
  EXPECT_EQ(h.messages, 1);
  ASSERT_EQ(fixture::complete_slow(), Status::kOk);
  EXPECT_EQ(h.log, "done:1@0 held:2@0 done:3@0 done:2@2 ");
}

TEST(McpRequestEvents, AnInitializeAgainEndsTheHeldRequestsButADetachSaysNothing) {
  Harness h;
  h.send(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}})");
  h.send(R"({"jsonrpc":"2.0","id":6,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
         R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})");
  EXPECT_EQ(h.log, "held:5@0 done:5@0 done:6@1 ");
  h.send(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}})");
  h.server.detach(h.session);
  EXPECT_EQ(h.log, "held:5@0 done:5@0 done:6@1 held:7@1 ");
}

TEST(McpRequestEvents, AQuestionToTheClientHoldsTheCallUntilItsAnswer) {
  Harness h;
  // `ask` samples the client and answers with what came back.
  h.send(R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"ask"}})");
  EXPECT_EQ(h.log, "held:8@0 ");  // held by defer(), then the question goes out
  ASSERT_NE(h.out.find(R"("method":"sampling/createMessage")"), std::string::npos) << h.out;
  const size_t at = h.out.find(R"("id":)");
  const std::string qid = h.out.substr(at + 5, h.out.find(',', at) - at - 5);
  h.send(R"({"jsonrpc":"2.0","id":)" + qid +
         R"(,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}})");
  EXPECT_NE(h.out.find(R"("id":8,"result")"), std::string::npos) << h.out;
  EXPECT_EQ(h.log, "held:8@0 done:8@2 ");
}

TEST(McpRequestEvents, AListenIsHeldUntilCancelledOrEndedByTheServer) {
  Harness h;
  constexpr const char* kListen =
      R"({"jsonrpc":"2.0","id":"%s","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},)"
      R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}})";
  char line[512];
  snprintf(line, sizeof line, kListen, "L");
  h.send(line);
  // Held once its acknowledgement has a channel (written when it is closed: message 1).
  ASSERT_NE(h.out.find("notifications/subscriptions/acknowledged"), std::string::npos) << h.out;
  EXPECT_EQ(h.log, "held:L@0 ");
  // notifications/cancelled ends it unanswered (stdio's way to close one).
  h.send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L"}})");
  EXPECT_EQ(h.log, "held:L@0 done:L@1 ");
  // The server ending its listens answers each, then it is done.
  snprintf(line, sizeof line, kListen, "M");
  h.send(line);
  EXPECT_EQ(h.server.end_listens(), Status::kOk);
  EXPECT_NE(h.out.find(R"("id":"M","result")"), std::string::npos) << h.out;
  EXPECT_EQ(h.log, "held:L@0 done:L@1 held:M@1 done:M@3 ");
  // A listen whose acknowledgement cannot go out is never held: done at once.
  h.busy = true;
  snprintf(line, sizeof line, kListen, "N");
  h.send(line);
  EXPECT_EQ(h.log, "held:L@0 done:L@1 held:M@1 done:M@3 done:N@3 ");
}

}  // namespace
