// The replies that reach a connection outside its read-execute-write cycle: a parked
// command's (LOCK.ACQUIRE ... WAIT, a script on the script thread) grant or timeout, pub/sub
// pushes, and the journal's go-ahead under appendfsync always. Each appends to the buffer
// being filled (never the one being written) and pumps.
#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "net/connection.h"
#include "net/worker.h"
#include "pubsub/subscriber.h"

namespace latch {

std::shared_ptr<BlockedClient> Connection::Block(std::int64_t timeout_ms) {
  std::weak_ptr<Connection> weak = weak_from_this();
  auto& ctx = worker_.context();
  session_.info->blocked.store(true, std::memory_order_relaxed);  // CLIENT LIST flag b
  blocked_ = std::make_shared<BlockedClient>(
      [weak, &ctx](BlockedClient::Writer write, std::uint64_t journal_seq) {
        boost::asio::post(ctx, [weak, write = std::move(write), journal_seq] {
          if (auto self = weak.lock()) self->Unblock(write, journal_seq);
        });
      });
  if (timeout_ms > 0) {
    block_timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    block_timer_.async_wait(
        [weak, b = std::weak_ptr<BlockedClient>(blocked_)](const boost::system::error_code& ec) {
          auto self = weak.lock();
          auto blocked = b.lock();
          if (ec || !self || !blocked || self->blocked_ != blocked) return;
          if (!blocked->TryAbandon()) return;  // claimed: its Unblock is (or will be) queued
          if (blocked->on_abandon) blocked->on_abandon();
          self->Unblock(blocked->on_timeout, 0);
        });
  }
  return blocked_;
}

void Connection::Unblock(const BlockedClient::Writer& write, std::uint64_t journal_seq) {
  if (closed_ || !blocked_) return;
  session_.info->blocked.store(false, std::memory_order_relaxed);
  blocked_.reset();
  block_timer_.cancel();
  if (write) {
    // The record the reply depends on was appended by the thread that delivered it (a lock
    // grant, a script's writes); a writer that runs the command itself (one postponed by
    // CLIENT PAUSE, a delayed fault) appends here.
    journal_seq_ = std::max(journal_seq_, journal_seq);
    const std::uint64_t before = journal::ThisThreadLastSeq();
    write(writer_);
    const std::uint64_t appended = journal::ThisThreadLastSeq();
    if (appended != before) journal_seq_ = std::max(journal_seq_, appended);
  }
  SealIfLarge();
  if (CloseIfOverOutputLimit(kReadClock)) return;
  SafePump();
}

void Connection::DeliverPushes() {
  if (closed_ || !session_.subscriber) return;
  const bool overflowed = session_.subscriber->Drain(&out_);
  SealIfLarge();
  if (CloseIfOverOutputLimit(kReadClock)) return;
  if (overflowed) {
    // The mailbox reached the pubsub hard limit before this thread could drain it.
    state_.log->warn("Client id={} closed for overcoming of output buffer limits (pubsub).",
                     session_.info->id);
    Close();
    return;
  }
  SafePump();
}

bool Connection::HoldForJournal() {
  const std::uint64_t seq = std::exchange(journal_seq_, 0);
  return journal::HoldUntilDurable(
      {state_.persistence.get(), state_.reply_log}, seq, worker_.context(),
      [self = shared_from_this()] {
        if (self->closed_) return;
        self->StartWrite();
      },
      // A cluster node's entry may not commit (leadership lost): the write's outcome is
      // unknown, so the client is told as a Redis master's death tells it (docs/CLUSTER.md).
      [self = shared_from_this()] { self->Close(); });
}

}  // namespace latch
