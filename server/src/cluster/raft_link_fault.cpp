// TEST.FAULT RAFT-DROP's cut of the Raft link (raft_link_fault.h). Ownership, as libraft 0.15
// and its raft_uv define it (src/replication.c, src/recv.c, src/uv_recv.c):
// - send: `message` is only borrowed for the call; the request and what it references (the
//   entries of an AppendEntries, a snapshot) stay libraft's until the request's callback
//   runs, where libraft releases them. So a dropped send must still see its callback run,
//   and not from inside io.send (libraft updates the peer's progress after the call).
// - recv: the callback owns the message's heap parts (an AppendEntries' entries and their
//   batches, an InstallSnapshot's configuration and data); libraft frees them once it
//   handled the message. A dropped message is freed here, as libraft's recvCb frees one that
//   reaches an unavailable node.
#include "cluster/raft_link_fault.h"

#include <algorithm>
#include <type_traits>
#include <utility>

namespace latch::cluster {

static_assert(std::is_standard_layout_v<RaftLinkFault>,
              "RaftLinkFault::Of casts a raft_io* to its RaftLinkFault");

RaftLinkFault& RaftLinkFault::Of(raft_io* io) { return *reinterpret_cast<RaftLinkFault*>(io); }

void RaftLinkFault::Install(uv_loop_t* uv) {
  uv_timer_init(uv, &flush_timer_);
  flush_timer_.data = this;
  uv_send_ = io_.send;
  uv_start_ = io_.start;
  uv_close_ = io_.close;
  io_.send = Send;
  io_.start = Start;
  io_.close = Close;
}

void RaftLinkFault::DropAll(bool in, bool out) {
  std::lock_guard lock(mu_);
  drop_all_ = true;
  drop_.clear();
  drop_in_ = in;
  drop_out_ = out;
}

void RaftLinkFault::Drop(std::vector<std::uint64_t> peers, bool in, bool out) {
  std::lock_guard lock(mu_);
  drop_all_ = false;
  drop_ = std::move(peers);
  drop_in_ = in;
  drop_out_ = out;
}

void RaftLinkFault::Heal() {
  std::lock_guard lock(mu_);
  drop_all_ = false;
  drop_.clear();
  drop_in_ = drop_out_ = false;
}

bool RaftLinkFault::Dropped(std::uint64_t peer, bool inbound) {
  std::lock_guard lock(mu_);
  if (!(inbound ? drop_in_ : drop_out_)) return false;
  return drop_all_ || std::find(drop_.begin(), drop_.end(), peer) != drop_.end();
}

int RaftLinkFault::Send(raft_io* io, raft_io_send* req, const raft_message* message,
                        raft_io_send_cb cb) {
  RaftLinkFault& self = Of(io);
  if (!self.Dropped(message->server_id, false)) return self.uv_send_(io, req, message, cb);
  self.dropped_sends_.push_back({req, cb});
  uv_timer_start(&self.flush_timer_, FlushTimer, 0, 0);
  return 0;
}

void RaftLinkFault::FlushTimer(uv_timer_t* timer) {
  static_cast<RaftLinkFault*>(timer->data)->Flush(0);
}

// A callback may send again (and that send be dropped): take the list first.
void RaftLinkFault::Flush(int status) {
  std::vector<DroppedSend> sends;
  sends.swap(dropped_sends_);
  for (const DroppedSend& s : sends) s.cb(s.req, status);
}

int RaftLinkFault::Start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv) {
  RaftLinkFault& self = Of(io);
  self.raft_recv_ = recv;
  return self.uv_start_(io, msecs, tick, Recv);
}

void RaftLinkFault::Recv(raft_io* io, raft_message* message) {
  RaftLinkFault& self = Of(io);
  if (!self.Dropped(message->server_id, true)) return self.raft_recv_(io, message);
  switch (message->type) {
    case RAFT_IO_APPEND_ENTRIES: {
      // Entries decoded from one message share batches (libraft's entryBatchesDestroy).
      raft_append_entries& a = message->append_entries;
      void* batch = nullptr;
      for (unsigned i = 0; i < a.n_entries; ++i) {
        if (a.entries[i].batch != batch) raft_free(batch = a.entries[i].batch);
      }
      raft_free(a.entries);
      break;
    }
    case RAFT_IO_INSTALL_SNAPSHOT:
      raft_configuration_close(&message->install_snapshot.conf);
      raft_free(message->install_snapshot.data.base);
      break;
    default:  // the other messages own no heap memory
      break;
  }
}

// libraft closes the io after leaving every state (raft_close): the dropped sends still
// waiting are cancelled, as raft_uv cancels its own, before raft_uv closes.
void RaftLinkFault::Close(raft_io* io, raft_io_close_cb cb) {
  RaftLinkFault& self = Of(io);
  self.Flush(RAFT_CANCELED);
  uv_close(reinterpret_cast<uv_handle_t*>(&self.flush_timer_), nullptr);
  self.uv_close_(io, cb);
}

}  // namespace latch::cluster
