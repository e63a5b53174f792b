#include "emcp/transport/connection.h"

EMCP_NS_BEGIN
namespace transport {

StrView busy_response() {
  return StrView(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n"
      "Retry-After: 1\r\nConnection: close\r\n\r\nno free connection, retry\n");
}

}  // namespace transport
EMCP_NS_END
