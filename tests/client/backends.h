#pragma once
// The servers every client and lock test runs against: a real redis-server, latchd embedded
// in-process (latch::Server on port 0) and the latchd binary. The latchd backends are built
// only with -DLATCH_CLIENT_TESTS_LATCHD=ON (tests/client/CMakeLists.txt), and a test skips
// itself on a latchd that lacks the commands it needs (see Missing()), so that the suite
// grows with the server.
#include <memory>
#include <string>
#include <vector>

#include "latch/client.h"

namespace latch::test {

enum class BackendKind { kRedis, kLatchEmbedded, kLatchd };
std::string BackendName(BackendKind kind);
std::vector<BackendKind> AllBackends();

class Backend {
 public:
  static std::unique_ptr<Backend> Start(BackendKind kind);
  virtual ~Backend() = default;

  virtual bool ok() const = 0;
  virtual std::string error() const = 0;
  virtual int port() const = 0;
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port()); }
  ClientOptions Options() const;

  virtual void Kill() = 0;     // stops serving: open connections break
  virtual bool Restart() = 0;  // same port
  virtual bool CanPause() const { return false; }
  virtual void Pause() {}
  virtual void Resume() {}
};

// What a test needs of the server. Returns "" when all of it works, else what is missing.
enum class Need { kStrings, kLocks };
std::string Missing(Client& client, Need need);

}  // namespace latch::test
