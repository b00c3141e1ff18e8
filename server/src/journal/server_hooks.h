#pragma once
// The journal's few entry points for code outside journal/ (dispatch, lock commands, the
// connection), kept in one light header so that those files change by a line or two each.
#include <cstdint>
#include <functional>
#include <string_view>

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace latch::journal {

class Persistence;
class ReplyLog;

// Where replies wait: the server's journal (null, or appendonly off: no hold) and, on a
// cluster node, its Raft log (set: it alone decides). Callers pass ServerState's
// {persistence.get(), reply_log}.
struct ReplyHold {
  const Persistence* persistence = nullptr;
  ReplyLog* reply_log = nullptr;
};

// Redis's reply to commands while the dataset is loading.
inline constexpr std::string_view kLoadingError = "LOADING Redis is loading the dataset in memory";
// Commands flagged kCmdLoading (Redis's "loading" flag) are let through meanwhile.

// For the connection: the highest journal record a reply depends on is ThisThreadLastSeq()
// (journal.h) after a command appended, or, for a parked client, the number its reply was
// delivered with by the thread that appended (BlockedClient::Deliver: a lock grant passes its
// own record's, a script AppendedSeq() after its run).
std::uint64_t AppendedSeq(const ReplyHold& s);
// True when the replies must wait for record `seq` to be on disk; `resume` then runs on `on`
// (the caller's io_context) once it is, posted together with the batch's other resumes there.
// On a cluster node (cluster_node.h) "on disk" is "committed by a Raft majority";
// `lost`, when given, runs instead of `resume` if it may never be (without: `resume`).
bool HoldUntilDurable(const ReplyHold& s, std::uint64_t seq, boost::asio::io_context& on,
                      std::function<void()> resume, std::function<void()> lost = {});
// An io thread's tick (net/worker.cpp): the records this thread appended that no reply waits
// for are written soon by its end-of-pass flush (Journal::FlushSoon). No-op on a cluster node.
void FlushAppendedSoon(const ReplyHold& s, boost::asio::io_context& on);

}  // namespace latch::journal
