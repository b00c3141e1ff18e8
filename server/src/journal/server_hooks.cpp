#include "journal/server_hooks.h"

#include "journal/persistence.h"

namespace latch::journal {

std::uint64_t AppendedSeq(const ServerState& s) {
  const Journal* j = s.persistence ? s.persistence->journal() : nullptr;
  return j == nullptr ? 0 : j->appended();
}

bool HoldUntilDurable(const ServerState& s, std::uint64_t seq, boost::asio::io_context& on,
                      std::function<void()> resume) {
  Journal* j = s.persistence ? s.persistence->journal() : nullptr;
  return j != nullptr && j->WhenDurable(seq, std::move(resume), &on);
}

}  // namespace latch::journal
