#include "net/uring_ring.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <stdexcept>

#if LATCH_HAVE_URING
#include <liburing.h>
#include <sys/socket.h>

#include <boost/asio/error.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#endif

namespace latch {

#if LATCH_HAVE_URING
namespace {
// Submission entries: a pass queues about one per client it read or wrote (c50: 50 at most); a
// pass that fills the ring submits early. The completion queue is larger; the kernel keeps
// what overflows it anyway (IORING_FEAT_NODROP, and liburing's peek flushes it).
constexpr unsigned kUringSqEntries = 1024;
constexpr unsigned kCqEntries = 8192;
// Submit-and-drain rounds of one flush: the sends of a pass, then the receives that their
// inline completions start, then (rarely) what those completed.
constexpr int kFlushRounds = 4;
// The destructor waits this long for cancelled operations (their sockets are shut down: each
// ends within a pass) before it gives up on the rest and leaks their connections.
constexpr std::chrono::seconds kExitWait{2};
// One operation's bytes: a longer buffer is sent in parts (a short write, as write_some's).
constexpr std::size_t kMaxIo = 1u << 30;
constexpr int kUserPointerBits = 48;  // x86-64 and arm64 user addresses fit below 2^47

int InitRing(io_uring* ring) {
  io_uring_params p{};
  p.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SUBMIT_ALL;
  p.cq_entries = kCqEntries;
  int r = io_uring_queue_init_params(kUringSqEntries, ring, &p);
  if (r == -EINVAL) {  // a kernel before 5.18 has no SUBMIT_ALL
    p = io_uring_params{};
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = kCqEntries;
    r = io_uring_queue_init_params(kUringSqEntries, ring, &p);
  }
  return r;
}

UringOp* OpOf(std::uint64_t user_data) {
  return reinterpret_cast<UringOp*>(user_data & ((std::uint64_t{1} << kUserPointerBits) - 1));
}
}  // namespace

struct UringRing::Impl {
  explicit Impl(boost::asio::io_context& ctx) : watch(ctx) {}
  io_uring ring{};
  boost::asio::posix::stream_descriptor watch;
};

std::string UringRing::Probe() {
  io_uring ring{};
  const int r = InitRing(&ring);
  if (r < 0) return std::string("io_uring_queue_init failed: ") + std::strerror(-r);
  io_uring_queue_exit(&ring);
  return {};
}

UringRing::UringRing(boost::asio::io_context& ctx) : ctx_(ctx), impl_(std::make_unique<Impl>(ctx)) {
  const int r = InitRing(&impl_->ring);
  if (r < 0) {
    throw std::runtime_error(std::string("io-engine uring: io_uring_queue_init failed: ") +
                             std::strerror(-r));
  }
  boost::system::error_code ec;
  impl_->watch.assign(impl_->ring.ring_fd, ec);
  if (ec) {
    io_uring_queue_exit(&impl_->ring);
    throw std::runtime_error("io-engine uring: cannot watch the ring: " + ec.message());
  }
  Arm();
}

UringRing::~UringRing() {
  (void)impl_->watch.release();  // the ring's descriptor is closed by io_uring_queue_exit
  io_uring& ring = impl_->ring;
  // The kernel may write into a receive's buffer until the receive completes: every operation
  // in flight is cancelled and waited for before the connections holding the buffers may go.
  for (UringOp* op = in_flight_; op != nullptr; op = op->next_) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring);
    if (sqe == nullptr) {
      io_uring_submit(&ring);
      sqe = io_uring_get_sqe(&ring);
    }
    if (sqe != nullptr) {
      io_uring_prep_cancel64(sqe, op->tag_, 0);
      sqe->user_data = 0;
    }
  }
  io_uring_submit(&ring);
  const auto deadline = std::chrono::steady_clock::now() + kExitWait;
  while (in_flight_ != nullptr && std::chrono::steady_clock::now() < deadline) {
    io_uring_cqe* cqe = nullptr;
    __kernel_timespec wait{0, 100 * 1000 * 1000};
    const int r = io_uring_wait_cqe_timeout(&ring, &cqe, &wait);
    if (r == -ETIME || r == -EINTR) continue;
    if (r < 0 || cqe == nullptr) break;
    const std::uint64_t user_data = cqe->user_data;
    const int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    if (user_data != 0) Finish(*OpOf(user_data), res, /*run=*/false);
  }
  // Operations still in flight keep their handlers (and connections): leaked, not freed
  // under the kernel.
  for (UringOp* op = in_flight_; op != nullptr; op = op->next_) op->invoke_ = nullptr;
  io_uring_queue_exit(&ring);
}

io_uring_sqe* UringRing::NextSqe() {
  io_uring_sqe* sqe = io_uring_get_sqe(&impl_->ring);
  if (sqe == nullptr) {  // this pass filled the ring: submit what it holds now
    io_uring_submit(&impl_->ring);
    sqe = io_uring_get_sqe(&impl_->ring);
  }
  if (!flush_posted_) {
    flush_posted_ = true;
    // Posted from a handler: queued behind the completions of the pass under way.
    boost::asio::post(ctx_, [this] { Flush(); });
  }
  return sqe;
}

void UringRing::Track(UringOp& op, io_uring_sqe* sqe) {
  op.tag_ = reinterpret_cast<std::uintptr_t>(&op) | (++next_seq_ << kUserPointerBits);
  sqe->user_data = op.tag_;
  op.prev_ = nullptr;
  op.next_ = in_flight_;
  if (in_flight_ != nullptr) in_flight_->prev_ = &op;
  in_flight_ = &op;
}

void UringRing::FailLater(UringOp& op) {
  // The held handler keeps the op's owner alive until this runs.
  boost::asio::post(ctx_, [&op] {
    op.Complete(true, boost::system::error_code(EBUSY, boost::system::system_category()), 0);
  });
}

void UringRing::Recv(UringOp& op, int fd, void* data, std::size_t size) {
  io_uring_sqe* sqe = NextSqe();
  if (sqe == nullptr) return FailLater(op);
  op.recv_ = true;
  io_uring_prep_recv(sqe, fd, data, std::min(size, kMaxIo), 0);
  Track(op, sqe);
}

void UringRing::Send(UringOp& op, int fd, const void* data, std::size_t size) {
  io_uring_sqe* sqe = NextSqe();
  if (sqe == nullptr) return FailLater(op);
  op.recv_ = false;
  // MSG_NOSIGNAL: a peer that went away is an EPIPE completion, not a SIGPIPE (as Asio sends).
  io_uring_prep_send(sqe, fd, data, std::min(size, kMaxIo), MSG_NOSIGNAL);
  Track(op, sqe);
}

void UringRing::Cancel(UringOp& op) {
  if (!op.pending() || op.tag_ == 0) return;
  io_uring_sqe* sqe = NextSqe();
  if (sqe == nullptr) return;  // the socket is shut down: the operation ends anyway
  io_uring_prep_cancel64(sqe, op.tag_, 0);
  sqe->user_data = 0;  // its own completion is ignored
}

void UringRing::Finish(UringOp& op, int res, bool run) {
  if (op.prev_ != nullptr) {
    op.prev_->next_ = op.next_;
  } else {
    in_flight_ = op.next_;
  }
  if (op.next_ != nullptr) op.next_->prev_ = op.prev_;
  op.prev_ = op.next_ = nullptr;
  op.tag_ = 0;
  boost::system::error_code ec;
  std::size_t n = 0;
  if (res > 0) {
    n = static_cast<std::size_t>(res);
  } else if (res == 0) {
    if (op.recv_) ec = boost::asio::error::eof;  // as async_read_some reports a closed peer
  } else {
    ec.assign(-res, boost::system::system_category());  // -ECANCELED is operation_aborted
  }
  op.Complete(run, ec, n);
}

// The ring's descriptor is readable while completions wait. Re-armed before the drain: a
// completion posted during it wakes the next poll, where this wait is queued again.
void UringRing::Arm() {
  impl_->watch.async_wait(boost::asio::posix::descriptor_base::wait_read,
                          [this](const boost::system::error_code& ec) {
                            if (ec) return;  // the ring is going away
                            Arm();
                            Drain();
                          });
}

void UringRing::Drain() {
  io_uring_cqe* cqe = nullptr;
  while (io_uring_peek_cqe(&impl_->ring, &cqe) == 0 && cqe != nullptr) {
    const std::uint64_t user_data = cqe->user_data;
    const int res = cqe->res;
    io_uring_cqe_seen(&impl_->ring, cqe);  // before the handler, which may queue more
    if (user_data != 0) Finish(*OpOf(user_data), res, /*run=*/true);
  }
}

// One submission for what the pass queued; what completes inside it (sends to sockets with
// room) runs here, and what those handlers queue goes in the next round.
void UringRing::Flush() {
  for (int round = 0; round < kFlushRounds; ++round) {
    if (io_uring_sq_ready(&impl_->ring) == 0) break;
    io_uring_submit(&impl_->ring);  // flush_posted_ stays set: the handlers below post nothing
    Drain();
  }
  flush_posted_ = false;
  if (io_uring_sq_ready(&impl_->ring) > 0) {
    flush_posted_ = true;
    boost::asio::post(ctx_, [this] { Flush(); });
  }
}

#else  // built without liburing: `io-engine uring` stops start-up with Probe()'s reason

struct UringRing::Impl {};

std::string UringRing::Probe() {
  return "latchd was built without liburing (install liburing-dev and rebuild)";
}

UringRing::UringRing(boost::asio::io_context& ctx) : ctx_(ctx) {
  throw std::runtime_error("io-engine uring: " + Probe());
}

UringRing::~UringRing() = default;
io_uring_sqe* UringRing::NextSqe() { return nullptr; }
void UringRing::Track(UringOp&, io_uring_sqe*) {}
void UringRing::FailLater(UringOp&) {}
void UringRing::Recv(UringOp&, int, void*, std::size_t) {}
void UringRing::Send(UringOp&, int, const void*, std::size_t) {}
void UringRing::Cancel(UringOp&) {}
void UringRing::Finish(UringOp&, int, bool) {}
void UringRing::Arm() {}
void UringRing::Drain() {}
void UringRing::Flush() {}

#endif

}  // namespace latch
