// The POSIX listener's outbound connections (emcp::posix::HttpListener::dialer()), against real
// loopback sockets the test opens with plain BSD calls: establishment reported with writable(),
// bytes both ways (a large write that the socket takes in parts, resumed on writable()), the
// engine's wants_input() and partial receive() honoured, a refused connect, a name that does
// not resolve, no free slot, the peer's close, the engine's close, names and IPv6, and a dialed
// connection served in the same loop as an accepted HTTP connection of the real HTTP engine.
//
// The listener never calls listen() except in the HTTP test: it dials alone. The loops that
// dial numeric addresses run inside a NoHeapScope (getaddrinfo, for names, allocates in libc).
#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>

#include "emcp/posix/http_listener.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/http_server.h"
#include "heap_guard.h"
#include "http_responses.h"
#include "mcp_fixture_app.h"
#include "no_heap_util.h"

namespace {

using emcp::Status;
using emcp::transport::ConnectionHandler;
using emcp::transport::Dialer;

// ---- The engine that dials: records what the listener reports, per connection number --------

constexpr uint16_t kConnNumbers = 64;

struct Engine {
  struct Conn {
    emcp_test::FixedText<1 << 16> in;  // what receive() took
    int writable = 0;
    int closed = 0;
  };
  Conn conns[kConnNumbers];
  bool wants = true;          // wants_input()
  size_t take_max = SIZE_MAX; // receive() takes at most this many bytes per call
  int opens = 0;              // open(): never, for dialed connections
  int offers = 0;             // receive() calls, with or without bytes taken

  Conn& at(uint16_t c) {
    if (c >= kConnNumbers) {
      ADD_FAILURE() << "connection " << c << " beyond the test's numbers";
      c = 0;
    }
    return conns[c];
  }
  ConnectionHandler handler() { return ConnectionHandler(&kOps, this); }

  static const ConnectionHandler::Ops kOps;
};

const ConnectionHandler::Ops Engine::kOps = {
    [](void* e, const emcp::transport::PeerAddress&) {
      ++static_cast<Engine*>(e)->opens;
      return -1;
    },
    [](void* ctx, uint16_t c, const void* data, size_t n) {
      auto* e = static_cast<Engine*>(ctx);
      ++e->offers;
      if (!e->wants) ADD_FAILURE() << "bytes offered while wants_input() is false";
      const size_t k = n < e->take_max ? n : e->take_max;
      (void)e->at(c).in.append(static_cast<const char*>(data), k);
      return k;
    },
    [](void* e, uint16_t) { return static_cast<Engine*>(e)->wants; },
    [](void* e, uint16_t c) { ++static_cast<Engine*>(e)->at(c).writable; },
    [](void* e, uint16_t c) { ++static_cast<Engine*>(e)->at(c).closed; },
    [](void*) {},
    [](void*) { return emcp::posix::now_ms(); },
    [](void*) { return emcp::StrView(); },
};

// ---- The far end: a listening socket of the test's own on loopback --------------------------

struct Peer {
  int listen_fd = -1;
  int fd = -1;  // the accepted connection
  uint16_t port = 0;

  // Listens on `address` (any free port).
  bool listen(const char* address = "127.0.0.1") {
    sockaddr_in6 a{};
    socklen_t len = 0;
    auto* v4 = reinterpret_cast<sockaddr_in*>(&a);
    if (inet_pton(AF_INET, address, &v4->sin_addr) == 1) {
      v4->sin_family = AF_INET;
      len = sizeof *v4;
    } else if (inet_pton(AF_INET6, address, &a.sin6_addr) == 1) {
      a.sin6_family = AF_INET6;
      len = sizeof a;
    } else {
      return false;
    }
    listen_fd = ::socket(a.sin6_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) return false;
    if (::bind(listen_fd, reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(listen_fd, 8) != 0) return false;
    sockaddr_in6 bound{};
    socklen_t blen = sizeof bound;
    if (getsockname(listen_fd, reinterpret_cast<sockaddr*>(&bound), &blen) != 0) return false;
    port = ntohs(bound.sin6_port);  // sin_port lies at the same offset
    return true;
  }
  // Takes the connection waiting in the backlog (up to 2 s).
  bool accept() {
    pollfd p{listen_fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) return false;
    fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    return fd >= 0;
  }
  bool send(const char* text) { return ::send(fd, text, strlen(text), MSG_NOSIGNAL) == static_cast<ssize_t>(strlen(text)); }
  // What has arrived (without waiting); -1 at the end of the stream.
  ssize_t read(char* buf, size_t cap) {
    const ssize_t k = ::recv(fd, buf, cap, MSG_DONTWAIT);
    if (k == 0) return -1;
    return k < 0 ? 0 : k;
  }
  ~Peer() {
    if (fd >= 0) ::close(fd);
    if (listen_fd >= 0) ::close(listen_fd);
  }
};

// A loopback port nothing listens on: bound (so no one else takes it meanwhile), never listening.
struct DeadPort {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  uint16_t port = 0;
  DeadPort() {
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), len) == 0 && getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port = ntohs(a.sin_port);
  }
  ~DeadPort() { ::close(fd); }
};

class PosixDial : public ::testing::Test {
 protected:
  static constexpr uint16_t kConn = 41;  // the engine's own number: not a slot index

  // Runs the loop until `done()` or 3 s pass; false on timeout or a failing run_once().
  template <class F>
  bool run_until(F done) {
    const uint64_t deadline = emcp::posix::now_ms() + 3000;
    while (!done()) {
      if (emcp::posix::now_ms() > deadline) return false;
      if (net.run_once(10) != Status::kOk) return false;
    }
    return true;
  }
  // Dials the peer and runs until the connection is established and accepted there.
  bool establish(Peer& peer, uint16_t conn = kConn) {
    if (d.dial(d.ctx, "127.0.0.1", peer.port, conn, engine.handler()) != Status::kOk) return false;
    return run_until([&] { return engine.conns[conn].writable != 0; }) && peer.accept();
  }
  Status write(const char* data, size_t n, size_t* taken, uint16_t conn = kConn) {
    return d.port.write(d.port.ctx, conn, data, n, taken);
  }

  Engine engine;
  emcp::posix::StaticHttpListener<3> net;
  Dialer d = net.dialer();
};

TEST_F(PosixDial, BytesBothWaysOnceEstablished) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_TRUE(d.valid());
    ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, kConn, engine.handler()), Status::kOk);
    ASSERT_TRUE(run_until([&] { return engine.conns[kConn].writable != 0; }));
    EXPECT_EQ(engine.conns[kConn].writable, 1);
    ASSERT_TRUE(peer.accept());
    ASSERT_TRUE(peer.send("CONNACK from the far end"));
    ASSERT_TRUE(run_until([&] { return engine.conns[kConn].in.size() == 24; }));
    EXPECT_EQ(engine.conns[kConn].in.view(), "CONNACK from the far end");
    size_t taken = 0;
    ASSERT_EQ(write("PUBLISH", 7, &taken), Status::kOk);
    EXPECT_EQ(taken, 7u);
  }
  char buf[64];
  std::string got;
  for (int i = 0; i < 200 && got.size() < 7; ++i) {
    const ssize_t k = peer.read(buf, sizeof buf);
    if (k > 0) got.append(buf, static_cast<size_t>(k));
    if (k <= 0) usleep(10000);
  }
  EXPECT_EQ(got, "PUBLISH");
  EXPECT_EQ(engine.opens, 0);
  EXPECT_EQ(engine.conns[kConn].closed, 0);
  EXPECT_EQ(net.accepted(), 0u);
}

TEST_F(PosixDial, WritesBeforeEstablishmentTakeNothing) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, kConn, engine.handler()), Status::kOk);
  size_t taken = 99;
  ASSERT_EQ(write("early", 5, &taken), Status::kOk);
  EXPECT_EQ(taken, 0u);
  ASSERT_TRUE(run_until([&] { return engine.conns[kConn].writable != 0; }));
  ASSERT_TRUE(peer.accept());
  char buf[16];
  usleep(50000);
  EXPECT_EQ(peer.read(buf, sizeof buf), 0) << "nothing was sent before the connection was up";
}

// The far end reads no faster than the loop runs: the engine's write (more than the kernel
// buffers) is taken in parts, and each part after the first follows a writable() call.
TEST_F(PosixDial, ALargeWriteIsTakenInPartsAndResumesOnWritable) {
  static char big[8 << 20];  // more than the kernel buffers (gVisor: almost 3 MiB)
  for (size_t j = 0; j < sizeof big; ++j) big[j] = static_cast<char>((j * 7 + j / 251) & 0xFF);
  Peer peer;
  ASSERT_TRUE(peer.listen());
  ASSERT_TRUE(establish(peer));
  size_t sent = 0, received = 0, partial = 0, mismatches = 0;
  int writable_seen = engine.conns[kConn].writable;
  bool waiting = false;  // the last write was partial: no more until writable()
  static char buf[65536];
  {
    emcp_test::NoHeapScope no_heap;
    const uint64_t deadline = emcp::posix::now_ms() + 20000;
    while (received < sizeof big && emcp::posix::now_ms() < deadline) {
      if (waiting && engine.conns[kConn].writable != writable_seen) {
        writable_seen = engine.conns[kConn].writable;
        waiting = false;
      }
      if (!waiting && sent < sizeof big) {
        size_t taken = 0;
        ASSERT_EQ(write(big + sent, sizeof big - sent, &taken), Status::kOk);
        sent += taken;
        if (sent < sizeof big) {
          ++partial;
          waiting = true;
        }
      }
      // The far end reads a little, then the loop runs (POLLOUT: writable()).
      const ssize_t k = peer.read(buf, sizeof buf);
      ASSERT_GE(k, 0);
      for (ssize_t j = 0; j < k; ++j)
        if (buf[j] != big[received + static_cast<size_t>(j)]) ++mismatches;
      received += static_cast<size_t>(k);
      ASSERT_EQ(net.run_once(waiting ? 5 : 0), Status::kOk);
    }
  }
  EXPECT_EQ(sent, sizeof big);
  EXPECT_EQ(received, sizeof big);
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GE(partial, 2u) << "the socket took the whole write at once: the test proves nothing";
  EXPECT_EQ(static_cast<size_t>(engine.conns[kConn].writable - 1), partial) << "one writable() per partial write";
  EXPECT_EQ(engine.conns[kConn].closed, 0);
}

// Bytes wait in the listener while the engine does not want them, and what receive() leaves is
// offered again.
TEST_F(PosixDial, InputWaitsForWantsInputAndPartialTakes) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  ASSERT_TRUE(establish(peer));
  emcp_test::NoHeapScope no_heap;
  engine.wants = false;
  ASSERT_TRUE(peer.send("0123456789"));
  for (int i = 0; i < 20; ++i) ASSERT_EQ(net.run_once(5), Status::kOk);
  EXPECT_EQ(engine.offers, 0);
  EXPECT_EQ(engine.conns[kConn].in.size(), 0u);
  engine.wants = true;
  engine.take_max = 3;
  ASSERT_TRUE(run_until([&] { return engine.conns[kConn].in.size() == 10; }));
  EXPECT_EQ(engine.conns[kConn].in.view(), "0123456789");
  EXPECT_GE(engine.offers, 4);
}

TEST_F(PosixDial, ARefusedConnectIsReportedClosed) {
  DeadPort dead;
  ASSERT_NE(dead.port, 0);
  emcp_test::NoHeapScope no_heap;
  ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", dead.port, kConn, engine.handler()), Status::kOk);
  ASSERT_TRUE(run_until([&] { return engine.conns[kConn].closed != 0; }));
  for (int i = 0; i < 5; ++i) ASSERT_EQ(net.run_once(5), Status::kOk);
  EXPECT_EQ(engine.conns[kConn].closed, 1);
  EXPECT_EQ(engine.conns[kConn].writable, 0);
  size_t taken = 0;
  EXPECT_EQ(write("x", 1, &taken), Status::kClosed);
  // The slot is free again: the same number dials anew.
  EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", dead.port, kConn, engine.handler()), Status::kOk);
  ASSERT_TRUE(run_until([&] { return engine.conns[kConn].closed == 2; }));
}

TEST_F(PosixDial, ANameThatDoesNotResolveIsNotFound) {
  // RFC 6761: .invalid never resolves.
  EXPECT_EQ(d.dial(d.ctx, "no-such-broker.invalid", 1, kConn, engine.handler()), Status::kNotFound);
  EXPECT_EQ(d.dial(d.ctx, "", 1, kConn, engine.handler()), Status::kNotFound);
  for (int i = 0; i < 5; ++i) ASSERT_EQ(net.run_once(5), Status::kOk);
  EXPECT_EQ(engine.conns[kConn].closed, 0);
  EXPECT_EQ(engine.conns[kConn].writable, 0);
  EXPECT_EQ(d.dial(d.ctx, nullptr, 1, kConn, engine.handler()), Status::kInvalidArgument);
  EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", 1, kConn, ConnectionHandler()), Status::kInvalidArgument);
}

TEST_F(PosixDial, NoFreeSlotIsNoSpace) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  emcp_test::NoHeapScope no_heap;
  for (uint16_t c = 0; c < 3; ++c) ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, c, engine.handler()), Status::kOk);
  EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, 3, engine.handler()), Status::kNoSpace);
  // A number the dialer already holds is refused, even with a slot free.
  d.port.close(d.port.ctx, 2);
  EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, 1, engine.handler()), Status::kInvalidArgument);
  EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, 3, engine.handler()), Status::kOk);
  ASSERT_TRUE(run_until([&] { return engine.conns[0].writable + engine.conns[1].writable + engine.conns[3].writable == 3; }));
  EXPECT_EQ(engine.conns[2].writable + engine.conns[2].closed, 0) << "nothing reported after the engine's close";
}

TEST_F(PosixDial, ThePeersCloseIsReportedClosed) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  ASSERT_TRUE(establish(peer));
  ASSERT_TRUE(peer.send("last words"));
  ::close(peer.fd);
  peer.fd = -1;
  emcp_test::NoHeapScope no_heap;
  ASSERT_TRUE(run_until([&] { return engine.conns[kConn].closed != 0; }));
  EXPECT_EQ(engine.conns[kConn].in.view(), "last words") << "the bytes before the end are delivered first";
  EXPECT_EQ(engine.conns[kConn].closed, 1);
  size_t taken = 0;
  EXPECT_EQ(write("x", 1, &taken), Status::kClosed);
  EXPECT_EQ(taken, 0u);
}

// The engine closes: the far end reads the last bytes, then the end of the stream; the
// listener reports nothing more for the connection.
TEST_F(PosixDial, TheEnginesCloseEndsTheStreamAfterItsBytes) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  ASSERT_TRUE(establish(peer));
  size_t taken = 0;
  ASSERT_EQ(write("DISCONNECT", 10, &taken), Status::kOk);
  ASSERT_EQ(taken, 10u);
  d.port.close(d.port.ctx, kConn);
  std::string got;
  bool ended = false;
  char buf[64];
  const uint64_t deadline = emcp::posix::now_ms() + 3000;
  while (!ended && emcp::posix::now_ms() < deadline) {
    ASSERT_EQ(net.run_once(5), Status::kOk);
    const ssize_t k = peer.read(buf, sizeof buf);
    if (k > 0) got.append(buf, static_cast<size_t>(k));
    ended = k < 0;
  }
  EXPECT_TRUE(ended);
  EXPECT_EQ(got, "DISCONNECT");
  EXPECT_EQ(engine.conns[kConn].closed, 0);
  EXPECT_EQ(write("x", 1, &taken), Status::kClosed);
}

// wait_writable() on a connection still connecting waits for the connect itself.
TEST_F(PosixDial, WaitWritableWaitsForTheConnect) {
  Peer peer;
  ASSERT_TRUE(peer.listen());
  emcp_test::NoHeapScope no_heap;
  ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", peer.port, kConn, engine.handler()), Status::kOk);
  ASSERT_EQ(d.port.wait_writable(d.port.ctx, kConn, 2000), Status::kOk);
  size_t taken = 0;
  ASSERT_EQ(write("now", 3, &taken), Status::kOk);
  EXPECT_EQ(taken, 3u);
  EXPECT_EQ(d.port.wait_writable(d.port.ctx, kConn + 1, 10), Status::kClosed);
}

TEST_F(PosixDial, ANameAndAnIpv6Literal) {
  Peer v4;
  ASSERT_TRUE(v4.listen("127.0.0.1"));
  ASSERT_EQ(d.dial(d.ctx, "localhost", v4.port, 1, engine.handler()), Status::kOk);
  Peer v6;
  ASSERT_TRUE(v6.listen("::1")) << "no IPv6 loopback here: " << strerror(errno);
  ASSERT_EQ(d.dial(d.ctx, "::1", v6.port, 2, engine.handler()), Status::kOk);
  ASSERT_TRUE(run_until([&] { return engine.conns[1].writable != 0 && engine.conns[2].writable != 0; }));
  ASSERT_TRUE(v4.accept());
  ASSERT_TRUE(v6.accept());
  ASSERT_TRUE(v4.send("four"));
  ASSERT_TRUE(v6.send("six"));
  ASSERT_TRUE(run_until([&] { return engine.conns[1].in.size() == 4 && engine.conns[2].in.size() == 3; }));
  EXPECT_EQ(engine.conns[1].in.view(), "four");
  EXPECT_EQ(engine.conns[2].in.view(), "six");
}

// One loop: the real HTTP engine answers a client's initialize on an accepted connection while
// a dialed connection carries bytes both ways. The dialed connection uses number 0, which is
// also the HTTP engine's first: each port reaches its own socket.
TEST_F(PosixDial, BesideAnAcceptedHttpConnectionInOneLoop) {
  emcp::mcp::Server server(fixture::info(), emcp::posix::platform());
  fixture::install(server);
  emcp::transport::HttpOptions options;
  emcp::transport::StaticHttpServer<2, 1, 4096, 512, 1024> http(server, options, net.port_interface());
  ASSERT_EQ(net.run_once(0), Status::kOk);  // nothing to serve yet: dialing alone needs no handler
  ASSERT_EQ(net.listen("127.0.0.1", 0), Status::kOk);
  EXPECT_EQ(net.run_once(0), Status::kInvalidState) << "listening with no engine attached";
  net.attach(http.handler());

  Peer broker;
  ASSERT_TRUE(broker.listen());
  ASSERT_TRUE(establish(broker, 0));

  const int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(net.bound_port());
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const std::string body =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
      R"("capabilities":{},"clientInfo":{"name":"dial-test","version":"1"}}})";
  const std::string request = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                              "Accept: application/json, text/event-stream\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
  ASSERT_EQ(::send(client, request.data(), request.size(), MSG_NOSIGNAL), static_cast<ssize_t>(request.size()));
  ASSERT_TRUE(broker.send("from the broker"));

  std::string answer, at_broker;
  std::vector<http_test::Response> responses;
  bool sent_to_broker = false;
  char buf[4096];
  const uint64_t deadline = emcp::posix::now_ms() + 5000;
  while ((responses.empty() || at_broker.size() < 13) && emcp::posix::now_ms() < deadline) {
    ASSERT_EQ(net.run_once(5), Status::kOk);
    if (!sent_to_broker && engine.conns[0].in.size() == 15) {
      size_t taken = 0;
      ASSERT_EQ(write("to the broker", 13, &taken, 0), Status::kOk);
      ASSERT_EQ(taken, 13u);
      sent_to_broker = true;
    }
    const ssize_t k = ::recv(client, buf, sizeof buf, MSG_DONTWAIT);
    if (k > 0) answer.append(buf, static_cast<size_t>(k));
    if (responses.empty()) responses = http_test::parse_complete(answer);
    const ssize_t b = broker.read(buf, sizeof buf);
    if (b > 0) at_broker.append(buf, static_cast<size_t>(b));
  }
  ::close(client);
  ASSERT_EQ(responses.size(), 1u);
  EXPECT_EQ(responses[0].status, 200);
  EXPECT_NE(responses[0].body.find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << responses[0].body;
  EXPECT_EQ(engine.conns[0].in.view(), "from the broker");
  EXPECT_EQ(at_broker, "to the broker");
  EXPECT_EQ(net.accepted(), 1u);
  EXPECT_EQ(engine.opens, 0);
  EXPECT_EQ(engine.conns[0].closed, 0);
  // The client's hang-up reaches the HTTP engine, not the dialing one.
  for (int i = 0; i < 20; ++i) ASSERT_EQ(net.run_once(5), Status::kOk);
  EXPECT_EQ(engine.conns[0].closed, 0);
}

}  // namespace
