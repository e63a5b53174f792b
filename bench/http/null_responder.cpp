// emcp_http_null_responder: the floor of the HTTP benchmark. An HTTP/1.1 keep-alive server on
// poll() that reads each request (head and Content-Length body) and answers with a fixed JSON
// body, doing no MCP or JSON work at all.
//
//   emcp_http_null_responder PORT
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: emcp_http_null_responder PORT\n");
    return 2;
  }
  const int ls = socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(atoi(argv[1])));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(ls, 64) != 0) {
    perror("listen");
    return 1;
  }
  fprintf(stderr, "null responder on 127.0.0.1:%s\n", argv[1]);
  static const char kAnswer[] =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 77\r\n\r\n"
      R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"null"}]}})";
  struct C {
    int fd;
    std::string buf;
  };
  std::vector<C> conns;
  std::vector<pollfd> fds;
  char buf[65536];
  for (;;) {
    fds.clear();
    fds.push_back(pollfd{ls, POLLIN, 0});
    for (C& c : conns) fds.push_back(pollfd{c.fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) return 1;
    if (fds[0].revents & POLLIN) {
      const int fd = accept(ls, nullptr, nullptr);
      if (fd >= 0) {
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns.push_back(C{fd, {}});
      }
    }
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      C& c = conns[i - 1];
      const ssize_t k = recv(c.fd, buf, sizeof buf, 0);
      if (k <= 0) {
        close(c.fd);
        c.fd = -1;
        continue;
      }
      c.buf.append(buf, static_cast<size_t>(k));
      for (;;) {
        const size_t end = c.buf.find("\r\n\r\n");
        if (end == std::string::npos) break;
        size_t length = 0;
        const char* cl = strcasestr(c.buf.c_str(), "content-length:");
        if (cl != nullptr && static_cast<size_t>(cl - c.buf.c_str()) < end) length = strtoul(cl + 15, nullptr, 10);
        if (c.buf.size() < end + 4 + length) break;
        c.buf.erase(0, end + 4 + length);
        if (send(c.fd, kAnswer, sizeof kAnswer - 1, MSG_NOSIGNAL) < 0) break;
      }
    }
    std::vector<C> live;
    for (C& c : conns)
      if (c.fd >= 0) live.push_back(std::move(c));
    conns.swap(live);
  }
}
