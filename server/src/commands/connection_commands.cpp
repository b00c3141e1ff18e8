// PING, ECHO, QUIT, AUTH, HELLO, SELECT, CLIENT ...: the connection's own state.
#include <mutex>
#include <optional>
#include <string>

#include "commands/acl_gate.h"
#include "commands/arg_parse.h"
#include "commands/client_list.h"
#include "commands/client_subscriptions.h"
#include "commands/command_table.h"
#include "commands/errors.h"
#include "commands/subcommand.h"
#include "commands/transaction_commands.h"
#include "latch/protocol/error_arg.h"

namespace latch {
namespace {

// The Redis version latchd reports to clients (HELLO, INFO redis_version): client libraries
// gate features on it, and latchd implements the 7.0 command set they rely on.
constexpr std::string_view kCompatVersion = "7.0.15";

void PingCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.out.Error("ERR wrong number of arguments for 'ping' command");
  } else if (ctx.session.subscriptions != 0 && ctx.out.proto() == 2) {
    // A RESP2 subscriber reads arrays only: Redis answers [pong, argument or ""].
    ctx.out.ArrayHeader(2);
    ctx.out.Bulk("pong");
    ctx.out.Bulk(ctx.argc() == 2 ? ctx.arg(1) : std::string_view());
  } else if (ctx.argc() == 2) {
    ctx.out.Bulk(ctx.arg(1));
  } else {
    ctx.out.Simple("PONG");
  }
}

void EchoCommand(CommandContext& ctx) { ctx.out.Bulk(ctx.arg(1)); }

void QuitCommand(CommandContext& ctx) {
  ctx.out.Ok();
  ctx.session.close_after_reply = true;
}

void AuthCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.out.Error(errors::kSyntax);
  std::string_view user = "default";
  std::string_view pass;
  if (ctx.argc() == 2) {
    if (!ctx.server.auth_required.load()) return ctx.out.Error(errors::kAuthNotConfigured);
    pass = ctx.arg(1);
  } else {
    user = ctx.arg(1);
    pass = ctx.arg(2);
  }
  if (!acl::Login(ctx, user, pass)) return ctx.out.Error(errors::kWrongPass);
  ctx.out.Ok();
}

bool ValidClientName(std::string_view name) {
  for (char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

void HelloCommand(CommandContext& ctx) {
  std::int64_t ver = 0;
  std::size_t next = 1;
  if (ctx.argc() >= 2) {
    if (!ParseInt64(ctx.arg(next++), &ver)) return ctx.out.Error(errors::kHelloNotInteger);
    if (ver < 2 || ver > 3) return ctx.out.Error(errors::kNoProto);
  }
  std::string_view user, pass, name;
  bool has_auth = false, has_name = false;
  for (std::size_t j = next; j < ctx.argc(); ++j) {
    std::size_t more = ctx.argc() - 1 - j;
    std::string_view opt = ctx.arg(j);
    if (EqualsNoCase(opt, "auth") && more >= 2) {
      user = ctx.arg(j + 1);
      pass = ctx.arg(j + 2);
      has_auth = true;
      j += 2;
    } else if (EqualsNoCase(opt, "setname") && more >= 1) {
      name = ctx.arg(++j);
      has_name = true;
    } else {
      return ctx.out.Error("ERR Syntax error in HELLO option '" +
                           std::string(protocol::ErrorArg(opt)) + "'");
    }
  }
  if (has_auth) {
    if (!acl::Login(ctx, user, pass)) return ctx.out.Error(errors::kWrongPass);
  }
  if (!ctx.session.authenticated) return ctx.out.Error(errors::kHelloNoAuth);
  if (has_name) {
    if (!ValidClientName(name)) return ctx.out.Error(errors::kClientNameChars);
    std::lock_guard lock(ctx.server.clients.mu);
    ctx.session.info->name = name;
  }
  if (ver != 0) {
    ctx.session.proto = static_cast<int>(ver);
    ctx.out.set_proto(ctx.session.proto);
    ctx.session.info->proto = ctx.session.proto;
  }
  ctx.out.MapHeader(7);
  ctx.out.Bulk("server");
  ctx.out.Bulk("redis");
  ctx.out.Bulk("version");
  ctx.out.Bulk(kCompatVersion);
  ctx.out.Bulk("proto");
  ctx.out.Integer(ctx.session.proto);
  ctx.out.Bulk("id");
  ctx.out.Integer(ctx.session.info->id);
  ctx.out.Bulk("mode");
  ctx.out.Bulk("standalone");
  ctx.out.Bulk("role");
  ctx.out.Bulk("master");
  ctx.out.Bulk("modules");
  ctx.out.ArrayHeader(0);
}

// RESET (Redis 6.2+): the connection as it was right after connecting. MULTI is discarded
// and WATCHes dropped, the protocol goes back to RESP2 (the +RESET reply already in RESP2),
// the name is cleared, every channel and pattern is unsubscribed (no confirmations) and the
// client is the default user again (it must AUTH again when the default user needs a
// password). latchd has no tracking or reply modes.
void ResetCommand(CommandContext& ctx) {
  Session& s = ctx.session;
  ResetMulti(s);
  ClearWatches(s, ctx.server.watches);
  pubsub::LeaveAll(s, ctx.server.pubsub);
  acl::ResetToDefault(ctx);
  s.proto = 2;
  ctx.out.set_proto(2);
  s.info->proto = 2;
  s.db = 0;  // back to database 0, as Redis
  s.info->db = 0;
  {
    std::lock_guard lock(ctx.server.clients.mu);
    s.info->name.clear();
  }
  ctx.out.Simple("RESET");
}

void ClientIdCommand(CommandContext& ctx) { ctx.out.Integer(ctx.session.info->id); }

void ClientSetNameCommand(CommandContext& ctx) {
  if (!ValidClientName(ctx.arg(2))) return ctx.out.Error(errors::kClientNameChars);
  std::lock_guard lock(ctx.server.clients.mu);
  ctx.session.info->name = ctx.arg(2);
  ctx.out.Ok();
}

void ClientGetNameCommand(CommandContext& ctx) {
  std::string name;
  {
    std::lock_guard lock(ctx.server.clients.mu);
    name = ctx.session.info->name;
  }
  if (name.empty()) return ctx.out.Null();
  ctx.out.Bulk(name);
}

void ClientSetInfoCommand(CommandContext& ctx) {
  std::string_view attr = ctx.arg(2);
  std::string_view value = ctx.arg(3);
  bool is_name = EqualsNoCase(attr, "lib-name");
  if (!is_name && !EqualsNoCase(attr, "lib-ver")) {
    return ctx.out.Error("ERR Unrecognized option '" + std::string(protocol::ErrorArg(attr)) + "'");
  }
  for (char c : value) {
    if (c < '!' || c > '~') {
      return ctx.out.Error(std::string("ERR ") + (is_name ? "lib-name" : "lib-ver") +
                           " cannot contain spaces, newlines or special characters.");
    }
  }
  std::lock_guard lock(ctx.server.clients.mu);
  (is_name ? ctx.session.info->lib_name : ctx.session.info->lib_ver) = value;
  ctx.out.Ok();
}

void ClientListCommand(CommandContext& ctx) {
  // CLIENT LIST [TYPE normal|master|replica|pubsub] [ID id [id ...]]
  std::vector<std::int64_t> ids;
  std::optional<ClientType> type;
  for (std::size_t j = 2; j < ctx.argc(); ++j) {
    if (EqualsNoCase(ctx.arg(j), "type") && j + 1 < ctx.argc()) {
      std::string_view t = ctx.arg(++j);
      if (ClientType parsed; ParseClientType(t, &parsed)) {
        type = parsed;
        continue;
      }
      return ctx.out.Error("ERR Unknown client type '" + std::string(protocol::ErrorArg(t)) + "'");
    } else if (EqualsNoCase(ctx.arg(j), "id") && j + 1 < ctx.argc()) {
      for (++j; j < ctx.argc(); ++j) {
        std::int64_t id;
        if (!ParseInt64(ctx.arg(j), &id) || id <= 0) return ctx.out.Error("ERR Invalid client ID");
        ids.push_back(id);
      }
    } else {
      return ctx.out.Error(errors::kSyntax);
    }
  }
  std::string text;
  ctx.server.clients.ForEach([&](const ClientInfo& c) {
    if (type && TypeOf(c) != *type) return;
    if (!ids.empty() && std::find(ids.begin(), ids.end(), c.id) == ids.end()) return;
    AppendClientLine(c, ctx.now.mono_ms, &text);
  });
  ctx.out.Verbatim(text);
}

void ClientInfoCommand(CommandContext& ctx) {
  std::string text;
  {
    std::lock_guard lock(ctx.server.clients.mu);
    AppendClientLine(*ctx.session.info, ctx.now.mono_ms, &text);
  }
  ctx.out.Verbatim(text);
}

void ClientHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "    * ID <client-id> [<client-id> ...]",
      "      Return clients of specified IDs only.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "SETINFO <option> <value>",
      "    Set client meta attr. Options are:",
      "    * LIB-NAME: the client lib name.",
      "    * LIB-VER: the client lib version.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

constexpr SubcommandFamily kClientSub{
    .container = "client", .flags = kCmdNoScript | kCmdLoading | kCmdStale, .group = "connection"};

}  // namespace

void RegisterConnectionCommands(CommandTable& t) {
  const auto conn = kCmdFast | kCmdLoading | kCmdStale;
  // Not `loading` (as Redis 7.0: FAST, SENTINEL): a health check's PING answers -LOADING
  // until the journal is loaded.
  t.Add({.name = "ping",
         .arity = -1,
         .flags = kCmdFast | kCmdSubscriberContext,
         .handler = PingCommand,
         .group = "connection", .summary = "Returns the server's liveliness response.",
         .since = "1.0.0"});
  t.Add({.name = "echo", .arity = 2, .flags = conn, .handler = EchoCommand,
         .group = "connection", .summary = "Returns the given string.", .since = "1.0.0"});
  t.Add({.name = "quit", .arity = -1,
         .flags = conn | kCmdNoAuth | kCmdAllowBusy | kCmdSubscriberContext,
         .handler = QuitCommand, .group = "connection", .summary = "Closes the connection.",
         .since = "1.0.0"});
  t.Add({.name = "auth", .arity = -2, .flags = conn | kCmdNoAuth | kCmdNoScript | kCmdAllowBusy,
         .handler = AuthCommand, .group = "connection",
         .summary = "Authenticates the connection.", .since = "1.0.0"});
  t.Add({.name = "hello", .arity = -1, .flags = conn | kCmdNoAuth | kCmdNoScript | kCmdAllowBusy,
         .handler = HelloCommand, .group = "connection",
         .summary = "Handshakes with the Redis server.", .since = "6.0.0"});
  t.Add({.name = "reset",
         .arity = 1,
         .flags = conn | kCmdNoAuth | kCmdNoScript | kCmdAllowBusy | kCmdTxControl |
                  kCmdSubscriberContext,
         .handler = ResetCommand,
         .group = "connection",
         .summary = "Resets the connection.",
         .since = "6.2.0"});
  CommandSpec client{.name = "client",
                     .arity = -2,
                     .flags = 0,
                     .group = "connection",
                     .summary = "A container for client connection commands.",
                     .since = "2.4.0"};
  client.subcommands.push_back(kClientSub(
      "id", 2, ClientIdCommand, "Returns the unique client ID of the connection.", "5.0.0"));
  client.subcommands.push_back(
      kClientSub("setname", 3, ClientSetNameCommand, "Sets the connection name.", "2.6.9"));
  client.subcommands.push_back(kClientSub("getname", 2, ClientGetNameCommand,
                                          "Returns the name of the connection.", "2.6.9"));
  client.subcommands.push_back(kClientSub("setinfo", 4, ClientSetInfoCommand,
                                          "Sets information specific to the client or connection.",
                                          "7.2.0"));
  client.subcommands.push_back(
      kClientSub("list", -2, ClientListCommand, "Lists open connections.", "2.4.0"));
  client.subcommands.push_back(kClientSub("info", 2, ClientInfoCommand,
                                          "Returns information about the connection.", "6.2.0"));
  client.subcommands.push_back(kClientSub("help", 2, ClientHelpCommand,
                                          "Returns helpful text about the different subcommands.",
                                          "5.0.0"));
  AddClientAdminSubcommands(client);  // client_admin.cpp
  t.Add(std::move(client));
}

}  // namespace latch
