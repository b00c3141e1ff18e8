#include "latch/redlock.h"

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <mutex>
#include <random>

#include "await.h"
#include "run_sync.h"

namespace latch {
namespace asio = boost::asio;
using client_internal::AwaitCallback;
using client_internal::RunSync;
using std::chrono::steady_clock;

namespace {

// Per server: acquire (or extend, or release when ttl is empty) every key; true only when
// each one succeeded. An acquire that fails part way leaves its keys to the caller's
// release-everywhere.
Awaitable<bool> OnServer(Lock lock, std::vector<std::string> keys, std::string owner,
                         std::optional<Millis> ttl, bool extend) {
  bool all = true;
  for (const auto& key : keys) {
    Lease lease;
    lease.key = key;
    lease.owner = owner;
    if (!ttl) {
      auto r = co_await lock.release(lease);
      all = all && r.ok() && *r == LeaseStatus::kOk;
    } else if (extend) {
      auto r = co_await lock.extend(lease, *ttl);
      all = all && r.ok() && *r == LeaseStatus::kOk;
    } else {
      AcquireOptions options;
      options.owner = owner;
      auto r = co_await lock.acquire(key, *ttl, options);
      if (!r.ok()) co_return false;  // no point asking this server for the others
    }
  }
  co_return all;
}

}  // namespace

Redlock::Redlock(std::vector<Client*> servers, RedlockOptions options) : options_(options) {
  for (Client* c : servers) locks_.emplace_back(*c);
}

Millis Redlock::drift(Millis ttl) const {
  auto factor = static_cast<std::int64_t>(static_cast<double>(ttl.count()) * options_.drift_factor);
  return Millis(factor) + options_.drift_constant;
}

std::optional<Millis> Redlock::validity(Millis ttl, Millis elapsed) const {
  Millis v = ttl - elapsed - drift(ttl);
  if (v.count() <= 0) return std::nullopt;
  return v;
}

Awaitable<std::vector<bool>> Redlock::OnAll(std::vector<std::string> keys, std::string owner,
                                            std::optional<Millis> ttl, bool extend) {
  auto ex = co_await asio::this_coro::executor;
  struct Gather {
    std::mutex mu;
    std::vector<bool> ok;
    std::size_t left = 0;
  };
  auto g = std::make_shared<Gather>();
  g->ok.assign(locks_.size(), false);
  g->left = locks_.size();
  auto r = co_await AwaitCallback<std::vector<bool>>([&](auto done) {
    if (locks_.empty()) return done(std::vector<bool>{});
    for (std::size_t i = 0; i < locks_.size(); ++i) {
      asio::co_spawn(ex, OnServer(locks_[i], keys, owner, ttl, extend),
                     [g, i, done](std::exception_ptr e, bool ok) {
                       std::unique_lock lock(g->mu);
                       g->ok[i] = !e && ok;
                       if (--g->left > 0) return;
                       auto all = g->ok;
                       lock.unlock();
                       done(std::move(all));
                     });
    }
  });
  co_return std::move(r.value());
}

Awaitable<Result<RedlockLease>> Redlock::acquire(std::vector<std::string> keys, Millis ttl) {
  if (keys.empty() || ttl.count() <= 0) {
    co_return Result<RedlockLease>(Errc::kInvalidArgument, "need keys and a positive ttl");
  }
  RedlockLease lease;
  lease.keys = std::move(keys);
  lease.owner = Lock::NewOwnerToken();
  std::random_device rd;
  std::string why;
  for (int attempt = 0; attempt <= options_.retry_count; ++attempt) {
    if (attempt > 0) {
      std::uniform_int_distribution<std::int64_t> jitter(-options_.retry_jitter.count(),
                                                         options_.retry_jitter.count());
      Millis pause = std::max(Millis(0), options_.retry_delay + Millis(jitter(rd)));
      asio::steady_timer timer(co_await asio::this_coro::executor, pause);
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
    auto start = steady_clock::now();
    auto granted = co_await OnAll(lease.keys, lease.owner, ttl, false);
    auto elapsed = std::chrono::duration_cast<Millis>(steady_clock::now() - start);
    int n = static_cast<int>(std::count(granted.begin(), granted.end(), true));
    auto v = validity(ttl, elapsed);
    if (n >= quorum() && v) {
      lease.granted = n;
      lease.validity = *v;
      lease.valid_until = start + ttl - drift(ttl);
      co_return lease;
    }
    why = std::to_string(n) + " of " + std::to_string(locks_.size()) + " servers granted (quorum " +
          std::to_string(quorum()) + ") in " + std::to_string(elapsed.count()) + " ms";
    // Release everywhere: a server that granted after its reply was lost must not keep it.
    (void)co_await OnAll(lease.keys, lease.owner, std::nullopt, false);
  }
  co_return Result<RedlockLease>(Errc::kNotAcquired, why);
}

Awaitable<Result<int>> Redlock::release(const RedlockLease& lease) {
  auto released = co_await OnAll(lease.keys, lease.owner, std::nullopt, false);
  co_return static_cast<int>(std::count(released.begin(), released.end(), true));
}

Awaitable<Result<RedlockLease>> Redlock::extend(const RedlockLease& lease, Millis ttl) {
  if (ttl.count() <= 0) co_return Result<RedlockLease>(Errc::kInvalidArgument, "ttl must be > 0");
  auto start = steady_clock::now();
  auto extended = co_await OnAll(lease.keys, lease.owner, ttl, true);
  auto elapsed = std::chrono::duration_cast<Millis>(steady_clock::now() - start);
  int n = static_cast<int>(std::count(extended.begin(), extended.end(), true));
  auto v = validity(ttl, elapsed);
  if (n < quorum() || !v) {
    co_return Result<RedlockLease>(
        Errc::kLeaseLost,
        std::to_string(n) + " of " + std::to_string(locks_.size()) + " servers extended");
  }
  RedlockLease out = lease;
  out.granted = n;
  out.validity = *v;
  out.valid_until = start + ttl - drift(ttl);
  co_return out;
}

Result<RedlockLease> Redlock::acquire_sync(std::vector<std::string> keys, Millis ttl) {
  if (locks_.empty()) return Result<RedlockLease>(Errc::kInvalidArgument, "no servers");
  return RunSync(locks_.front().client().impl(), acquire(std::move(keys), ttl));
}

Result<int> Redlock::release_sync(const RedlockLease& lease) {
  if (locks_.empty()) return 0;
  return RunSync(locks_.front().client().impl(), release(lease));
}

Result<RedlockLease> Redlock::extend_sync(const RedlockLease& lease, Millis ttl) {
  if (locks_.empty()) return Result<RedlockLease>(Errc::kInvalidArgument, "no servers");
  return RunSync(locks_.front().client().impl(), extend(lease, ttl));
}

}  // namespace latch
