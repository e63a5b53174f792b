// A responder that does no MCP work: for each line it finds the id and the text by searching
// for fixed markers and writes a canned echo answer. A floor for what any stdio server costs
// (reading, one write per answer). Not a server: it knows only the benchmark's two requests.
#include <unistd.h>

#include <cstring>
#include <string>

int main() {
  std::string in, out;
  char buf[65536];
  for (;;) {
    const ssize_t k = read(0, buf, sizeof buf);
    if (k <= 0) return 0;
    in.append(buf, static_cast<size_t>(k));
    size_t start = 0;
    for (size_t nl; (nl = in.find('\n', start)) != std::string::npos; start = nl + 1) {
      const char* line = in.data() + start;
      const size_t len = nl - start;
      const char* id = static_cast<const char*>(memmem(line, len, "\"id\":", 5));
      if (id == nullptr) continue;  // a notification
      id += 5;
      const char* id_end = static_cast<const char*>(memchr(id, ',', static_cast<size_t>(line + len - id)));
      const char* text = static_cast<const char*>(memmem(line, len, "\"text\":\"", 8));
      out += "{\"jsonrpc\":\"2.0\",\"id\":";
      out.append(id, static_cast<size_t>(id_end - id));
      if (text == nullptr) {
        out += ",\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"null\",\"version\":\"0\"}}}\n";
      } else {
        text += 8;
        const char* text_end = static_cast<const char*>(memchr(text, '"', static_cast<size_t>(line + len - text)));
        out += ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"";
        out.append(text, static_cast<size_t>(text_end - text));
        out += "\"}]}}\n";
      }
    }
    in.erase(0, start);
    size_t off = 0;
    while (off < out.size()) {
      const ssize_t w = write(1, out.data() + off, out.size() - off);
      if (w <= 0) return 1;
      off += static_cast<size_t>(w);
    }
    out.clear();
  }
}
