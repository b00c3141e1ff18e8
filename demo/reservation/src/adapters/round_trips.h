#pragma once
// Round trips to PostgreSQL and to the lock server made by the request that runs on this
// thread: a request runs on one worker thread from start to end (HttpServer), so a
// thread-local count is the request's. HttpApi resets it per request and writes it into the
// access log line; the adapters add to it.
namespace latch::demo {

struct RoundTrips {
  int postgres = 0;
  int lock_server = 0;
};

inline RoundTrips& ThisThreadRoundTrips() {
  thread_local RoundTrips trips;
  return trips;
}

}  // namespace latch::demo
