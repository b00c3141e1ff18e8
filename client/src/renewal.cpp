// Auto-renewal of a lease: a coroutine on the client's I/O thread that extends the lease
// every ttl * fraction and reports the loss once.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <future>
#include <mutex>

#include "client_impl.h"
#include "latch/lock.h"

namespace latch {
namespace asio = boost::asio;
using std::chrono::steady_clock;

struct Renewal::State {
  explicit State(ClientImpl& impl) : impl(impl), timer(impl.executor()) {
    exited_future = exited.get_future().share();
  }
  ClientImpl& impl;
  asio::steady_timer timer;  // I/O thread only
  mutable std::mutex mu;
  Lease lease;                // guarded by mu
  std::optional<Error> loss;  // guarded by mu
  bool stopped = false;       // guarded by mu
  std::promise<void> exited;
  std::shared_future<void> exited_future;
};

namespace {

Awaitable<void> RenewLoop(std::shared_ptr<Renewal::State> st, Lock lock, Millis ttl,
                          RenewOptions options) {
  const Millis period(std::max<std::int64_t>(
      1, static_cast<std::int64_t>(static_cast<double>(ttl.count()) * options.fraction)));
  Millis wait = period;
  // Ends on stop() or on loss; each round waits at least 1 ms and one call timeout at most.
  for (;;) {
    st->timer.expires_after(wait);
    co_await st->timer.async_wait(asio::as_tuple(asio::use_awaitable));
    Lease lease;
    {
      std::lock_guard guard(st->mu);
      if (st->stopped) co_return;
      lease = st->lease;
    }
    auto r = co_await lock.extend(lease, ttl);
    std::optional<Error> lost;
    {
      std::lock_guard guard(st->mu);
      if (st->stopped) co_return;
      if (r.ok() && *r == LeaseStatus::kOk) {
        st->lease.valid_until = lease.valid_until;
        wait = period;
        continue;
      }
      if (r.ok()) {
        lost = Error{make_error_code(Errc::kLeaseLost),
                     std::string("renewal answered ") + std::string(LeaseStatusName(*r))};
      } else {
        auto left = std::chrono::duration_cast<Millis>(lease.valid_until - steady_clock::now());
        if (left.count() <= 0) {
          lost = Error{make_error_code(Errc::kLeaseLost),
                       "lease ran out while renewals failed: " + r.error().ToString()};
        } else {
          // Transient failure: try again soon, while the lease still holds.
          wait = std::max(Millis(1), std::min(period / 4, left / 2));
          continue;
        }
      }
      st->loss = lost;
      st->stopped = true;
    }
    if (options.on_lost) options.on_lost(*lost);
    co_return;
  }
}

}  // namespace

std::unique_ptr<Renewal> Lock::auto_renew(Lease lease, Millis ttl, RenewOptions options) {
  auto st = std::make_shared<Renewal::State>(client_.impl());
  st->lease = std::move(lease);
  asio::co_spawn(client_.impl().executor(), RenewLoop(st, *this, ttl, std::move(options)),
                 [st](std::exception_ptr) { st->exited.set_value(); });
  return std::make_unique<Renewal>(st);
}

Renewal::~Renewal() { stop(); }

void Renewal::stop() {
  {
    std::lock_guard guard(state_->mu);
    state_->stopped = true;
  }
  auto st = state_;
  asio::post(st->impl.executor(), [st] { st->timer.cancel(); });
  if (!st->impl.on_io_thread()) st->exited_future.wait();
}

bool Renewal::lost() const {
  std::lock_guard guard(state_->mu);
  return state_->loss.has_value();
}

std::optional<Error> Renewal::loss() const {
  std::lock_guard guard(state_->mu);
  return state_->loss;
}

Lease Renewal::lease() const {
  std::lock_guard guard(state_->mu);
  return state_->lease;
}

}  // namespace latch
