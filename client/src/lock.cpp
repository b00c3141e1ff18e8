#include "latch/lock.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <cstdio>
#include <random>

#include "lock_scripts.h"
#include "run_sync.h"

namespace latch {
namespace asio = boost::asio;
using client_internal::RunSync;
namespace scripts = client_internal::scripts;
using std::chrono::steady_clock;

namespace {

Result<LeaseStatus> StatusFromReply(const Result<Reply>& r) {
  if (!r.ok()) return r.error();
  if (r->is_error()) return Result<LeaseStatus>(Errc::kServerError, r->str);
  if (!r->is_integer()) return Result<LeaseStatus>(Errc::kUnexpectedReply, r->ToString());
  switch (r->integer) {
    case 1:
      return LeaseStatus::kOk;
    case 0:
      return LeaseStatus::kNotOwner;
    case -1:
      return LeaseStatus::kLost;
    default:
      return Result<LeaseStatus>(Errc::kUnexpectedReply, r->ToString());
  }
}

Awaitable<void> SleepFor(Millis d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

// EVALSHA, and EVAL when the server does not have the script yet (EVAL caches it, so the
// next call's EVALSHA finds it).
Awaitable<Result<Reply>> RunScript(Client& client, std::string_view script, std::string_view sha,
                                   const std::string& key, const std::string& owner,
                                   std::optional<Millis> ttl) {
  Command evalsha("EVALSHA", sha, 1, key, owner);
  if (ttl) evalsha.Add(*ttl);
  auto r = co_await client.execute(std::move(evalsha));
  if (!r.ok() || !r->is_error() || r->str.substr(0, 8) != "NOSCRIPT") co_return r;
  Command eval("EVAL", script, 1, key, owner);
  if (ttl) eval.Add(*ttl);
  co_return co_await client.execute(std::move(eval));
}

// After a compare-and-delete that deleted nothing: was the key gone (our lease expired and
// nobody took it) or held by someone else? Only for reporting: the delete itself was atomic.
Awaitable<Result<LeaseStatus>> LostOrNotOwner(Client& client, const std::string& key) {
  auto r = co_await client.execute(Command("EXISTS", key));
  if (!r.ok()) co_return r.error();
  if (!r->is_integer()) co_return Result<LeaseStatus>(Errc::kUnexpectedReply, r->ToString());
  co_return r->integer == 0 ? LeaseStatus::kLost : LeaseStatus::kNotOwner;
}

Millis Jittered(Millis d) {
  std::random_device rd;
  std::uniform_int_distribution<std::int64_t> dist(d.count() / 2, d.count() * 3 / 2);
  return Millis(dist(rd));
}

}  // namespace

std::string_view LeaseStatusName(LeaseStatus s) {
  switch (s) {
    case LeaseStatus::kOk:
      return "ok";
    case LeaseStatus::kNotOwner:
      return "not-owner";
    case LeaseStatus::kLost:
      return "lost";
  }
  return "unknown";
}

Result<LockMethod> Lock::Resolve(const Capabilities& caps) const {
  switch (method_) {
    case LockMethod::kAuto:
      if (caps.lock_commands) return LockMethod::kLockCommands;
      if (caps.delex) return LockMethod::kCompareCommands;
      if (caps.scripting) return LockMethod::kScripts;
      return Result<LockMethod>(Errc::kUnsupported, "no LOCK.*, DELEX or EVALSHA on the server");
    case LockMethod::kLockCommands:
      if (caps.lock_commands) return method_;
      return Result<LockMethod>(Errc::kUnsupported, "the server has no LOCK.* commands");
    case LockMethod::kCompareCommands:
      if (caps.delex) return method_;
      return Result<LockMethod>(Errc::kUnsupported, "the server has no DELEX (Redis 8.4+)");
    case LockMethod::kScripts:
      if (caps.scripting) return method_;
      return Result<LockMethod>(Errc::kUnsupported, "the server has no EVALSHA");
  }
  return Result<LockMethod>(Errc::kUnsupported, "unknown lock method");
}

std::string Lock::NewOwnerToken() {
  std::random_device rd;  // one per call: std::random_device is not thread-safe to share
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%08x%08x%08x%08x", rd(), rd(), rd(), rd());
  return std::string(buf, 32);
}

Awaitable<Result<Lease>> Lock::acquire(std::string key, Millis ttl, AcquireOptions options) {
  if (ttl.count() <= 0) co_return Result<Lease>(Errc::kInvalidArgument, "ttl must be positive");
  auto caps = co_await client_.capabilities();
  if (!caps.ok()) co_return caps.error();
  auto method = Resolve(*caps);
  if (!method.ok()) co_return method.error();
  Lease lease;
  lease.key = std::move(key);
  lease.owner = options.owner.empty() ? NewOwnerToken() : std::move(options.owner);
  const auto deadline = steady_clock::now() + options.wait;

  if (*method == LockMethod::kLockCommands) {
    // latchd parks the request and hands over the lock in FIFO order: one call, no polling.
    Command cmd("LOCK.ACQUIRE", lease.key, lease.owner, ttl);
    CallOptions call;
    if (options.wait.count() > 0) {
      cmd.Add("WAIT").Add(options.wait);
      call.timeout = options.wait + client_.options().call_timeout;
      call.blocking = true;
    }
    auto start = steady_clock::now();
    auto r = co_await client_.execute(std::move(cmd), call);
    if (!r.ok()) co_return r.error();
    if (r->is_error()) co_return Result<Lease>(Errc::kServerError, r->str);
    if (r->is_null()) co_return Result<Lease>(Errc::kNotAcquired, lease.key);
    if (!r->is_integer()) co_return Result<Lease>(Errc::kUnexpectedReply, r->ToString());
    lease.fencing_token = r->integer;
    lease.valid_until = start + ttl;
    co_return lease;
  }

  // SET NX PX, retried with jittered pauses until the wait runs out. Bounded: every round
  // either returns or sleeps at least retry_delay / 2 within the deadline.
  for (;;) {
    auto start = steady_clock::now();
    auto r = co_await client_.execute(Command("SET", lease.key, lease.owner, "NX", "PX", ttl));
    if (!r.ok()) co_return r.error();
    if (r->is_error()) co_return Result<Lease>(Errc::kServerError, r->str);
    if (r->is_string()) {
      lease.valid_until = start + ttl;
      co_return lease;
    }
    auto now = steady_clock::now();
    if (now >= deadline) co_return Result<Lease>(Errc::kNotAcquired, lease.key);
    auto pause = Jittered(std::max(options.retry_delay, Millis(1)));
    auto left = std::chrono::duration_cast<Millis>(deadline - now) + Millis(1);
    co_await SleepFor(std::min(pause, left));
  }
}

Awaitable<Result<LeaseStatus>> Lock::release(const Lease& lease) {
  auto caps = co_await client_.capabilities();
  if (!caps.ok()) co_return caps.error();
  auto method = Resolve(*caps);
  if (!method.ok()) co_return method.error();
  if (*method == LockMethod::kLockCommands) {
    co_return StatusFromReply(
        co_await client_.execute(Command("LOCK.RELEASE", lease.key, lease.owner)));
  }
  if (*method == LockMethod::kCompareCommands) {
    auto r = co_await client_.execute(Command("DELEX", lease.key, "IFEQ", lease.owner));
    if (!r.ok()) co_return r.error();
    if (r->is_error()) co_return Result<LeaseStatus>(Errc::kServerError, r->str);
    if (r->is_integer() && r->integer == 1) co_return LeaseStatus::kOk;
    co_return co_await LostOrNotOwner(client_, lease.key);
  }
  co_return StatusFromReply(co_await RunScript(client_, scripts::kRelease, scripts::kReleaseSha,
                                               lease.key, lease.owner, std::nullopt));
}

Awaitable<Result<LeaseStatus>> Lock::extend(Lease& lease, Millis ttl) {
  if (ttl.count() <= 0) {
    co_return Result<LeaseStatus>(Errc::kInvalidArgument, "ttl must be positive");
  }
  auto caps = co_await client_.capabilities();
  if (!caps.ok()) co_return caps.error();
  auto method = Resolve(*caps);
  if (!method.ok()) co_return method.error();
  auto start = steady_clock::now();
  Result<LeaseStatus> status = Errc::kUnsupported;
  if (*method == LockMethod::kLockCommands) {
    status = StatusFromReply(
        co_await client_.execute(Command("LOCK.EXTEND", lease.key, lease.owner, ttl)));
  } else if (*method == LockMethod::kCompareCommands) {
    // One atomic step: IFEQ never creates a missing key, and GET returns the value that was
    // there, which tells the three outcomes apart.
    auto r = co_await client_.execute(
        Command("SET", lease.key, lease.owner, "IFEQ", lease.owner, "PX", ttl, "GET"));
    if (!r.ok()) co_return r.error();
    if (r->is_error()) co_return Result<LeaseStatus>(Errc::kServerError, r->str);
    if (r->is_null()) {
      status = LeaseStatus::kLost;
    } else {
      status = r->is_string() && r->str == lease.owner ? LeaseStatus::kOk : LeaseStatus::kNotOwner;
    }
  } else {
    status = StatusFromReply(co_await RunScript(client_, scripts::kExtend, scripts::kExtendSha,
                                                lease.key, lease.owner, ttl));
  }
  if (status.ok() && *status == LeaseStatus::kOk) lease.valid_until = start + ttl;
  co_return status;
}

Result<Lease> Lock::acquire_sync(std::string key, Millis ttl, AcquireOptions options) {
  return RunSync(client_.impl(), acquire(std::move(key), ttl, std::move(options)));
}

Result<LeaseStatus> Lock::release_sync(const Lease& lease) {
  return RunSync(client_.impl(), release(lease));
}

Result<LeaseStatus> Lock::extend_sync(Lease& lease, Millis ttl) {
  return RunSync(client_.impl(), extend(lease, ttl));
}

LockGuard::~LockGuard() {
  if (!released_ && lock_ != nullptr) (void)release();
}

LockGuard::LockGuard(LockGuard&& other) noexcept
    : lock_(other.lock_), lease_(std::move(other.lease_)), released_(other.released_) {
  other.released_ = true;
}

Result<LeaseStatus> LockGuard::release() {
  if (released_) return LeaseStatus::kOk;
  released_ = true;
  return lock_->release_sync(lease_);
}

}  // namespace latch
