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
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/key_lock.h"
#include "journal/server_hooks.h"

namespace latch {
namespace {

// Parses a TTL in ms: a positive integer (SET PX's rules and its wording).
bool ParseTtl(CommandContext& ctx, std::string_view s, std::string_view cmd,
              std::int64_t* ttl) {
  if (!ParseInt64(s, ttl)) {
    ctx.out.Error(errors::kNotInteger);
    return false;
  }
  if (*ttl <= 0 || *ttl > LLONG_MAX / 2) {
    ctx.out.Error("ERR invalid expire time in '" + std::string(cmd) + "' command");
    return false;
  }
  return true;
}

store::LockTable& TableFor(CommandContext& ctx, const KeyRef& k) {
  return ctx.server.locks.ForHash(k.hash);
}

void AcquireCommand(CommandContext& ctx) {
  std::int64_t ttl;
  if (!ParseTtl(ctx, ctx.arg(3), "lock.acquire", &ttl)) return;
  bool wait = false;
  std::int64_t timeout = 0;
  if (ctx.argc() == 6 && EqualsNoCase(ctx.arg(4), "wait")) {
    if (!ParseInt64(ctx.arg(5), &timeout)) return ctx.out.Error(errors::kNotInteger);
    if (timeout < 0) return ctx.out.Error("ERR timeout is negative");
    wait = true;
  } else if (ctx.argc() != 4) {
    return ctx.out.Error(errors::kSyntax);
  }
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  store::LockTable& table = TableFor(ctx, k);
  // lock-restart-delay: answered as for a held lock, even with WAIT (docs/LOCKS.md).
  if (journal::GrantsHeldBack(ctx.server, ctx.now.mono_ms)) return ctx.out.Null();
  std::uint64_t token = table.TryAcquire(k.key, k.hash, ctx.arg(2), ttl, ctx.now);
  if (token != 0) return ctx.out.Integer(static_cast<std::int64_t>(token));
  if (!wait || ctx.host == nullptr) return ctx.out.Null();

  // Park: the queue holds the BlockedClient; whoever wins (grant, timeout, disconnect) is
  // the only one to reply. The blocked client does not own the table: on_abandon finds
  // it again through the server state, which outlives every connection.
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(timeout);
  blocked->on_timeout = [](protocol::ReplyWriter& w) { w.Null(); };
  store::LockWaiter waiter;
  waiter.owner = std::string(ctx.arg(2));
  waiter.ttl_ms = ttl;
  waiter.grant = [blocked](std::uint64_t granted) {
    return blocked->TryComplete([granted](protocol::ReplyWriter& w) {
      w.Integer(static_cast<std::int64_t>(granted));
    });
  };
  std::uint64_t id = table.Enqueue(k.key, k.hash, std::move(waiter));
  blocked->on_abandon = [&server = ctx.server, key = std::string(k.key), id] {
    KeyRef ref = Resolve(server.keyspace, key);
    ShardGuard relock(*ref.shard);
    server.locks.ForHash(ref.hash).RemoveWaiter(ref.key, ref.hash, id);
  };
}

void ReleaseCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  ctx.out.Integer(TableFor(ctx, k).Release(k.key, k.hash, ctx.arg(2), ctx.now));
}

void ExtendCommand(CommandContext& ctx) {
  std::int64_t ttl;
  if (!ParseTtl(ctx, ctx.arg(3), "lock.extend", &ttl)) return;
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  ShardGuard lock(*k.shard);
  ctx.out.Integer(TableFor(ctx, k).Extend(k.key, k.hash, ctx.arg(2), ttl, ctx.now));
}

void InfoCommand(CommandContext& ctx) {
  KeyRef k = Resolve(ctx.server.keyspace, ctx.arg(1));
  std::optional<store::LockInfo> info;
  {
    ShardGuard lock(*k.shard);
    info = TableFor(ctx, k).Info(k.key, k.hash, ctx.now);
  }
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
  t.Add({.name = "lock.info", .arity = 2, .flags = kCmdReadonly | kCmdFast, .first_key = 1,
         .last_key = 1, .key_step = 1, .handler = InfoCommand, .group = "lock",
         .summary = "Returns a lock's owner, fencing token, TTL and number of waiters.",
         .since = "0.1.0"});
}

}  // namespace latch
