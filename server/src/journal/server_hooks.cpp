#include "journal/server_hooks.h"

#include "commands/command_table.h"
#include "journal/persistence.h"

namespace latch::journal {

std::uint64_t AppendedSeq(const ServerState& s) {
  const Journal* j = s.persistence ? s.persistence->journal() : nullptr;
  return j == nullptr ? 0 : j->appended();
}

bool HoldUntilDurable(const ServerState& s, std::uint64_t seq, boost::asio::io_context& on,
                      std::function<void()> resume) {
  Journal* j = s.persistence ? s.persistence->journal() : nullptr;
  return j != nullptr && j->WhenDurable(seq, std::move(resume), &on);
}

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

}  // namespace latch::journal
