// LOCK.ACQUIRE / LOCK.RELEASE / LOCK.EXTEND / LOCK.INFO: the Cmd layer of the native locks
// (store/lock_table.h holds the semantics). Replies:
//   LOCK.ACQUIRE key owner ttl-ms [WAIT timeout-ms] -> fencing token, or nil. With WAIT the
//     client is parked in the key's FIFO queue until a grant (token) or the timeout (nil);
//     WAIT 0 waits forever. Where a client cannot block (MULTI, scripts) WAIT is ignored.
//     A re-acquire by the current owner is not a grant (nil), as with SET NX.
//   LOCK.RELEASE key owner / LOCK.EXTEND key owner ttl-ms -> 1 done, 0 another owner holds
//     the key, -1 nobody holds it (expired or never taken).
//   LOCK.INFO key -> {owner, token (nil unless granted by LOCK.ACQUIRE), ttl, waiters}: a
//     map in RESP3, a flat array in RESP2; nil when the key is not held.
#include <climits>
#include <memory>
#include <optional>
#include <string>

#include "commands/arg_parse.h"
#include "commands/clock_advance.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/expiry_arg.h"
#include "commands/key_lock.h"
#include "journal/journal.h"
#include "metrics/lock_timings.h"
#include "store/lock_ops.h"

namespace latch {
namespace {

// Parses a TTL in ms: a positive integer (SET PX's rules and wording). Replies the error on
// failure; on success *deadline is the lease's monotonic deadline for this command.
bool ParseTtl(CommandContext& ctx, std::string_view s, std::string_view cmd,
              std::int64_t* deadline) {
  switch (ParseExpiry(s, ExpiryForm{.positive_only = true}, ctx.now, deadline)) {
    case ExpiryStatus::kOk:
      return true;
    case ExpiryStatus::kNotInteger:
      ctx.out.Error(errors::kNotInteger);
      return false;
    case ExpiryStatus::kInvalid:
      ctx.out.Error("ERR invalid expire time in '" + std::string(cmd) + "' command");
      return false;
  }
  return false;
}

store::LockTable& TableFor(CommandContext& ctx, const KeyRef& k) {
  return ctx.server.locks.ForShard(k.shard->index());
}

// Parks the client in the key's queue: the queue holds the BlockedClient; whoever wins
// (grant, deadline, disconnect) is the only one to reply. The deadline is on the injected
// Clock (the table's TimeOutWaiters and grants check it); the connection's own timer is a
// backstop for a clock that does not move. Not on a ManualClock: there only the clock may end
// the wait (a test that has not advanced it must not see a real-time timeout).
void Park(CommandContext& ctx, const KeyRef& k, std::int64_t ttl, std::int64_t timeout) {
  const bool manual = ManualClockOf(ctx.server) != nullptr;
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(manual ? 0 : timeout);
  // The connection's timer beat the table's deadline check (which counts its own timeouts):
  // the timeout is counted here, so latch_lock_wait_timeouts_total sees every one.
  blocked->on_timeout = [timings = ctx.server.lock_timings, clock = ctx.server.clock,
                         enqueued = ctx.now.mono_ms](protocol::ReplyWriter& w) {
    if (timings) {
      timings->wait.Observe((clock->Now().mono_ms - enqueued) * 1'000'000);
      timings->wait_timeouts.fetch_add(1, std::memory_order_relaxed);
    }
    w.Null();
  };
  store::LockWaiter waiter;
  waiter.owner = std::string(ctx.arg(2));
  waiter.ttl_ms = ttl;
  waiter.deadline_ms = timeout == 0 ? 0 : ctx.now.mono_ms + timeout;
  waiter.claim = [blocked] { return blocked->TryClaim(); };
  // On the granting thread, right after the key was created: the reply waits for the record
  // that creation appended on this thread.
  waiter.grant = [blocked](std::uint64_t granted) {
    blocked->Deliver(
        [granted](protocol::ReplyWriter& w) {
          if (granted == 0) return w.Null();
          w.Integer(static_cast<std::int64_t>(granted));
        },
        journal::ThisThreadLastSeq());
  };
  waiter.time_out = [blocked] {
    blocked->TryComplete([](protocol::ReplyWriter& w) { w.Null(); });
  };
  const std::uint64_t id = TableFor(ctx, k).Enqueue(k.key, k.hash, std::move(waiter));
  // The blocked client does not own the table: on_abandon finds it again through the
  // server state, which outlives every connection. It runs on the connection's thread: its
  // wait for the shard gives up while a script is busy (the abandoned waiter then stays
  // queued until its deadline or the key's next hand-off drops it: grant() refuses).
  // The waiter's keyspace, not "the database numbered so": a SWAPDB since moved the keyspace
  // (with its lock tables) to another number. Keyspaces live as long as the server.
  blocked->on_abandon = [&server = ctx.server, &ks = ctx.db(), key = std::string(k.key), id] {
    const KeyRef ref = Resolve(ks, key);
    ShardSet relock;
    if (!relock.Lock(ks, ref, &server.script_busy)) return;
    server.locks.ForShard(ref.shard->index()).RemoveWaiter(ref.key, ref.hash, id);
  };
}

void AcquireCommand(CommandContext& ctx) {
  std::int64_t deadline;
  if (!ParseTtl(ctx, ctx.arg(3), "lock.acquire", &deadline)) return;
  const std::int64_t ttl = deadline - ctx.now.mono_ms;
  bool wait = false;
  std::int64_t timeout = 0;
  if (ctx.argc() == 6 && EqualsNoCase(ctx.arg(4), "wait")) {
    if (!ParseInt64(ctx.arg(5), &timeout)) return ctx.out.Error(errors::kNotInteger);
    if (timeout < 0) return ctx.out.Error("ERR timeout is negative");
    wait = true;
  } else if (ctx.argc() != 4) {
    return ctx.out.Error(errors::kSyntax);
  }
  const KeyRef& k = ctx.key(0);
  // lock-restart-delay: answered as for a held lock, even with WAIT (docs/LOCKS.md).
  if (ctx.env().grants_held) return ctx.out.Null();
  const std::uint64_t token = store::OpAcquire(TableFor(ctx, k), k, ctx.arg(2), ttl, ctx.now);
  if (token != 0) return ctx.out.Integer(static_cast<std::int64_t>(token));
  if (!wait || ctx.host == nullptr) return ctx.out.Null();
  Park(ctx, k, ttl, timeout);
}

int LockReply(store::OpStatus s) {
  return s == store::OpStatus::kOk ? 1 : s == store::OpStatus::kNotMet ? 0 : -1;
}

void ReleaseCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  ctx.out.Integer(LockReply(store::OpRelease(TableFor(ctx, k), k, ctx.arg(2), ctx.now)));
}

void ExtendCommand(CommandContext& ctx) {
  std::int64_t deadline;
  if (!ParseTtl(ctx, ctx.arg(3), "lock.extend", &deadline)) return;
  const KeyRef& k = ctx.key(0);
  const std::int64_t ttl = deadline - ctx.now.mono_ms;
  ctx.out.Integer(LockReply(store::OpExtend(TableFor(ctx, k), k, ctx.arg(2), ttl, ctx.now)));
}

void LockInfoCommand(CommandContext& ctx) {
  const KeyRef& k = ctx.key(0);
  const std::optional<store::LockInfo> info = TableFor(ctx, k).Info(k.key, k.hash, ctx.now);
  if (!info) return ctx.out.Null();
  ctx.out.MapHeader(4);
  ctx.out.Bulk("owner");
  ctx.out.Bulk(info->owner);
  ctx.out.Bulk("token");
  if (info->token) {
    ctx.out.Integer(static_cast<std::int64_t>(*info->token));
  } else {
    ctx.out.Null();
  }
  ctx.out.Bulk("ttl");
  ctx.out.Integer(info->ttl_ms);
  ctx.out.Bulk("waiters");
  ctx.out.Integer(static_cast<std::int64_t>(info->waiters));
}

}  // namespace

void RegisterLockCommands(CommandTable& t) {
  const auto w = kCmdWrite | kCmdFast;
  t.Add({.name = "lock.acquire", .arity = -4, .flags = kCmdWrite | kCmdDenyOom | kCmdBlocking,
         .first_key = 1, .last_key = 1, .key_step = 1, .handler = AcquireCommand,
         .group = "lock",
         .summary = "Acquires a lock and returns its fencing token; with WAIT, queues for it.",
         .since = "0.1.0"});
  t.Add({.name = "lock.release", .arity = 3, .flags = w, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = ReleaseCommand, .group = "lock",
         .summary = "Releases a lock held by the owner and hands it to the next waiter.",
         .since = "0.1.0"});
  t.Add({.name = "lock.extend", .arity = 4, .flags = w, .first_key = 1, .last_key = 1,
         .key_step = 1, .handler = ExtendCommand, .group = "lock",
         .summary = "Sets a new TTL on a lock held by the owner.", .since = "0.1.0"});
  t.Add({.name = "lock.info",
         .arity = 2,
         .flags = kCmdReadonly | kCmdFast,
         .first_key = 1,
         .last_key = 1,
         .key_step = 1,
         .handler = LockInfoCommand,
         .group = "lock",
         .summary = "Returns a lock's owner, fencing token, TTL and number of waiters.",
         .since = "0.1.0"});
}

}  // namespace latch
