#pragma once
// CLIENT PAUSE / UNPAUSE. While a pause lasts, a client's command that it covers (ALL: every
// command; WRITE: writes, the commands Redis flags "may replicate" (EVAL/EVALSHA, FCALL,
// PUBLISH) and an EXEC whose queue holds one) is not run: the client is parked (BlockHost)
// with a copy of the command, and runs it when the pause ends or CLIENT UNPAUSE comes, behind
// which its pipeline waits, as Redis postpones a paused client. Expiry is held meanwhile
// (ServerState::ExpiryPaused: the worker tick skips active expiry, and a lookup leaves an
// expired key in place), so no lock runs out and is handed to a waiter.
//
// Not paused: commands from EXEC and scripts (their client was checked as a whole), and
// REST requests (a stateless HTTP request has no connection to park).
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "commands/context.h"

namespace latch {

struct CommandSpec;

class ClientPause {
 public:
  // Remembers a parked client so that UNPAUSE can run its command at once.
  void Park(std::weak_ptr<BlockedClient> client, BlockedClient::Writer rerun);
  // CLIENT UNPAUSE: every parked client runs its command (each on its own thread).
  void ReleaseAll();

  // DEBUG SET-ACTIVE-EXPIRE 0 also holds the tick's active expiry, for good (until 1);
  // lookups still expire keys. Kept here, beside the pause that holds it for a while.
  void set_active_expire(bool on) { active_expire_off_.store(!on, std::memory_order_relaxed); }
  bool active_expire_off() const { return active_expire_off_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> active_expire_off_{false};
  std::mutex mu_;
  std::vector<std::pair<std::weak_ptr<BlockedClient>, BlockedClient::Writer>> parked_;
};

// Dispatch's hook, called when a pause type is set: true when this client's command was
// parked until the pause ends (nothing is written now).
bool PostponedByPause(const CommandSpec& spec, CommandContext& ctx);

}  // namespace latch
