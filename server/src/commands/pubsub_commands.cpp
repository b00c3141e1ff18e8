// SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, PUBSUB: Redis's pub/sub over
// the server-wide registry (pubsub/pubsub_registry.h). Keyless: no shard is taken.
#include <string>

#include "commands/arg_parse.h"
#include "commands/command_table.h"
#include "commands/client_subscriptions.h"
#include "latch/protocol/error_arg.h"
#include "pubsub/pubsub_registry.h"
#include "pubsub/subscriber.h"

namespace latch {
namespace {

// A client that expects one reply per command (REST's stateless requests) cannot enter
// subscriber mode; MULTI can, as in Redis.
bool RefuseDenyBlocking(CommandContext& ctx, std::string_view command) {
  if (ctx.session.push_wake) return false;
  ctx.out.Error("ERR " + std::string(command) + " isn't allowed for a DENY BLOCKING client");
  return true;
}

void SubscribeCommand(CommandContext& ctx) {
  if (RefuseDenyBlocking(ctx, "SUBSCRIBE")) return;
  for (std::size_t j = 1; j < ctx.argc(); ++j) pubsub::Subscribe(ctx, ctx.arg(j), false);
}

void PSubscribeCommand(CommandContext& ctx) {
  if (RefuseDenyBlocking(ctx, "PSUBSCRIBE")) return;
  for (std::size_t j = 1; j < ctx.argc(); ++j) pubsub::Subscribe(ctx, ctx.arg(j), true);
}

void UnsubscribeCommand(CommandContext& ctx) {
  if (ctx.argc() == 1) return pubsub::UnsubscribeEvery(ctx, false);
  for (std::size_t j = 1; j < ctx.argc(); ++j) pubsub::Unsubscribe(ctx, ctx.arg(j), false);
}

void PUnsubscribeCommand(CommandContext& ctx) {
  if (ctx.argc() == 1) return pubsub::UnsubscribeEvery(ctx, true);
  for (std::size_t j = 1; j < ctx.argc(); ++j) pubsub::Unsubscribe(ctx, ctx.arg(j), true);
}

void PublishCommand(CommandContext& ctx) {
  // A client publishing to itself (RESP3) gets the message before PUBLISH's reply, as from
  // Redis; a script's or EXEC's message goes through the mailbox like anyone else's.
  pubsub::Subscriber* self =
      ctx.origin == CommandOrigin::kClient ? ctx.session.subscriber.get() : nullptr;
  const std::int64_t n = ctx.server.pubsub.Publish(
      ctx.arg(1), ctx.arg(2), self, ctx.out.buffer(),
      ctx.server.obuf_pubsub_hard.load(std::memory_order_relaxed));
  ctx.out.Integer(n);
}

void PubsubChannelsCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    return ctx.out.Error("ERR unknown subcommand or wrong number of arguments for '" +
                         std::string(protocol::ErrorArg(ctx.arg(1))) + "'. Try PUBSUB HELP.");
  }
  std::optional<std::string_view> pattern;
  if (ctx.argc() == 3) pattern = ctx.arg(2);
  const std::vector<std::string> names = ctx.server.pubsub.Channels(pattern);
  ctx.out.ArrayHeader(names.size());
  for (const auto& n : names) ctx.out.Bulk(n);
}

void PubsubNumsubCommand(CommandContext& ctx) {
  ctx.out.MapHeader(ctx.argc() - 2);
  for (std::size_t j = 2; j < ctx.argc(); ++j) {
    ctx.out.Bulk(ctx.arg(j));
    ctx.out.Integer(static_cast<std::int64_t>(ctx.server.pubsub.NumSub(ctx.arg(j))));
  }
}

void PubsubNumpatCommand(CommandContext& ctx) {
  ctx.out.Integer(static_cast<std::int64_t>(ctx.server.pubsub.NumPatterns()));
}

// latchd has no shard channels (SSUBSCRIBE): none are active.
void PubsubShardChannelsCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    return ctx.out.Error("ERR unknown subcommand or wrong number of arguments for '" +
                         std::string(protocol::ErrorArg(ctx.arg(1))) + "'. Try PUBSUB HELP.");
  }
  ctx.out.ArrayHeader(0);
}

void PubsubShardNumsubCommand(CommandContext& ctx) {
  ctx.out.MapHeader(ctx.argc() - 2);
  for (std::size_t j = 2; j < ctx.argc(); ++j) {
    ctx.out.Bulk(ctx.arg(j));
    ctx.out.Integer(0);
  }
}

void PubsubHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "PUBSUB <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CHANNELS [<pattern>]",
      "    Return the currently active channels matching a <pattern> (default: '*').",
      "NUMPAT",
      "    Return number of subscriptions to patterns.",
      "NUMSUB [<channel> ...]",
      "    Return the number of subscribers for the specified channels, excluding",
      "    pattern subscriptions(default: no channels).",
      "SHARDCHANNELS [<pattern>]",
      "    Return the currently active shard level channels matching a <pattern> (default: '*').",
      "SHARDNUMSUB [<shardchannel> ...]",
      "    Return the number of subscribers for the specified shard level channel(s)",
      "HELP",
      "    Prints this help.",
  };
  WriteHelpLines(ctx.out, kLines);
}

CommandSpec PubsubSub(std::string name, int arity, CommandHandler h, std::string_view summary,
                      std::uint32_t flags = kCmdPubSub | kCmdLoading | kCmdStale) {
  return CommandSpec{.name = std::move(name), .arity = arity, .flags = flags, .handler = h,
                     .group = "pubsub", .summary = summary, .since = "2.8.0"};
}

}  // namespace

void RegisterPubsubCommands(CommandTable& t) {
  // The commands a RESP2 subscriber may still send carry kCmdSubscriberContext.
  const auto sub = kCmdPubSub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscriberContext;
  t.Add({.name = "subscribe", .arity = -2, .flags = sub, .handler = SubscribeCommand,
         .group = "pubsub", .summary = "Listens for messages published to channels.",
         .since = "2.0.0"});
  t.Add({.name = "unsubscribe", .arity = -1, .flags = sub, .handler = UnsubscribeCommand,
         .group = "pubsub", .summary = "Stops listening to messages posted to channels.",
         .since = "2.0.0"});
  t.Add({.name = "psubscribe", .arity = -2, .flags = sub, .handler = PSubscribeCommand,
         .group = "pubsub", .summary = "Listens for messages published to channels that match one or more patterns.",
         .since = "2.0.0"});
  t.Add({.name = "punsubscribe", .arity = -1, .flags = sub, .handler = PUnsubscribeCommand,
         .group = "pubsub", .summary = "Stops listening to messages published to channels that match one or more patterns.",
         .since = "2.0.0"});
  t.Add({.name = "publish", .arity = 3, .flags = kCmdPubSub | kCmdLoading | kCmdStale | kCmdFast,
         .handler = PublishCommand, .group = "pubsub",
         .summary = "Posts a message to a channel.", .since = "2.0.0"});
  CommandSpec pubsub{.name = "pubsub", .arity = -2, .flags = 0, .group = "pubsub",
                     .summary = "A container for Pub/Sub commands", .since = "2.8.0"};
  pubsub.subcommands.push_back(PubsubSub("pubsub|channels", -2, PubsubChannelsCommand,
                                         "Returns the active channels."));
  pubsub.subcommands.push_back(PubsubSub("pubsub|numsub", -2, PubsubNumsubCommand,
                                         "Returns a count of subscribers to channels."));
  pubsub.subcommands.push_back(PubsubSub("pubsub|numpat", 2, PubsubNumpatCommand,
                                         "Returns a count of unique pattern subscriptions."));
  pubsub.subcommands.push_back(PubsubSub("pubsub|shardchannels", -2, PubsubShardChannelsCommand,
                                         "Returns the active shard channels."));
  pubsub.subcommands.push_back(PubsubSub("pubsub|shardnumsub", -2, PubsubShardNumsubCommand,
                                         "Returns the count of subscribers of shard channels."));
  pubsub.subcommands.push_back(PubsubSub("pubsub|help", 2, PubsubHelpCommand,
                                         "Returns helpful text about the different subcommands.",
                                         kCmdLoading | kCmdStale));
  t.Add(std::move(pubsub));
}

}  // namespace latch
