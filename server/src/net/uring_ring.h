#pragma once
// io-engine uring (docs/design/io_engine.md): one io_uring per worker, for the plain client
// connections of that worker (TLS, REST, /metrics and the relay link stay on Asio).
//
// The ring is driven by the worker's io_context, so that everything else on the thread (timers,
// posts, the journal's FlushPass, TLS sockets) keeps running as before:
// - the ring's descriptor is watched by the io_context (a stream_descriptor's async_wait, re-armed
//   every time), and each wake-up drains the completion queue whole, running each operation's
//   handler there, on the worker thread;
// - operations queued during a pass of the event loop are submitted once, by a flush posted
//   when the pass queues its first one (as the journal's FlushPass): one io_uring_enter for all
//   the sends and receives a pass produces. The flush drains what completed during the
//   submit (a send to a socket with room completes inline) and submits what those handlers
//   queued, a few rounds at most.
//
// Lifetime: a UringOp holds its handler in place (no allocation) from the call until its
// completion; a Connection's handlers hold the Connection, so the buffers an operation points
// into live until the kernel is done with them. The ring is destroyed only after every
// operation in flight completed (cancelled first), and drops the handlers it still holds.
// Without liburing (LATCH_HAVE_URING undefined) the ring cannot be constructed: Probe() says so.
#include <boost/asio/io_context.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>

struct io_uring_sqe;  // liburing.h, included by net/uring_ring.cpp only

namespace latch {

class UringRing;

// One receive or send of a ClientStream, holding its completion handler until it completes.
// Owner: the stream; at most one operation per UringOp at a time.
class UringOp {
 public:
  UringOp() = default;
  UringOp(const UringOp&) = delete;
  UringOp& operator=(const UringOp&) = delete;
  ~UringOp() {
    if (pending()) Complete(false, {}, 0);
  }

  bool pending() const { return invoke_ != nullptr; }

  // Stores `handler` (a void(const error_code&, std::size_t) callable) in place.
  template <class Handler>
  void Hold(Handler&& handler) {
    using H = std::decay_t<Handler>;
    static_assert(sizeof(H) <= kStorage && alignof(H) <= alignof(std::max_align_t),
                  "a ClientStream handler must fit a UringOp (a shared_ptr and a little more)");
    ::new (static_cast<void*>(storage_)) H(std::forward<Handler>(handler));
    invoke_ = [](UringOp* op, bool run, const boost::system::error_code& ec, std::size_t n) {
      H* held = std::launder(reinterpret_cast<H*>(op->storage_));
      H local(std::move(*held));
      held->~H();
      op->invoke_ = nullptr;  // free again: the handler may start the next operation here
      if (run) local(ec, n);
    };
  }
  // Runs the handler with the result (run false: drops it unrun).
  void Complete(bool run, const boost::system::error_code& ec, std::size_t n) {
    invoke_(this, run, ec, n);
  }

 private:
  friend class UringRing;
  static constexpr std::size_t kStorage = 32;
  alignas(std::max_align_t) unsigned char storage_[kStorage];
  void (*invoke_)(UringOp*, bool, const boost::system::error_code&, std::size_t) = nullptr;
  bool recv_ = false;        // a 0-byte receive is the end of the stream
  std::uint64_t tag_ = 0;    // this operation's user_data: the op's address and a sequence number
  UringOp* prev_ = nullptr;  // the ring's list of operations in flight
  UringOp* next_ = nullptr;
};

class UringRing {
 public:
  // Throws std::runtime_error when the kernel refuses a ring (or liburing was not built in).
  explicit UringRing(boost::asio::io_context& ctx);
  ~UringRing();
  UringRing(const UringRing&) = delete;
  UringRing& operator=(const UringRing&) = delete;

  // Empty when a ring can be set up here; else why not (for the start-up error).
  static std::string Probe();

  boost::asio::io_context& context() { return ctx_; }
  // Queues a receive into / a send from [data, data + size) on `fd`; `op` holds its handler.
  // The handler runs on the worker thread once the kernel completed it, never inline.
  void Recv(UringOp& op, int fd, void* data, std::size_t size);
  void Send(UringOp& op, int fd, const void* data, std::size_t size);
  // Asks the kernel to end `op` (in flight) early: it completes with operation_aborted, or
  // with what it got before the cancel reached it.
  void Cancel(UringOp& op);

 private:
  struct Impl;
  // A free submission entry (submits early when a pass filled the ring); null when the kernel
  // takes none. Posts the pass's flush if not posted yet.
  io_uring_sqe* NextSqe();
  void Track(UringOp& op, io_uring_sqe* sqe);
  // Fails `op` from the queue (never inline) when no entry could be had.
  void FailLater(UringOp& op);
  void Finish(UringOp& op, int res, bool run);
  void Arm();
  void Drain();
  void Flush();

  boost::asio::io_context& ctx_;
  std::unique_ptr<Impl> impl_;
  UringOp* in_flight_ = nullptr;
  std::uint64_t next_seq_ = 0;
  bool flush_posted_ = false;
};

}  // namespace latch
