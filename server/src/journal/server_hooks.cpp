#include "journal/server_hooks.h"

#include "journal/persistence.h"
#include "journal/reply_log.h"

namespace latch::journal {

std::uint64_t AppendedSeq(const ReplyHold& s) {
  if (s.reply_log != nullptr) return s.reply_log->appended();  // a cluster node's Raft log
  const Journal* j = s.persistence != nullptr ? s.persistence->journal() : nullptr;
  return j == nullptr ? 0 : j->appended();
}

bool HoldUntilDurable(const ReplyHold& s, std::uint64_t seq, boost::asio::io_context& on,
                      std::function<void()> resume, std::function<void()> lost) {
  if (s.reply_log != nullptr) {
    return s.reply_log->WhenCommitted(
        seq,
        [resume = std::move(resume), lost = std::move(lost)](bool committed) {
          if (committed || !lost) {
            resume();
          } else {
            lost();
          }
        },
        on);
  }
  Journal* j = s.persistence != nullptr ? s.persistence->journal() : nullptr;
  return j != nullptr && j->WhenDurable(seq, std::move(resume), &on);
}

void FlushAppendedSoon(const ReplyHold& s, boost::asio::io_context& on) {
  if (s.reply_log != nullptr) return;
  if (Journal* j = s.persistence != nullptr ? s.persistence->journal() : nullptr) {
    j->FlushSoon(on);
  }
}

}  // namespace latch::journal
