#include "net/connection.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstring>

#include "commands/errors.h"
#include "commands/transaction_commands.h"
#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "net/worker.h"

namespace latch {
namespace {
constexpr std::size_t kReadChunk = 16 * 1024;
// A buffer that grew for one big request or reply shrinks back once drained.
constexpr std::size_t kShrinkAbove = 1024 * 1024;
}  // namespace

Connection::Connection(boost::asio::ip::tcp::socket socket, ServerState& state, Worker& worker,
                       std::shared_ptr<ClientInfo> info)
    : socket_(std::move(socket)),
      state_(state),
      worker_(worker),
      writer_(&out_, 2),
      block_timer_(worker.context()) {
  session_.info = std::move(info);
  session_.authenticated = !state_.auth_required.load();
  UpdateParserLimits();
  rbuf_.resize(kReadChunk);
}

Connection::~Connection() { state_.clients.Remove(session_.info->id); }

void Connection::Start() {
  boost::system::error_code ec;
  socket_.set_option(boost::asio::ip::tcp::no_delay(true), ec);
  auto remote = socket_.remote_endpoint(ec);
  auto local = socket_.local_endpoint(ec);
  {
    std::lock_guard lock(state_.clients.mu);
    session_.info->addr = remote.address().to_string() + ":" + std::to_string(remote.port());
    session_.info->laddr = local.address().to_string() + ":" + std::to_string(local.port());
    session_.info->fd = socket_.native_handle();
  }
  std::int64_t now = state_.clock->MonoMs();
  session_.info->created_ms = now;
  session_.info->last_interaction_ms = now;
  worker_.Register(this);
  Pump();
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  worker_.Unregister(this);
  ClearWatches(session_, state_.watches);
  if (blocked_) {
    auto b = std::move(blocked_);
    block_timer_.cancel();
    if (b->TryAbandon() && b->on_abandon) b->on_abandon();
  }
  boost::system::error_code ec;
  socket_.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

void Connection::CloseIfIdle(std::int64_t now_ms, int timeout_s) {
  if (blocked_) return;  // a parked client is waiting on purpose, as in Redis
  if (now_ms - session_.info->last_interaction_ms.load() > std::int64_t{timeout_s} * 1000) {
    spdlog::debug("Closing idle client id={}", session_.info->id);
    Close();
  }
}

void Connection::UpdateParserLimits() {
  protocol::ParserLimits limits;
  limits.max_bulk_len = state_.proto_max_bulk_len.load();
  limits.authenticated = session_.authenticated;
  parser_.set_limits(limits);
  parser_authenticated_ = session_.authenticated;
}

void Connection::Pump() {
  if (closed_) return;
  if (!blocked_ && !writing_) ProcessInput();
  fresh_now_ = false;  // requests run later (after a write, when unparked) read the clock
  if (!writing_ && !out_.empty()) StartWrite();
  if (session_.close_after_reply) {
    if (!writing_) Close();
    return;
  }
  // Read while idle, or while parked (to see a disconnect); not while a write is pending.
  if (!reading_ && (blocked_ || !writing_)) StartRead();
}

void Connection::StartRead() {
  // Make room: drop consumed bytes, then grow for a large request in progress.
  if (rstart_ == rend_) {
    rstart_ = rend_ = 0;
    if (rbuf_.size() > kShrinkAbove) {
      rbuf_.resize(kReadChunk);
      rbuf_.shrink_to_fit();
    }
  } else if (rstart_ > 0 && rbuf_.size() - rend_ < kReadChunk) {
    std::memmove(rbuf_.data(), rbuf_.data() + rstart_, rend_ - rstart_);
    rend_ -= rstart_;
    rstart_ = 0;
  }
  std::size_t want = std::max(kReadChunk, parser_.bytes_wanted());
  if (rbuf_.size() - rend_ < want) rbuf_.resize(rend_ + want);
  reading_ = true;
  socket_.async_read_some(
      boost::asio::buffer(rbuf_.data() + rend_, rbuf_.size() - rend_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
        self->OnRead(ec, n);
      });
}

void Connection::OnRead(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (ec || closed_) {
    Close();
    return;
  }
  rend_ += n;
  state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
  now_ = state_.clock->Now();
  fresh_now_ = true;
  session_.info->last_interaction_ms.store(now_.mono_ms, std::memory_order_relaxed);
  if (rend_ - rstart_ > static_cast<std::size_t>(state_.client_query_buffer_limit.load())) {
    spdlog::warn("Closing client id={} that reached max query buffer length",
                 session_.info->id);
    Close();
    return;
  }
  Pump();
}

void Connection::StartWrite() {
  writing_ = true;
  if (journal_seq_ != 0 && HoldForJournal()) return;
  state_.stats.net_output_bytes.fetch_add(out_.size(), std::memory_order_relaxed);
  boost::asio::async_write(
      socket_, boost::asio::buffer(out_),
      [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
        self->writing_ = false;
        if (ec || self->closed_) {
          self->Close();
          return;
        }
        self->out_.clear();
        if (self->out_.capacity() > kShrinkAbove) self->out_.shrink_to_fit();
        self->Pump();
      });
}

void Connection::ProcessInput() {
  while (rstart_ < rend_ && !session_.close_after_reply && !blocked_) {
    if (parser_authenticated_ != session_.authenticated) UpdateParserLimits();
    std::string_view pending(rbuf_.data() + rstart_, rend_ - rstart_);
    switch (parser_.Parse(pending)) {
      case protocol::RequestParser::Result::kNeedMore:
        return;
      case protocol::RequestParser::Result::kEmpty:
        rstart_ += parser_.consumed();
        break;
      case protocol::RequestParser::Result::kCommand:
        Execute(parser_.args());
        rstart_ += parser_.consumed();
        break;
      case protocol::RequestParser::Result::kError:
        writer_.Error(parser_.error());
        state_.stats.protocol_errors.fetch_add(1, std::memory_order_relaxed);
        spdlog::debug("Protocol error ({}) from client id={}", parser_.error(),
                      session_.info->id);
        session_.close_after_reply = true;
        return;
    }
  }
}

void Connection::Execute(std::span<const std::string_view> args) {
  // The first command after a read uses the time taken at the read; later ones read the
  // monotonic clock again (one clock read each instead of two).
  if (!fresh_now_) now_ = state_.clock->NowSameWallOffset();
  fresh_now_ = false;
  CommandContext ctx{args, writer_, session_, state_, now_, this};
  const std::uint64_t journal_before = journal::ThisThreadLastSeq();
  state_.commands->Dispatch(ctx);
  if (journal::ThisThreadLastSeq() != journal_before) journal_seq_ = journal::ThisThreadLastSeq();
  state_.stats.total_commands.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<BlockedClient> Connection::Block(std::int64_t timeout_ms) {
  std::weak_ptr<Connection> weak = weak_from_this();
  auto& ctx = worker_.context();
  blocked_ = std::make_shared<BlockedClient>([weak, &ctx](BlockedClient::Writer write) {
    boost::asio::post(ctx, [weak, write = std::move(write)] {
      if (auto self = weak.lock()) self->Unblock(write);
    });
  });
  if (timeout_ms > 0) {
    block_timer_.expires_after(std::chrono::milliseconds(timeout_ms));
    block_timer_.async_wait([weak, b = std::weak_ptr<BlockedClient>(blocked_)](
                                const boost::system::error_code& ec) {
      auto self = weak.lock();
      auto blocked = b.lock();
      if (ec || !self || !blocked || self->blocked_ != blocked) return;
      if (!blocked->TryAbandon()) return;  // a grant won the race; its Unblock is queued
      if (blocked->on_abandon) blocked->on_abandon();
      self->Unblock(blocked->on_timeout);
    });
  }
  return blocked_;
}

void Connection::Unblock(const BlockedClient::Writer& write) {
  if (closed_ || !blocked_) return;
  blocked_.reset();
  block_timer_.cancel();
  // A lock handed to this client was journaled by the releasing thread: wait for all so far.
  if (write) journal_seq_ = std::max(journal_seq_, journal::AppendedSeq(state_));
  if (write) write(writer_);
  Pump();
}

bool Connection::HoldForJournal() {
  const std::uint64_t seq = std::exchange(journal_seq_, 0);
  auto& ctx = worker_.context();
  return journal::HoldUntilDurable(state_, seq, [self = shared_from_this(), &ctx] {
    boost::asio::post(ctx, [self] {
      if (self->closed_) return;
      self->StartWrite();
    });
  });
}

}  // namespace latch
