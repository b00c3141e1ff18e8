#pragma once
// Which commands a Raft follower hands to the leader (docs/CLUSTER.md, "Forwarding"): at the
// first of them, the client's connection becomes a relay to the leader's client port for the
// rest of its life (net/connection_relay.cpp).
#include <span>
#include <string_view>

namespace latch {

class CommandCatalogue;

// True for what must run where the data is decided: commands flagged write or readonly
// (followers answer neither: reads are linearizable), transactions (MULTI, WATCH, EXEC:
// their queue and watches live on the leader), scripts and functions (EVAL*, FCALL*, SCRIPT,
// FUNCTION: their effects are the leader's), and Pub/Sub (SUBSCRIBE*, PUBLISH, PUBSUB:
// messages are published on the leader, so its subscribers hear every one). Connection and
// server commands (PING, HELLO, AUTH, SELECT, CLIENT, INFO, ROLE, SENTINEL, CONFIG...) answer
// locally and do not switch. An unknown command does not switch either (answered locally).
bool RunsOnLeader(const CommandCatalogue& catalogue, std::span<const std::string_view> args);

}  // namespace latch
