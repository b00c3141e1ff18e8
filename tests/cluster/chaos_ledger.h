#pragma once
// The cluster chaos test's record of what the cluster acknowledged, for two verdicts:
// - AckLedger: "no acknowledged write lost". Writers SET keys of their own, each key once, and
//   record each the cluster answered +OK; afterwards every one must read back, value and all.
// - ReadProbe: "a deposed leader answers no read". A prober owns one key, writes it with a
//   rising counter and reads it on any node; a read may return a later value (a write whose
//   reply was lost can still commit) but never one below the last write acknowledged before
//   the read was sent: that would be a stale read.
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "support/raw_connection.h"

namespace latch::test {

class AckLedger {
 public:
  void Acked(std::string key, std::string value) {
    std::lock_guard lock(mu_);
    acked_.emplace_back(std::move(key), std::move(value));
  }
  std::size_t size() const {
    std::lock_guard lock(mu_);
    return acked_.size();
  }
  // Reads every acknowledged key back from `port`: how many are missing or hold another
  // value; *first describes one of them.
  std::size_t Lost(int port, std::string* first) const {
    std::lock_guard lock(mu_);
    RawConnection conn(port, std::chrono::milliseconds(5000));
    std::size_t lost = 0;
    for (const auto& [key, value] : acked_) {
      const std::string want = "$" + std::to_string(value.size()) + "\r\n" + value + "\r\n";
      const std::string got = conn.CommandArgs({"GET", key});
      if (got == want) continue;
      if (lost++ == 0) *first = key + ": acknowledged '" + value + "', read " + got;
      if (got.starts_with("<no reply")) conn.Close(), conn.Connect(port);
    }
    return lost;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::pair<std::string, std::string>> acked_;
};

// One prober's key: the value it last had acknowledged, and the stale reads it saw.
class ReadProbe {
 public:
  explicit ReadProbe(std::string key) : key_(std::move(key)) {}
  const std::string& key() const { return key_; }
  std::uint64_t next() { return ++sent_; }
  void Acked(std::uint64_t v) { acked_ = std::max(acked_, v); }
  // `floor`: acked() when the GET was sent; `reply` its raw reply. Errors, nil before the
  // first write and lost replies say nothing; a lower number is a stale read.
  bool Stale(std::uint64_t floor, const std::string& reply) const {
    if (!reply.starts_with("$") || reply.starts_with("$-1")) return floor > 0 && reply == "$-1\r\n";
    const std::size_t body = reply.find("\r\n") + 2;
    return std::stoull(reply.substr(body)) < floor;
  }
  std::uint64_t acked() const { return acked_; }

 private:
  std::string key_;
  std::uint64_t sent_ = 0;
  std::uint64_t acked_ = 0;
};

}  // namespace latch::test
