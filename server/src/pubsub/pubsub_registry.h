#pragma once
// Who is subscribed to what, server-wide: channel -> subscribers and pattern ->
// subscribers, behind one readers-writer lock of its own.
//
// Locks: PUBLISH takes the lock shared (publishers on every worker run side by side) and,
// for each receiver, that subscriber's mailbox mutex; (UN)SUBSCRIBE and a closing client
// take it exclusively for a few hash-table operations. It is never held while waiting for
// anything else and no shard lock is taken under it, so it may be taken with shards held
// (PUBLISH from a script, which holds every shard): it ranks after the shards.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "pubsub/subscriber.h"

namespace latch::pubsub {

class PubSubRegistry {
 public:
  // Each returns true when the subscriber was added (false: it already was) or removed.
  bool AddChannel(const std::string& channel, Subscriber* s);
  bool RemoveChannel(const std::string& channel, Subscriber* s);
  bool AddPattern(const std::string& pattern, Subscriber* s);
  bool RemovePattern(const std::string& pattern, Subscriber* s);

  // Delivers to the channel's subscribers, then to every matching pattern's; returns how
  // many deliveries were made (a client matching two patterns counts twice, as Redis).
  // A message for `self` (the publishing client's own subscriber, or null) is appended to
  // *self_out at once, so that it precedes PUBLISH's reply as in Redis. cap: the pubsub
  // class's hard output limit, the most a mailbox may hold.
  std::int64_t Publish(std::string_view channel, std::string_view message, Subscriber* self,
                       std::string* self_out, std::uint64_t cap);

  // PUBSUB CHANNELS [pattern]: the channels with at least one subscriber.
  std::vector<std::string> Channels(std::optional<std::string_view> pattern) const;
  std::size_t NumSub(std::string_view channel) const;
  std::size_t NumPatterns() const;  // PUBSUB NUMPAT, INFO pubsub_patterns
  std::size_t NumChannels() const;  // INFO pubsub_channels
  bool Active() const { return NumChannels() + NumPatterns() > 0; }  // any subscription

 private:
  using Index = std::unordered_map<std::string, std::vector<Subscriber*>>;
  static bool Add(Index& index, const std::string& name, Subscriber* s);
  static bool Remove(Index& index, const std::string& name, Subscriber* s);
  mutable std::shared_mutex mu_;
  Index channels_;  // subscribers in subscription order, as Redis delivers
  Index patterns_;
};

}  // namespace latch::pubsub
