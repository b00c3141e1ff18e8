#pragma once
// latch::Lock: a lease on one key of one server, Redis or latchd.
//
// Against latchd it uses LOCK.ACQUIRE / LOCK.RELEASE / LOCK.EXTEND (fencing tokens, waiting
// on the server). Against Redis it uses SET key owner NX PX ttl to acquire and Lua scripts
// (EVALSHA, EVAL on NOSCRIPT) to release and extend only while the owner still matches. Which
// one is chosen from the capabilities the connection handshake probed, not per call.
//
// Outcomes of release and extend are values: kOk, kNotOwner (someone else holds the key: our
// lease expired and was taken), kLost (nobody holds it: our lease expired). Transport and
// server failures are Errors; an acquire that finds the key held is Errc::kNotAcquired.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "latch/client.h"

namespace latch {

using Millis = std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

struct Lease {
  std::string key;
  std::string owner;                          // 128 random bits, hex
  std::optional<std::int64_t> fencing_token;  // when the server hands them out (latchd)
  SteadyTime valid_until;  // start of the granting request + ttl: a conservative bound

  bool valid() const { return std::chrono::steady_clock::now() < valid_until; }
};

enum class LeaseStatus { kOk, kNotOwner, kLost };
std::string_view LeaseStatusName(LeaseStatus s);

struct AcquireOptions {
  Millis wait{0};          // keep trying this long when the key is held; 0: one attempt
  Millis retry_delay{50};  // between attempts on Redis (jittered by +-50%)
  std::string owner;       // empty: a fresh random token
};

struct RenewOptions {
  double fraction = 1.0 / 3;  // renew after this fraction of the TTL
  // Called once, on the client's I/O thread, when the lease is lost (must not block).
  std::function<void(const Error&)> on_lost;
};

// How a Lock talks to its server. kAuto picks, from the capabilities probed once per
// connection, the first the server offers: LOCK.* (latchd: fencing tokens, server-side
// waiting), then Redis 8.4's compare commands (SET NX PX; DELEX IFEQ to release; SET IFEQ GET
// to extend), then SET NX PX with Lua compare-and-delete / compare-and-extend scripts (Redis
// 7). A forced method the server lacks fails every call with Errc::kUnsupported.
enum class LockMethod { kAuto, kLockCommands, kCompareCommands, kScripts };

class Renewal;

class Lock {
 public:
  explicit Lock(Client& client, LockMethod method = LockMethod::kAuto)
      : client_(client), method_(method) {}

  // (No default arguments on coroutines: GCC 12 miscompiles them, hence the overload.)
  Awaitable<Result<Lease>> acquire(std::string key, Millis ttl, AcquireOptions options);
  Awaitable<Result<Lease>> acquire(std::string key, Millis ttl) {
    return acquire(std::move(key), ttl, AcquireOptions{});
  }
  Awaitable<Result<LeaseStatus>> release(const Lease& lease);
  // On kOk, lease.valid_until moves to the start of this request + ttl.
  Awaitable<Result<LeaseStatus>> extend(Lease& lease, Millis ttl);

  Result<Lease> acquire_sync(std::string key, Millis ttl, AcquireOptions options = {});
  Result<LeaseStatus> release_sync(const Lease& lease);
  Result<LeaseStatus> extend_sync(Lease& lease, Millis ttl);

  // Keeps extending the lease by `ttl` every ttl * fraction until the Renewal is destroyed or
  // the lease is lost (a renewal answered kNotOwner/kLost, or failed until the lease ran out).
  std::unique_ptr<Renewal> auto_renew(Lease lease, Millis ttl, RenewOptions options = {});

  Client& client() { return client_; }
  static std::string NewOwnerToken();

 private:
  // The method to use on a server with `caps`, or Errc::kUnsupported.
  Result<LockMethod> Resolve(const Capabilities& caps) const;

  Client& client_;
  LockMethod method_;
};

// The handle of an auto-renewal. Destroying it stops renewing (it does not release).
class Renewal {
 public:
  struct State;
  explicit Renewal(std::shared_ptr<State> state) : state_(std::move(state)) {}
  ~Renewal();
  Renewal(const Renewal&) = delete;
  Renewal& operator=(const Renewal&) = delete;

  bool lost() const;
  std::optional<Error> loss() const;  // why, once lost
  Lease lease() const;                // with the latest valid_until
  // Stops renewing and waits (bounded by one call timeout) until the renewer has stopped.
  void stop();

 private:
  std::shared_ptr<State> state_;
};

// Releases the lease when it goes out of scope (blocking, bounded by the call timeout).
class LockGuard {
 public:
  LockGuard(Lock& lock, Lease lease) : lock_(&lock), lease_(std::move(lease)) {}
  ~LockGuard();
  LockGuard(LockGuard&& other) noexcept;
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;
  LockGuard& operator=(LockGuard&&) = delete;

  const Lease& lease() const { return lease_; }
  Result<LeaseStatus> release();

 private:
  Lock* lock_;
  Lease lease_;
  bool released_ = false;
};

}  // namespace latch
