#include "open_loop.h"

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

#include "connection.h"
#include "http_response.h"

namespace latch::bench {
namespace {

using tcp = asio::ip::tcp;
using std::chrono::milliseconds;
constexpr auto kAsTuple = asio::as_tuple(asio::use_awaitable);
// The service closes a connection idle for 30 s (its io timeout); one idle for this long is
// reopened before use, as a client's pool would, instead of failing on a closed socket.
constexpr auto kMaxIdle = std::chrono::seconds(20);

struct Job {
  bool measured = false;
  Clock::time_point scheduled;
  HttpRequest req;
};

struct Worker {
  explicit Worker(asio::io_context& io) : socket(io), wake(io) {}
  tcp::socket socket;
  asio::steady_timer wake;  // an idle worker waits on it; Kick() cancels it
  std::string in;
  bool connected = false;
  bool busy = false;
  bool timed_out = false;  // the watchdog (or the end of the run) closed it mid-request
  Clock::time_point deadline, last_used;
};

enum class Outcome { kAnswer, kTimeout, kConnect, kIo };

// `{"error":"lock_busy",...}` -> lock_busy.
std::string ErrorCode(std::string_view body) {
  const std::size_t pos = body.find("\"error\":\"");
  if (pos == std::string_view::npos) return "?";
  const std::size_t start = pos + 9, end = body.find('"', start);
  return std::string(body.substr(start, end == std::string_view::npos ? 0 : end - start));
}

std::string_view RequestLine(const HttpRequest& req) {
  const std::string_view b = req.bytes;
  return b.substr(0, std::min(b.find(" HTTP/"), b.size()));
}

void Rethrow(std::exception_ptr e) {
  if (e) std::rethrow_exception(e);
}

class OpenLoop {
 public:
  OpenLoop(const OpenLoopOptions& o, SeedScenario& s,
           const std::function<void(const char*)>& on_phase)
      : o_(o), scenario_(s), on_phase_(on_phase), timeout_(o.timeout_ms) {
    endpoint_ = tcp::endpoint(asio::ip::make_address(o.host), static_cast<unsigned short>(o.port));
  }

  OpenLoopResult Run() {
    asio::co_spawn(io_, Dispatch(), Rethrow);
    asio::co_spawn(io_, Watchdog(), Rethrow);
    io_.run();
    r_.latency.Finish();
    r_.lag.Finish();
    for (auto& k : r_.by_kind) k.Finish();
    return std::move(r_);
  }

 private:
  asio::awaitable<void> Dispatch();
  asio::awaitable<void> WorkerLoop(Worker* w, bool eager);
  asio::awaitable<Outcome> Exchange(Worker& w, const Job& job, HttpResponse* resp,
                                    std::string* what);
  asio::awaitable<bool> Connect(Worker& w);
  asio::awaitable<void> Watchdog();
  void Spawn(bool eager);
  void Kick();
  void Stop();
  void Close(Worker& w);
  void Answer(const Job& job, const HttpResponse& resp);
  void Fail(const Job& job, Outcome why, const std::string& what);

  const OpenLoopOptions& o_;
  SeedScenario& scenario_;
  const std::function<void(const char*)>& on_phase_;
  const milliseconds timeout_;
  asio::io_context io_{1};
  tcp::endpoint endpoint_;
  std::deque<Job> queue_;  // scheduled, waiting for a free connection
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;  // most recently used last: a hot few connections stay warm
  int starting_ = 0;           // workers spawned that have not yet looked at the queue
  int busy_ = 0, open_ = 0;
  bool stopping_ = false;
  Clock::time_point measure_start_ = Clock::time_point::max(), end_ = Clock::time_point::max();
  OpenLoopResult r_;
};

asio::awaitable<void> OpenLoop::Dispatch() {
  asio::steady_timer timer(io_);
  for (int i = 0; i < o_.connections; ++i) Spawn(true);
  // The first requests are due once the initial connections had time to open.
  const auto start = Clock::now() + milliseconds(200);
  const auto measure_start = start + milliseconds(o_.warmup_ms);
  const auto end = measure_start + milliseconds(o_.duration_ms);
  measure_start_ = measure_start;
  end_ = end;
  const double interval_ns = 1e9 / o_.rate;
  const int users = scenario_.spec().users;
  bool measuring = false;
  // Bounded by the schedule: request k is due at start + k * interval, the last before end.
  for (std::int64_t k = 0;; ++k) {
    const auto at = start + std::chrono::nanoseconds(
                                static_cast<std::int64_t>(static_cast<double>(k) * interval_ns));
    if (at >= end) break;
    if (at > Clock::now()) {
      timer.expires_at(at);
      co_await timer.async_wait(kAsTuple);
    }
    // Late (the thread was busy): sent now, but its latency still counts from `at`.
    const bool measured = at >= measure_start;
    if (measured && !measuring) {
      measuring = true;
      on_phase_("measure-start");
    }
    if (measured) ++r_.sent;
    queue_.push_back(Job{measured, at, scenario_.Next(static_cast<int>(k % users))});
    Kick();
  }
  timer.expires_at(end);
  co_await timer.async_wait(kAsTuple);
  on_phase_("measure-end");
  r_.window_s = static_cast<double>(o_.duration_ms) / 1000.0;
  // The window's last requests get their full timeout to finish.
  const auto drain_until = end + timeout_ + milliseconds(500);
  while ((!queue_.empty() || busy_ > 0) && Clock::now() < drain_until) {
    timer.expires_after(milliseconds(5));
    co_await timer.async_wait(kAsTuple);
  }
  Stop();
}

void OpenLoop::Spawn(bool eager) {
  workers_.push_back(std::make_unique<Worker>(io_));
  ++starting_;
  asio::co_spawn(io_, WorkerLoop(workers_.back().get(), eager), Rethrow);
}

// A request was queued: wake an idle connection, or open one more while under the bound
// (not more than the queue needs: connections on their way count).
void OpenLoop::Kick() {
  if (!idle_.empty()) {
    Worker* w = idle_.back();
    idle_.pop_back();
    w->wake.cancel();
    return;
  }
  if (static_cast<int>(workers_.size()) < o_.max_connections &&
      static_cast<std::size_t>(starting_) < queue_.size()) {
    Spawn(false);
  }
}

asio::awaitable<void> OpenLoop::WorkerLoop(Worker* w, bool eager) {
  if (eager) co_await Connect(*w);  // a failure is retried with its first request
  --starting_;
  // Ends when Stop() sets stopping_ and cancels the wait; each pass serves a request or waits.
  while (!stopping_) {
    if (queue_.empty()) {
      idle_.push_back(w);
      w->wake.expires_at(Clock::time_point::max());
      co_await w->wake.async_wait(kAsTuple);
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    w->deadline = job.scheduled + timeout_;
    w->timed_out = false;
    w->busy = true;
    ++busy_;
    HttpResponse resp;
    std::string what;
    const Outcome outcome = co_await Exchange(*w, job, &resp, &what);
    --busy_;
    w->busy = false;
    w->last_used = Clock::now();
    if (outcome == Outcome::kAnswer) {
      Answer(job, resp);
    } else {
      Fail(job, outcome, what);
    }
  }
}

asio::awaitable<Outcome> OpenLoop::Exchange(Worker& w, const Job& job, HttpResponse* resp,
                                            std::string* what) {
  if (w.connected && Clock::now() - w.last_used > kMaxIdle) Close(w);
  if (!w.connected && !co_await Connect(w)) {
    *what = "connect failed";
    co_return w.timed_out ? Outcome::kTimeout : Outcome::kConnect;
  }
  if (job.measured) {
    ++r_.written;
    r_.lag.Add(NanosSince(job.scheduled));
  }
  auto [wec, written] = co_await asio::async_write(w.socket, asio::buffer(job.req.bytes), kAsTuple);
  if (wec) {
    *what = "write: " + wec.message();
    Close(w);
    co_return w.timed_out ? Outcome::kTimeout : Outcome::kIo;
  }
  // Each pass completes the response or reads more; the watchdog closes the socket at the
  // request's deadline, which ends a pending read.
  for (int reads = 0; reads < 100'000; ++reads) {
    const std::ptrdiff_t used = ParseHttpResponse(w.in, resp);
    if (used < 0) {
      *what = "malformed HTTP response";
      Close(w);
      co_return Outcome::kIo;
    }
    if (used > 0) {
      w.in.erase(0, static_cast<std::size_t>(used));
      if (resp->close) Close(w);
      co_return Outcome::kAnswer;
    }
    const std::size_t have = w.in.size();
    w.in.resize(have + 16 * 1024);
    auto [rec, got] =
        co_await w.socket.async_read_some(asio::buffer(w.in.data() + have, 16 * 1024), kAsTuple);
    w.in.resize(have + got);
    if (rec) {
      *what = "read: " + rec.message();
      Close(w);
      co_return w.timed_out ? Outcome::kTimeout : Outcome::kIo;
    }
  }
  *what = "response too long";
  Close(w);
  co_return Outcome::kIo;
}

asio::awaitable<bool> OpenLoop::Connect(Worker& w) {
  w.in.clear();
  auto [ec] = co_await w.socket.async_connect(endpoint_, kAsTuple);
  if (ec) {
    boost::system::error_code ignored;
    w.socket.close(ignored);
    co_return false;
  }
  boost::system::error_code ignored;
  w.socket.set_option(tcp::no_delay(true), ignored);
  w.connected = true;
  w.last_used = Clock::now();
  r_.max_open = std::max(r_.max_open, ++open_);
  co_return true;
}

void OpenLoop::Close(Worker& w) {
  boost::system::error_code ignored;
  w.socket.close(ignored);
  if (w.connected) --open_;
  w.connected = false;
  w.in.clear();
}

// Every 10 ms: requests past their deadline end as timeouts, on the wire (the socket is
// closed, which ends its read) or still queued.
asio::awaitable<void> OpenLoop::Watchdog() {
  asio::steady_timer timer(io_);
  while (!stopping_) {
    timer.expires_after(milliseconds(10));
    co_await timer.async_wait(kAsTuple);
    const auto now = Clock::now();
    for (auto& w : workers_) {
      if (w->busy && !w->timed_out && now >= w->deadline) {
        w->timed_out = true;
        Close(*w);
      }
    }
    while (!queue_.empty() && now >= queue_.front().scheduled + timeout_) {
      Fail(queue_.front(), Outcome::kTimeout, "no free connection before the timeout");
      queue_.pop_front();
    }
  }
}

// The end of the run: what is still queued or on the wire is a timeout.
void OpenLoop::Stop() {
  stopping_ = true;
  for (const Job& job : queue_) Fail(job, Outcome::kTimeout, "not sent by the end of the run");
  queue_.clear();
  for (auto& w : workers_) {
    if (w->busy) w->timed_out = true;
    Close(*w);
    w->wake.cancel();
  }
  idle_.clear();
}

void OpenLoop::Answer(const Job& job, const HttpResponse& resp) {
  scenario_.OnResponse(job.req, resp.status, resp.body);  // warm-up answers teach users too
  const int s = resp.status;
  const auto now = Clock::now();
  if ((s == 200 || s == 201 || s == 409) && now >= measure_start_ && now < end_) {
    ++r_.answered_in_window;
  }
  if (!job.measured) return;
  if (s == 200 || s == 201 || s == 409) {
    const std::int64_t ns = NanosSince(job.scheduled);
    ++r_.completed;
    r_.latency.Add(ns);
    r_.by_kind[static_cast<std::size_t>(job.req.kind)].Add(ns);
    if (s == 409) {
      ++r_.conflicts;
      ++r_.conflict_codes[ErrorCode(resp.body)];
    }
    return;
  }
  ++(s >= 500 ? r_.err_5xx : r_.err_status);
  if (r_.first_error.empty()) {
    r_.first_error = std::string(RequestLine(job.req)) + " -> " + std::to_string(s) + " " +
                     resp.body.substr(0, 200);
  }
}

void OpenLoop::Fail(const Job& job, Outcome why, const std::string& what) {
  if (!job.measured) return;
  switch (why) {
    case Outcome::kTimeout:
      ++r_.err_timeout;
      break;
    case Outcome::kConnect:
      ++r_.err_connect;
      break;
    default:
      ++r_.err_io;
      break;
  }
  if (r_.first_error.empty()) {
    r_.first_error = std::string(RequestLine(job.req)) + ": " +
                     (why == Outcome::kTimeout ? "timeout (" + what + ")" : what);
  }
}

}  // namespace

OpenLoopResult RunOpenLoop(const OpenLoopOptions& o, SeedScenario& scenario,
                           const std::function<void(const char*)>& on_phase) {
  return OpenLoop(o, scenario, on_phase).Run();
}

}  // namespace latch::bench
