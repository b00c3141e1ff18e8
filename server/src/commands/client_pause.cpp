#include "commands/client_pause.h"

#include <algorithm>

#include "commands/command_table.h"

namespace latch {
namespace {
constexpr int kPauseWrite = 1;

// A write, or a command Redis flags may-replicate (a script that may write, PUBLISH, whose
// message a replica would be sent): Redis 7.0 postpones those too under a WRITE pause.
bool MayWrite(const CommandSpec& spec) {
  return (spec.flags & kCmdWrite) || spec.name == "eval" || spec.name == "evalsha" ||
         spec.name == "fcall" || spec.name == "publish";
}

// WRITE covers a command that writes, and an EXEC whose queue holds one.
bool CoveredByWritePause(const CommandSpec& spec, const CommandContext& ctx) {
  if (MayWrite(spec)) return true;
  if (spec.name != "exec" || ctx.server.commands == nullptr) return false;
  return std::any_of(ctx.session.queued.begin(), ctx.session.queued.end(),
                     [&](const std::vector<std::string>& args) {
                       const CommandSpec* q = ctx.server.commands->FindCommand(args);
                       return q != nullptr && MayWrite(*q);
                     });
}
}  // namespace

void ClientPause::Park(std::weak_ptr<BlockedClient> client, BlockedClient::Writer rerun) {
  std::lock_guard lock(mu_);
  std::erase_if(parked_, [](const auto& p) { return p.first.expired(); });
  parked_.emplace_back(std::move(client), std::move(rerun));
}

void ClientPause::ReleaseAll() {
  std::vector<std::pair<std::weak_ptr<BlockedClient>, BlockedClient::Writer>> parked;
  {
    std::lock_guard lock(mu_);
    parked.swap(parked_);
  }
  for (auto& [weak, rerun] : parked) {
    if (auto b = weak.lock()) b->TryComplete(std::move(rerun));
  }
}

bool PostponedByPause(const CommandSpec& spec, CommandContext& ctx) {
  ServerState& st = ctx.server;
  const int type = st.client_pause_type.load(std::memory_order_relaxed);
  if (type == 0 || ctx.origin != CommandOrigin::kClient || ctx.host == nullptr) return false;
  const std::int64_t now = st.clock->MonoMs();
  const std::int64_t end = st.client_pause_end_ms.load(std::memory_order_relaxed);
  if (now >= end) {
    // Over: clear the type so that Dispatch's fast path skips this again, unless a new
    // pause (which sets its end before its type) came meanwhile.
    int seen = type;
    if (st.client_pause_type.compare_exchange_strong(seen, 0) &&
        st.client_pause_end_ms.load() > now) {
      st.client_pause_type.store(type);
    }
    return false;
  }
  if (type == kPauseWrite && !CoveredByWritePause(spec, ctx)) return false;
  // The command runs later, from the connection's thread, through Dispatch again (a pause
  // renewed meanwhile parks it again). The argument views die with the read buffer: copy.
  auto args = std::make_shared<std::vector<std::string>>(ctx.args.begin(), ctx.args.end());
  BlockedClient::Writer rerun = [args, session = &ctx.session, state = &st,
                                 host = ctx.host](protocol::ReplyWriter& out) {
    std::vector<std::string_view> views(args->begin(), args->end());
    CommandContext again{views, out, *session, *state, state->clock->Now(), host};
    state->commands->Dispatch(again);
  };
  std::shared_ptr<BlockedClient> parked = ctx.host->Block(std::max<std::int64_t>(1, end - now));
  parked->on_timeout = rerun;
  st.client_pause->Park(parked, std::move(rerun));
  return true;
}

}  // namespace latch
