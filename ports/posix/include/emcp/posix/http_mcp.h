// emcp/posix/http_mcp.h - an MCP server program on Linux in one object: the server (with the
// POSIX platform) and a command line that serves it over the network or over stdio.
//
//   constexpr emcp::mcp::ServerInfo kInfo = {"minimal", "1.0"};
//   emcp::posix::HttpMcp g_mcp(kInfo, kTools);                  // static: no heap
//   int main(int argc, char** argv) { return g_mcp.run(argc, argv); }
//
//   $ ./my-server --http 8080          Streamable HTTP on /mcp, HTTP+SSE on /sse
//   $ ./my-server --http 8080 --ws --tls-cert c.pem --tls-key k.pem   HTTPS, WSS on /ws
//   $ ./my-server                      stdio (what a desktop client launches)
//
// The command line is serve::kHttpUsage's options (--http, --ws, --bind, --tls-*, --auth-token,
// --jwt-*, ...), --stdio (the default) and --help; a program's own options go through
// run()'s `option` function. A bad or unknown option prints the usage and run() returns 2.
// The same shape as StdioMcp (emcp/posix/mcp.h) and emcp::board::UartMcp; what it wires is the
// explicit form: serve::parse_http_option / check_http_options, then serve::http() or
// serve::stdio() (emcp/posix/serve.h), whose connection and session tables are static (16
// connections, 8 sessions). Links emcp::posix_serve (Mbed TLS for HTTPS and WebSocket).
//
// Context: the object is a static; run() from main(), once.
#ifndef EMCP_POSIX_HTTP_MCP_H
#define EMCP_POSIX_HTTP_MCP_H

#include <stddef.h>

#include "emcp/loop.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/serve.h"

EMCP_NS_BEGIN
namespace posix {

class HttpMcp {
 public:
  explicit HttpMcp(const mcp::ServerInfo& info);
  template <size_t N>
  HttpMcp(const mcp::ServerInfo& info, const mcp::Tool (&tools)[N]) : HttpMcp(info) {
    server_.set_tools(tools);
  }
  HttpMcp(const mcp::ServerInfo&&) = delete;  // a temporary would not outlive the server
  template <size_t N>
  HttpMcp(const mcp::ServerInfo&&, const mcp::Tool (&)[N]) = delete;
  HttpMcp(const HttpMcp&) = delete;
  HttpMcp& operator=(const HttpMcp&) = delete;

  /// The server, for what the constructor does not set (resources, prompts, tasks...).
  mcp::Server& server() { return server_; }
  /// The network settings before run(): what the command line does not say (the scopes of
  /// bearer tokens, HttpConfig::scopes and ::required_scope). run() fills in the rest.
  serve::HttpConfig& http() { return http_; }

  /// A program option of its own: argv[*i] is looked at; when it is one, *i moves past its
  /// value and it returns 1; when it is not, 0; when its value is bad, the reason goes to
  /// stderr and it returns -1 (run() returns 2).
  using Option = int (*)(int argc, char** argv, int* i);

  /// Parses the command line and serves until SIGINT/SIGTERM (HTTP) or the end of stdin;
  /// the process exit code (0 after either end, 2 for a bad command line, 1 when the port
  /// cannot be listened on or a certificate or key does not load).
  int run(int argc, char** argv) { return run(argc, argv, Loop{}); }
  /// The same, with the application's periodic work, its own options and their usage lines
  /// (each ending with a newline): parse(), then serve().
  int run(int argc, char** argv, const Loop& loop, Option option = nullptr, const char* usage = nullptr) {
    const int exit_code = parse(argc, argv, option, usage);
    return exit_code >= 0 ? exit_code : serve(loop);
  }
  /// The two halves of run(), for a program that sets its server up from its options: -1 when
  /// the command line is good (serve() next), else the exit code (0 after --help, 2).
  int parse(int argc, char** argv, Option option = nullptr, const char* usage = nullptr);
  /// Serves what the command line said (HTTP with --http, stdio otherwise); the exit code.
  int serve(const Loop& loop);

 private:
  void print_usage(const char* usage) const;

  mcp::Server server_;
  serve::HttpConfig http_;
  const char* program_ = "emcp";
};

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_HTTP_MCP_H
