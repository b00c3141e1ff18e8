#include "backends.h"

#include "child_server.h"

#ifdef LATCH_CLIENT_TESTS_LATCHD
#include "latch/server.h"
#endif

namespace latch::test {
namespace {

class ChildBackend : public Backend {
 public:
  explicit ChildBackend(ChildServer::Kind kind) : server_(kind) {}
  bool ok() const override { return server_.ok(); }
  std::string error() const override { return server_.error(); }
  int port() const override { return server_.port(); }
  void Kill() override { server_.Kill(); }
  bool Restart() override { return server_.Restart(); }
  bool CanPause() const override { return true; }
  void Pause() override { server_.Pause(); }
  void Resume() override { server_.Resume(); }

 private:
  ChildServer server_;
};

#ifdef LATCH_CLIENT_TESTS_LATCHD
class EmbeddedBackend : public Backend {
 public:
  EmbeddedBackend() { Launch(0); }
  ~EmbeddedBackend() override { Kill(); }
  bool ok() const override { return port_ != 0; }
  std::string error() const override { return error_; }
  int port() const override { return port_; }
  void Kill() override {
    if (server_) server_->stop();
    server_.reset();
  }
  bool Restart() override {
    Kill();
    return Launch(port_);
  }

 private:
  bool Launch(int port) {
    latch::Options o;
    o.port = port;
    o.io_threads = 1;
    o.loglevel = "warning";
    try {
      server_ = std::make_unique<Server>(o);
      port_ = server_->start();
      return true;
    } catch (const std::exception& e) {
      error_ = e.what();
      server_.reset();
      return false;
    }
  }
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::string error_;
};
#endif

}  // namespace

std::string BackendName(BackendKind kind) {
  switch (kind) {
    case BackendKind::kRedis:
      return "redis";
    case BackendKind::kLatchEmbedded:
      return "latch_embedded";
    case BackendKind::kLatchd:
      return "latchd";
  }
  return "unknown";
}

std::vector<BackendKind> AllBackends() {
#ifdef LATCH_CLIENT_TESTS_LATCHD
  return {BackendKind::kRedis, BackendKind::kLatchEmbedded, BackendKind::kLatchd};
#else
  return {BackendKind::kRedis};
#endif
}

std::unique_ptr<Backend> Backend::Start(BackendKind kind) {
  switch (kind) {
    case BackendKind::kRedis:
      return std::make_unique<ChildBackend>(ChildServer::Kind::kRedis);
    case BackendKind::kLatchd:
      return std::make_unique<ChildBackend>(ChildServer::Kind::kLatchd);
#ifdef LATCH_CLIENT_TESTS_LATCHD
    case BackendKind::kLatchEmbedded:
      return std::make_unique<EmbeddedBackend>();
#else
    case BackendKind::kLatchEmbedded:
      break;
#endif
  }
  return nullptr;
}

ClientOptions Backend::Options() const {
  auto o = ClientOptions::FromUrl(url()).value();
  o.call_timeout = std::chrono::milliseconds(2000);
  o.connect_timeout = std::chrono::milliseconds(1000);
  return o;
}

std::string Missing(Client& client, Need need) {
  auto set = client.command_sync("SET", "latch:probe", "1", "PX", 10000);
  if (!set.ok()) return set.error().ToString();
  if (set->is_error()) return "SET: " + set->str;
  for (const char* cmd : {"GET", "DEL", "PTTL"}) {
    auto r = client.command_sync(cmd, "latch:probe");
    if (!r.ok()) return r.error().ToString();
    if (r->is_error()) return std::string(cmd) + ": " + r->str;
  }
  if (need == Need::kLocks) {
    auto caps = client.command_sync("COMMAND", "INFO", "LOCK.ACQUIRE");
    bool lock_commands = caps.ok() && caps->type == ReplyType::kArray && !caps->elements.empty() &&
                         caps->elements[0].is_aggregate();
    if (!lock_commands) {
      auto eval = client.command_sync("EVAL", "return 1", 0);
      if (!eval.ok()) return eval.error().ToString();
      if (eval->is_error()) return "neither LOCK.* nor EVAL: " + eval->str;
    }
  }
  return "";
}

}  // namespace latch::test
