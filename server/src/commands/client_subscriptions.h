#pragma once
// A client's (P)(UN)SUBSCRIBE, with Redis's confirmation replies, and the clean-up when it
// leaves subscriber mode (RESET) or disconnects. Connection thread only. The registry and the
// mailboxes it fills are pubsub/; this is the command side, which owns the Session's part.
#include <string_view>

#include "commands/context.h"

namespace latch::pubsub {

// kind: "subscribe", "unsubscribe", "psubscribe" or "punsubscribe" (the reply's first word).
void Subscribe(CommandContext& ctx, std::string_view name, bool pattern);
void Unsubscribe(CommandContext& ctx, std::string_view name, bool pattern);
// UNSUBSCRIBE / PUNSUBSCRIBE with no argument: every channel (pattern), one reply each, or
// one reply with a null name when there was none.
void UnsubscribeEvery(CommandContext& ctx, bool pattern);
// Drops every subscription without a reply (RESET, a closing connection).
void LeaveAll(Session& session, PubSubRegistry& registry);

}  // namespace latch::pubsub
