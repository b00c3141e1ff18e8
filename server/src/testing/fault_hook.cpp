#include "testing/fault_hook.h"

#include <memory>
#include <string>
#include <vector>

#include "commands/command_table.h"
#include "fault_injector.h"

namespace latch::testing {
namespace {

// Set while a faulted command is run for real (replayed): the replay goes through Dispatch
// again and must not be intercepted a second time.
thread_local bool replaying = false;

// Runs the command through the whole dispatcher with `out` as its writer and `host` for
// blocking (null: a blocking command answers as if it could not wait).
void Replay(std::span<const std::string_view> args, protocol::ReplyWriter& out, Session& session,
            ServerState& server, BlockHost* host) {
  CommandContext ctx{args, out, session, server, server.clock->Now(), host};
  replaying = true;
  try {
    server.commands->Dispatch(ctx);
  } catch (...) {
    replaying = false;
    throw;
  }
  replaying = false;
}

// Applied, reply lost: the reply goes to a scratch buffer and the connection is closed once
// the replies before this one are written, so the client sees its connection drop.
void DropReply(CommandContext& ctx) {
  std::string scratch;
  protocol::ReplyWriter discard(&scratch, ctx.out.proto());
  Replay(ctx.args, discard, ctx.session, ctx.server, nullptr);
  ctx.session.close_after_reply = true;
}

// Parks the client for `ms` of real time, then runs the command (its arguments copied: the
// read buffer moves on) and writes its reply, in order with the connection's other replies.
void Delay(CommandContext& ctx, std::int64_t ms) {
  auto owned = std::make_shared<std::vector<std::string>>(ctx.args.begin(), ctx.args.end());
  std::shared_ptr<BlockedClient> blocked = ctx.host->Block(ms);
  blocked->on_timeout = [owned, &session = ctx.session, &server = ctx.server,
                         host = ctx.host](protocol::ReplyWriter& out) {
    std::vector<std::string_view> args(owned->begin(), owned->end());
    Replay(args, out, session, server, host);
  };
}

}  // namespace

bool InterceptCommand(const CommandSpec& spec, CommandContext& ctx) {
  if (replaying || ctx.origin != CommandOrigin::kClient || ctx.host == nullptr) return false;
  const std::string_view name = spec.name;
  if (name.starts_with("test.")) return false;
  std::string_view key;
  if (spec.first_key > 0 && static_cast<std::size_t>(spec.first_key) < ctx.argc()) {
    key = ctx.arg(static_cast<std::size_t>(spec.first_key));
  }
  std::optional<FaultDecision> fault = ctx.server.faults.Decide(name, key);
  if (!fault) return false;
  switch (fault->action) {
    case FaultAction::kError:
      ctx.out.Error(fault->error);
      return true;
    case FaultAction::kTimeout:
      ctx.host->Block(0);  // never answered; the client gives up (or disconnects) first
      return true;
    case FaultAction::kDropReply:
      DropReply(ctx);
      return true;
    case FaultAction::kDelay:
      if (fault->delay_ms <= 0) return false;
      Delay(ctx, fault->delay_ms);
      return true;
  }
  return false;
}

}  // namespace latch::testing
