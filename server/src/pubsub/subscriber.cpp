#include "pubsub/subscriber.h"

#include "client_registry.h"
#include "latch/protocol/reply_writer.h"

namespace latch::pubsub {

Subscriber::Subscriber(std::shared_ptr<ClientInfo> info, Wake wake)
    : info_(std::move(info)), wake_(std::move(wake)) {}

int Subscriber::proto() const { return info_->proto.load(std::memory_order_relaxed); }

void AppendMessage(int proto, std::string_view channel, std::string_view message,
                   const std::string* pattern, std::string* out) {
  protocol::ReplyWriter w(out, proto);
  // Redis sends messages as push frames in RESP3 and as plain arrays in RESP2.
  w.Raw(proto == 3 ? (pattern ? ">4\r\n" : ">3\r\n") : (pattern ? "*4\r\n" : "*3\r\n"));
  if (pattern) {
    w.Bulk("pmessage");
    w.Bulk(*pattern);
  } else {
    w.Bulk("message");
  }
  w.Bulk(channel);
  w.Bulk(message);
}

void Subscriber::Push(std::string_view channel, std::string_view message,
                      const std::string* pattern, std::uint64_t cap) {
  bool wake = false;
  {
    std::lock_guard lock(mu_);
    if (overflowed_) return;
    const std::size_t before = box_.size();
    AppendMessage(proto(), channel, message, pattern, &box_);
    if (cap != 0 && box_.size() >= cap) {
      // Past the hard limit before the owner even drained: drop, and have the owner close.
      box_.resize(before);
      overflowed_ = true;
    }
    pending_bytes_.store(box_.size(), std::memory_order_relaxed);
    if (!wake_pending_) wake = wake_pending_ = true;
  }
  if (wake && wake_) wake_();
}

bool Subscriber::Drain(std::string* out) {
  std::lock_guard lock(mu_);
  wake_pending_ = false;
  if (out->empty()) {
    out->swap(box_);
  } else {
    out->append(box_);
  }
  box_.clear();
  pending_bytes_.store(0, std::memory_order_relaxed);
  return overflowed_;
}

void Subscriber::PublishCounts() {
  info_->sub.store(static_cast<int>(channels.size()), std::memory_order_relaxed);
  info_->psub.store(static_cast<int>(patterns.size()), std::memory_order_relaxed);
}

}  // namespace latch::pubsub
