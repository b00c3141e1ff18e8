#pragma once
// One CLIENT LIST / CLIENT INFO line, in Redis's field order (fields latchd has no notion
// of are reported with their idle values). Caller holds ClientRegistry::mu.
#include <cstdint>
#include <string>
#include <string_view>

#include "server_state.h"

namespace latch {

void AppendClientLine(const ClientInfo& c, std::int64_t now_mono_ms, std::string* out);

// The client types of CLIENT LIST TYPE and CLIENT KILL TYPE. latchd has no masters or
// replicas: their names are accepted and match no client (kNone).
enum class ClientType : std::uint8_t { kNormal, kPubSub, kNone };
// Redis's names, any case (normal, pubsub, master, replica, slave); false for another name.
bool ParseClientType(std::string_view name, ClientType* out);
// pubsub while the client holds a channel or pattern subscription, in either protocol (as
// Redis's CLIENT_PUBSUB flag), normal otherwise; a MONITOR client is normal, as in Redis.
ClientType TypeOf(const ClientInfo& c);

}  // namespace latch
