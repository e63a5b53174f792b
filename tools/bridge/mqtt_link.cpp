// emcp-bridge --mqtt: one device through a broker (mqtt_link.h).
#include "mqtt_link.h"

#include "fleet_link.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>

#include "emcp/posix/platform.h"

namespace bridge {

namespace {

const char kDisconnected[] = R"({"jsonrpc":"2.0","method":"notifications/disconnected"})";

emcp::StrView view(const std::string& s) { return emcp::StrView(s.data(), s.size()); }

MqttBase& of(void* ctx) { return *static_cast<MqttBase*>(ctx); }

}  // namespace

std::unique_ptr<Link> make_link(const LinkOptions& o, Link::Listener& l) {
  if (!o.mqtt_host.empty() && o.mqtt_fleet) return std::unique_ptr<Link>(new FleetLink(o, l));
  if (!o.mqtt_host.empty()) return std::unique_ptr<Link>(new MqttLink(o, l));
  return std::unique_ptr<Link>(new BoardLink(o, l));
}

MqttBase::MqttBase(const LinkOptions& o, Listener& l)
    : o_(o),
      l_(l),
      client_(emcp::posix::platform(), dialer(), emcp::mqtt::ClientEvents{}, 1u << 20) {
  uint8_t r[4] = {};
  (void)emcp::posix::random_bytes(r, sizeof r);
  static const char kHex[] = "0123456789abcdef";
  client_id_ = "emcp-bridge-";
  for (uint8_t b : r) client_id_ += std::string{kHex[b >> 4], kHex[b & 15]};
  presence_filter_ = "$mcp-server/presence/+/" + (o.mqtt_name.empty() ? std::string("#") : o.mqtt_name);
  connect_user_[0] = {"MCP-COMPONENT-TYPE", "mcp-client"};
  connect_user_[1] = {"MCP-META", "{\"implementation\":\"emcp-bridge\"}"};
  publish_user_[0] = {"MCP-COMPONENT-TYPE", "mcp-client"};
  publish_user_[1] = {"MCP-MQTT-CLIENT-ID", view(client_id_)};
  will_topic_ = "$mcp-client/presence/" + client_id_;
  will_payload_ = kDisconnected;
  will_.topic = view(will_topic_);
  will_.payload = view(will_payload_);
  will_.qos = 1;
  will_.user = publish_user_;
  will_.user_count = 2;
  emcp::mqtt::ClientEvents e;
  e.connected = [](void* ctx, const emcp::mqtt::Packet&) { of(ctx).on_connected(); };
  e.disconnected = [](void* ctx, emcp::mqtt::Reason) { of(ctx).on_disconnected(); };
  e.publish = [](void* ctx, const emcp::mqtt::Packet& p) {
    of(ctx).in_topic_.assign(p.topic.data(), p.topic.size());
    of(ctx).in_payload_.clear();
  };
  e.payload = [](void* ctx, emcp::StrView c) { of(ctx).in_payload_.append(c.data(), c.size()); };
  e.publish_end = [](void* ctx) { of(ctx).on_publish_end(); };
  e.subscribed = [](void* ctx, uint16_t id, emcp::StrView) { of(ctx).on_subscribed(id); };
  e.ctx = this;
  client_.set_events(e);
  emcp::mqtt::ClientOptions& co = client_.options();
  co.host = o.mqtt_host.c_str();
  co.port = static_cast<uint16_t>(o.mqtt_port);
  co.client_id = view(client_id_);
  co.user = connect_user_;
  co.user_count = 2;
  co.will = &will_;
}

namespace {
// A whole file, NUL-terminated (Mbed TLS's PEM), or "" with the reason in *why.
std::string read_file(const std::string& path, std::string* why) {
  FILE* f = fopen(path.c_str(), "rb");
  if (f == nullptr) {
    *why = "cannot open " + path + ": " + strerror(errno);
    return std::string();
  }
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) != 0) text.append(buf, n);
  fclose(f);
  return text;
}
}  // namespace

emcp::transport::Dialer MqttBase::dialer() {
  emcp::transport::Dialer d;
  d.dial = [](void* ctx, const char* host, uint16_t port, uint16_t conn, emcp::transport::ConnectionHandler h) {
    return of(ctx).dial(host, port, conn, h);
  };
  d.port.write = [](void* ctx, uint16_t, const char* data, size_t n, size_t* taken) {
    return of(ctx).write(data, n, taken);
  };
  d.port.wait_writable = [](void* ctx, uint16_t, uint32_t ms) { return of(ctx).wait_writable(ms); };
  d.port.close = [](void* ctx, uint16_t) { of(ctx).close_socket(); };
  d.port.ctx = this;
  d.ctx = this;
  if (!o_.mqtt_tls) return d;
  // mqtts://: the broker's certificate is verified against --mqtt-ca, its name against the host.
  std::string why;
  const std::string ca = read_file(o_.mqtt_ca, &why);
  const std::string cert = o_.mqtt_cert.empty() ? std::string() : read_file(o_.mqtt_cert, &why);
  const std::string key = o_.mqtt_key.empty() ? std::string() : read_file(o_.mqtt_key, &why);
  if (!why.empty()) {
    failure_ = why;
    return d;
  }
  auto bytes = [](const std::string& s) { return s.empty() ? nullptr : reinterpret_cast<const uint8_t*>(s.c_str()); };
  if (tls_context_.init_client(emcp::posix::platform(), bytes(ca), ca.size() + 1, bytes(cert), cert.size() + (cert.empty() ? 0 : 1),
                               bytes(key), key.size() + (key.empty() ? 0 : 1)) != emcp::Status::kOk) {
    failure_ = std::string("the TLS settings do not load: ") + emcp::mbedtls::TlsContext::error_text(tls_context_.last_error());
    return d;
  }
  tls_.reset(new emcp::mbedtls::StaticTlsLayer<1>(tls_context_, d.port));
  return tls_->dialer(d);
}

MqttBase::~MqttBase() { close_mqtt(); }

void MqttBase::close_mqtt() {
  if (closed_) return;
  closed_ = true;
  if (client_.connected()) {
    // The end of the sessions and of this client, as the text says, then DISCONNECT (Normal:
    // the broker drops the Will, which would say the same).
    on_closing();
    (void)publish(will_topic_, kDisconnected);
  }
  client_.stop();
  close_socket();
}

// ---- The socket ------------------------------------------------------------------------------

emcp::Status MqttBase::dial(const char* host, uint16_t port, uint16_t conn, emcp::transport::ConnectionHandler h) {
  close_socket();
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host, std::to_string(port).c_str(), &hints, &res) != 0 || res == nullptr) return emcp::Status::kNotFound;
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    return emcp::Status::kIoError;
  }
  const int one = 1;  // an MQTT packet goes at once (Nagle would hold it for the broker's ACK)
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const int rc = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (rc != 0 && errno != EINPROGRESS) {
    ::close(fd);
    return emcp::Status::kIoError;
  }
  fd_ = fd;
  conn_ = conn;
  handler_ = h;
  connecting_ = true;
  want_write_ = true;  // POLLOUT says the connect ended
  return emcp::Status::kOk;
}

emcp::Status MqttBase::write(const char* data, size_t n, size_t* taken) {
  *taken = 0;
  if (fd_ < 0) return emcp::Status::kClosed;
  if (connecting_) return emcp::Status::kOk;
  const ssize_t k = ::send(fd_, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (k < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      want_write_ = true;
      return emcp::Status::kOk;
    }
    return emcp::Status::kIoError;
  }
  *taken = static_cast<size_t>(k);
  if (*taken < n) want_write_ = true;
  return emcp::Status::kOk;
}

emcp::Status MqttBase::wait_writable(uint32_t timeout_ms) {
  if (fd_ < 0) return emcp::Status::kClosed;
  pollfd p{fd_, POLLOUT, 0};
  const int r = poll(&p, 1, static_cast<int>(timeout_ms));
  if (r == 0) return emcp::Status::kWouldBlock;
  return (p.revents & (POLLERR | POLLHUP)) != 0 ? emcp::Status::kClosed : emcp::Status::kOk;
}

void MqttBase::close_socket() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connecting_ = want_write_ = false;
}

bool MqttBase::flush() {
  if (fd_ < 0) return true;
  want_write_ = false;
  if (connecting_) {
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close_socket();
      handler_.closed(conn_);
      return true;
    }
    connecting_ = false;
  }
  handler_.writable(conn_);
  return true;
}

bool MqttBase::on_readable() {
  if (fd_ < 0) return true;
  char buf[16384];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
  if (n > 0) {
    handler_.receive(conn_, buf, static_cast<size_t>(n));
  } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
    close_socket();
    handler_.closed(conn_);
  }
  return true;
}

// ---- MCP over MQTT, the client's side ---------------------------------------------------------

bool MqttBase::start() {
  if (!failure_.empty()) {  // the TLS settings
    log(o_.quiet, failure_);
    return false;
  }
  client_.start();
  const uint64_t until = now_ms() + static_cast<uint64_t>(o_.wait_ms);
  // Until a device is ready: the broker, its presence, our subscriptions.
  while (!started() && !stop_requested()) {
    if (now_ms() > until) {
      failure_ = client_.connected() ? "no device announced itself on " + presence_filter_ + " within --wait-ms"
                                     : "the broker at " + o_.mqtt_host + ":" + std::to_string(o_.mqtt_port) +
                                           " was not reached within --wait-ms";
      log(o_.quiet, failure_);
      return false;
    }
    pollfd p{fd_, static_cast<short>(POLLIN | (wants_write() ? POLLOUT : 0)), 0};
    if (poll(&p, fd_ >= 0 ? 1 : 0, 50) > 0) {
      if ((p.revents & POLLOUT) != 0) (void)flush();
      if ((p.revents & (POLLIN | POLLHUP | POLLERR)) != 0) (void)on_readable();
    }
    client_.poll();
  }
  return started();
}

bool MqttBase::tick() {
  client_.poll();
  return true;
}

uint16_t MqttBase::subscribe(const std::string& topic, bool no_local) {
  emcp::mqtt::Subscription s;
  s.filter = view(topic);
  s.max_qos = 1;
  s.no_local = no_local;
  return client_.subscribe(&s, 1);
}

uint16_t MqttBase::unsubscribe(const std::string& a, const std::string& b) {
  const emcp::StrView topics[] = {view(a), view(b)};
  return client_.unsubscribe(topics, 2);
}

void MqttBase::on_publish_end() {
  if (in_topic_.compare(0, 21, "$mcp-server/presence/") == 0) {
    // $mcp-server/presence/{id}/{name}: an online notification, or empty (gone).
    const std::string rest = in_topic_.substr(21);
    const size_t slash = rest.find('/');
    if (slash == std::string::npos) return;
    if (!in_payload_.empty()) {
      const Parsed p = parse(in_payload_);
      if (!p.notification || p.method != "notifications/server/online") return;  // junk: ignored
    }
    on_presence(rest.substr(0, slash), rest.substr(slash + 1), !in_payload_.empty());
    return;
  }
  on_message(in_topic_, in_payload_);
}

void MqttLink::on_connected() {
  log(o_.quiet, "connected to the broker as " + client_id_ + "; looking for a device on " + presence_filter_);
  (void)subscribe(presence_filter_, false);
}

void MqttLink::on_closing() {
  if (!rpc_.empty() && ready_) (void)publish(rpc_, kDisconnected);
}

void MqttLink::device_gone(const char* why) {
  if (device_id_.empty()) return;
  log(o_.quiet, "device " + device_id_ + " (" + device_name_ + ") left: " + why);
  if (client_.connected()) (void)unsubscribe(rpc_, capability_);  // the text
  if (ready_) resetting_ = true;
  ready_ = false;
  device_id_.clear();
  sub_rpc_ = sub_capability_ = 0;
}

void MqttLink::choose(const std::string& id, const std::string& name) {
  device_id_ = id;
  device_name_ = name;
  ++devices_seen_;
  rpc_ = "$mcp-rpc/" + client_id_ + "/" + id + "/" + name;
  control_ = "$mcp-server/" + id + "/" + name;
  capability_ = "$mcp-server/capability/" + id + "/" + name;
  // Before initialize: the RPC topic with No Local, the capability topic.
  sub_rpc_ = subscribe(rpc_, true);
  sub_capability_ = subscribe(capability_, false);
  log(o_.quiet, "serving device " + id + " (" + name + ")");
}

void MqttLink::on_subscribed(uint16_t id) {
  if (id == 0 || device_id_.empty()) return;
  if (id == sub_rpc_) sub_rpc_ = 0;
  if (id == sub_capability_) sub_capability_ = 0;
  if (sub_rpc_ != 0 || sub_capability_ != 0 || ready_) return;
  ready_ = true;
  if (served_once_ || resetting_) {
    ++resets_;
    resetting_ = false;
    waiting_.clear();  // what was queued for the device that left is failed by the listener
    queued_bytes_ = 0;
    l_.on_board_reset("the device came back (a new session)");
  }
  served_once_ = true;
  l_.on_board_ready();
  pump();
}

void MqttLink::on_presence(const std::string& id, const std::string& name, bool online) {
  if (!online) {
    if (id == device_id_) device_gone("its presence was cleared");
    return;
  }
  if (device_id_.empty() && client_.connected()) choose(id, name);
}

void MqttLink::on_message(const std::string& topic, const std::string& payload) {
  if (device_id_.empty() || (topic != rpc_ && topic != capability_)) return;
  const Parsed p = parse(payload);
  if (p.notification && p.method == "notifications/disconnected") {
    device_gone("it sent notifications/disconnected");
    return;
  }
  if (!ready_) return;
  ++lines_in_;
  l_.on_board_line(payload);
}

bool MqttBase::publish(const std::string& topic, const std::string& payload) {
  emcp::mqtt::PublishHeader h;
  h.topic = view(topic);
  h.qos = 1;
  h.utf8_payload = true;
  h.user = publish_user_;
  h.user_count = 2;
  return client_.publish(h, view(payload)) == emcp::Status::kOk;
}

void MqttLink::send(const std::string& line) {
  waiting_.push_back(line);
  queued_bytes_ += line.size();
  pump();
}

void MqttLink::pump() {
  while (ready_ && client_.connected() && !waiting_.empty()) {
    const std::string line = std::move(waiting_.front());
    waiting_.pop_front();
    queued_bytes_ -= line.size();
    const Parsed p = parse(line);
    const bool init = p.request && p.method == "initialize";
    if (!publish(init ? control_ : rpc_, line)) {
      // Longer than a message may be (the broker's Maximum Packet Size or ours): a request
      // gets its error here; nothing else can be told.
      log(o_.quiet, "a message of " + std::to_string(line.size()) + " B could not be published");
      if (p.request)
        l_.on_board_line("{\"jsonrpc\":\"2.0\",\"id\":" + p.id +
                         ",\"error\":{\"code\":-32603,\"message\":\"emcp-bridge: the message is longer than MQTT may carry\"}}");
      continue;
    }
    ++lines_out_;
  }
}

std::string MqttLink::summary() const {
  const emcp::mqtt::ClientStats& s = client_.stats();
  return std::to_string(lines_out_) + " message(s) to and " + std::to_string(lines_in_) + " from the device; " +
         std::to_string(devices_seen_) + " device session(s), " + std::to_string(resets_) + " reset(s); " +
         std::to_string(s.connects) + " broker connection(s)";
}

}  // namespace bridge
