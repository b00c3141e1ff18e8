#pragma once
// One subscribed client as the publishers see it: a mailbox that any thread may push
// messages into, and that the client's own worker drains into its output.
//
// Why a mailbox and not a write into the client's buffers: a publisher runs on its own
// worker thread, while the subscriber's buffers belong to the subscriber's thread (and one
// of them may be on the wire). Push() encodes the message under the mailbox's mutex and
// asks the owner to drain once (`wake`, which posts to the owner's io_context); the owner
// appends the batch to its output, the way a granted lock waiter's reply arrives
// (net/connection.cpp). A mailbox past its cap (the pubsub class's hard output limit)
// drops further messages and marks itself overflowed: the owner then closes the client, as
// Redis closes a subscriber over client-output-buffer-limit pubsub.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace latch {
struct ClientInfo;
}  // namespace latch

namespace latch::pubsub {

class Subscriber {
 public:
  using Wake = std::function<void()>;
  // `info` gives the client's protocol (RESP2 array or RESP3 push) and its CLIENT LIST
  // counts; `wake` is called from the pushing thread, with no lock held, at most once per
  // drain.
  Subscriber(std::shared_ptr<ClientInfo> info, Wake wake);

  // Any thread, under the registry's lock (so never after the client left the registry).
  // `pattern` is null for a channel message. cap: bytes the mailbox may hold (0: no cap).
  void Push(std::string_view channel, std::string_view message, const std::string* pattern,
            std::uint64_t cap);
  // Owner thread: appends what is waiting to *out. True when messages were dropped because
  // the mailbox went over its cap (the client must be closed).
  bool Drain(std::string* out);
  // Bytes waiting in the mailbox (any thread; part of the client's omem).
  std::size_t pending() const { return pending_bytes_.load(std::memory_order_relaxed); }
  int proto() const;

  // The client's subscriptions. Owner thread only (the registry keeps its own index).
  std::unordered_set<std::string> channels;
  std::unordered_set<std::string> patterns;
  // Publishes the counts to CLIENT LIST (sub=, psub=, flag P).
  void PublishCounts();

 private:
  std::shared_ptr<ClientInfo> info_;
  Wake wake_;
  std::mutex mu_;
  std::string box_;          // encoded messages, oldest first
  bool wake_pending_ = false;  // a drain is scheduled
  bool overflowed_ = false;
  std::atomic<std::size_t> pending_bytes_{0};
};

// Appends one message in the client's protocol: RESP2 arrays, RESP3 pushes (">").
void AppendMessage(int proto, std::string_view channel, std::string_view message,
                   const std::string* pattern, std::string* out);

}  // namespace latch::pubsub
