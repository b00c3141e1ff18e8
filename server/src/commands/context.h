#pragma once
// What a command handler sees: its arguments, the reply writer, the connection's session
// and the shared server state, plus one time snapshot taken before the handler runs.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "commands/session.h"
#include "latch/clock.h"
#include "latch/protocol/reply_writer.h"
#include "server_state.h"
#include "store/key_ref.h"
#include "store/op_env.h"

namespace latch {

// A client parked by a blocking command (LOCK.ACQUIRE ... WAIT). The connection stops
// running that client's commands until exactly one of three things happens first: a claim
// from any thread (TryComplete, or TryClaim then Deliver: the reply is delivered), the
// timeout (on_timeout writes the reply), or the client disconnecting. In the last two cases
// on_abandon runs once on the connection's thread with no lock held, e.g. to remove the
// waiter from its queue.
//
// Durability (appendfsync): a delivered reply leaves the connection only once the journal
// record it depends on, named by its sequence number, is on disk (always) or written
// (everysec, no). So whatever makes the reply true is appended first: a lock grant claims
// the waiter, creates the key (which appends its record), then delivers with that record's
// number (docs/LOCKS.md, "No grant before its record").
class BlockedClient {
 public:
  using Writer = std::function<void(protocol::ReplyWriter&)>;
  // Posts (write, journal_seq) to the connection's thread.
  explicit BlockedClient(std::function<void(Writer, std::uint64_t)> deliver)
      : deliver_(std::move(deliver)) {}

  // Any thread, any lock held. True when this call won: neither the timeout nor a disconnect
  // can answer the client any more, and the caller must Deliver its reply, once.
  bool TryClaim() {
    int expected = kWaiting;
    return state_.compare_exchange_strong(expected, kDone);
  }
  // After a TryClaim that returned true: `write` will run on the connection's thread to
  // produce the reply, which waits for journal record `journal_seq` (0: none).
  void Deliver(Writer write, std::uint64_t journal_seq) { deliver_(std::move(write), journal_seq); }
  // TryClaim and Deliver in one, for a reply whose records are appended already (or that
  // appends them itself when `write` runs: the connection then waits for those too).
  bool TryComplete(Writer write, std::uint64_t journal_seq = 0) {
    if (!TryClaim()) return false;
    Deliver(std::move(write), journal_seq);
    return true;
  }
  // Connection side: true when the timeout/disconnect won over a claim.
  bool TryAbandon() {
    int expected = kWaiting;
    return state_.compare_exchange_strong(expected, kAbandoned);
  }

  Writer on_timeout;                // set by the handler
  std::function<void()> on_abandon;  // set by the handler

 private:
  enum { kWaiting, kDone, kAbandoned };
  std::atomic<int> state_{kWaiting};
  std::function<void(Writer, std::uint64_t)> deliver_;
};

// Implemented by the connection.
class BlockHost {
 public:
  virtual ~BlockHost() = default;
  // Parks the client; timeout_ms 0 = wait forever. The handler writes no reply itself.
  virtual std::shared_ptr<BlockedClient> Block(std::int64_t timeout_ms) = 0;
};

// Who runs a command. A client's own command may be refused (BUSY, OOM) and waits for its
// shards in a way that can give up; a command run by EXEC or by a script runs on a thread
// that already holds every shard and was checked as a whole.
enum class CommandOrigin : std::uint8_t { kClient, kExec, kScript };

struct CommandContext {
  std::span<const std::string_view> args;
  protocol::ReplyWriter& out;
  Session& session;
  ServerState& server;
  TimeSnapshot now;
  BlockHost* host = nullptr;  // null where blocking is impossible (scripts, MULTI, tests)
  CommandOrigin origin = CommandOrigin::kClient;
  // Set by Dispatch for a command with key positions: its keys, hashed once, in argument
  // order, their shards held for the handler's whole run.
  std::span<const store::KeyRef> keys = {};
  // Set by a handler that parked its client and records the call itself when the work ends
  // (a Lua script run on the script thread): Dispatch then records nothing.
  bool record_later = false;

  std::string_view arg(std::size_t i) const { return args[i]; }
  std::size_t argc() const { return args.size(); }
  const store::KeyRef& key(std::size_t i) const { return keys[i]; }
  // The keyspace of the database this command runs in (SELECT): every handler finds its keys
  // through here, never through server.dbs directly. One indexed load.
  store::Keyspace& db() const { return server.dbs.at(session.db); }
  // What the Op layer needs: the time snapshot and the lock counters.
  store::OpEnv env() const {
    return store::OpEnv{now, &server.locks.stats(),
                        server.grants_held_until_mono_ms.load(std::memory_order_relaxed) >
                            now.mono_ms};
  }
};

}  // namespace latch
