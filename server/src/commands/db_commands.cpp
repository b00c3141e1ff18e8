// WAIT, and (with the sixteen databases) the commands that pick or move databases.
#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/errors.h"

namespace latch {
namespace {

// WAIT numreplicas timeout: latchd has no replicas, so no write is ever acknowledged by
// one. As Redis with none connected: asking for 0 answers 0 at once; asking for more parks
// the client until the timeout (0: for ever) and then answers 0. Inside MULTI (no
// BlockHost) it answers at once, as Redis does for a client that may not block.
void WaitCommand(CommandContext& ctx) {
  std::int64_t timeout = 0;
  if (!ParseInt64(ctx.arg(2), &timeout)) {
    return ctx.out.Error("ERR timeout is not an integer or out of range");
  }
  if (timeout < 0) return ctx.out.Error("ERR timeout is negative");
  std::int64_t replicas = 0;
  if (!ParseInt64(ctx.arg(1), &replicas)) return ctx.out.Error(errors::kNotInteger);
  if (replicas <= 0 || ctx.host == nullptr) return ctx.out.Integer(0);
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(timeout);
  blocked->on_timeout = [](protocol::ReplyWriter& w) { w.Integer(0); };
}

}  // namespace

void RegisterDbCommands(CommandTable& t) {
  t.Add({.name = "wait", .arity = 3, .flags = kCmdNoScript, .handler = WaitCommand,
         .group = "generic",
         .summary = "Blocks until the asynchronous replication of all preceding write commands "
                    "sent by the connection is completed.",
         .since = "3.0.0"});
}

}  // namespace latch
