#pragma once
// latch::testing::ScopedServer: a latch server for one test, in one line.
//
//   latch::testing::ScopedServer server;           // 127.0.0.1, a free port, manual clock
//   connect_your_client(server.url());             // "redis://127.0.0.1:<port>"
//   server.Set("k", "v", 100ms);
//   server.Advance(100ms);                         // TTLs, hand-offs, WAIT timeouts move now
//   EXPECT_FALSE(server.Exists("k"));
//   server.InjectFault({.action = FaultAction::kDropReply, .command = "set"});
//
// Inspection and seeding go through the server's own command table in-process (no socket,
// same write path as a client's command), so what they see and do is what a client would.
// Every method may be called from the test's thread while clients run; none is safe to call
// concurrently with Stop/Start/Restart. No GoogleTest here: latch/testing/gtest.h adds a fixture.
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "latch/clock.h"
#include "latch/options.h"
#include "latch/protocol/reply.h"
#include "latch/server.h"
#include "latch/testing/check.h"
#include "latch/testing/fault.h"

namespace latch::testing {

using Millis = std::chrono::milliseconds;

// What LOCK.INFO reports of a held key.
struct LockState {
  std::string owner;
  std::optional<std::int64_t> fencing_token;  // absent unless granted by LOCK.ACQUIRE
  std::int64_t ttl_ms = -1;                   // -1: no TTL
  std::int64_t waiters = 0;
};

struct Counters {
  std::uint64_t connections_total = 0;  // accepted since start (INFO total_connections_received)
  std::uint64_t connected_clients = 0;  // open now
  std::uint64_t commands_total = 0;     // run since start
  std::map<std::string, std::uint64_t> commands;  // by lower-case name ("set", "lock.acquire")
  std::uint64_t lock_grants = 0;
  std::uint64_t lock_handoffs = 0;
  FaultCounts faults;
};

// Restart(): what the new process-equivalent starts with.
enum class Data { kKeep, kDrop };

class ScopedServer {
 public:
  // Starts at once (throws std::runtime_error when it cannot). Options: DefaultOptions()'s,
  // or yours: port 0 picks a free port, a null clock gets a ManualClock, and test mode is on.
  ScopedServer();
  explicit ScopedServer(Options options);
  ~ScopedServer();  // stops the server
  ScopedServer(const ScopedServer&) = delete;
  ScopedServer& operator=(const ScopedServer&) = delete;

  // 127.0.0.1, port 0, one io thread, 4 shards, loglevel warning, test commands on.
  static Options DefaultOptions();

  int port() const { return port_; }
  std::string host() const { return "127.0.0.1"; }
  std::string addr() const;  // "127.0.0.1:port"
  std::string url() const;   // "redis://127.0.0.1:port" ("redis://:pass@..." after RequireAuth)
  Server& server() { return *server_; }
  // The manual clock; throws std::logic_error if the options brought another clock.
  ManualClock& clock();

  // --- data, without the network ------------------------------------------------------
  std::optional<std::string> Get(std::string_view key);
  // SET key value [PX ttl]; ttl 0 = no TTL.
  void Set(std::string_view key, std::string_view value, Millis ttl = Millis{0});
  bool Del(std::string_view key);  // true when the key existed
  bool Exists(std::string_view key);
  std::vector<std::string> Keys(std::string_view pattern = "*");  // sorted
  // PTTL: milliseconds left, -1 for no TTL, -2 for no key.
  std::int64_t Ttl(std::string_view key);
  void FlushAll();
  std::optional<LockState> Lock(std::string_view key);  // nullopt: the key does not exist
  // Any command, in-process; the reply rendered as redis-cli does ("OK", "(integer) 1",
  // "(nil)", "(error) ERR ..."). For what the helpers above do not cover.
  std::string Do(std::initializer_list<std::string_view> args);
  std::string Do(const std::vector<std::string>& args);
  // CONFIG SET requirepass (empty: none again); url() then carries the password.
  void RequireAuth(std::string_view password);

  // --- checks with readable diffs (see check.h; EXPECT_LATCH in gtest.h) --------------
  CheckResult CheckGet(std::string_view key, std::string_view expected);
  CheckResult CheckMissing(std::string_view key);
  CheckResult CheckKeys(std::string_view pattern, std::vector<std::string> expected);
  CheckResult CheckTtl(std::string_view key, Millis expected);
  CheckResult CheckLockOwner(std::string_view key, std::string_view owner);

  // --- time ----------------------------------------------------------------------------
  // Moves the manual clock; before it returns, every TTL due by then has expired (lock
  // hand-offs done) and every LOCK.ACQUIRE ... WAIT due by then has been answered nil.
  void Advance(Millis ms);
  // Steps the wall clock only: EXAT/PXAT deadlines and TIME move, relative TTLs do not.
  void StepWall(Millis ms);

  // --- lifecycle -------------------------------------------------------------------------
  void Stop();   // clients are disconnected; port() stays reserved for Start()
  void Start();  // on the same port, with the data it had (or the journal's, when on)
  bool running() const { return running_; }
  // Stop() then Start() on the same port. kKeep: with the journal on (appendonly), a new
  // server loads it, as a restarted process would; otherwise the keys stay in memory. kDrop:
  // an empty server (the journal files, if any, are deleted first).
  void Restart(Data data = Data::kKeep);

  // --- counters and faults ------------------------------------------------------------
  Counters counters();
  std::uint64_t CommandCount(std::string_view name);
  // Returns the rule's id. TEST.FAULT is the same over the wire.
  std::uint64_t InjectFault(FaultRule rule);
  void Pause(Millis ms);  // every command arriving in the next `ms` waits for its end
  void ClearFaults();     // disarms the rules and ends a pause (counts are kept)
  void ResetFaults();     // ClearFaults and zeroes the fault and command counters

 private:
  void StartNew();
  protocol::Reply Call(const std::vector<std::string>& args);

  Options options_;
  std::shared_ptr<Clock> clock_;
  std::unique_ptr<Server> server_;
  int port_ = 0;
  bool running_ = false;
  std::string password_;
  struct Runner;  // the in-process client (session, reply buffer)
  std::unique_ptr<Runner> runner_;
};

}  // namespace latch::testing
