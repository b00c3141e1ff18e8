#pragma once
// A log that decides when replies may go out, in place of the journal: a cluster node's Raft
// log (cluster/cluster_log.h registers itself as ServerState::reply_log). Its records are
// numbered as the journal's are (journal.h, ThisThreadLastSeq), so that the connection's hold
// (server_hooks.h) serves both; "durable" there means committed by a Raft majority.
#include <cstdint>
#include <functional>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace latch::journal {

class ReplyLog {
 public:
  virtual ~ReplyLog() = default;
  // The number of the last record appended.
  virtual std::uint64_t appended() const = 0;
  // As Journal::WhenDurable: true when the replies depending on record `seq` must wait;
  // `done(true)` then runs on `on` (posted) once it is committed, `done(false)` once it is
  // known that it may never be (leadership lost, the node stopping).
  virtual bool WhenCommitted(std::uint64_t seq, std::function<void(bool)> done,
                             boost::asio::io_context& on) = 0;
  // A command that read or wrote keys just ran on this thread (the dispatcher calls it after
  // the handler). Raises the thread's last record number
  // (ThisThreadLastSeq) to the one its reply must wait for, so that the reply reports only
  // committed state and only while no other leader can exist (docs/CLUSTER.md, "Linearizable
  // reads").
  virtual void FenceRead() = 0;
  // SWAPDB a b ran (every shard of both databases held): recorded as the journal records it,
  // for it reports no key event.
  virtual void DatabasesSwapped(int a, int b) = 0;
};

}  // namespace latch::journal
