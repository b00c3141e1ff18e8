// BGREWRITEAOF: asks the journal (journal/persistence.h) for a rewrite and relays its reply.
#include "commands/command_table.h"
#include "journal/persistence.h"

namespace latch {

namespace {
void BgRewriteAofCommand(CommandContext& ctx) {
  const std::string reply = ctx.server.persistence->RequestRewrite();
  if (reply[0] == '+') return ctx.out.Simple(std::string_view(reply).substr(1));
  ctx.out.Error(std::string_view(reply).substr(1));
}
}  // namespace

void RegisterPersistenceCommands(CommandTable& t) {
  t.Add({.name = "bgrewriteaof",
         .arity = 1,
         .flags = kCmdAdmin | kCmdNoScript,
         .handler = BgRewriteAofCommand,
         .group = "server",
         .summary = "Asynchronously rewrites the append-only file to disk.",
         .since = "1.0.0"});
}

}  // namespace latch
