// The write side of a REST session (rest_session.h): the answer to a request, produced a
// step at a time and written as it is produced.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cstdio>
#include <limits>

#include "commands/client_list.h"
#include "journal/journal.h"
#include "journal/server_hooks.h"
#include "rest/rest_session.h"
#include "scripting/script_engine.h"
#include "server_state.h"

namespace latch::rest {
namespace {
// The answer's commands stop while this much of it is unwritten, and go on as writes
// complete: what a REST client makes the server hold is about this plus one reply.
constexpr std::size_t kRunAhead = 256 * 1024;
// One pass yields to the worker's other clients after this much output or this many
// commands (as a RESP connection's pass, net/connection.cpp).
constexpr std::size_t kYieldOutput = 1024 * 1024;
constexpr int kYieldCommands = 1024;
}  // namespace

void RestSession::Respond(RouteResult result, bool close) {
  const bool header_done = parser_ && parser_->is_header_done();
  Answer& a = answer_.emplace();
  a.status = result.status;
  a.allow = std::move(result.allow);
  a.version = header_done ? parser_->get().version() : 11;
  a.close = close;
  a.head = header_done && parser_->get().method() == http::verb::head;
  a.job = std::move(result.job);
  pending_ = std::move(result.body);
  if (a.head) {
    a.counted = pending_.size();
    pending_.clear();
  }
  if (a.job == nullptr) return MaybeWrite();
  Produce();
}

void RestSession::Produce() {
  if (closed_ || !answer_ || answer_->job == nullptr) return;
  Answer& a = *answer_;
  std::size_t produced = 0;
  for (int steps = 0; a.job != nullptr; ++steps) {
    if (PendingOutput() >= kRunAhead) break;  // OnWritten resumes
    if (steps == kYieldCommands || produced >= kYieldOutput) {
      if (!produce_posted_) {
        produce_posted_ = true;
        asio::post(context_, [self = shared_from_this()] {
          self->produce_posted_ = false;
          self->Produce();
        });
      }
      break;
    }
    const std::uint64_t hard = state_.obuf_hard.load(std::memory_order_relaxed);
    const std::size_t budget = hard == 0 ? std::numeric_limits<std::size_t>::max()
                                         : hard - std::min(hard, PendingOutput());
    if (a.job->NextRunsScript()) {
      RunStepOnScriptThread(budget);
      break;
    }
    const std::size_t before = pending_.size();
    const std::uint64_t journaled_before = journal::ThisThreadLastSeq();
    const CommandJob::Step step = a.job->Next(&pending_, budget);
    // As a RESP reply: under appendfsync always the answer waits for its records' fdatasync.
    if (journal::ThisThreadLastSeq() != journaled_before) {
      journal_seq_ = journal::ThisThreadLastSeq();
    }
    produced += pending_.size() - before;
    if (!TakeStep(step, a.job->status())) return;
    if (step == CommandJob::Step::kDone) a.job.reset();
  }
  PublishBufferSizes();
  MaybeWrite();
}

bool RestSession::TakeStep(CommandJob::Step step, int status) {
  if (step == CommandJob::Step::kClosed) {
    Close();
    return false;
  }
  if (step == CommandJob::Step::kOverLimit) {
    CloseForOutputLimit();
    return false;
  }
  Answer& a = *answer_;
  if (a.head) {
    a.counted += pending_.size();
    pending_.clear();
  }
  a.status = status;
  return !CloseIfOverOutputLimit();
}

struct RestSession::ScriptStep {
  std::unique_ptr<CommandJob> job;
  std::string part;  // what the step appended to the answer
  CommandJob::Step step = CommandJob::Step::kMore;
  std::uint64_t journal_seq = 0;  // the step's last journal record, if it wrote
  bool refused = false;           // not run: a script is busy
  // The session, kept alive for the trip and released on its worker only: a session's last
  // reference must not drop on the script thread (its destructor edits the worker's
  // session registry; TSan caught exactly that when `self` rode in the script thread's lambda).
  std::shared_ptr<RestSession> owner;
};

void RestSession::RunStepOnScriptThread(std::size_t budget) {
  auto step = std::make_shared<ScriptStep>();
  step->job = std::move(answer_->job);
  step->owner = shared_from_this();
  script_step_ = true;
  asio::io_context& context = context_;
  auto back = [&context, step] {
    asio::post(context, [step] {
      const std::shared_ptr<RestSession> self = std::move(step->owner);
      self->OnScriptStep(*step);
    });
  };
  auto run = [step, budget, back] {
    const std::uint64_t before = journal::ThisThreadLastSeq();
    step->step = step->job->Next(&step->part, budget);
    if (journal::ThisThreadLastSeq() != before) step->journal_seq = journal::ThisThreadLastSeq();
    back();
  };
  // Behind a busy script (possibly called in its hook, on the script thread): nothing runs
  // here; the worker answers the step BUSY.
  auto refuse = [step, back] {
    step->refused = true;
    back();
  };
  scripting::EngineFor(state_).RunOnScriptThread(std::move(run), std::move(refuse));
}

void RestSession::OnScriptStep(ScriptStep& s) {
  script_step_ = false;
  if (closed_ || !answer_) return;  // the job goes with `s`
  Answer& a = *answer_;
  if (s.refused) {
    s.job->RefuseNextScript();
    a.job = std::move(s.job);
    return Produce();
  }
  // Under appendfsync always the answer waits for the script's records too.
  journal_seq_ = std::max(journal_seq_, s.journal_seq);
  pending_.append(s.part);
  if (!TakeStep(s.step, s.job->status())) return;
  if (s.step != CommandJob::Step::kDone) a.job = std::move(s.job);
  if (a.job != nullptr) return Produce();
  PublishBufferSizes();
  MaybeWrite();
}

std::string RestSession::ResponseHead(std::size_t content_length) const {
  const Answer& a = *answer_;
  std::string head = a.version >= 11 ? "HTTP/1.1 " : "HTTP/1.0 ";
  head += std::to_string(a.status);
  head += ' ';
  const beast::string_view reason = http::obsolete_reason(http::int_to_status(a.status));
  head.append(reason.data(), reason.size());
  head += "\r\nServer: latchd\r\nContent-Type: application/json\r\n";
  if (!a.allow.empty()) head += "Allow: " + a.allow + "\r\n";
  head += "upstash-sync-token: " + SyncToken(state_) + "\r\n";
  if (a.chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else if (content_length != std::numeric_limits<std::size_t>::max()) {
    head += "Content-Length: " + std::to_string(content_length) + "\r\n";
  }
  if (a.close) head += "Connection: close\r\n";
  if (!a.close && a.version < 11) head += "Connection: keep-alive\r\n";
  return head + "\r\n";
}

void RestSession::MaybeWrite() {
  if (closed_ || writing_ || !answer_) return;
  Answer& a = *answer_;
  const bool complete = a.job == nullptr && !script_step_;
  if (a.final_sent) return Finish();
  // Nothing to write before the next steps (a yield): wait for them.
  if (!complete && pending_.size() < kRunAhead && !a.head_sent) return;
  if (!complete && pending_.empty()) return;
  // appendfsync always: nothing of the answer goes out before its records are on disk.
  if (journal_seq_ != 0) {
    const std::uint64_t seq = std::exchange(journal_seq_, 0);
    writing_ = true;
    const journal::ReplyHold hold{state_.persistence.get(), state_.reply_log};
    if (journal::HoldUntilDurable(hold, seq, context_, [self = shared_from_this()] {
          self->writing_ = false;
          self->MaybeWrite();
        })) {
      return;
    }
    writing_ = false;
  }
  std::string prefix;
  if (!a.head_sent) {
    if (complete) {
      prefix = ResponseHead(a.head ? a.counted : pending_.size());
    } else {
      // Longer than one write: chunked, or (HTTP/1.0) delimited by the connection's end.
      a.chunked = a.version >= 11;
      if (!a.chunked) a.close = true;
      prefix = ResponseHead(std::numeric_limits<std::size_t>::max());
    }
    a.head_sent = true;
  }
  sending_.clear();
  sending_.swap(pending_);
  std::string suffix;
  if (a.chunked) {
    if (!sending_.empty()) {
      char size[24];
      const int n = std::snprintf(size, sizeof size, "%zx\r\n", sending_.size());
      prefix.append(size, static_cast<std::size_t>(n));
      suffix = "\r\n";
    }
    if (complete) suffix += "0\r\n\r\n";
  }
  a.final_sent = complete;
  writing_ = true;
  stream_.expires_after(IdleTimeout());
  prefix_ = std::move(prefix);
  suffix_ = std::move(suffix);
  const std::array<asio::const_buffer, 3> buffers = {asio::buffer(prefix_), asio::buffer(sending_),
                                                     asio::buffer(suffix_)};
  asio::async_write(
      stream_, buffers,
      [self = shared_from_this()](beast::error_code ec, std::size_t n) { self->OnWritten(ec, n); });
  PublishBufferSizes();
}

void RestSession::OnWritten(beast::error_code ec, std::size_t n) {
  writing_ = false;
  state_.stats.net_output_bytes.fetch_add(n, std::memory_order_relaxed);
  if (ec || closed_) return Close();
  // A big reply's buffer is given back once written.
  if (sending_.capacity() > kRunAhead * 4) {
    std::string().swap(sending_);
  } else {
    sending_.clear();
  }
  if (CloseIfOverOutputLimit()) return;  // the soft limit's clock restarts under it
  if (answer_ && answer_->final_sent) return Finish();
  Produce();
  MaybeWrite();
}

void RestSession::Finish() {
  const bool close = answer_->close;
  answer_.reset();
  for (std::string* s : {&pending_, &sending_}) {
    if (s->capacity() > kRunAhead * 4) {
      std::string().swap(*s);
    } else {
      s->clear();
    }
  }
  PublishBufferSizes();
  if (close) return Close();
  ReadHeader();
}

bool RestSession::CloseIfOverOutputLimit() {
  constexpr auto kRelaxed = std::memory_order_relaxed;
  const OutputLimits limits{state_.obuf_hard.load(kRelaxed), state_.obuf_soft.load(kRelaxed),
                            state_.obuf_soft_seconds.load(kRelaxed)};
  if (limits.hard == 0 && limits.soft == 0) return false;
  if (!output_limit_.Exceeded(PendingOutput(), limits, state_.clock->MonoMs())) return false;
  CloseForOutputLimit();
  return true;
}

void RestSession::CloseForOutputLimit() {
  PublishBufferSizes();
  std::string line;
  {
    std::lock_guard lock(state_.clients.mu);
    AppendClientLine(*info_, state_.clock->MonoMs(), &line);
  }
  if (!line.empty() && line.back() == '\n') line.pop_back();
  state_.log->warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
                   line);
  Close();
}

void RestSession::PublishBufferSizes() {
  ClientInfo::Buffers& b = info_->buffers;
  constexpr auto kRelaxed = std::memory_order_relaxed;
  b.obl.store(pending_.size(), kRelaxed);
  b.oll.store(writing_ ? 1 : 0, kRelaxed);
  b.omem.store(PendingOutput(), kRelaxed);
  b.tot_mem.store(
      sizeof(RestSession) + buffer_.capacity() + pending_.capacity() + sending_.capacity(),
      kRelaxed);
}

}  // namespace latch::rest
