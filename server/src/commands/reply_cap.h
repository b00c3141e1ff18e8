#pragma once
// client-output-buffer-limit applied while one reply is being built, for the replies whose
// size the client chooses: HRANDFIELD / ZRANDMEMBER with a negative count draw |count|
// elements with repetition, up to 2^63 of them. Redis checks the limit as it appends and
// ends such a loop once the client is flagged to close (it closed the client of
// `HRANDFIELD h -4611686018427387903 WITHVALUES` at about 62 MB under `normal 64mb 0 0`);
// these commands check Reached() before every element.
//
// Only the hard limit of the client's class (pubsub while it has a subscription, as
// Connection::CloseIfOverOutputLimit) bounds a reply under construction: the soft limit
// allows its time to drain, and with no hard limit (the default, as in Redis) nothing does.
#include <cstddef>
#include <string>

#include "commands/context.h"

namespace latch {

class ReplyCap {
 public:
  // Call before the command writes its reply.
  explicit ReplyCap(const CommandContext& ctx);

  // The reply so far (with what the connection had queued before it) reached the limit:
  // stop adding to it, and end with Stop().
  bool Reached() const { return limit_ != 0 && out_->size() >= limit_; }

  // Ends a reply cut short at the limit. A client's own command leaves it as it is: the
  // connection is past its hard limit and closes the client once the command returns,
  // unread replies dropped, as Redis does (and closes it after this reply should the limit
  // have been raised meanwhile). Under EXEC, a script or REST, where the reply is read by
  // latchd itself, it is replaced by an error.
  void Stop(CommandContext& ctx) const;

 private:
  const std::string* out_;
  std::size_t start_;
  std::size_t limit_;
};

}  // namespace latch
