#include "net/connection.h"

#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <new>

#include "commands/client_list.h"
#include "commands/client_subscriptions.h"
#include "commands/errors.h"
#include "commands/transaction_commands.h"
#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "metrics/command_stats.h"
#include "net/leader_relay.h"
#include "net/worker.h"
#include "pubsub/subscriber.h"

namespace latch {
namespace {
// An output buffer that grew for a big reply is given back once written.
constexpr std::size_t kShrinkAbove = 1024 * 1024;
// A client's requests stop running while this much of its output is pending (or the
// output limits, if larger), and go on as the client reads. Bounds what a client that does
// not read can make the server hold, with Redis's default of no output limit.
constexpr std::size_t kPauseOutput = 64 * 1024 * 1024;
// One pass over a client's input yields to the other clients of the worker after this much
// output or this many commands (a pipeline of GETs of a 4 MB value is seconds of memcpy).
constexpr std::size_t kYieldOutput = 1024 * 1024;
constexpr int kYieldCommands = 1024;
// out_ is sealed (queued whole for writing) once it holds this much.
constexpr std::size_t kSealAbove = 256 * 1024;
}  // namespace

Connection::Connection(boost::asio::ip::tcp::socket socket, std::shared_ptr<TlsContext> tls,
                       ServerState& state, Worker& worker, std::shared_ptr<ClientInfo> info)
    : stream_(std::move(socket), tls, tls ? nullptr : worker.ring()),
      state_(state),
      worker_(worker),
      writer_(&out_, 2, &state.stats.errors),  // counts every error reply (errorstats)
      block_timer_(worker.context()) {
  session_.info = std::move(info);
  session_.authenticated = !state_.auth_required.load();
  relay_capable_ = state_.reply_log != nullptr;  // set before any worker runs
  UpdateParserLimits();
}

Connection::~Connection() {
  pubsub::LeaveAll(session_, state_.pubsub);  // normally done by Close()
  state_.clients.Remove(session_.info->id);
}

void Connection::Start() {
  boost::system::error_code ec;
  stream_.SetNoDelay();
  auto remote = stream_.RemoteEndpoint(ec);
  auto local = stream_.LocalEndpoint(ec);
  const std::int64_t now = state_.clock->MonoMs();
  {
    // CLIENT LIST reads these under the same lock from other workers (TSan caught created_ms
    // written outside it).
    std::lock_guard lock(state_.clients.mu);
    if (!session_.info->unix_socket) {  // a unix-socket client came with its path as address
      session_.info->addr = remote.address().to_string() + ":" + std::to_string(remote.port());
      session_.info->laddr = local.address().to_string() + ":" + std::to_string(local.port());
    }
    session_.info->fd = stream_.native_handle();
    session_.info->created_ms = now;
    SetRemoteControls();
  }
  session_.info->last_interaction_ms = now;
  worker_.Register(this);
  // Publishers on any thread wake this client through its worker's queue.
  session_.push_wake = [weak = weak_from_this(), &ctx = worker_.context()] {
    boost::asio::post(ctx, [weak] {
      if (auto self = weak.lock()) self->DeliverPushes();
    });
  };
  if (stream_.is_tls()) return StartHandshake();
  SafePump();
}

// Redis leaves a silent TLS client to `timeout` (off by default): this bound keeps a socket
// that connects and never finishes its handshake from holding a client slot for good.
void Connection::StartHandshake() {
  handshaking_ = true;
  if (stream_.handshake_timeout().count() > 0) {  // 0: no bound, as Redis
    block_timer_.expires_after(stream_.handshake_timeout());
    block_timer_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
      auto self = weak.lock();
      if (ec || !self || !self->handshaking_) return;
      self->state_.log->debug("Closing client id={}: no TLS handshake in time",
                              self->session_.info->id);
      self->Close();
    });
  }
  stream_.AsyncHandshake([self = shared_from_this()](const boost::system::error_code& ec) {
    self->handshaking_ = false;
    self->block_timer_.cancel();
    if (ec || self->closed_) {
      self->state_.log->debug("Error accepting a client connection: {} (client id={})",
                              ec.message(), self->session_.info->id);
      self->Close();
      return;
    }
    self->SafePump();
  });
}

// CLIENT KILL and MONITOR reach this connection from any thread (commands/client_admin.cpp,
// commands/monitor.cpp): both post to this connection's thread. A monitor that falls behind
// by more than the output limits (or kPauseOutput without limits) is closed.
void Connection::SetRemoteControls() {
  std::weak_ptr<Connection> weak = weak_from_this();
  auto& ctx = worker_.context();
  session_.info->kill = [weak, &ctx] {
    boost::asio::post(ctx, [weak] {
      if (auto c = weak.lock()) c->Close();
    });
  };
  session_.info->push = [weak, &ctx](std::string bytes) {
    boost::asio::post(ctx, [weak, bytes = std::move(bytes)] {
      auto c = weak.lock();
      if (!c || c->closed_) return;
      c->out_.append(bytes);
      c->SealIfLarge();
      if (c->CloseIfOverOutputLimit(kReadClock)) return;
      if (c->PendingOutput() > kPauseOutput) return c->Close();
      c->SafePump();
    });
  };
}

void Connection::Close() {
  if (closed_) return;
  closed_ = true;
  // Out of CLIENT LIST (and maxclients' count) before the peer can see its socket close, as
  // Redis frees a killed client at once: not when the last handler lets go of this object,
  // which may be later.
  state_.clients.Remove(session_.info->id);
  worker_.Unregister(this);
  // Freed once the last handler lets go of this connection: in time for the next tick.
  const std::size_t held = HeldBufferBytes();
  if (held > kShrinkAbove) worker_.NoteBigFree(held);
  ClearWatches(session_, state_.watches);
  pubsub::LeaveAll(session_, state_.pubsub);
  if (blocked_) {
    session_.info->blocked.store(false, std::memory_order_relaxed);
    auto b = std::move(blocked_);
    block_timer_.cancel();
    if (b->TryAbandon() && b->on_abandon) b->on_abandon();
  }
  boost::system::error_code ec;
  if (relay_) {  // the leader abandons the session (and its waits) as this client went
    block_timer_.cancel();
    relay_->resolver.cancel();
    relay_->socket.close(ec);
  }
  stream_.Close();
}

void Connection::OnTick(std::int64_t now_ms, int timeout_s) {
  if (closed_) return;
  // A client that stopped reading adds no replies, but its soft limit still runs out.
  if (CloseIfOverOutputLimit(now_ms)) return;
  // A parked client is waiting on purpose, as Redis; a relayed one is the leader's to time out.
  if (timeout_s <= 0 || blocked_ || relay_) return;
  if (now_ms - session_.info->last_interaction_ms.load() > std::int64_t{timeout_s} * 1000) {
    state_.log->debug("Closing idle client id={}", session_.info->id);
    Close();
  }
}

bool Connection::CloseIfOverOutputLimit(std::int64_t now_ms) {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  // A client with a subscription is of Redis's pubsub class; its mailbox counts as output.
  const bool pubsub = session_.subscriptions != 0;
  const OutputLimits limits =
      pubsub ? OutputLimits{state_.obuf_pubsub_hard.load(kRelaxed),
                            state_.obuf_pubsub_soft.load(kRelaxed),
                            state_.obuf_pubsub_soft_seconds.load(kRelaxed)}
             : OutputLimits{state_.obuf_hard.load(kRelaxed), state_.obuf_soft.load(kRelaxed),
                            state_.obuf_soft_seconds.load(kRelaxed)};
  const bool unauthenticated = !session_.authenticated;
  if (limits.hard == 0 && limits.soft == 0 && !unauthenticated) return false;
  if (now_ms == kReadClock) now_ms = state_.clock->MonoMs();
  const std::size_t pending =
      PendingOutput() + (session_.subscriber ? session_.subscriber->pending() : 0);
  if (!(unauthenticated && pending > kUnauthenticatedOutputLimit) &&
      !output_limit_.Exceeded(pending, limits, now_ms)) {
    return false;
  }
  PublishBufferSizes();
  std::string line;
  {
    std::lock_guard lock(state_.clients.mu);
    AppendClientLine(*session_.info, now_ms, &line);
  }
  if (!line.empty() && line.back() == '\n') line.pop_back();
  state_.log->warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
               line);
  Close();
  return true;
}

void Connection::PublishBufferSizesIfChanged() {
  // Below this much pending output CLIENT LIST may show the idle state a little longer:
  // a reply that small is on the wire within a round trip.
  constexpr std::size_t kSmallOutput = 16 * 1024;
  if (rbuf_.size() == 0) {
    const std::size_t pending = PendingOutput();
    if (pending != 0 && pending < kSmallOutput && published_idle_mem_ != 0) return;
    if (pending == 0 && published_idle_mem_ == HeldBufferBytes() &&
        published_peak_ == rbuf_.peak()) {
      return;
    }
  }
  PublishBufferSizes();
}

void Connection::PublishBufferSizes() {
  const bool idle = rbuf_.size() == 0 && PendingOutput() == 0;
  published_idle_mem_ = idle ? HeldBufferBytes() : 0;
  published_peak_ = rbuf_.peak();
  ClientInfo::Buffers& b = session_.info->buffers;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  b.qbuf.store(rbuf_.size(), kRelaxed);
  b.qbuf_free.store(rbuf_.free_space(), kRelaxed);
  b.rbs.store(rbuf_.capacity(), kRelaxed);
  b.rbp.store(rbuf_.peak(), kRelaxed);
  b.obl.store(out_.size(), kRelaxed);
  b.oll.store(sealed_.size() + (sending_.size() > sent_ ? 1 : 0), kRelaxed);
  b.omem.store(PendingOutput(), kRelaxed);
  b.tot_mem.store(sizeof(Connection) + HeldBufferBytes(), kRelaxed);
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
  if (relay_) return PumpRelay();
  if (!blocked_ && ProcessInput() == InputState::kYielded && !resume_posted_) {
    resume_posted_ = true;
    boost::asio::post(worker_.context(), [self = shared_from_this()] {
      self->resume_posted_ = false;
      self->SafePump();
    });
  }
  fresh_now_ = false;  // requests run later (after a write, when unparked) read the clock
  if (closed_) return;
  if (relay_) return PumpRelay();  // ProcessInput handed this client to the leader
  if (!writing_ && (!out_.empty() || !sealed_.empty())) StartWrite();
  PublishBufferSizesIfChanged();
  if (session_.close_after_reply) {
    if (!writing_) Close();
    return;
  }
  // Read while idle, or while parked (to see a disconnect); not while a write is pending.
  if (!reading_ && (blocked_ || !writing_)) StartRead();
}

void Connection::SafePump() {
  try {
    Pump();
  } catch (const std::exception& e) {
    state_.log->warn("Closing client id={} after an internal failure: {}", session_.info->id, e.what());
    Close();
  }
}

void Connection::StartRead() {
  const std::size_t capacity = rbuf_.capacity();
  const std::span<char> room = rbuf_.PrepareRead(parser_.bytes_wanted());
  if (rbuf_.capacity() < capacity) worker_.NoteBigFree(capacity);
  reading_ = true;
  stream_.AsyncReadSome(boost::asio::buffer(room.data(), room.size()),
                        [self = shared_from_this()](const boost::system::error_code& ec,
                                                    std::size_t n) { self->OnRead(ec, n); });
}

void Connection::OnRead(const boost::system::error_code& ec, std::size_t n) {
  reading_ = false;
  if (ec || closed_) {
    Close();
    return;
  }
  rbuf_.Commit(n);
  state_.stats.net_input_bytes.fetch_add(n, std::memory_order_relaxed);
  now_ = state_.clock->Now();
  fresh_now_ = true;
  session_.info->last_interaction_ms.store(now_.mono_ms, std::memory_order_relaxed);
  if (rbuf_.size() > static_cast<std::size_t>(state_.client_query_buffer_limit.load())) {
    state_.log->warn("Closing client id={} that reached max query buffer length", session_.info->id);
    Close();
    return;
  }
  SafePump();
}

void Connection::SealIfLarge() {
  if (out_.size() < kSealAbove) return;
  sealed_bytes_ += out_.size();
  sealed_.push_back(std::move(out_));
  out_ = std::string();
}

// Writes the oldest pending output: the rest of sending_, else the first sealed buffer,
// else all of out_. Replies appended meanwhile wait for the next write.
void Connection::StartWrite() {
  writing_ = true;
  // appendfsync always: the replies wait until the journal records they depend on are on
  // disk; HoldForJournal calls StartWrite again then (writing_ stays set meanwhile).
  if (journal_seq_ != 0 && HoldForJournal()) return;
  if (sent_ == sending_.size()) {
    sent_ = 0;
    if (!sealed_.empty()) {
      sending_ = std::move(sealed_.front());
      sealed_.pop_front();
      sealed_bytes_ -= sending_.size();
    } else {
      sending_.clear();
      sending_.swap(out_);
    }
  }
  stream_.AsyncWriteSome(boost::asio::buffer(sending_.data() + sent_, sending_.size() - sent_),
                         [self = shared_from_this()](const boost::system::error_code& ec,
                                                     std::size_t n) { self->OnWrite(ec, n); });
}

void Connection::OnWrite(const boost::system::error_code& ec, std::size_t n) {
  writing_ = false;
  if (ec || closed_) {
    Close();
    return;
  }
  sent_ += n;
  state_.stats.net_output_bytes.fetch_add(n, std::memory_order_relaxed);
  if (sent_ < sending_.size()) {
    StartWrite();
    PublishBufferSizes();
    return;
  }
  sending_.clear();
  sent_ = 0;
  if (sending_.capacity() > kShrinkAbove) {
    worker_.NoteBigFree(sending_.capacity());
    std::string().swap(sending_);
  }
  if (out_.empty() && out_.capacity() > kShrinkAbove) {
    worker_.NoteBigFree(out_.capacity());
    std::string().swap(out_);
  }
  // Under the soft limit again: its clock restarts.
  if (CloseIfOverOutputLimit(kReadClock)) return;
  SafePump();
}

// Runs the complete requests in the read buffer, replies appended to out_, while the
// client's pending output stays under the pause mark (a write may be under way).
// The pause mark, the yield after kYieldOutput and sealing are all crossings of out_'s size
// (nothing else changes the pending output during a pass but a seal, which leaves it
// equal), so a command whose reply leaves out_ under the nearest of them (check_at) costs
// one compare; only with an output limit configured does every command run the checks.
Connection::InputState Connection::ProcessInput() {
  if (rbuf_.size() == 0) return InputState::kDone;  // the pump after a write, mostly
  const CommandBatch batch;  // one clock read per command for INFO commandstats
  const std::size_t hard = state_.obuf_hard.load(std::memory_order_relaxed);
  const std::size_t soft = state_.obuf_soft.load(std::memory_order_relaxed);
  const std::size_t pause_at = std::max<std::size_t>({kPauseOutput, hard, soft});
  // Else no per-command limit check; a client that must still AUTH is checked all the same
  // (kUnauthenticatedOutputLimit), however its state changes during the pass.
  const bool limited = hard != 0 || soft != 0;
  std::size_t produced = 0;            // reply bytes of this pass, counted up to out_mark
  std::size_t out_mark = out_.size();  // out_'s size when produced was last counted
  std::size_t check_at = 0;            // out_'s size at which the checks run again
  int commands = 0;
  while (rbuf_.size() > 0 && !session_.close_after_reply && !blocked_ && !closed_) {
    if (out_.size() >= check_at) {
      produced += out_.size() - out_mark;
      out_mark = out_.size();
      if (PendingOutput() >= pause_at) return InputState::kPaused;
      if (produced >= kYieldOutput) return InputState::kYielded;
      // Under the pause mark now (PendingOutput() < pause_at), so no underflow.
      const std::size_t fixed = PendingOutput() - out_.size();
      check_at = std::min({kSealAbove, pause_at - fixed, out_.size() + kYieldOutput - produced});
    }
    if (commands == kYieldCommands) return InputState::kYielded;
    if (parser_authenticated_ != session_.authenticated) UpdateParserLimits();
    switch (parser_.Parse(std::string_view(rbuf_.data(), rbuf_.size()))) {
      case protocol::RequestParser::Result::kNeedMore:
        return InputState::kDone;
      case protocol::RequestParser::Result::kEmpty:
        rbuf_.Consume(parser_.consumed());
        break;
      case protocol::RequestParser::Result::kCommand: {
        // A follower: this command and all after it go to the leader, unparsed.
        if (relay_capable_ && MaybeStartRelay(parser_.args())) return InputState::kDone;
        Execute(parser_.args());
        rbuf_.Consume(parser_.consumed());
        ++commands;
        const bool checked = limited || !session_.authenticated;
        if (checked || out_.size() >= check_at) [[unlikely]] {
          produced += out_.size() - out_mark;
          SealIfLarge();
          out_mark = out_.size();
          check_at = 0;  // the pause and yield checks before the next command
          if (checked && produced > 0 && CloseIfOverOutputLimit(now_.mono_ms)) {
            return InputState::kDone;
          }
        }
        break;
      }
      case protocol::RequestParser::Result::kError:
        writer_.Error(parser_.error());
        state_.stats.protocol_errors.fetch_add(1, std::memory_order_relaxed);
        state_.log->debug("Protocol error ({}) from client id={}", parser_.error(), session_.info->id);
        session_.close_after_reply = true;
        return InputState::kDone;
    }
  }
  return InputState::kDone;
}

void Connection::Execute(std::span<const std::string_view> args) {
  // The first command after a read uses the time taken at the read; later ones read the
  // monotonic clock again (one clock read each instead of two).
  if (!fresh_now_) now_ = NextCommandNow(*state_.clock);  // metrics/command_stats.h
  fresh_now_ = false;
  CommandContext ctx{args, writer_, session_, state_, now_, this};
  const std::size_t reply_start = out_.size();
  const std::uint64_t journal_before = journal::ThisThreadLastSeq();
  try {
    state_.commands->Dispatch(ctx);
  } catch (const std::bad_alloc&) {
    // Out of memory in the middle of a command (the slab, a reply): the locks it held are
    // released by unwinding; its partial reply is dropped, the client told -OOM and closed
    // (what it had queued or half done is not trustworthy), every other client served on.
    out_.resize(reply_start);
    writer_.Error(errors::kOom);
    session_.close_after_reply = true;
    state_.log->warn("Out of memory running a command of client id={}: replied -OOM, closing it",
                 session_.info->id);
  }
  if (journal::ThisThreadLastSeq() != journal_before) journal_seq_ = journal::ThisThreadLastSeq();
  if (relay_capable_) NoteLogin(args, reply_start);
}

}  // namespace latch
