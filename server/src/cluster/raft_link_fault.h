#pragma once
// TEST.FAULT RAFT-DROP's cut of this node's Raft link (docs/CLUSTER.md, "Partition"): a
// wrapper around raft_uv's raft_io that drops every message this node sends to or receives
// from the peers it is told, both directions, as a network partition would, while the node
// keeps running and serving its clients. Internal to latch_cluster (raft_loop.h): it brings
// in raft.h and uv.h.
#include <uv.h>

extern "C" {
#include <raft.h>
}

#include <cstdint>
#include <mutex>
#include <vector>

namespace latch::cluster {

class RaftLinkFault {
 public:
  // The raft_io that raft_uv_init fills and raft_init is given.
  raft_io* io() { return &io_; }

  // Wraps io.send, io.start and io.close; call once, after raft_uv_init and before
  // raft_start (which calls io.start). `uv`: the loop io runs on; a timer on it completes
  // dropped sends.
  void Install(uv_loop_t* uv);

  // Any thread; effective for the next message. Drop replaces the set dropped before.
  // `in`, `out`: which directions are cut (both for a partition; one for an asymmetric link).
  void DropAll(bool in, bool out);
  void Drop(std::vector<std::uint64_t> peers, bool in, bool out);
  void Heal();

 private:
  // A dropped send, completed on the loop's next turn as a send that succeeded into a black
  // hole (status 0, as a TCP write whose packets the network then loses).
  struct DroppedSend {
    raft_io_send* req;
    raft_io_send_cb cb;
  };

  // io_ is the first member of a standard-layout class, so the hooks find their
  // RaftLinkFault from the raft_io* that libraft passes them: the two addresses are the same.
  raft_io io_{};

  static RaftLinkFault& Of(raft_io* io);
  static int Send(raft_io* io, raft_io_send* req, const raft_message* message, raft_io_send_cb cb);
  static int Start(raft_io* io, unsigned msecs, raft_io_tick_cb tick, raft_io_recv_cb recv);
  static void Recv(raft_io* io, raft_message* message);
  static void Close(raft_io* io, raft_io_close_cb cb);
  static void FlushTimer(uv_timer_t* timer);
  bool Dropped(std::uint64_t peer, bool inbound);
  void Flush(int status);

  // raft_uv's own functions, called for what is not dropped.
  int (*uv_send_)(raft_io*, raft_io_send*, const raft_message*, raft_io_send_cb) = nullptr;
  int (*uv_start_)(raft_io*, unsigned, raft_io_tick_cb, raft_io_recv_cb) = nullptr;
  void (*uv_close_)(raft_io*, raft_io_close_cb) = nullptr;
  raft_io_recv_cb raft_recv_ = nullptr;  // libraft's, given to io.start

  // Loop thread only.
  uv_timer_t flush_timer_{};
  std::vector<DroppedSend> dropped_sends_;

  std::mutex mu_;  // guards the fields below, set from other threads
  bool drop_all_ = false;
  std::vector<std::uint64_t> drop_;
  bool drop_in_ = false;   // messages received from the peers above
  bool drop_out_ = false;  // messages sent to them
};

}  // namespace latch::cluster
