#pragma once
// The chaos test's history and its checker. Clients record what they saw (times on the test's
// steady clock, in microseconds); the checker decides from that record alone whether the lock
// server ever let two clients hold one key at once, and whether fencing tokens behaved.
//
// A lease is valid from the moment its holder got the grant's reply until the earliest of:
//   - send time of the acquire + TTL - drift allowance (Redlock's: 1% of the TTL + 2 ms),
//   - the moment its holder sent the release (it stops using the lock then).
// A lease whose validity ended before its reply arrived was never usable and is not counted.
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace latch::test {

struct Lease {
  int key = 0;
  int client = 0;
  std::uint64_t token = 0;
  std::int64_t sent_us = 0;      // acquire sent
  std::int64_t granted_us = 0;   // its reply received
  std::int64_t released_us = 0;  // release sent; 0 = never (crash, stall, lost connection)
  std::int64_t ttl_ms = 0;

  std::int64_t ValidFrom() const { return granted_us; }
  std::int64_t ValidUntil() const;
};

struct HistoryVerdict {
  std::size_t leases = 0;       // usable leases checked
  std::size_t overlaps = 0;     // pairs of leases of one key valid at the same moment
  std::size_t token_order = 0;  // grants in a known order whose tokens do not increase
  std::string first_overlap;    // a description of one overlap, for the failure message
};

// Checks every key's leases. O(n log n + overlaps) per key.
HistoryVerdict CheckHistory(std::vector<Lease> leases);

// A resource that only accepts writes carrying a token at least as high as any it has seen
// (the fencing check a database does with a conditional UPDATE).
class FencedResource {
 public:
  explicit FencedResource(int keys) : max_(static_cast<std::size_t>(keys), 0) {}
  // True when accepted.
  bool Write(int key, std::uint64_t token);
  std::size_t accepted() const;
  std::size_t refused() const;  // stale holders stopped by the token
  // Writes it accepted below a token it had seen before: must be 0 by construction; counted
  // from its own log so that a broken check would show.
  std::size_t accepted_below_seen() const;

 private:
  mutable std::mutex mu_;
  std::vector<std::uint64_t> max_;
  std::vector<std::pair<int, std::uint64_t>> log_;  // accepted writes, in order
  std::size_t refused_ = 0;
};

}  // namespace latch::test
