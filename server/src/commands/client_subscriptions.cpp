#include "commands/client_subscriptions.h"

#include <vector>

#include "pubsub/pubsub_registry.h"
#include "pubsub/subscriber.h"

namespace latch::pubsub {
namespace {

// Redis's confirmation: [kind, name or null, subscriptions now], a push frame in RESP3.
void Confirm(CommandContext& ctx, std::string_view kind, const std::string* name) {
  ctx.out.Raw(ctx.out.proto() == 3 ? ">3\r\n" : "*3\r\n");
  ctx.out.Bulk(kind);
  if (name) {
    ctx.out.Bulk(*name);
  } else {
    ctx.out.Null();
  }
  ctx.out.Integer(ctx.session.subscriptions);
}

void Recount(Session& s) {
  s.subscriptions = static_cast<int>(s.subscriber->channels.size() + s.subscriber->patterns.size());
  s.subscriber->PublishCounts();
}

// Removes one subscription the client holds from its set and the registry.
void Drop(Session& s, PubSubRegistry& registry, const std::string& name, bool pattern) {
  auto& set = pattern ? s.subscriber->patterns : s.subscriber->channels;
  if (set.erase(name) == 0) return;
  if (pattern) {
    registry.RemovePattern(name, s.subscriber.get());
  } else {
    registry.RemoveChannel(name, s.subscriber.get());
  }
}

}  // namespace

void Subscribe(CommandContext& ctx, std::string_view name, bool pattern) {
  Session& s = ctx.session;
  if (!s.subscriber) s.subscriber = std::make_shared<Subscriber>(s.info, s.push_wake);
  std::string key(name);
  auto& set = pattern ? s.subscriber->patterns : s.subscriber->channels;
  if (set.insert(key).second) {
    if (pattern) {
      ctx.server.pubsub.AddPattern(key, s.subscriber.get());
    } else {
      ctx.server.pubsub.AddChannel(key, s.subscriber.get());
    }
    Recount(s);
  }
  Confirm(ctx, pattern ? "psubscribe" : "subscribe", &key);
}

void Unsubscribe(CommandContext& ctx, std::string_view name, bool pattern) {
  Session& s = ctx.session;
  std::string key(name);
  if (s.subscriber) {
    Drop(s, ctx.server.pubsub, key, pattern);
    Recount(s);
  }
  Confirm(ctx, pattern ? "punsubscribe" : "unsubscribe", &key);
}

void UnsubscribeEvery(CommandContext& ctx, bool pattern) {
  Session& s = ctx.session;
  std::vector<std::string> names;
  if (s.subscriber) {
    const auto& set = pattern ? s.subscriber->patterns : s.subscriber->channels;
    names.assign(set.begin(), set.end());
  }
  if (names.empty()) return Confirm(ctx, pattern ? "punsubscribe" : "unsubscribe", nullptr);
  for (const std::string& name : names) Unsubscribe(ctx, name, pattern);
}

void LeaveAll(Session& s, PubSubRegistry& registry) {
  if (!s.subscriber) return;
  for (const std::string& c : s.subscriber->channels) registry.RemoveChannel(c, s.subscriber.get());
  for (const std::string& p : s.subscriber->patterns) registry.RemovePattern(p, s.subscriber.get());
  s.subscriber->channels.clear();
  s.subscriber->patterns.clear();
  Recount(s);
}

}  // namespace latch::pubsub
