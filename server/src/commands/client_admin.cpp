// CLIENT KILL, PAUSE, UNPAUSE and NO-EVICT: the CLIENT subcommands an operator uses, with
// Redis 7.0's syntax and errors. Other connections are reached through ClientInfo::kill
// (posted to their own thread); the pause is kept in ServerState and applied by Dispatch
// (client_pause.h).
#include <algorithm>
#include <cstdint>

#include "commands/arg_parse.h"
#include "commands/client_list.h"
#include "commands/client_pause.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/subcommand.h"
#include "latch/protocol/error_arg.h"

namespace latch {
namespace {

struct KillFilter {
  std::int64_t id = 0;  // 0: any
  bool by_type = false;
  ClientType type = ClientType::kNormal;
  std::string addr, laddr, user;
  bool skip_me = true;
};

std::string SubcommandSyntaxError(std::string_view sub) {
  return "ERR unknown subcommand or wrong number of arguments for '" +
         std::string(protocol::ErrorArg(sub)) + "'. Try CLIENT HELP.";
}

// The new form's options, as Redis parses them: name/value pairs, a name without a value or
// an unknown name is a syntax error. Returns the error, empty when parsed.
std::string ParseKillFilter(CommandContext& ctx, KillFilter* f) {
  for (std::size_t i = 2; i < ctx.argc(); i += 2) {
    const std::string_view opt = ctx.arg(i);
    if (i + 1 >= ctx.argc()) return std::string(errors::kSyntax);
    const std::string_view value = ctx.arg(i + 1);
    if (EqualsNoCase(opt, "id")) {
      if (!ParseInt64(value, &f->id) || f->id <= 0) {
        return "ERR client-id should be greater than 0";
      }
    } else if (EqualsNoCase(opt, "type")) {
      f->by_type = true;
      if (!ParseClientType(value, &f->type)) {
        return "ERR Unknown client type '" + std::string(protocol::ErrorArg(value)) + "'";
      }
    } else if (EqualsNoCase(opt, "addr")) {
      f->addr = value;
    } else if (EqualsNoCase(opt, "laddr")) {
      f->laddr = value;
    } else if (EqualsNoCase(opt, "user")) {
      // latchd has one user, "default" (ACL users are a separate issue).
      if (value != "default") {
        return "ERR No such user '" + std::string(protocol::ErrorArg(value)) + "'";
      }
      f->user = value;
    } else if (EqualsNoCase(opt, "skipme")) {
      if (EqualsNoCase(value, "yes")) {
        f->skip_me = true;
      } else if (EqualsNoCase(value, "no")) {
        f->skip_me = false;
      } else {
        return std::string(errors::kSyntax);
      }
    } else {
      return std::string(errors::kSyntax);
    }
  }
  return {};
}

bool Matches(const KillFilter& f, const ClientInfo& c) {
  if (f.id != 0 && c.id != f.id) return false;
  if (f.by_type && TypeOf(c) != f.type) return false;
  if (!f.addr.empty() && c.addr != f.addr) return false;
  if (!f.laddr.empty() && c.laddr != f.laddr) return false;
  return true;
}

// Kills the matching clients; the caller itself is closed after this reply, as Redis does.
std::int64_t KillMatching(CommandContext& ctx, const KillFilter& f) {
  const std::int64_t me = ctx.session.info->id;
  std::int64_t killed = 0;
  bool kill_me = false;
  ctx.server.clients.ForEach([&](ClientInfo& c) {
    if (!Matches(f, c)) return;
    if (c.id == me) {
      if (f.skip_me) return;
      kill_me = true;
    } else if (c.kill) {
      c.kill();
    } else {
      return;  // a REST request's session: nothing to close
    }
    ++killed;
  });
  if (kill_me) ctx.session.close_after_reply = true;
  return killed;
}

void ClientKillCommand(CommandContext& ctx) {
  if (ctx.argc() == 3) {  // the old form: CLIENT KILL ip:port
    KillFilter f;
    f.addr = ctx.arg(2);
    f.skip_me = false;
    if (KillMatching(ctx, f) == 0) return ctx.out.Error("ERR No such client");
    return ctx.out.Ok();
  }
  KillFilter f;
  const std::string error = ParseKillFilter(ctx, &f);
  if (!error.empty()) return ctx.out.Error(error);
  ctx.out.Integer(KillMatching(ctx, f));
}

void ClientPauseCommand(CommandContext& ctx) {
  if (ctx.argc() > 4) return ctx.out.Error(SubcommandSyntaxError(ctx.arg(1)));
  std::int64_t ms = 0;
  if (!ParseInt64(ctx.arg(2), &ms)) {
    return ctx.out.Error("ERR timeout is not an integer or out of range");
  }
  if (ms < 0) return ctx.out.Error("ERR timeout is negative");
  int type = 2;  // ALL
  if (ctx.argc() == 4) {
    if (EqualsNoCase(ctx.arg(3), "write")) {
      type = 1;
    } else if (!EqualsNoCase(ctx.arg(3), "all")) {
      return ctx.out.Error("ERR CLIENT PAUSE mode must be WRITE or ALL");
    }
  }
  ServerState& st = ctx.server;
  const std::int64_t now = st.clock->MonoMs();
  const std::int64_t end = ms > INT64_MAX - now ? INT64_MAX : now + ms;
  // As Redis: a pause can only be made longer or stricter by another one.
  if (st.client_pause_end_ms.load() <= now) st.client_pause_type.store(0);
  if (end > st.client_pause_end_ms.load()) st.client_pause_end_ms.store(end);
  if (type > st.client_pause_type.load()) st.client_pause_type.store(type);
  ctx.out.Ok();
}

void ClientUnpauseCommand(CommandContext& ctx) {
  ctx.server.client_pause_type.store(0);
  ctx.server.client_pause_end_ms.store(0);
  ctx.server.client_pause->ReleaseAll();
  ctx.out.Ok();
}

// latchd never evicts clients: the mode is accepted and has nothing to change.
void ClientNoEvictCommand(CommandContext& ctx) {
  if (EqualsNoCase(ctx.arg(2), "on") || EqualsNoCase(ctx.arg(2), "off")) return ctx.out.Ok();
  ctx.out.Error(errors::kSyntax);
}

constexpr SubcommandFamily kClientAdminSub{
    .container = "client",
    .flags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
    .group = "connection"};

}  // namespace

void AddClientAdminSubcommands(CommandSpec& client) {
  client.subcommands.push_back(
      kClientAdminSub("kill", -3, ClientKillCommand, "Terminates open connections.", "2.4.0"));
  client.subcommands.push_back(
      kClientAdminSub("pause", -3, ClientPauseCommand, "Suspends commands processing.", "3.0.0"));
  client.subcommands.push_back(kClientAdminSub("unpause", 2, ClientUnpauseCommand,
                                               "Resumes processing commands from paused clients.",
                                               "6.2.0"));
  client.subcommands.push_back(kClientAdminSub("no-evict", 3, ClientNoEvictCommand,
                                               "Sets the client eviction mode of the connection.",
                                               "7.0.0"));
}

}  // namespace latch
